package subs

import "xr/app"

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingActivationPayer     = app.StringSetting{Key: "activation_payer", Default: "subscriber", Seeded: true, Description: "who pays an activation: subscriber or reseller"}
	SettingPointsPerActivation = app.IntSetting{Key: "points_per_activation", Default: 0, Description: "loyalty points a subscriber earns per activation"}
	SettingPointsValue         = app.MoneySetting{Key: "points_value", Default: 0, Description: "money value of one loyalty point (major units)"}
)

var settingDecls = []app.Setting{SettingActivationPayer, SettingPointsPerActivation, SettingPointsValue}
