package my

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"xr/app"
	"xr/app/payments"
	"xr/app/portal"
	"xr/web"
)

// The subscriber pages under /my/ (mechanism in site.go). Each handler
// calls the app function of its portal API row with the subscriber actor.
func (s *site) homePages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/my/{$}", Access: web.Subscriber, API: "GET /portal/me", H: s.pageMyHome},
		{M: "GET", P: "/my/usage", Access: web.Subscriber, API: "GET /portal/usage", H: s.pageMyUsage},
		{M: "GET", P: "/my/money", Access: web.Subscriber, API: "GET /portal/invoices", H: s.pageMyMoney},
		{M: "GET", P: "/my/invoices/{id}", Access: web.Subscriber, API: "GET /portal/invoices/{id}", H: s.pageMyInvoice},
		{M: "GET", P: "/my/redeem", Access: web.Subscriber, H: s.pageMyRedeem},
		{M: "POST", P: "/my/redeem", Access: web.Subscriber, API: "POST /portal/cards/redeem", H: s.pageMyRedeemPost},
		{M: "GET", P: "/my/renew", Access: web.Subscriber, API: "GET /portal/profiles", H: s.pageMyRenew},
		{M: "POST", P: "/my/renew", Access: web.Subscriber, API: "POST /portal/renew", H: s.pageMyRenewPost},
		{M: "GET", P: "/my/pay", Access: web.Subscriber, API: "GET /portal/payments/gateways", H: s.pageMyPay},
		{M: "POST", P: "/my/pay", Access: web.Subscriber, API: "POST /portal/deposit", H: s.pageMyPayPost},
		{M: "GET", P: "/my/payments/{reference}", Access: web.Subscriber, H: s.pageMyPayment},
	}
}

// myHome is the home page's data: the record, its state in words and the
// one next action.
type myHome struct {
	Me           *portal.Me
	StatusText   string
	StatusClass  string // ok, warn, bad
	BytesLeft    int64
	LowMark      int64
	DaysLeft     int64
	DaysLeftText string
	Next         myAction
	More         []myAction
}

type myAction struct{ Href, Label string }

