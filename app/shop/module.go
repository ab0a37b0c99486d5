// Package shop is the online shop: card series published to a storefront,
// bought with a payment provider, codes delivered to the buyer.
//
// A sale is the shop's side of one payment of purpose shop_card: Prepare
// (in the transaction that records the payment) holds the cards — they
// leave the sellable stock at once, so two buyers never get one card and
// stock never goes negative — and writes the sale; Fulfil (in the
// transaction that moves the payment to succeeded) sells them online,
// bumps sold_online and queues the code delivery in the outbox; Release
// (failed or expired) returns them to stock.
package shop

import (
	"xr/app"
	"xr/app/outbox"
	"xr/app/payments"
)

// TemplateCodes is the outbox template of a code delivery.
const TemplateCodes = "shop.codes"

// Module is the shop area.
var Module = app.Module{
	Name: "shop",
	Init: func(a *app.App) {
		outbox.Register(a, outbox.Template{Key: TemplateCodes,
			Subject: "Your {series} card",
			Body:    "Thank you for your purchase ({reference}).\nYour card code(s) for {series}:\n{codes}",
			Vars:    []string{"series", "codes", "reference"}})
	},
	Permissions: permCatalogue,
	Buckets: map[string]app.BucketDef{
		"shop_browse": {Scope: app.ScopeIP, Limit: 120}, // the public storefront
		"shop_buy":    {Scope: app.ScopeIP, Limit: 20},  // a public purchase (starts a payment)
		"shop_hold":   {Scope: app.ScopeIP, Limit: 20},  // cards held by unpaid purchases, counted one per card (purpose.go)
		"shop_return": {Scope: app.ScopeIP, Limit: 60},  // the buyer's return page
	},
	Settings:      settingDecls,
	SealedColumns: []app.SealedColumn{{Table: "shop_sales", Column: "contact_sealed"}},
	Extensions: []app.Extension{payments.PurposeExtension(payments.Purpose{Name: payments.PurposeShopCard,
		Prepare: prepare, Fulfil: fulfil, Release: release, Lifetime: holdLifetime})},
}
