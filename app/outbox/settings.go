package outbox

import "xr/app"

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingMailFromName      = app.StringSetting{Key: "mail_from_name", Default: "", Description: "display name of the tenant's outgoing mail (empty: the tenant's name)"}
	SettingMailFromAddress   = app.StringSetting{Key: "mail_from_address", Default: "", Description: "sender address of the tenant's outgoing mail (empty: the relay's --smtp-from)"}
	SettingMessagesPerMinute = app.IntSetting{Key: "messages_per_minute", Default: 60, Description: "outbound email and SMS messages sent per minute at most (1-6000)"}
)

var settingDecls = []app.Setting{SettingMailFromName, SettingMailFromAddress, SettingMessagesPerMinute}
