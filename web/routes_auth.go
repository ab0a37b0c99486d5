// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app/identity"
)

func (s *Server) authRoutes() []Route {
	return []Route{
		// Auth group
		{M: "GET", P: "/auth/account", Access: Staff, AnyStaff: true, SessionOnly: true, H: actorCall(identity.GetAccount), Resp: identity.Manager{}},
		{M: "PATCH", P: "/auth/account", Access: Staff, AnyStaff: true, SessionOnly: true, H: bodyCall(identity.UpdateAccount), Req: identity.AccountInput{}, Resp: identity.Manager{}},
		{M: "POST", P: "/auth/account/2fa/disable", Access: Staff, AnyStaff: true, Buckets: []string{"account_reauth"}, SessionOnly: true, H: s.totpDisable, Req: reauthReq{}},
		{M: "POST", P: "/auth/account/2fa/enable", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.totpEnable, Req: codeReq{}},
		{M: "POST", P: "/auth/account/2fa/recovery-codes", Access: Staff, AnyStaff: true, Buckets: []string{"account_reauth"}, SessionOnly: true, H: s.recoveryCodes, Req: reauthReq{}},
		{M: "POST", P: "/auth/account/2fa/setup", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.totpSetup, Resp: identity.TOTPSetup{}},
		{M: "POST", P: "/auth/account/avatar", Access: Staff, File: true, AnyStaff: true, SessionOnly: true, H: s.avatar},
		{M: "GET", P: "/auth/account/limits", Access: Staff, AnyStaff: true, SessionOnly: true, H: actorCall(identity.GetAccountLimits), Resp: identity.AccountLimits{}},
		{M: "POST", P: "/auth/account/password", Access: Staff, AnyStaff: true, Buckets: []string{"account_reauth"}, SessionOnly: true, NoImpersonation: true, H: s.changePassword, Req: passwordReq{}},
		{M: "GET", P: "/auth/account/sessions", Access: Staff, AnyStaff: true, SessionOnly: true, H: allCall(identity.ListSessions), Resp: identity.SessionInfo{}, List: true},
		{M: "POST", P: "/auth/account/sessions/revoke-others", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.revokeOtherSessions},
		{M: "DELETE", P: "/auth/account/sessions/{jti}", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.revokeSession},
		{M: "GET", P: "/auth/context", Access: Public, H: s.authContext, Resp: authContext{}},
		{M: "POST", P: "/auth/impersonation/exit", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.exitImpersonation, Resp: identity.LoginResult{}},
		{M: "POST", P: "/auth/login", Access: Public, Buckets: []string{"login"}, H: s.login, Req: identity.LoginRequest{}, Resp: identity.LoginResult{}},
		{M: "POST", P: "/auth/logout", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.logout},
		{M: "GET", P: "/auth/me", Access: Staff, AnyStaff: true, H: s.me, Resp: identity.Me{}},
		{M: "DELETE", P: "/auth/push-tokens", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.removePushToken, Req: identity.PushToken{}},
		{M: "POST", P: "/auth/push-tokens", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.addPushToken, Req: identity.PushToken{}},
		{M: "POST", P: "/auth/refresh", Access: Public, Buckets: []string{"refresh"}, H: s.refresh, Req: refreshReq{}, Resp: identity.LoginResult{}},
		{M: "POST", P: "/auth/register/start", Access: Public, Buckets: []string{"register_start"}, H: s.registerStart, Req: registerStartReq{}},
		{M: "POST", P: "/auth/register/verify", Access: Public, Buckets: []string{"register_verify"}, H: s.registerVerify, Req: registerVerifyReq{}},
		{M: "POST", P: "/auth/register/resend", Access: Public, Buckets: []string{"register_resend"}, H: s.registerResend, Req: registerVerifyReq{}},
		{M: "POST", P: "/auth/register/complete", Access: Public, Buckets: []string{"register_complete"}, H: s.registerComplete, Req: identity.CompleteRegistrationInput{}},
		{M: "GET", P: "/auth/register/slug-available", Access: Public, H: s.slugAvailable, Summary: "whether a tenant slug can be registered (its own per-IP bucket, 20/min)"},
		// Auth group (API tokens)
		{M: "POST", P: "/developer/api-tokens/{id}/reveal", Access: Staff, AnyStaff: true, Buckets: []string{"api_token_reveal"}, SessionOnly: true, H: idCall(identity.RevealAPIToken), Resp: identity.APIToken{}},
	}
}
