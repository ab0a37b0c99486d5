// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app"
	"xr/app/aaa"
)

func (s *Server) sessionsRoutes() []Route {
	return []Route{
		// Live sessions group
		{M: "GET", P: "/admin/sessions", Access: Staff, Perms: []string{"prm_report_sessions"}, H: listCall(aaa.SessionListSpec, aaa.ListSessions), List: true, Resp: aaa.Session{}},
		{M: "POST", P: "/admin/sessions/bulk-disconnect", Access: Staff, Perms: []string{"prm_users_live_traffic"}, H: s.bulkDisconnectSessions, Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/admin/sessions/bulk-lock-mac", Access: Staff, Perms: []string{"prm_users_mac_lock"}, H: bulkCall(lockMACAction), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/admin/sessions/bulk-ping", Access: Staff, Perms: []string{"prm_users_ping"}, Buckets: []string{app.BucketProbe}, H: bulkCall(pingAction), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "GET", P: "/admin/sessions/{id}", Access: Staff, Perms: []string{"prm_report_sessions"}, H: idCall(aaa.GetSession), Resp: aaa.Session{}},
		{M: "POST", P: "/admin/sessions/{id}/disconnect", Access: Staff, Perms: []string{"prm_users_live_traffic"}, H: s.disconnectSession, Resp: aaa.DisconnectResult{}},
		{M: "GET", P: "/admin/sessions/{id}/live-traffic", Access: Staff, Perms: []string{"prm_users_live_traffic"}, H: idCall(aaa.SessionLiveTraffic), Resp: aaa.LiveTraffic{}},
		{M: "GET", P: "/admin/sessions/{id}/live-traffic/stream", Access: Staff, Perms: []string{"prm_users_live_traffic"}, H: s.liveTrafficStream, Summary: "server-sent events: live-traffic every 2 s"},
		{M: "POST", P: "/admin/sessions/{id}/lock-mac", Access: Staff, Perms: []string{"prm_users_mac_lock"}, H: idCall(aaa.LockSessionMAC), Resp: aaa.LockedMAC{}},
		{M: "POST", P: "/admin/sessions/{id}/ping", Access: Staff, Perms: []string{"prm_users_ping"}, Buckets: []string{app.BucketProbe}, H: idCall(aaa.PingSession), Resp: aaa.PingResult{}},
		{M: "GET", P: "/admin/sessions/{id}/traffic", Access: Staff, Perms: []string{"prm_report_sessions"}, H: idCall(aaa.SessionTraffic), Resp: aaa.Traffic{}},
	}
}
