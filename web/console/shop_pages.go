package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/shop"
	"xr/web"
)

// Shop pages (staff): the series offered online with publish/unpublish and
// price, the readiness checklist and the storefront preview on one page;
// the online sales with payment and delivery state; one sale with resend
// and reveal (the reveal shows the contact and adds the audit line). Each
// calls the app function of its API row in web/shop_routes.go with that
// row's permission. The console lives under /online-shop: /shop is the
// buyers' public storefront on the same host.
func (s *site) shopPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/online-shop", Access: web.Staff, API: "GET /admin/shop/readiness", H: s.pageShop, Menu: "shop"},
		{M: "POST", P: "/online-shop/series/{id}/publish", Access: web.Staff, API: "POST /admin/shop/batches/{id}/publish", H: s.pageShopPublish(true)},
		{M: "POST", P: "/online-shop/series/{id}/unpublish", Access: web.Staff, API: "POST /admin/shop/batches/{id}/unpublish", H: s.pageShopPublish(false)},
		{M: "GET", P: "/online-shop/sales", Access: web.Staff, API: "GET /admin/shop/sales", H: s.pageShopSales, Menu: "shop_sales"},
		{M: "GET", P: "/online-shop/sales/{id}", Access: web.Staff, API: "GET /admin/shop/sales/{id}", H: s.pageShopSale},
		{M: "POST", P: "/online-shop/sales/{id}/resend", Access: web.Staff, API: "POST /admin/shop/sales/{id}/resend", H: s.pageShopResend},
		{M: "POST", P: "/online-shop/sales/{id}/reveal", Access: web.Staff, API: "POST /admin/shop/sales/{id}/reveal", H: s.pageShopReveal},

		// The buyers' storefront: public, on the tenant host.
		{M: "GET", P: "/shop", Access: web.Public, API: "GET /shop/storefront", H: s.pageStore},
		{M: "POST", P: "/shop/buy", Access: web.Public, API: "POST /shop/purchases", H: s.pageStoreBuy},
		{M: "GET", P: "/shop/return/{token}", Access: web.Public, API: "GET /shop/return/{token}", H: s.pageStoreReturn},
	}
}

type shopView struct {
	Readiness  *shop.Readiness
	Series     []shop.Listing
	Storefront *shop.Storefront
	CanPublish bool
	CanSales   bool
	Failed     int64 // the series whose form was refused: its error shows there
}

func (s *site) shopPage(c *web.Ctx, status int, v *web.View, failed int64, err error) error {
	ctx := c.R.Context()
	rd, rerr := shop.GetReadiness(ctx, c.Actor)
	if rerr != nil {
		return rerr
	}
	series, lerr := shop.Series(ctx, c.Actor)
	if lerr != nil {
		return lerr
	}
	sf, serr := shop.StaffStorefront(ctx, c.Actor)
	if serr != nil {
		return serr
	}
	v.Data = &shopView{Readiness: rd, Series: series, Storefront: sf, CanPublish: c.Actor.Can(shop.PermShopPublish),
		CanSales: c.Actor.Can(shop.PermShopSales, shop.PermShopSalesAll), Failed: failed}
	if err != nil {
		return s.FormError(c, "shop", v, err)
	}
	return s.Render(c, status, "shop", v)
}

func (s *site) pageShop(c *web.Ctx) error {
	return s.shopPage(c, http.StatusOK, s.NewView(c, "shop", "menu.shop"), 0, nil)
}

func (s *site) pageShopPublish(on bool) web.HandlerFunc {
	return func(c *web.Ctx) error {
		if err := web.ParseForm(c); err != nil {
			return err
		}
		id, err := c.ID("id")
		if err != nil {
			return err
		}
		v := s.NewView(c, "shop", "menu.shop")
		v.Form = c.R.PostForm
		msg := "shop.unpublished"
		if on {
			msg = "shop.published"
			price, perr := web.FormMoney(c.R.PostForm, "price")
			if perr != nil {
				return s.shopPage(c, http.StatusOK, v, id, perr)
			}
			in := shop.PublishInput{}
			if price.Set {
				in.Price = &price.V
			}
			_, err = shop.Publish(c.R.Context(), c.Actor, id, in)
		} else {
			_, err = shop.Unpublish(c.R.Context(), c.Actor, id)
		}
		if err != nil {
			return s.shopPage(c, http.StatusOK, v, id, err)
		}
		s.SetFlash(c, v.T(msg), false)
		return web.Redirect(c, "/online-shop")
	}
}

// shopSaleStates are the sales list's filter tabs; "" lists every sale.
var shopSaleStates = []string{"", "paid", "reserved", "released"}

type shopSalesView struct {
	Rows   []shop.Sale
	Meta   app.Meta
	State  string
	States []string
}

