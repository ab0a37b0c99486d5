package devgw

import "xr/app"

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingDevgwIdleTimeout = app.IntSetting{Key: "devgw_idle_timeout_seconds", Default: 600, Description: "device gateway: a console without traffic either way for this many seconds is closed (60-86400)"}
	SettingDevgwMaxDuration = app.IntSetting{Key: "devgw_max_duration_seconds", Default: 7200, Description: "device gateway: a console is closed after this many seconds (60-86400)"}
	SettingDevgwMaxTenant   = app.IntSetting{Key: "devgw_max_consoles", Default: 10, Description: "device gateway: open consoles of the tenant at most"}
	SettingDevgwMaxManager  = app.IntSetting{Key: "devgw_max_consoles_per_manager", Default: 3, Description: "device gateway: open consoles of one manager at most"}
	SettingDevgwRecord      = app.BoolSetting{Key: "devgw_record", Default: true, Description: "device gateway: record console output (not input) as asciicast v2 in the tenant's files"}
)

var settingDecls = []app.Setting{
	SettingDevgwIdleTimeout, SettingDevgwMaxDuration, SettingDevgwMaxTenant, SettingDevgwMaxManager,
	SettingDevgwRecord,
}
