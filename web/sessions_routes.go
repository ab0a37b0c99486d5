// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app"
	"xr/app/aaa"
	"xr/app/reports"
	"xr/app/subs"
)

func (s *Server) sessionsRoutes() []Route {
	return []Route{
		// Live sessions group
		{M: "GET", P: "/admin/sessions", Access: Staff, Perms: []app.Perm{reports.PermReportSessions}, H: listCall(aaa.SessionListSpec, aaa.ListSessions), List: true, Resp: aaa.Session{},
			Summary: "live RADIUS sessions of the caller's subscribers"},
		{M: "POST", P: "/admin/sessions/bulk-disconnect", Access: Staff, Perms: []app.Perm{subs.PermUsersLiveTraffic}, H: s.bulkDisconnectSessions, Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Summary: "disconnect several live sessions (RADIUS Disconnect-Request)"},
		{M: "POST", P: "/admin/sessions/bulk-lock-mac", Access: Staff, Perms: []app.Perm{subs.PermUsersMacLock}, H: bulkCall(lockMACAction), Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Summary: "lock the subscribers of several sessions to their current MAC"},
		{M: "POST", P: "/admin/sessions/bulk-ping", Access: Staff, Perms: []app.Perm{subs.PermUsersPing}, Buckets: []string{app.BucketProbe}, H: bulkCall(pingAction), Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Summary: "ping the addresses of several live sessions"},
		{M: "GET", P: "/admin/sessions/{id}", Access: Staff, Perms: []app.Perm{reports.PermReportSessions}, H: idCall(aaa.GetSession), Resp: aaa.Session{},
			Summary: "one live session"},
		{M: "POST", P: "/admin/sessions/{id}/disconnect", Access: Staff, Perms: []app.Perm{subs.PermUsersLiveTraffic}, H: s.disconnectSession, Resp: aaa.DisconnectResult{},
			Summary: "disconnect a live session (RADIUS Disconnect-Request)"},
		{M: "GET", P: "/admin/sessions/{id}/live-traffic", Access: Staff, Perms: []app.Perm{subs.PermUsersLiveTraffic}, H: idCall(aaa.SessionLiveTraffic), Resp: aaa.LiveTraffic{},
			Summary: "the current rates of a live session"},
		{M: "GET", P: "/admin/sessions/{id}/live-traffic/stream", Access: Staff, Perms: []app.Perm{subs.PermUsersLiveTraffic}, H: s.liveTrafficStream, Summary: "server-sent events: live-traffic every 2 s"},
		{M: "POST", P: "/admin/sessions/{id}/lock-mac", Access: Staff, Perms: []app.Perm{subs.PermUsersMacLock}, H: idCall(aaa.LockSessionMAC), Resp: aaa.LockedMAC{},
			Summary: "lock the session's subscriber to its current MAC"},
		{M: "POST", P: "/admin/sessions/{id}/ping", Access: Staff, Perms: []app.Perm{subs.PermUsersPing}, Buckets: []string{app.BucketProbe}, H: idCall(aaa.PingSession), Resp: aaa.PingResult{},
			Summary: "ping the address of a live session"},
		{M: "GET", P: "/admin/sessions/{id}/traffic", Access: Staff, Perms: []app.Perm{reports.PermReportSessions}, H: idCall(aaa.SessionTraffic), Resp: aaa.Traffic{},
			Summary: "the traffic samples of a live session"},
	}
}
