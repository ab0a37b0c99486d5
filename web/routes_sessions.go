// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app"
	"xr/app/aaa"
)

func (s *Server) sessionsRoutes() []Route {
	return []Route{
		// Live sessions group
		{M: "GET", P: "/admin/sessions", Access: Staff, Perms: []app.Perm{app.PermReportSessions}, H: listCall(aaa.SessionListSpec, aaa.ListSessions), List: true, Resp: aaa.Session{}},
		{M: "POST", P: "/admin/sessions/bulk-disconnect", Access: Staff, Perms: []app.Perm{app.PermUsersLiveTraffic}, H: s.bulkDisconnectSessions, Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/admin/sessions/bulk-lock-mac", Access: Staff, Perms: []app.Perm{app.PermUsersMacLock}, H: bulkCall(lockMACAction), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/admin/sessions/bulk-ping", Access: Staff, Perms: []app.Perm{app.PermUsersPing}, Buckets: []string{app.BucketProbe}, H: bulkCall(pingAction), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "GET", P: "/admin/sessions/{id}", Access: Staff, Perms: []app.Perm{app.PermReportSessions}, H: idCall(aaa.GetSession), Resp: aaa.Session{}},
		{M: "POST", P: "/admin/sessions/{id}/disconnect", Access: Staff, Perms: []app.Perm{app.PermUsersLiveTraffic}, H: s.disconnectSession, Resp: aaa.DisconnectResult{}},
		{M: "GET", P: "/admin/sessions/{id}/live-traffic", Access: Staff, Perms: []app.Perm{app.PermUsersLiveTraffic}, H: idCall(aaa.SessionLiveTraffic), Resp: aaa.LiveTraffic{}},
		{M: "GET", P: "/admin/sessions/{id}/live-traffic/stream", Access: Staff, Perms: []app.Perm{app.PermUsersLiveTraffic}, H: s.liveTrafficStream, Summary: "server-sent events: live-traffic every 2 s"},
		{M: "POST", P: "/admin/sessions/{id}/lock-mac", Access: Staff, Perms: []app.Perm{app.PermUsersMacLock}, H: idCall(aaa.LockSessionMAC), Resp: aaa.LockedMAC{}},
		{M: "POST", P: "/admin/sessions/{id}/ping", Access: Staff, Perms: []app.Perm{app.PermUsersPing}, Buckets: []string{app.BucketProbe}, H: idCall(aaa.PingSession), Resp: aaa.PingResult{}},
		{M: "GET", P: "/admin/sessions/{id}/traffic", Access: Staff, Perms: []app.Perm{app.PermReportSessions}, H: idCall(aaa.SessionTraffic), Resp: aaa.Traffic{}},
	}
}
