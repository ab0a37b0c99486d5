package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/pos"
	"xr/web"
)

// Point-of-sale pages: the till (open a shift, sell, recent sales, close
// the shift), a sale's receipt with its card codes and the void form, and
// a shift's report. Each calls the app function of its API row in
// web/pos_routes.go with that row's permission.
func (s *site) posPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/pos", Access: web.Staff, API: "GET /pos/sales", H: s.pagePOS, Menu: "pos"},
		{M: "POST", P: "/pos/shifts", Access: web.Staff, API: "POST /pos/shifts", H: s.pagePOSOpen},
		{M: "POST", P: "/pos/sell", Access: web.Staff, API: "POST /pos/sales", H: s.pagePOSSell},
		{M: "POST", P: "/pos/shifts/{id}/close", Access: web.Staff, API: "POST /pos/shifts/{id}/close", H: s.pagePOSClose},
		{M: "GET", P: "/pos/shifts/{id}/report", Access: web.Staff, API: "GET /pos/shifts/{id}/report", H: s.pagePOSReport},
		{M: "GET", P: "/pos/sales/{id}", Access: web.Staff, API: "GET /pos/sales/{id}/print-job", H: s.pagePOSSale},
		{M: "POST", P: "/pos/sales/{id}/void", Access: web.Staff, API: "POST /pos/sales/{id}/void", H: s.pagePOSVoid},
		{M: "POST", P: "/pos/sales/{id}/printed", Access: web.Staff, API: "POST /pos/sales/{id}/printed", H: s.pagePOSPrinted},
	}
}

type posView struct {
	Shift     *pos.Shift
	Products  *pos.Products
	Sales     []pos.Sale
	RequestID string
}

func (s *site) posTill(c *web.Ctx, status int, v *web.View, err error) error {
	ctx := c.R.Context()
	d := &posView{RequestID: app.NewUUID()}
	sh, serr := pos.CurrentShift(ctx, c.Actor)
	if serr == nil {
		d.Shift = sh
		prods, perr := pos.ListProducts(ctx, c.Actor)
		if perr != nil {
			return perr
		}
		d.Products = prods
		lq, lerr := app.ParseList(url.Values{"page_size": {"20"}, "filter[shift_id]": {strconv.FormatInt(sh.ID, 10)}}, pos.SaleListSpec())
		if lerr != nil {
			return lerr
		}
		page, lerr := pos.ListSales(ctx, c.Actor, lq)
		if lerr != nil {
			return lerr
		}
		d.Sales = page.Rows
	} else if e := app.AsError(serr); e == nil || e.Reason != "shift_not_open" {
		return serr
	}
	v.Data = d
	if err != nil {
		return s.FormError(c, "pos", v, err)
	}
	return s.Render(c, status, "pos", v)
}

func (s *site) pagePOS(c *web.Ctx) error {
	return s.posTill(c, http.StatusOK, s.NewView(c, "pos", "menu.pos"), nil)
}

func (s *site) pagePOSOpen(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "pos", "menu.pos")
	v.Form = f
	m, err := web.FormMoney(f, "opening_float")
	if err == nil {
		_, err = pos.OpenShift(c.R.Context(), c.Actor, pos.OpenShiftInput{OpeningFloat: m.V, Note: strings.TrimSpace(f.Get("note"))})
	}
	if err != nil {
		return s.posTill(c, http.StatusOK, v, err)
	}
	s.SetFlash(c, v.T("pos.flash_opened"), false)
	return web.Redirect(c, "/pos")
}

// posLine builds the one line of the till form: product is "card:<series>",
// "renewal" or "topup".
func posLine(f url.Values) (pos.LineInput, error) {
	var l pos.LineInput
	product := f.Get("product")
	qty, err := catInt(f, "quantity")
	if err != nil {
		return l, err
	}
	switch {
	case strings.HasPrefix(product, "card:"):
		id, perr := strconv.ParseInt(strings.TrimPrefix(product, "card:"), 10, 64)
		if perr != nil {
			return l, app.ErrValidation("batch_id_required", "product")
		}
		l = pos.LineInput{Kind: pos.KindCard, BatchID: id, Quantity: 1}
		if qty.Set {
			l.Quantity = qty.V
		}
	case product == pos.KindRenewal || product == pos.KindTopup:
		l = pos.LineInput{Kind: pos.LineKind(product), Username: strings.TrimSpace(f.Get("username"))}
		if product == pos.KindTopup {
			m, merr := web.FormMoney(f, "amount")
			if merr != nil {
				return l, merr
			}
			l.Amount = m.V
		}
	default:
		return l, app.ErrValidation("kind_required", "product")
	}
	return l, nil
}

