package portal

import "xr/app"

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingPortalSession       = app.IntSetting{Key: "portal_session_minutes", Default: 720, Description: "subscriber portal access-token lifetime in minutes"}
	SettingPortalEnabled       = app.BoolSetting{Key: "portal_enabled", Default: true, Seeded: true, Description: "subscriber portal open (false answers 503 site_offline)"}
	SettingPortalSignup        = app.BoolSetting{Key: "portal_feature_signup", Default: false, Description: "portal: self sign-up (POST /portal/signup)"}
	SettingPortalJoin          = app.BoolSetting{Key: "portal_feature_join", Default: true, Description: "portal: staff-created subscribers join with an invite code"}
	SettingPortalExchange      = app.BoolSetting{Key: "portal_feature_exchange", Default: true, Description: "portal: one-time codes (login-as links, hotspot, messenger) open a session"}
	SettingPortalTunnel        = app.BoolSetting{Key: "portal_feature_tunnel", Default: false, Description: "portal: one-click login identified by the framed IP of a live session"}
	SettingPortalMessenger     = app.BoolSetting{Key: "portal_feature_messenger", Default: false, Description: "portal: link a messenger account by a short code"}
	SettingPortalPayments      = app.BoolSetting{Key: "portal_feature_payments", Default: true, Description: "portal: online deposits and purchases through payment gateways"}
	SettingPortalChangeProfile = app.BoolSetting{Key: "portal_feature_change_profile", Default: true, Description: "portal: the subscriber changes its plan (quote, change-profile)"}
	SettingPortalExtend        = app.BoolSetting{Key: "portal_feature_extend", Default: true, Description: "portal: extensions on credit (grace days)"}
	SettingPortalAutoRenew     = app.BoolSetting{Key: "portal_feature_auto_renew", Default: true, Description: "portal: automatic renewal from the wallet at expiry"}
	SettingPortalSpeedBoost    = app.BoolSetting{Key: "portal_feature_speed_boost", Default: true, Description: "portal: temporary paid speed boosts"}
	SettingPortalParental      = app.BoolSetting{Key: "portal_feature_parental", Default: true, Description: "portal: parental control (blocked windows, pause, PIN)"}
	SettingPortalGuest         = app.BoolSetting{Key: "portal_feature_guest", Default: true, Description: "portal: time-limited guest access on the subscriber's account"}
)

var settingDecls = []app.Setting{
	SettingPortalSession, SettingPortalEnabled, SettingPortalSignup, SettingPortalJoin,
	SettingPortalExchange, SettingPortalTunnel, SettingPortalMessenger, SettingPortalPayments,
	SettingPortalChangeProfile, SettingPortalExtend, SettingPortalAutoRenew, SettingPortalSpeedBoost,
	SettingPortalParental, SettingPortalGuest,
}
