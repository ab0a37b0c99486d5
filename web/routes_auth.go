// Code first generated from the spec tables; maintained by hand since.

package web

import "xr/app"

func (s *Server) authRoutes() []Route {
	return []Route{
		// Auth group
		{M: "GET", P: "/auth/account", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "PATCH", P: "/auth/account", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "POST", P: "/auth/account/2fa/disable", Access: Staff, AnyStaff: true, Buckets: []string{"account_reauth"}, SessionOnly: true},
		{M: "POST", P: "/auth/account/2fa/enable", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "POST", P: "/auth/account/2fa/recovery-codes", Access: Staff, AnyStaff: true, Buckets: []string{"account_reauth"}, SessionOnly: true},
		{M: "POST", P: "/auth/account/2fa/setup", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "POST", P: "/auth/account/avatar", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "GET", P: "/auth/account/limits", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "POST", P: "/auth/account/password", Access: Staff, AnyStaff: true, Buckets: []string{"account_reauth"}, SessionOnly: true},
		{M: "GET", P: "/auth/account/sessions", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "POST", P: "/auth/account/sessions/revoke-others", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "DELETE", P: "/auth/account/sessions/{jti}", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "GET", P: "/auth/context", Access: Public, H: s.authContext, Resp: authContext{}},
		{M: "POST", P: "/auth/impersonation/exit", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "POST", P: "/auth/login", Access: Public, Buckets: []string{"login"}, H: s.login, Req: app.LoginRequest{}, Resp: app.LoginResult{}},
		{M: "POST", P: "/auth/logout", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.logout},
		{M: "GET", P: "/auth/me", Access: Staff, AnyStaff: true, H: s.me, Resp: app.Me{}},
		{M: "DELETE", P: "/auth/push-tokens", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "POST", P: "/auth/push-tokens", Access: Staff, AnyStaff: true, SessionOnly: true},
		{M: "POST", P: "/auth/refresh", Access: Public, Buckets: []string{"refresh"}, H: s.refresh, Req: refreshReq{}, Resp: app.LoginResult{}},
		{M: "POST", P: "/auth/register/start", Access: Public, Buckets: []string{"register_start"}},
		{M: "POST", P: "/auth/register/verify", Access: Public, Buckets: []string{"register_verify"}},
		{M: "POST", P: "/auth/register/resend", Access: Public, Buckets: []string{"register_resend"}},
		{M: "POST", P: "/auth/register/complete", Access: Public, Buckets: []string{"register_complete"}},
		// Auth group (API tokens)
		{M: "POST", P: "/developer/api-tokens/{id}/reveal", Access: Staff, AnyStaff: true, Buckets: []string{"api_token_reveal"}, SessionOnly: true},
	}
}
