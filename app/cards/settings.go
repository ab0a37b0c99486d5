package cards

import "xr/app"

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingCardsSellToResellers = app.BoolSetting{Key: "cards_sell_to_resellers", Default: false, Description: "card batches may be sold to resellers"}
)

var settingDecls = []app.Setting{SettingCardsSellToResellers}
