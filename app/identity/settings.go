package identity

import "xr/app"

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
// /auth/me shows pos_undo_window_seconds (identity imports no area), so
// the point of sale reads it from here; portal tokens share the refresh
// length; the login page's branding is read by the portal and the hotspot
// pages too.
var (
	SettingPOSUndoWindow = app.IntSetting{Key: "pos_undo_window_seconds", Default: 300, Seeded: true, Description: "seconds a POS sale can be undone"}
	SettingSessionLength = app.IntSetting{Key: "session_length_minutes", Default: 720, Seeded: true, Description: "manager access-token lifetime in minutes"}
	SettingRefreshLength = app.IntSetting{Key: "refresh_length_days", Default: 30, Seeded: true, Description: "manager and portal refresh-token lifetime in days"}
	SettingBranding      = app.JSONSetting{Key: "branding", Description: "login-page branding object shown by /auth/context"}
)

var settingDecls = []app.Setting{
	SettingPOSUndoWindow, SettingSessionLength, SettingRefreshLength, SettingBranding,
}
