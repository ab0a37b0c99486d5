package tickets

import "xr/app"

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingTicketsAssignment    = app.StringSetting{Key: "tickets_assignment_strategy", Default: "manual", Description: "how new tickets are assigned: manual, round_robin, least_open, category_team"}
	SettingTicketsReopenDays    = app.IntSetting{Key: "tickets_reopen_days", Default: 7, Description: "days after closing during which staff may bulk-reopen a ticket"}
	SettingTicketsAttachmentMax = app.IntSetting{Key: "tickets_attachment_max_bytes", Default: 10 << 20, Description: "largest ticket attachment accepted, bytes"}
)

var settingDecls = []app.Setting{
	SettingTicketsAssignment, SettingTicketsReopenDays, SettingTicketsAttachmentMax,
}
