package web

import "xr/app"

// shopRoutes are the shop's staff rows: publishing series, readiness, storefront preview, online sales.
func (s *Server) shopRoutes() []Route {
	return []Route{
		{M: "POST", P: "/admin/shop/batches/bulk-publish", Access: Staff, Perms: []app.Perm{app.PermShopPublish}},
		{M: "POST", P: "/admin/shop/batches/{id}/publish", Access: Staff, Perms: []app.Perm{app.PermShopPublish}},
		{M: "POST", P: "/admin/shop/batches/{id}/unpublish", Access: Staff, Perms: []app.Perm{app.PermShopPublish}},
		{M: "GET", P: "/admin/shop/readiness", Access: Staff, Perms: []app.Perm{app.PermShopIndex}},
		{M: "GET", P: "/admin/shop/sales", Access: Staff, Perms: []app.Perm{app.PermShopSales, app.PermShopSalesAll}},
		{M: "GET", P: "/admin/shop/sales/{id}", Access: Staff, Perms: []app.Perm{app.PermShopSales, app.PermShopSalesAll}},
		{M: "POST", P: "/admin/shop/sales/{id}/resend", Access: Staff, Perms: []app.Perm{app.PermShopSales, app.PermShopSalesAll}, Buckets: []string{"pay_init"}},
		{M: "POST", P: "/admin/shop/sales/{id}/reveal", Access: Staff, Perms: []app.Perm{app.PermShopBuyerContact}},
		{M: "GET", P: "/admin/shop/storefront", Access: Staff, Perms: []app.Perm{app.PermShopIndex}},
	}
}
