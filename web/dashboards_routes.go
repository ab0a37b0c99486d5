package web

import (
	"xr/app"
	"xr/app/dashboards"
)

func (s *Server) dashboardsRoutes() []Route {
	dm := []app.Perm{dashboards.PermToolsDashboardManager}
	return []Route{
		// Dashboards (own)
		{M: "GET", P: "/admin/dashboards/me", Access: Staff, AnyStaff: true, Buckets: []string{"t_values"},
			H: actorCall(dashboards.GetMine), Resp: dashboards.Mine{}, Summary: "the caller's dashboard (its role's, with its own layout)"},
		{M: "GET", P: "/admin/dashboards/me/values", Access: Staff, AnyStaff: true, Buckets: []string{"t_values"},
			H: actorCall(dashboards.GetValues), Resp: dashboards.Values{}, Summary: "every tile's value, scoped to the caller's subtree"},
		{M: "PUT", P: "/admin/dashboards/me/appearance", Access: Staff, AnyStaff: true,
			H: bodyCall(dashboards.SetAppearance), Req: dashboards.Appearance{}, Resp: dashboards.Mine{}, Summary: "store the caller's theme and density"},
		{M: "PUT", P: "/admin/dashboards/me/customize", Access: Staff, AnyStaff: true,
			H: bodyCall(dashboards.Customize), Req: dashboards.Customization{}, Resp: dashboards.Mine{}, Summary: "store the caller's own layout"},
		{M: "DELETE", P: "/admin/dashboards/me/customize", Access: Staff, AnyStaff: true,
			H: actorCall(dashboards.ResetCustomization), Resp: dashboards.Mine{}, Summary: "reset the caller's layout to its role's"},
		// Dashboard manager
		{M: "GET", P: "/admin/tools/dashboards", Access: Staff, Perms: dm,
			H: allCall(dashboards.List), Resp: dashboards.Dashboard{}, List: true, Summary: "dashboard definitions"},
		{M: "POST", P: "/admin/tools/dashboards", Status: 201, Access: Staff, Perms: dm,
			H: createCall(dashboards.Create), Req: dashboards.Input{}, Resp: dashboards.Dashboard{}, Summary: "create a dashboard definition"},
		{M: "POST", P: "/admin/tools/dashboards/bulk-delete", Access: Staff, Perms: dm,
			H: bulkCall(dashboards.Delete), Req: app.BulkIDs{}, Resp: app.BulkResult{}, Summary: "delete several dashboard definitions"},
		{M: "POST", P: "/admin/tools/dashboards/restore-defaults", Access: Staff, Perms: dm,
			H: allCall(dashboards.RestoreDefaults), Resp: dashboards.Dashboard{}, List: true, Summary: "bring back the shipped dashboards"},
		{M: "GET", P: "/admin/tools/dashboards/{id}", Access: Staff, Perms: dm,
			H: idCall(dashboards.Get), Resp: dashboards.Dashboard{}, Summary: "one dashboard definition"},
		{M: "PUT", P: "/admin/tools/dashboards/{id}", Access: Staff, Perms: dm,
			H: idBodyCall(dashboards.Replace), Req: dashboards.Input{}, Resp: dashboards.Dashboard{}, Summary: "replace a dashboard definition"},
		{M: "DELETE", P: "/admin/tools/dashboards/{id}", Access: Staff, Perms: dm,
			H: idAction(dashboards.Delete), Summary: "delete a dashboard definition"},
	}
}
