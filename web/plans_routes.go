package web

import (
	"xr/app"
	"xr/app/subs"
)

// plansRoutes are the plans (profiles): DESIGN.md adds them where the spec
// leaves the API open.
func (s *Server) plansRoutes() []Route {
	return []Route{
		{M: "GET", P: "/admin/profiles", Access: Staff, Perms: []app.Perm{subs.PermProfilesIndex}, List: true,
			H: listCall(subs.ProfileListSpec(), subs.ListProfiles), Resp: subs.Profile{},
			Summary: "plans: tenant-wide callers see all, others those they may assign; q name/description; filter[enabled]; sort name (default asc), id, price, duration_days, created_at"},
		{M: "POST", P: "/admin/profiles", Status: 201, Access: Staff, Perms: []app.Perm{subs.PermProfilesManage}, H: createCall(subs.CreateProfile), Req: subs.ProfileInput{}, Resp: subs.Profile{},
			Summary: "create a plan (profile): price, duration, speed and quota; 201"},
		{M: "GET", P: "/admin/profiles/{id}", Access: Staff, Perms: []app.Perm{subs.PermProfilesIndex}, H: idCall(subs.GetProfile), Resp: subs.Profile{},
			Summary: "one plan"},
		{M: "PATCH", P: "/admin/profiles/{id}", Access: Staff, Perms: []app.Perm{subs.PermProfilesManage}, H: idBodyCall(subs.UpdateProfile), Req: subs.ProfileInput{}, Resp: subs.Profile{},
			Summary: "update a plan"},
		{M: "DELETE", P: "/admin/profiles/{id}", Access: Staff, Perms: []app.Perm{subs.PermProfilesManage}, H: idAction(subs.DeleteProfile),
			Summary: "refused with 409 profile_in_use while subscribers or activations refer to the plan"},
	}
}
