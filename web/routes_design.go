package web

import (
	"xr/app"
	"xr/app/aaa"
	"xr/app/identity"
	"xr/app/subs"
)

// designRoutes are the routes DESIGN.md adds where the spec leaves the API
// open: plans, NAS devices, API tokens, the licence page, and a few an
// operator needs (subscriber ledger, permission catalogue, job status).
func (s *Server) designRoutes() []Route {
	return []Route{
		{M: "GET", P: "/admin/profiles", Access: Staff, Perms: []app.Perm{app.PermProfilesIndex}, List: true,
			H: listCall(subs.ProfileListSpec(), subs.ListProfiles), Resp: subs.Profile{},
			Summary: "plans: tenant-wide callers see all, others those they may assign; q name/description; filter[enabled]; sort name (default asc), id, price, duration_days, created_at"},
		{M: "POST", P: "/admin/profiles", Status: 201, Access: Staff, Perms: []app.Perm{app.PermProfilesManage}, H: createCall(subs.CreateProfile), Req: subs.ProfileInput{}, Resp: subs.Profile{},
			Summary: "create a plan (profile): price, duration, speed and quota; 201"},
		{M: "GET", P: "/admin/profiles/{id}", Access: Staff, Perms: []app.Perm{app.PermProfilesIndex}, H: idCall(subs.GetProfile), Resp: subs.Profile{},
			Summary: "one plan"},
		{M: "PATCH", P: "/admin/profiles/{id}", Access: Staff, Perms: []app.Perm{app.PermProfilesManage}, H: idBodyCall(subs.UpdateProfile), Req: subs.ProfileInput{}, Resp: subs.Profile{},
			Summary: "update a plan"},
		{M: "DELETE", P: "/admin/profiles/{id}", Access: Staff, Perms: []app.Perm{app.PermProfilesManage}, H: idAction(subs.DeleteProfile),
			Summary: "refused with 409 profile_in_use while subscribers or activations refer to the plan"},

		{M: "GET", P: "/admin/nas", Access: Staff, Perms: []app.Perm{app.PermNasIndex}, H: allCall(aaa.ListNAS), Resp: aaa.NASRecord{}, List: true, Summary: "every NAS (one page); the secret is never returned"},
		{M: "POST", P: "/admin/nas", Status: 201, Access: Staff, Perms: []app.Perm{app.PermNasManage}, H: createCall(aaa.CreateNAS), Req: aaa.NASInput{}, Resp: aaa.NASRecord{},
			Reasons: []string{"400 ip_address_not_allowed"},
			Summary: "register a NAS; its IP is unique across the instance (409 ip_taken), and not loopback, link-local or the host's own unless the instance allows private egress; the secret is write-only"},
		{M: "GET", P: "/admin/nas/{id}", Access: Staff, Perms: []app.Perm{app.PermNasIndex}, H: idCall(aaa.GetNAS), Resp: aaa.NASRecord{}, Summary: "one NAS (RADIUS client)"},
		{M: "PATCH", P: "/admin/nas/{id}", Access: Staff, Perms: []app.Perm{app.PermNasManage}, H: idBodyCall(aaa.UpdateNAS), Req: aaa.NASInput{}, Resp: aaa.NASRecord{},
			Reasons: []string{"400 ip_address_not_allowed"}, Summary: "update a NAS"},
		{M: "DELETE", P: "/admin/nas/{id}", Access: Staff, Perms: []app.Perm{app.PermNasManage}, H: idAction(aaa.DeleteNAS), Summary: "delete a NAS"},
		{M: "GET", P: "/admin/nas/{id}/setup", Access: Staff, Perms: []app.Perm{app.PermNasIndex}, H: s.nasSetup, Resp: aaa.NASSetup{},
			Summary: "the NAS's RADIUS configuration: vendor=mikrotik|cisco|generic (default: its type), server=address the NAS must reach (default: setting radius_public_address, else the Host); the secret is a placeholder"},
		{M: "GET", P: "/admin/nas/{id}/health", Access: Staff, Perms: []app.Perm{app.PermNasIndex}, H: s.nasHealth, Resp: aaa.NASHealth{},
			Summary: "what the RADIUS server saw of the NAS since it started: last Access-Request, accounting and CoA, Message-Authenticator, clock skew, bad-authenticator drops in the last hour"},

		{M: "GET", P: "/developer/api-tokens", Access: Staff, AnyStaff: true, SessionOnly: true, H: allCall(identity.ListAPITokens), List: true, Resp: identity.APIToken{},
			Summary: "the caller's API tokens"},
		{M: "POST", P: "/developer/api-tokens", Access: Staff, AnyStaff: true, SessionOnly: true, H: bodyCall(identity.CreateAPIToken), Req: identity.APITokenInput{}, Resp: identity.APIToken{},
			Summary: "create an API token (xrt_...; the secret is answered once)"},
		{M: "POST", P: "/developer/api-tokens/{id}/revoke", Access: Staff, AnyStaff: true, SessionOnly: true, H: idCall(tokenAction("revoke")), Resp: identity.APIToken{},
			Summary: "revoke an API token for good"},
		{M: "POST", P: "/developer/api-tokens/{id}/disable", Access: Staff, AnyStaff: true, SessionOnly: true, H: idCall(tokenAction("disable")), Resp: identity.APIToken{},
			Summary: "disable an API token (it can be enabled again)"},
		{M: "POST", P: "/developer/api-tokens/{id}/enable", Access: Staff, AnyStaff: true, SessionOnly: true, H: idCall(tokenAction("enable")), Resp: identity.APIToken{},
			Summary: "enable a disabled API token"},

		{M: "GET", P: "/admin/license", Access: Staff, AnyStaff: true, LicenseExempt: true, H: s.license, Summary: "the tenant's licence: status, expiry, subscriber cap"},
		{M: "GET", P: "/admin/permissions", Access: Staff, AnyStaff: true, Summary: "the permission catalogue", H: s.permissionCatalog},
		{M: "GET", P: "/users/{id}/ledger", Access: Staff, Perms: []app.Perm{app.PermUsersIndex}, List: true,
			H: idListCall(subs.LedgerListSpec(), subs.Ledger), Resp: subs.LedgerEntry{},
			Summary: "a subscriber's balance movements with running balance (balance_after), newest first; filter[kind|created_from|created_to]"},
		{M: "GET", P: "/jobs/{id}", Access: Staff, AnyStaff: true, Summary: "a background job's state and progress", H: idCall(app.JobOf), Resp: app.Job{}},
	}
}
