package web

import "xr/app"

// designRoutes are the routes DESIGN.md adds where the spec leaves the API
// open: plans, NAS devices, API tokens, the licence page, and a few an
// operator needs (subscriber ledger, permission catalogue, job status).
func (s *Server) designRoutes() []Route {
	return []Route{
		{M: "GET", P: "/admin/profiles", Access: Staff, Perms: []string{"prm_profiles_index"}, List: true},
		{M: "POST", P: "/admin/profiles", Access: Staff, Perms: []string{"prm_profiles_manage"}},
		{M: "GET", P: "/admin/profiles/{id}", Access: Staff, Perms: []string{"prm_profiles_index"}},
		{M: "PATCH", P: "/admin/profiles/{id}", Access: Staff, Perms: []string{"prm_profiles_manage"}},
		{M: "DELETE", P: "/admin/profiles/{id}", Access: Staff, Perms: []string{"prm_profiles_manage"}},

		{M: "GET", P: "/admin/nas", Access: Staff, Perms: []string{"prm_nas_index"}},
		{M: "POST", P: "/admin/nas", Access: Staff, Perms: []string{"prm_nas_manage"}},
		{M: "GET", P: "/admin/nas/{id}", Access: Staff, Perms: []string{"prm_nas_index"}},
		{M: "PATCH", P: "/admin/nas/{id}", Access: Staff, Perms: []string{"prm_nas_manage"}},
		{M: "DELETE", P: "/admin/nas/{id}", Access: Staff, Perms: []string{"prm_nas_manage"}},

		{M: "GET", P: "/developer/api-tokens", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.listAPITokens, List: true, Resp: app.APIToken{}},
		{M: "POST", P: "/developer/api-tokens", Access: Staff, AnyStaff: true, SessionOnly: true, H: bodyCall(app.CreateAPIToken), Req: app.APITokenInput{}, Resp: app.APIToken{}},
		{M: "POST", P: "/developer/api-tokens/{id}/revoke", Access: Staff, AnyStaff: true, SessionOnly: true, H: idCall(tokenAction("revoke")), Resp: app.APIToken{}},
		{M: "POST", P: "/developer/api-tokens/{id}/disable", Access: Staff, AnyStaff: true, SessionOnly: true, H: idCall(tokenAction("disable")), Resp: app.APIToken{}},
		{M: "POST", P: "/developer/api-tokens/{id}/enable", Access: Staff, AnyStaff: true, SessionOnly: true, H: idCall(tokenAction("enable")), Resp: app.APIToken{}},

		{M: "GET", P: "/admin/license", Access: Staff, AnyStaff: true, LicenseExempt: true, H: s.license},
		{M: "GET", P: "/admin/permissions", Access: Staff, AnyStaff: true, Summary: "the permission catalogue", H: s.permissionCatalog},
		{M: "GET", P: "/users/{id}/ledger", Access: Staff, Perms: []string{"prm_users_index"}, List: true},
		{M: "GET", P: "/jobs/{id}", Access: Staff, AnyStaff: true, Summary: "a background job's state and progress", H: s.getJob, Resp: app.Job{}},
	}
}
