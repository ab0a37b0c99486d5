// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app/identity"
)

func (s *Server) authRoutes() []Route {
	return []Route{
		// Auth group
		{M: "GET", P: "/auth/account", Access: Staff, AnyStaff: true, SessionOnly: true, H: actorCall(identity.GetAccount), Resp: identity.Manager{},
			Summary: "the caller's own account (manager profile fields)"},
		{M: "PATCH", P: "/auth/account", Access: Staff, AnyStaff: true, SessionOnly: true, H: bodyCall(identity.UpdateAccount), Req: identity.AccountInput{}, Resp: identity.Manager{},
			Summary: "update the caller's own profile fields"},
		{M: "POST", P: "/auth/account/2fa/disable", Access: Staff, AnyStaff: true, Buckets: []string{"account_reauth"}, SessionOnly: true, H: bodyCall(identity.DisableTOTP), Req: identity.Reauth{}, Resp: identity.TwoFactorState{},
			Summary: "turn two-factor sign-in off (needs the password or a current code)"},
		{M: "POST", P: "/auth/account/2fa/enable", Access: Staff, AnyStaff: true, SessionOnly: true, H: bodyCall(identity.EnableTOTP), Req: identity.TOTPCode{}, Resp: identity.TwoFactorState{},
			Summary: "turn two-factor sign-in on with a code from the secret of setup; answers the recovery codes"},
		{M: "POST", P: "/auth/account/2fa/recovery-codes", Access: Staff, AnyStaff: true, Buckets: []string{"account_reauth"}, SessionOnly: true, H: bodyCall(identity.NewRecoveryCodes), Req: identity.Reauth{}, Resp: identity.RecoveryCodes{},
			Summary: "replace the caller's two-factor recovery codes"},
		{M: "POST", P: "/auth/account/2fa/setup", Access: Staff, AnyStaff: true, SessionOnly: true, H: actorCall(identity.SetupTOTP), Resp: identity.TOTPSetup{},
			Summary: "start two-factor setup: a new TOTP secret and its otpauth URL"},
		{M: "POST", P: "/auth/account/avatar", Access: Staff, File: true, AnyStaff: true, SessionOnly: true, H: s.avatar, Summary: "upload the caller's avatar image"},
		{M: "GET", P: "/auth/account/limits", Access: Staff, AnyStaff: true, SessionOnly: true, H: actorCall(identity.GetAccountLimits), Resp: identity.AccountLimits{},
			Summary: "the caller's own limits (wallet, debt limit, quotas of what it may create)"},
		{M: "POST", P: "/auth/account/password", Access: Staff, AnyStaff: true, Buckets: []string{"account_reauth"}, SessionOnly: true, NoImpersonation: true, H: bodyCall(identity.ChangePassword), Req: identity.PasswordChange{}, Resp: identity.Done{},
			Summary: "change the caller's password (the current one is required)"},
		{M: "GET", P: "/auth/account/sessions", Access: Staff, AnyStaff: true, SessionOnly: true, H: allCall(identity.ListSessions), Resp: identity.SessionInfo{}, List: true,
			Summary: "the caller's signed-in sessions"},
		{M: "POST", P: "/auth/account/sessions/revoke-others", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.revokeOtherSessions,
			Summary: "sign out every other session of the caller"},
		{M: "DELETE", P: "/auth/account/sessions/{jti}", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.revokeSession,
			Summary: "sign out one session of the caller"},
		{M: "GET", P: "/auth/context", Access: Public, H: s.authContext, Resp: authContext{},
			Summary: "the tenant and caller context the console starts from (branding, permissions)"},
		{M: "POST", P: "/auth/impersonation/exit", Access: Staff, AnyStaff: true, SessionOnly: true, H: actorCall(identity.ExitImpersonation), Resp: identity.LoginResult{},
			Summary: "leave a login-as session and return to the original manager"},
		{M: "POST", P: "/auth/login", Access: Public, Buckets: []string{"login"}, H: s.login, Req: identity.LoginRequest{}, Resp: identity.LoginResult{},
			Summary: "sign in a manager: a session token and a refresh token"},
		{M: "POST", P: "/auth/logout", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.logout, Summary: "revoke the current session"},
		{M: "GET", P: "/auth/me", Access: Staff, AnyStaff: true, H: actorCall(identity.GetMe), Resp: identity.Me{}, Summary: "the signed-in manager with its permissions"},
		{M: "DELETE", P: "/auth/push-tokens", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.removePushToken, Req: identity.PushToken{},
			Summary: "forget a push-notification token of the caller"},
		{M: "POST", P: "/auth/push-tokens", Access: Staff, AnyStaff: true, SessionOnly: true, H: s.addPushToken, Req: identity.PushToken{},
			Summary: "register a push-notification token for the caller"},
		{M: "POST", P: "/auth/refresh", Access: Public, Buckets: []string{"refresh"}, H: s.refresh, Req: refreshReq{}, Resp: identity.LoginResult{},
			Summary: "exchange a refresh token for a new session token"},
		{M: "POST", P: "/auth/register/start", Access: Public, Buckets: []string{"register_start"}, H: s.registerStart, Req: registerStartReq{},
			Summary: "start a self-service registration: sends a verification code"},
		{M: "POST", P: "/auth/register/verify", Access: Public, Buckets: []string{"register_verify"}, H: s.registerVerify, Req: registerVerifyReq{},
			Summary: "check the verification code of a registration"},
		{M: "POST", P: "/auth/register/resend", Access: Public, Buckets: []string{"register_resend"}, H: s.registerResend, Req: registerVerifyReq{},
			Summary: "send the registration's verification code again"},
		{M: "POST", P: "/auth/register/complete", Status: 201, Access: Public, Buckets: []string{"register_complete"}, H: s.registerComplete, Req: identity.CompleteRegistrationInput{},
			Summary: "finish a registration: creates the account; 201"},
		{M: "GET", P: "/auth/register/slug-available", Access: Public, H: s.slugAvailable, Summary: "whether a tenant slug can be registered (its own per-IP bucket, 20/min)"},
		// Auth group (API tokens)
		{M: "POST", P: "/developer/api-tokens/{id}/reveal", Access: Staff, AnyStaff: true, Buckets: []string{"api_token_reveal"}, SessionOnly: true, H: idCall(identity.RevealAPIToken), Resp: identity.APIToken{},
			Summary: "show an API token's secret again (the caller's password is required)"},
	}
}
