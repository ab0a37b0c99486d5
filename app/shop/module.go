// Package shop is the online shop: card series published to a storefront,
// bought with a payment provider, codes delivered to the buyer.
package shop

import "xr/app"

// Module is the shop area.
var Module = app.Module{Name: "shop"}