func (s *site) pageMyHome(c *web.Ctx) error {
	me, err := portal.GetMe(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	v := s.NewView(c, "home", "my.home_title")
	v.Data = myHomeOf(v, me, c.Tenant.Now())
	return s.Render(c, http.StatusOK, "home", v)
}

// myHomeOf words the subscriber's state: what a person needs to know first.
func myHomeOf(v *web.View, me *portal.Me, now time.Time) *myHome {
	h := &myHome{Me: me, StatusClass: "ok"}
	q := me.Quota
	if q.BytesLimit > 0 {
		h.BytesLeft = max(q.BytesLimit-q.UsedBytes, 0)
		h.LowMark = q.BytesLimit / 10
	}
	st := me.Status
	renew := myAction{Href: "/my/renew", Label: "my.renew"}
	topUp := myAction{Href: "/my/pay", Label: "my.top_up"}
	redeem := myAction{Href: "/my/redeem", Label: "my.redeem"}
	switch {
	case !st.Enabled:
		h.StatusText, h.StatusClass, h.Next = v.T("my.st_disabled"), "bad", topUp
	case me.Expiration.IsZero():
		h.StatusText, h.StatusClass, h.Next = v.T("my.st_never"), "warn", renew
	case st.Expired:
		days := int64(now.Sub(me.Expiration.Time).Hours() / 24)
		h.StatusText, h.StatusClass, h.Next = v.N("my.st_expired_days", days), "bad", renew
		if days == 0 {
			h.StatusText = v.T("my.st_expired_today")
		}
	case st.FUP:
		h.StatusText, h.StatusClass, h.Next = v.T("my.st_fup"), "warn", renew
	case !st.HaveQuota:
		h.StatusText, h.StatusClass, h.Next = v.T("my.st_no_quota"), "bad", renew
	default:
		left := me.Expiration.Time.Sub(now)
		if left < 24*time.Hour {
			// Hours left, not "active until today": a warning with the time.
			hours := int64((left + time.Hour - 1) / time.Hour)
			h.StatusText, h.StatusClass, h.Next = fmt.Sprintf(v.T("my.st_expires_soon"), me.Expiration.Time.In(v.Loc).Format("15:04"), v.N("n.hours", hours)), "warn", renew
			break
		}
		h.StatusText, h.Next = fmt.Sprintf(v.T("my.st_active_until"), v.Date(me.Expiration.Time)), topUp
		h.DaysLeft = int64(left.Hours() / 24)
		h.DaysLeftText = v.N("my.days_left", h.DaysLeft)
	}
	for _, a := range []myAction{renew, topUp, redeem, {Href: "/my/plans", Label: "my.plans_title"}} {
		if a != h.Next {
			h.More = append(h.More, a)
		}
	}
	return h
}

// myUsage is the usage page's data.
type myUsage struct {
	Usage    *portal.Usage
	Active   []portal.UsageDay // days with use, newest first (the table)
	Months   []portal.UsageMonth
	Sessions []portal.RadiusSession
	Bars     []myBar
	Width    int
}

type myBar struct {
	Day, Label   string
	X, Y, Height int
}

func (s *site) pageMyUsage(c *web.Ctx) error {
	ctx := c.R.Context()
	u, err := portal.GetUsage(ctx, c.Actor)
	if err != nil {
		return err
	}
	lq, err := app.ParseList(url.Values{"page_size": {"20"}}, portal.SessionSpec())
	if err != nil {
		return err
	}
	sess, err := portal.Sessions(ctx, c.Actor, lq)
	if err != nil {
		return err
	}
	months, err := portal.UsageMonths(ctx, c.Actor)
	if err != nil {
		return err
	}
	d := &myUsage{Usage: u, Sessions: sess.Rows, Months: months, Width: max(len(u.Days)*10, 10)}
	var peak int64
	for _, day := range u.Days {
		peak = max(peak, day.Bytes)
	}
	for i := len(u.Days) - 1; i >= 0; i-- {
		if day := u.Days[i]; day.Bytes > 0 || day.Seconds > 0 {
			d.Active = append(d.Active, day)
		}
	}
	for i, day := range u.Days {
		b := myBar{Day: day.Date, Label: web.HumanBytes(day.Bytes), X: i * 10}
		if peak > 0 && day.Bytes > 0 {
			b.Height = max(int(day.Bytes*100/peak), 1)
		}
		b.Y = 100 - b.Height
		d.Bars = append(d.Bars, b)
	}
	v := s.NewView(c, "usage", "my.usage_title")
	v.Data = d
	return s.Render(c, http.StatusOK, "usage", v)
}

// myMoney is the money page's data.
type myMoney struct {
	Me       *portal.Me
	Payments []payments.Payment
	Ledger   []portal.LedgerEntry
	Invoices []portal.Invoice
}

func (s *site) pageMyMoney(c *web.Ctx) error {
	ctx := c.R.Context()
	d := &myMoney{}
	var err error
	if d.Me, err = portal.GetMe(ctx, c.Actor); err != nil {
		return err
	}
	first := url.Values{"page_size": {"20"}}
	lq, err := app.ParseList(first, portal.LedgerSpec())
	if err != nil {
		return err
	}
	led, err := portal.Ledger(ctx, c.Actor, lq)
	if err != nil {
		return err
	}
	d.Ledger = led.Rows
	if lq, err = app.ParseList(first, portal.InvoiceSpec()); err != nil {
		return err
	}
	inv, err := portal.Invoices(ctx, c.Actor, lq)
	if err != nil {
		return err
	}
	d.Invoices = inv.Rows
	if lq, err = app.ParseList(first, payments.TransactionSpec()); err != nil {
		return err
	}
	// Payments switched off: the page shows the rest.
	if pay, err := payments.Transactions(ctx, c.Actor, lq); err == nil {
		d.Payments = pay.Rows
	} else if e := app.AsError(err); e == nil || e.Reason != "feature_disabled" {
		return err
	}
	v := s.NewView(c, "money", "my.money_title")
	v.Data = d
	return s.Render(c, http.StatusOK, "money", v)
}

func (s *site) pageMyInvoice(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	inv, err := portal.GetInvoice(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "money", "my.invoice")
	v.Data = inv
	return s.Render(c, http.StatusOK, "invoice", v)
}

func (s *site) pageMyRedeem(c *web.Ctx) error {
	v := s.NewView(c, "pay", "my.redeem_title")
	v.Form.Set("request_id", app.NewUUID())
	v.Form.Set("code", c.Query().Get("code"))
	return s.Render(c, http.StatusOK, "redeem", v)
}

// myCardCode takes a typed code or the payload of a printed card's QR
// code (a URL carrying code=..., or the bare code).
func myCardCode(raw string) string {
	raw = strings.TrimSpace(raw)
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		if code := u.Query().Get("code"); code != "" {
			return code
		}
	}
	return raw
}

func (s *site) pageMyRedeemPost(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "pay", "my.redeem_title")
	v.Form = f
	res, err := portal.Redeem(c.R.Context(), c.Actor, portal.RedeemInput{Code: myCardCode(f.Get("code")), RequestID: f.Get("request_id")})
	if err != nil {
		// A refused card (unknown, used, expired: one answer) is about the
		// code typed: shown beside it.
		if e := app.AsError(err); e != nil && (e.Status == http.StatusNotFound || e.Status == http.StatusConflict || e.Status == http.StatusBadRequest) {
			v.Errors["code"] = web.Message(v.Lang, e.Reason, e.Code)
			return s.Render(c, e.Status, "redeem", v)
		}
		return s.FormError(c, "redeem", v, err)
	}
	msg := v.T("my.redeemed")
	if res.NewBalance != nil {
		msg += " " + v.T("my.balance") + ": " + v.Money(*res.NewBalance)
	}
	s.SetFlash(c, msg, false)
	return web.Redirect(c, myPrefix)
}

