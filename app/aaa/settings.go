package aaa

import "xr/app"

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingRadiusInterimInterval  = app.IntSetting{Key: "radius_interim_interval", Default: 300, Seeded: true, Description: "Acct-Interim-Interval sent to NASes, seconds"}
	SettingRadiusIdleWindow       = app.IntSetting{Key: "radius_idle_window", Default: 900, Seeded: true, Description: "seconds without accounting after which a session counts as stale in listings"}
	SettingRadiusPublicAddress    = app.StringSetting{Key: "radius_public_address", Default: "", Description: "RADIUS server address shown in NAS setup"}
	SettingRadiusStalePct         = app.IntSetting{Key: "radius_stale_multiplier_pct", Default: 250, Description: "a session is stale after this percent of the interim interval (min 100)"}
	SettingRadiusStaleFloor       = app.IntSetting{Key: "radius_stale_floor_seconds", Default: 300, Description: "a session is never stale sooner than this many seconds"}
	SettingRadiusZombieDisconnect = app.IntSetting{Key: "radius_zombie_disconnect", Default: 0, Description: "1 = the truth sweep sends Disconnect for zombie sessions"}
	SettingRadiusReplaceStale     = app.BoolSetting{Key: "radius_replace_stale_session", Default: true, Description: "a login refused for simultaneous use replaces the subscriber's stale sessions"}
)

var settingDecls = []app.Setting{
	SettingRadiusInterimInterval, SettingRadiusIdleWindow, SettingRadiusPublicAddress,
	SettingRadiusStalePct, SettingRadiusStaleFloor, SettingRadiusZombieDisconnect,
	SettingRadiusReplaceStale,
}
