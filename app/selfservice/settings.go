package selfservice

import "xr/app"

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingSelfServiceProration       = app.StringSetting{Key: "selfservice_proration", Default: "daily", Description: "portal plan change now: credit for the unused part of the current plan, daily (whole unused days), exact (by the second) or none (docs/selfservice.md)"}
	SettingSelfServiceChangeFee       = app.MoneySetting{Key: "selfservice_change_fee", Default: 0, Description: "portal plan change: a fee added to every change (major units)"}
	SettingSelfServiceExtensionsMonth = app.IntSetting{Key: "selfservice_extensions_per_month", Default: 1, Description: "portal extensions a subscriber may take per calendar month when its plan sets no limit"}
)

var settingDecls = []app.Setting{
	SettingSelfServiceProration, SettingSelfServiceChangeFee, SettingSelfServiceExtensionsMonth,
}
