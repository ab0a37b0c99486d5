package web

import (
	"xr/app"
	"xr/app/shop"
)

// shopRoutes are the shop's staff rows: publishing series, readiness, storefront preview, online sales;
// then the public buyer rows (beyond the spec) on the tenant host.
func (s *Server) shopRoutes() []Route {
	publishReasons := []string{"404 not_found", "409 card_batch_not_ready", "409 card_batch_suspended", "409 card_batch_not_sell_online",
		"400 price_required", "400 price_must_be_positive"}
	return []Route{
		{M: "POST", P: "/admin/shop/batches/bulk-publish", Access: Staff, Perms: []app.Perm{shop.PermShopPublish}, H: bodyCall(shop.BulkPublish),
			Req: shop.BulkPublishInput{}, Resp: app.BulkResult{}, Reasons: []string{"400 price_must_be_positive", "400 ids_required", "400 too_many_ids", "400 invalid_id"},
			Summary: "publish several series in the storefront (at one price, or each at its last price)"},
		{M: "POST", P: "/admin/shop/batches/{id}/publish", Access: Staff, Perms: []app.Perm{shop.PermShopPublish}, H: idBodyCall(shop.Publish),
			Req: shop.PublishInput{}, Resp: shop.Listing{}, Reasons: publishReasons,
			Summary: "offer a ready, not suspended series marked sell_online in the storefront at a price per card"},
		{M: "POST", P: "/admin/shop/batches/{id}/unpublish", Access: Staff, Perms: []app.Perm{shop.PermShopPublish}, H: idCall(shop.Unpublish),
			Resp: shop.Listing{}, Reasons: []string{"404 not_found"}, Summary: "take a series out of the storefront (open reservations complete or expire)"},
		{M: "GET", P: "/admin/shop/readiness", Access: Staff, Perms: []app.Perm{shop.PermShopIndex}, H: actorCall(shop.GetReadiness),
			Resp: shop.Readiness{}, Summary: "what the shop needs to sell (payment provider, published stock, a channel to deliver codes) and what is missing"},
		{M: "GET", P: "/admin/shop/sales", Access: Staff, Perms: []app.Perm{shop.PermShopSales, shop.PermShopSalesAll}, H: listCall(shop.SaleSpec(), shop.ListSales),
			Resp: shop.Sale{}, List: true, Summary: "online sales with payment and delivery state (own subtree, or all with prm_shop_sales_all); contacts masked"},
		{M: "GET", P: "/admin/shop/sales/{id}", Access: Staff, Perms: []app.Perm{shop.PermShopSales, shop.PermShopSalesAll}, H: idCall(shop.GetSale),
			Resp: shop.SaleDetail{}, Reasons: []string{"404 not_found"}, Summary: "one online sale: its cards, deliveries and the audit of reveals and resends"},
		{M: "POST", P: "/admin/shop/sales/{id}/resend", Access: Staff, Perms: []app.Perm{shop.PermShopSales, shop.PermShopSalesAll}, Buckets: []string{"pay_init"},
			H: idCall(shop.Resend), Resp: shop.SaleDetail{}, Reasons: []string{"404 not_found", "409 sale_not_paid"},
			Summary: "send the codes of a paid sale again to the recorded contact"},
		{M: "POST", P: "/admin/shop/sales/{id}/reveal", Access: Staff, Perms: []app.Perm{shop.PermShopBuyerContact}, H: idCall(shop.Reveal),
			Resp: shop.Contact{}, Reasons: []string{"404 not_found"}, Summary: "the buyer's contact, whole; who looked is recorded in the sale's audit"},
		{M: "GET", P: "/admin/shop/storefront", Access: Staff, Perms: []app.Perm{shop.PermShopIndex}, H: actorCall(shop.StaffStorefront),
			Resp: shop.Storefront{}, Summary: "the storefront exactly as buyers see it"},
		{M: "GET", P: "/admin/shop/batches", Access: Staff, Perms: []app.Perm{shop.PermShopIndex, shop.PermShopPublish}, H: allCall(shop.Series),
			Resp: []shop.Listing{}, Summary: "the series of the caller's subtree marked sell_online, with their storefront listing"},

		{M: "GET", P: "/shop/storefront", Access: Public, Buckets: []string{"shop_browse"}, H: s.shopStorefront, Resp: shop.Storefront{},
			Reasons: []string{"404 not_found"}, Summary: "public: the tenant's storefront (series in stock, price per card, payment gateways)"},
		{M: "POST", P: "/shop/purchases", Access: Public, Buckets: []string{"shop_buy"}, H: s.shopBuy, Req: shop.BuyInput{}, Resp: shop.Purchase{},
			Reasons: []string{"404 not_found", "400 request_id_required", "400 request_id_invalid", "400 series_id_required", "400 out_of_range",
				"400 contact_required", "400 contact_invalid", "400 gateway_required", "400 gateway_unavailable", "400 amount_out_of_range",
				"400 amount_below_minimum", "409 request_id_conflict", "409 insufficient_stock", "409 card_batch_not_ready", "409 card_batch_suspended",
				"409 gateway_not_configured", "502 payment_provider_error", "502 payment_provider_unreachable", "409 shop_hold_limit"},
			Summary: "public: buy cards of a published series (request_id must be a UUID); the codes go to the contact and appear on the return page once paid; " +
				"an unpaid purchase holds its cards shop_hold_minutes, at most shop_max_cards_per_purchase, and one address's unpaid purchases at most shop_max_held_per_client together (409 shop_hold_limit)"},
		{M: "GET", P: "/shop/return/{token}", Access: Public, Buckets: []string{"shop_return"}, H: s.shopReceipt, Resp: shop.Receipt{},
			Reasons: []string{"404 not_found"}, Summary: "public: the buyer's return page: payment and delivery state, and the codes once paid"},
	}
}

func (s *Server) shopStorefront(c *Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	out, err := shop.PublicStorefront(c.R.Context(), c.Tenant)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) shopBuy(c *Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	var in shop.BuyInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	in.Origin, in.ClientIP = RequestOrigin(c.R), c.IP
	out, err := shop.Buy(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) shopReceipt(c *Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	out, err := shop.GetReceipt(c.R.Context(), c.Tenant, c.R.PathValue("token"))
	if err != nil {
		return err
	}
	return c.OK(out)
}
