package shop

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermShopBuyerContact app.Perm = "prm_shop_buyer_contact"
	PermShopIndex        app.Perm = "prm_shop_index"
	PermShopPublish      app.Perm = "prm_shop_publish"
	PermShopSales        app.Perm = "prm_shop_sales"
	PermShopSalesAll     app.Perm = "prm_shop_sales_all"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("shop", PermShopBuyerContact, PermShopIndex, PermShopPublish,
	PermShopSales, PermShopSalesAll)