// posField maps a refusal naming a line field to the till form's field.
func posField(err error) error {
	e := app.AsError(err)
	if e == nil {
		return err
	}
	switch {
	case strings.HasSuffix(e.Field, ".batch_id"), strings.HasSuffix(e.Field, ".kind"):
		e.Field = "product"
	case strings.HasSuffix(e.Field, ".quantity"):
		e.Field = "quantity"
	case strings.HasSuffix(e.Field, ".user_id"):
		e.Field = "username"
	case strings.HasSuffix(e.Field, ".amount"):
		e.Field = "amount"
	}
	return e
}

func (s *site) pagePOSSell(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "pos", "menu.pos")
	v.Form = f
	l, err := posLine(f)
	if err != nil {
		return s.posTill(c, http.StatusOK, v, err)
	}
	in := pos.SaleInput{RequestID: f.Get("request_id"), PaymentMethod: pos.PaymentMethod(f.Get("payment_method")), Lines: []pos.LineInput{l}}
	if in.PaymentMethod != "" && in.PaymentMethod != "cash" && in.PaymentMethod != "card" && in.PaymentMethod != "transfer" {
		return s.posTill(c, http.StatusOK, v, app.ErrValidation("invalid_enum", "payment_method"))
	}
	sale, err := pos.Sell(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.posTill(c, http.StatusOK, v, posField(err))
	}
	return web.Redirect(c, fmt.Sprintf("/pos/sales/%d", sale.ID))
}

func (s *site) pagePOSClose(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "pos", "menu.pos")
	v.Form = f
	m, err := web.FormMoney(f, "counted_cash")
	if err == nil {
		in := pos.CloseShiftInput{Note: strings.TrimSpace(f.Get("note"))}
		if m.Set {
			in.CountedCash = &m.V
		}
		_, err = pos.CloseShift(c.R.Context(), c.Actor, id, in)
	}
	if err != nil {
		return s.posTill(c, http.StatusOK, v, err)
	}
	s.SetFlash(c, v.T("pos.flash_closed"), false)
	return web.Redirect(c, fmt.Sprintf("/pos/shifts/%d/report", id))
}

func (s *site) pagePOSReport(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	r, err := pos.Report(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "pos", "pos.report_title")
	v.Data = r
	return s.Render(c, http.StatusOK, "pos_report", v)
}

type posSaleView struct {
	Job     *pos.PrintJob
	Receipt string // the 58 mm layout, as printed
	CanVoid bool
}

func (s *site) posSale(c *web.Ctx, status int, v *web.View, err error) error {
	id, ierr := c.ID("id")
	if ierr != nil {
		return ierr
	}
	pj, gerr := pos.GetPrintJob(c.R.Context(), c.Actor, id)
	if gerr != nil {
		return gerr
	}
	d := &posSaleView{Job: pj}
	if len(pj.Layouts) > 0 {
		d.Receipt = strings.Join(pj.Layouts[0].Lines, "\n")
	}
	d.CanVoid = pj.Sale.Status == "completed" && (c.Actor.Can(pos.PermPosVoid) || c.Tenant.Now().Before(pj.Sale.VoidableUntil.Time))
	v.Data = d
	if err != nil {
		return s.FormError(c, "pos_sale", v, err)
	}
	return s.Render(c, status, "pos_sale", v)
}

func (s *site) pagePOSSale(c *web.Ctx) error {
	return s.posSale(c, http.StatusOK, s.NewView(c, "pos", "pos.sale_title"), nil)
}

func (s *site) pagePOSVoid(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "pos", "pos.sale_title")
	if _, err := pos.Void(c.R.Context(), c.Actor, id, pos.VoidInput{Note: strings.TrimSpace(c.R.PostForm.Get("note"))}); err != nil {
		return s.posSale(c, http.StatusOK, v, err)
	}
	s.SetFlash(c, v.T("pos.voided"), false)
	return web.Redirect(c, fmt.Sprintf("/pos/sales/%d", id))
}

func (s *site) pagePOSPrinted(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if _, err := pos.Printed(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	v := s.NewView(c, "pos", "pos.sale_title")
	s.SetFlash(c, v.T("pos.printed"), false)
	return web.Redirect(c, fmt.Sprintf("/pos/sales/%d", id))
}
