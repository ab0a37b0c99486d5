package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/payments"
	"xr/app/reports"
	"xr/app/subs"
	"xr/web"
)

// Payment pages: the list of payments (the gateway-txns report's rows,
// filtered by state, those waiting for staff first), one payment with its
// log and the confirm / reject forms, and the gateway settings. Each calls
// the app function of its API row in web/payments_routes.go with that
// row's permission.
func (s *site) paymentPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/payments", Access: web.Staff, API: "GET /admin/reports/gateway-txns", H: s.pagePayments, Menu: "payments"},
		{M: "GET", P: "/payment-gateways", Access: web.Staff, API: "GET /admin/payments/gateways", H: s.pagePaymentGateways, Menu: "payment_gateways"},
		{M: "POST", P: "/payment-gateways/{code}", Access: web.Staff, API: "PUT /admin/payments/gateways/{code}", H: s.pagePaymentGatewaySave},
		{M: "GET", P: "/payments/{id}", Access: web.Staff, API: "GET /admin/payments/{id}", H: s.pagePayment},
		{M: "POST", P: "/payments/{id}/confirm", Access: web.Staff, API: "POST /admin/payments/{id}/confirm", H: s.pagePaymentDecide(true)},
		{M: "POST", P: "/payments/{id}/reject", Access: web.Staff, API: "POST /admin/payments/{id}/reject", H: s.pagePaymentDecide(false)},
	}
}

// paymentStates are the list's filter tabs; "" lists every state.
var paymentStates = []string{"", "review", "pending", "succeeded", "failed", "expired"}

type paymentsView struct {
	Rows   []reports.GatewayTxn
	Meta   app.Meta
	State  string
	States []string
}

func (s *site) pagePayments(c *web.Ctx) error {
	v := s.NewView(c, "payments", "menu.payments")
	state := c.Query().Get("state")
	q := url.Values{"page_size": {"50"}, "page": {c.Query().Get("page")}}
	if state != "" {
		q.Set("filter[status]", state)
	}
	lq, err := app.ParseList(q, reports.GatewayTxnsSpec)
	if err != nil {
		return err
	}
	page, err := reports.GatewayTxns(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	v.Data = &paymentsView{Rows: page.Rows, Meta: page.Meta, State: state, States: paymentStates}
	return s.Render(c, http.StatusOK, "payments", v)
}

type paymentView struct {
	P         *payments.Detail
	CanDecide bool
}

func (s *site) paymentPage(c *web.Ctx, status int, v *web.View, err error) error {
	id, ierr := c.ID("id")
	if ierr != nil {
		return ierr
	}
	d, gerr := payments.GetDetail(c.R.Context(), c.Actor, id)
	if gerr != nil {
		return gerr
	}
	open := d.State == payments.StateReview || (d.State == payments.StatePending && d.Gateway == "manual")
	v.Data = &paymentView{P: d, CanDecide: open && c.Actor.Can(subs.PermUsersDeposit)}
	if err != nil {
		return s.FormError(c, "payment", v, err)
	}
	return s.Render(c, status, "payment", v)
}

func (s *site) pagePayment(c *web.Ctx) error {
	return s.paymentPage(c, http.StatusOK, s.NewView(c, "payments", "menu.payments"), nil)
}

func (s *site) pagePaymentDecide(confirm bool) web.HandlerFunc {
	return func(c *web.Ctx) error {
		if err := web.ParseForm(c); err != nil {
			return err
		}
		id, err := c.ID("id")
		if err != nil {
			return err
		}
		f := c.R.PostForm
		v := s.NewView(c, "payments", "menu.payments")
		v.Form = f
		in := payments.DecisionInput{Note: strings.TrimSpace(f.Get("note"))}
		if confirm {
			m, perr := web.FormMoney(f, "received_total")
			if perr != nil {
				return s.paymentPage(c, http.StatusOK, v, perr)
			}
			if m.Set {
				in.ReceivedTotal = &m.V
			}
		}
		decide, msg := payments.Reject, "payment.rejected"
		if confirm {
			decide, msg = payments.Confirm, "payment.confirmed"
		}
		if _, err := decide(c.R.Context(), c.Actor, id, in); err != nil {
			return s.paymentPage(c, http.StatusOK, v, err)
		}
		s.SetFlash(c, v.T(msg), false)
		return web.Redirect(c, "/payments/"+strconv.FormatInt(id, 10))
	}
}

type gatewaysView struct {
	Gateways []payments.Gateway
	Webhook  string // the address providers call back, for this host
	Failed   string // the provider whose form was refused: its errors show there
}

func (s *site) gatewaysPage(c *web.Ctx, status int, v *web.View, err error) error {
	list, lerr := payments.ListGateways(c.R.Context(), c.Actor)
	if lerr != nil {
		return lerr
	}
	v.Data = &gatewaysView{Gateways: list, Webhook: web.RequestOrigin(c.R) + "/api/v1/payments/webhooks/", Failed: c.R.PathValue("code")}
	if err != nil {
		return s.FormError(c, "payment_gateways", v, err)
	}
	return s.Render(c, status, "payment_gateways", v)
}

func (s *site) pagePaymentGateways(c *web.Ctx) error {
	return s.gatewaysPage(c, http.StatusOK, s.NewView(c, "payment_gateways", "menu.payment_gateways"), nil)
}

func (s *site) pagePaymentGatewaySave(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	code := c.R.PathValue("code")
	v := s.NewView(c, "payment_gateways", "menu.payment_gateways")
	v.Form = f
	fail := func(err error) error { return s.gatewaysPage(c, http.StatusOK, v, err) }
	enabled := f.Get("enabled") != ""
	in := payments.GatewayInput{Enabled: &enabled, Secrets: map[string]string{}}
	for _, k := range []struct {
		dst   **string
		field string
	}{{&in.DisplayName, "display_name"}, {&in.Currency, "currency"}, {&in.Instructions, "instructions"}} {
		val := strings.TrimSpace(f.Get(k.field))
		*k.dst = &val
	}
	for _, k := range []struct {
		dst   **app.Money
		field string
	}{{&in.MinAmount, "min_amount"}, {&in.FeeFixed, "fee_fixed"}} {
		m, err := web.FormMoney(f, k.field)
		if err != nil {
			return fail(err)
		}
		*k.dst = &m.V // empty: 0
	}
	// The percent is typed with up to two decimals (2.5 = 250 basis points).
	pct, err := web.FormMoney(f, "fee_percent")
	if err != nil || int64(pct.V)%10 != 0 {
		return fail(app.ErrValidation("out_of_range", "fee_percent"))
	}
	bps := int64(pct.V) / 10
	in.FeePercentBP = &bps
	for key, vals := range f {
		if name, ok := strings.CutPrefix(key, "secret_"); ok && strings.TrimSpace(vals[0]) != "" {
			in.Secrets[name] = strings.TrimSpace(vals[0])
		}
	}
	if _, err := payments.SetGateway(c.R.Context(), c.Actor, code, in); err != nil {
		return fail(err)
	}
	s.SetFlash(c, v.T("payment.gateway_saved"), false)
	return web.Redirect(c, "/payment-gateways")
}
