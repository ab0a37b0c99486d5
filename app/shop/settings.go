package shop

import "xr/app"

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingShopHoldMinutes      = app.IntSetting{Key: "shop_hold_minutes", Default: 15, Description: "shop: minutes an unpaid purchase holds its cards; its payment expires with the hold (1-1440)"}
	SettingShopMaxCardsUnpaid   = app.IntSetting{Key: "shop_max_cards_per_purchase", Default: 5, Description: "shop: cards one unpaid purchase may hold at most (1-20)"}
	SettingShopMaxHeldPerClient = app.IntSetting{Key: "shop_max_held_per_client", Default: 10, Description: "shop: cards the unpaid purchases of one client address may hold together at most (1-200)"}
)

var settingDecls = []app.Setting{SettingShopHoldMinutes, SettingShopMaxCardsUnpaid, SettingShopMaxHeldPerClient}
