// Code first generated from the spec tables; maintained by hand since.

package web

func (s *Server) sessionsRoutes() []Route {
	return []Route{
		// Live sessions group
		{M: "GET", P: "/admin/sessions", Access: Staff, Perms: []string{"prm_report_sessions"}},
		{M: "POST", P: "/admin/sessions/bulk-disconnect", Access: Staff, Perms: []string{"prm_users_live_traffic"}},
		{M: "POST", P: "/admin/sessions/bulk-lock-mac", Access: Staff, Perms: []string{"prm_users_mac_lock"}},
		{M: "POST", P: "/admin/sessions/bulk-ping", Access: Staff, Perms: []string{"prm_users_ping"}},
		{M: "GET", P: "/admin/sessions/{id}", Access: Staff, Perms: []string{"prm_report_sessions"}},
		{M: "POST", P: "/admin/sessions/{id}/disconnect", Access: Staff, Perms: []string{"prm_users_live_traffic"}},
		{M: "GET", P: "/admin/sessions/{id}/live-traffic", Access: Staff, Perms: []string{"prm_users_live_traffic"}},
		{M: "GET", P: "/admin/sessions/{id}/live-traffic/stream", Access: Staff, Perms: []string{"prm_users_live_traffic"}},
		{M: "POST", P: "/admin/sessions/{id}/lock-mac", Access: Staff, Perms: []string{"prm_users_mac_lock"}},
		{M: "POST", P: "/admin/sessions/{id}/ping", Access: Staff, Perms: []string{"prm_users_ping"}},
		{M: "GET", P: "/admin/sessions/{id}/traffic", Access: Staff, Perms: []string{"prm_report_sessions"}},
	}
}