// myRenew is the renewal quote.
type myRenew struct {
	Plan       string
	Price      app.Money
	Balance    app.Money
	After      app.Money
	Expiration app.Time
	CanPay     bool
	Missing    string
	RequestID  string
}

func (s *site) renewQuote(c *web.Ctx) (*myRenew, error) {
	ctx := c.R.Context()
	me, err := portal.GetMe(ctx, c.Actor)
	if err != nil {
		return nil, err
	}
	plans, err := portal.Profiles(ctx, c.Actor)
	if err != nil {
		return nil, err
	}
	d := &myRenew{Balance: me.Balance, RequestID: app.NewUUID()}
	for _, p := range plans {
		if me.ProfileID != nil && p.ID == *me.ProfileID {
			from := c.Tenant.Now()
			if me.Expiration.After(from) {
				from = me.Expiration.Time
			}
			d.Plan, d.Price, d.Expiration = p.Name, p.Price, app.T(from.Add(time.Duration(p.DurationDays)*24*time.Hour))
		}
	}
	if d.Plan == "" {
		return nil, app.ErrValidation("profile_required", "profile_id")
	}
	d.After = d.Balance - d.Price
	d.CanPay = d.After >= 0 || (me.DebtLimit == nil) || -d.After <= *me.DebtLimit
	if !d.CanPay {
		d.Missing = (-d.After).String()
	}
	return d, nil
}

func (s *site) pageMyRenew(c *web.Ctx) error {
	d, err := s.renewQuote(c)
	if err != nil {
		return err
	}
	v := s.NewView(c, "home", "my.renew_title")
	v.Data = d
	return s.Render(c, http.StatusOK, "renew", v)
}

func (s *site) pageMyRenewPost(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	res, err := portal.Renew(c.R.Context(), c.Actor, portal.RenewInput{RequestID: c.R.PostFormValue("request_id")})
	v := s.NewView(c, "home", "my.renew_title")
	if err != nil {
		d, qerr := s.renewQuote(c)
		if qerr != nil {
			return qerr
		}
		v.Data = d
		return s.FormError(c, "renew", v, err)
	}
	s.SetFlash(c, fmt.Sprintf(v.T("my.renewed"), res.ProfileName, v.Date(res.Expiration.Time)), false)
	return web.Redirect(c, myPrefix)
}

// myPay is the top-up form's data.
type myPay struct {
	Gateways  []payments.PortalGateway
	RequestID string
}

func (s *site) payPage(c *web.Ctx, v *web.View, status int, err error) error {
	gw, gerr := payments.Gateways(c.R.Context(), c.Actor)
	if e := app.AsError(gerr); e != nil && e.Reason == "feature_disabled" {
		gw, gerr = nil, nil
	}
	if gerr != nil {
		return gerr
	}
	rid := v.Form.Get("request_id")
	if rid == "" {
		rid = app.NewUUID()
	}
	v.Data = &myPay{Gateways: gw, RequestID: rid}
	if err != nil {
		return s.FormError(c, "pay", v, err)
	}
	return s.Render(c, status, "pay", v)
}

func (s *site) pageMyPay(c *web.Ctx) error {
	v := s.NewView(c, "pay", "my.pay_title")
	v.Form.Set("amount", c.Query().Get("amount"))
	return s.payPage(c, v, http.StatusOK, nil)
}

func (s *site) pageMyPayPost(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "pay", "my.pay_title")
	v.Form = f
	amt, err := web.FormMoney(f, "amount")
	if err == nil && !amt.Set {
		err = app.ErrValidation("amount_required", "amount")
	}
	if err != nil {
		return s.payPage(c, v, http.StatusBadRequest, err)
	}
	out, err := payments.Deposit(c.R.Context(), c.Actor, payments.DepositInput{Gateway: f.Get("gateway"), Amount: amt.V, RequestID: f.Get("request_id"),
		ReturnURL: web.PaymentReturnURL(c.R)})
	if err != nil {
		return s.payPage(c, v, http.StatusBadRequest, err)
	}
	// The payment's page: its state, and for a provider with its own page
	// the link there (the page's CSP allows forms to post only here, so a
	// form's redirect cannot leave for the provider; a link can).
	return web.Redirect(c, myPrefix+"payments/"+url.PathEscape(out.Payment.Reference))
}

// myPayment is a payment's state page data.
type myPayment struct {
	P            *payments.Payment
	Open         bool
	Instructions string
}

func (s *site) pageMyPayment(c *web.Ctx) error {
	p, instr, err := payments.MyPayment(c.R.Context(), c.Actor, c.R.PathValue("reference"))
	if err != nil {
		return err
	}
	v := s.NewView(c, "pay", "my.payment_title")
	v.Data = &myPayment{P: p, Open: p.State == payments.StateInitiated || p.State == payments.StatePending, Instructions: instr}
	return s.Render(c, http.StatusOK, "payment", v)
}
