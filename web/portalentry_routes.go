package web

import (
	"xr/app"
	"xr/app/portal"
	"xr/app/portalentry"
	"xr/app/subs"
)

// portalEntryRoutes are the portal's ways in: sign-up, captcha, invite join, code exchange, tunnel identification, messenger, written once under /portal; twins adds the /user alias.
// The staff rows after them issue invites and login links, edit the settings and rotate the messenger secret.
func (s *Server) portalEntryRoutes() []Route {
	feature := []string{"403 feature_disabled", "503 site_offline"}
	code := append([]string{"400 invalid_code", "400 code_required"}, feature...)
	captcha := []string{"400 captcha_required", "400 captcha_invalid"}
	password := []string{"400 password_required", "400 password_too_short", "400 password_too_long", "400 password_too_weak"}
	signup := []string{"400 username_required", "400 invalid_username", "400 required", "400 email_required", "400 invalid_email",
		"400 phone_required", "400 invalid_phone", "400 too_long", "400 custom_field_required", "400 custom_field_unknown",
		"400 custom_field_invalid_type", "400 custom_field_too_long", "400 custom_field_pattern_mismatch",
		"400 custom_field_invalid_number", "400 custom_field_invalid_date", "400 custom_field_invalid_option",
		"409 username_taken", "409 email_taken", "409 signup_not_configured"}
	rows := twins([]Route{
		{M: "GET", P: "/portal/captcha", Access: Public, Buckets: []string{"portal_captcha"}, H: s.portalCaptcha, Resp: portalentry.Captcha{},
			Summary: "a single-use image captcha bound to the client address, expiring in 5 minutes: its id and the picture as a base64 PNG (image); always answers, whichever features are on"},
		{M: "POST", P: "/portal/exchange", Access: Public, Buckets: []string{"portal_exchange"}, H: s.portalExchange, Req: portalentry.ExchangeInput{}, Resp: portal.Session{},
			Reasons: code, Summary: "trade a one-time code (staff login link, tunnel identification, messenger deep link) for a portal session; unknown, used and expired codes answer alike"},
		{M: "POST", P: "/portal/join", Access: Public, Buckets: []string{"portal_join"}, H: s.portalJoin, Req: portalentry.JoinInput{}, Resp: portal.Session{},
			Reasons: peReasons(code, captcha, password),
			Summary: "a subscriber created by staff sets its portal password with a single-use invite code (and a captcha) and is signed in"},
		{M: "GET", P: "/portal/join/context", Access: Public, Buckets: []string{"portal_join"}, H: s.portalJoinContext, Resp: portalentry.JoinContext{},
			Reasons: code, Summary: "whom an invite code (?code=) is for, without spending it"},
		{M: "POST", P: "/portal/signup", Status: 202, Access: Public, Buckets: []string{"portal_signup"}, H: s.portalSignup, Req: portalentry.SignupInput{}, Resp: portalentry.SignupPending{},
			Reasons: peReasons(signup, captcha, password, feature),
			Summary: "self sign-up, step one: checks the captcha and fields and sends a verification code by email or SMS; 202 with the signup_id to verify"},
		{M: "POST", P: "/portal/signup/verify", Access: Public, Buckets: []string{"portal_signup"}, H: s.portalSignupVerify, Req: portalentry.SignupVerifyInput{}, Resp: portalentry.SignupDone{},
			Reasons: peReasons(signup, code, password),
			Summary: "self sign-up, step two: the verification code creates the subscriber (configured plan and owning manager) and signs it in"},
		{M: "GET", P: "/portal/signup/schema", Access: Public, H: s.portalSignupSchema, Resp: portalentry.SignupSchema{}, Reasons: feature,
			Summary: "what the sign-up form asks: required fields, the custom form, the plan and the verification channel; 403 feature_disabled while sign-up is off"},
		{M: "POST", P: "/portal/messenger-exchange", Access: Public, Buckets: []string{"portal_messenger_exchange"}, H: s.portalMessengerExchange,
			Req: portalentry.MessengerExchangeInput{}, Resp: portalentry.MessengerExchange{},
			Reasons: peReasons([]string{"401 signature_invalid", "401 signature_stale", "404 messenger_not_linked", "400 account_required"}, code),
			Summary: "the tenant's bot, signing with the messenger secret: link a messaging account by the subscriber's short code, or get a one-time exchange code for the linked subscriber"},
		{M: "GET", P: "/portal/messenger/link", Access: Subscriber, H: actorCall(portalentry.NewMessengerLink), Resp: portalentry.MessengerLink{}, Reasons: feature,
			Summary: "a short code (10 minutes) the subscriber sends to the bot to link its messaging account"},
		{M: "POST", P: "/portal/tunnel-identify", Access: Public, Buckets: []string{"portal_tunnel_identify"}, H: s.portalTunnelIdentify, Resp: portalentry.TunnelIdentity{},
			Reasons: append([]string{"404 subscriber_not_identified"}, feature...),
			Summary: "identify the subscriber whose live RADIUS session holds the request's source address (inside the configured ranges) and give a one-time exchange code"},
		{M: "POST", P: "/portal/tunnel-tenant", Access: Public, Buckets: []string{"portal_tunnel_tenant"}, H: s.portalTunnelTenant, Resp: portalentry.TunnelIdentity{},
			Reasons: []string{"404 subscriber_not_identified"},
			Summary: "tunnel identification on the apex host: finds the tenant and subscriber by the source address among tenants with tunnel login on"},
	})
	return append(rows,
		Route{M: "POST", P: "/users/{id}/portal-invite", Access: Staff, Perms: []app.Perm{subs.PermUsersUpdate}, H: idCall(portalentry.IssueInvite),
			Resp: portalentry.Invite{}, Summary: "issue a single-use portal invite code (7 days) for a subscriber, with its join link; an earlier one stops working"},
		Route{M: "POST", P: "/users/{id}/portal-link", Access: Staff, Perms: []app.Perm{subs.PermUsersLoginAs}, Buckets: []string{"user_login_as"},
			H: idCall(portalentry.IssueLoginLink), Resp: portalentry.ExchangeCode{},
			Summary: "a staff login-as link: a one-time code (5 minutes) that opens a portal session borrowed by the caller"},
		Route{M: "GET", P: "/admin/portal-entry/settings", Access: Staff, Perms: []app.Perm{app.PermSettings}, H: actorCall(portalentry.GetSettings),
			Resp: portalentry.Settings{}, Summary: "the ways into the portal: feature switches, sign-up plan, owning manager, required fields, verification channel, tunnel ranges"},
		Route{M: "PUT", P: "/admin/portal-entry/settings", Access: Staff, Perms: []app.Perm{app.PermSettings}, H: bodyCall(portalentry.UpdateSettings),
			Req: portalentry.SettingsInput{}, Resp: portalentry.Settings{}, Reasons: []string{"400 invalid_cidr", "400 profile_not_found", "400 invalid_parent_id", "400 invalid_enum"},
			Summary: "write the portal entry settings (the whole set)"},
		Route{M: "POST", P: "/admin/portal-entry/messenger-secret", Access: Staff, Perms: []app.Perm{app.PermSettings}, H: actorCall(portalentry.RotateMessengerSecret),
			Resp: portalentry.MessengerSecret{}, Summary: "make a new messenger signing secret, shown this once; the old one stops working"},
	)
}

// peReasons concatenates reason lists into a new slice.
func peReasons(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