func (s *site) pageShopSales(c *web.Ctx) error {
	v := s.NewView(c, "shop_sales", "menu.shop_sales")
	state := c.Query().Get("state")
	q := url.Values{"page_size": {"50"}, "page": {c.Query().Get("page")}}
	if state != "" {
		q.Set("filter[state]", state)
	}
	lq, err := app.ParseList(q, shop.SaleSpec())
	if err != nil {
		return err
	}
	page, err := shop.ListSales(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	v.Data = &shopSalesView{Rows: page.Rows, Meta: page.Meta, State: state, States: shopSaleStates}
	return s.Render(c, http.StatusOK, "shop_sales", v)
}

type shopSaleView struct {
	S         *shop.SaleDetail
	Contact   *shop.Contact // after a reveal
	CanReveal bool
	CanResend bool
}

func (s *site) shopSalePage(c *web.Ctx, v *web.View, contact *shop.Contact, err error) error {
	id, ierr := c.ID("id")
	if ierr != nil {
		return ierr
	}
	d, gerr := shop.GetSale(c.R.Context(), c.Actor, id)
	if gerr != nil {
		return gerr
	}
	v.Title = v.T("shop.sale")
	v.Data = &shopSaleView{S: d, Contact: contact, CanReveal: c.Actor.Can(shop.PermShopBuyerContact), CanResend: d.State == "paid"}
	if err != nil {
		return s.FormError(c, "shop_sale", v, err)
	}
	return s.Render(c, http.StatusOK, "shop_sale", v)
}

func (s *site) pageShopSale(c *web.Ctx) error {
	return s.shopSalePage(c, s.NewView(c, "shop_sales", "menu.shop_sales"), nil, nil)
}

func (s *site) pageShopResend(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "shop_sales", "menu.shop_sales")
	if _, err := shop.Resend(c.R.Context(), c.Actor, id); err != nil {
		return s.shopSalePage(c, v, nil, err)
	}
	s.SetFlash(c, v.T("shop.resent"), false)
	return web.Redirect(c, "/online-shop/sales/"+strconv.FormatInt(id, 10))
}

// pageShopReveal answers the sale page with the contact shown (never
// through a redirect or the flash, so it is not kept anywhere); the audit
// line it adds is on the same page.
func (s *site) pageShopReveal(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "shop_sales", "menu.shop_sales")
	ct, err := shop.Reveal(c.R.Context(), c.Actor, id)
	if err != nil {
		return s.shopSalePage(c, v, nil, err)
	}
	c.W.Header().Set("Cache-Control", "no-store")
	return s.shopSalePage(c, v, ct, nil)
}

// The buyers' pages: the storefront with a form per offer, the answer of a
// purchase (pay by the instructions, or follow the provider's link), and
// the return page where the codes appear once paid.

type storeView struct {
	Store     *shop.Storefront
	RequestID string // the form's retry key: a double submit starts one payment
	Failed    int64  // the offer whose form was refused
}

func (s *site) storePage(c *web.Ctx, v *web.View, failed int64, err error) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	sf, serr := shop.PublicStorefront(c.R.Context(), c.Tenant)
	if serr != nil {
		return serr
	}
	rid := app.NewUUID()
	if err != nil && v.Form.Get("request_id") != "" {
		rid = v.Form.Get("request_id")
	}
	v.Data = &storeView{Store: sf, RequestID: rid, Failed: failed}
	if err != nil {
		return s.FormError(c, "shop_store", v, err)
	}
	return s.Render(c, http.StatusOK, "shop_store", v)
}

func (s *site) pageStore(c *web.Ctx) error {
	return s.storePage(c, s.NewView(c, "", "store.title"), 0, nil)
}

type storeReturnView struct {
	R            *shop.Receipt
	Instructions string // right after a manual purchase
	PayURL       string // the provider's page, right after a redirecting purchase
	ReturnURL    string
}

func (s *site) pageStoreBuy(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "", "store.title")
	v.Form = f
	id, _ := strconv.ParseInt(f.Get("series_id"), 10, 64)
	q, qerr := strconv.Atoi(f.Get("quantity"))
	if qerr != nil && f.Get("quantity") != "" {
		return s.storePage(c, v, id, app.ErrValidation("out_of_range", "quantity"))
	}
	p, err := shop.Buy(c.R.Context(), c.Tenant, shop.BuyInput{SeriesID: id, Quantity: q, Gateway: f.Get("gateway"), Contact: f.Get("contact"),
		RequestID: f.Get("request_id"), Origin: web.RequestOrigin(c.R)})
	if err != nil {
		return s.storePage(c, v, id, err)
	}
	token := p.ReturnURL[strings.LastIndexByte(p.ReturnURL, '/')+1:]
	r, err := shop.GetReceipt(c.R.Context(), c.Tenant, token)
	if err != nil {
		return err
	}
	rv := s.NewView(c, "", "store.return_title")
	rv.Data = &storeReturnView{R: r, Instructions: p.Instructions, PayURL: p.RedirectURL, ReturnURL: "/shop/return/" + token}
	return s.Render(c, http.StatusOK, "shop_store_return", rv)
}

func (s *site) pageStoreReturn(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	token := c.R.PathValue("token")
	r, err := shop.GetReceipt(c.R.Context(), c.Tenant, token)
	if err != nil {
		return err
	}
	v := s.NewView(c, "", "store.return_title")
	c.W.Header().Set("Referrer-Policy", "no-referrer")
	v.Data = &storeReturnView{R: r, ReturnURL: "/shop/return/" + token}
	return s.Render(c, http.StatusOK, "shop_store_return", v)
}
