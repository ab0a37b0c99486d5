package my

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"xr/app"
	"xr/app/payments"
	"xr/app/portal"
	"xr/app/selfservice"
	"xr/app/subs"
	"xr/web"
)

// Plan pages under /my/: the plans the subscriber may move to, a quote
// before every change (renew, change now or at renewal, extension) and its
// execution, and speed boosts. Each calls the self-service area's portal
// function of its API row; a feature switched off is not offered.
func (s *site) myPlanPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/my/plans", Access: web.Subscriber, API: "GET /portal/profiles", H: s.pageMyPlans},
		{M: "POST", P: "/my/quote", Access: web.Subscriber, API: "POST /portal/quote", H: s.pageMyQuote},
		{M: "POST", P: "/my/quote/confirm", Access: web.Subscriber, H: s.pageMyQuoteConfirm},
		{M: "GET", P: "/my/speed", Access: web.Subscriber, API: "GET /portal/speed", H: s.pageMySpeed},
		{M: "POST", P: "/my/speed", Access: web.Subscriber, API: "PUT /portal/speed", H: s.pageMySpeedBuy},
		{M: "POST", P: "/my/speed/cancel", Access: web.Subscriber, API: "DELETE /portal/speed", H: s.pageMySpeedCancel},
		{M: "POST", P: "/my/addons", Access: web.Subscriber, API: "POST /portal/purchase", H: s.pageMyAddonBuy},
	}
}

type myPlans struct {
	Me                    *portal.Me
	Plans                 []portal.Plan
	Change, Extend, Speed bool
	Addons                []subs.Addon
	Gateways              []payments.PortalGateway
	RequestID             string
}

func (s *site) pageMyPlans(c *web.Ctx) error {
	ctx := c.R.Context()
	d := &myPlans{}
	var err error
	if d.Me, err = portal.GetMe(ctx, c.Actor); err != nil {
		return err
	}
	if d.Plans, err = portal.Profiles(ctx, c.Actor); err != nil {
		return err
	}
	d.Change = portal.RequireFeature(ctx, c.Tenant, portal.FeatureChangeProfile) == nil
	d.Extend = portal.RequireFeature(ctx, c.Tenant, portal.FeatureExtend) == nil
	d.Speed = portal.RequireFeature(ctx, c.Tenant, portal.FeatureSpeedBoost) == nil
	// Add-ons are bought online through the payment methods.
	if d.Gateways, err = payments.Gateways(ctx, c.Actor); err != nil && !switchedOff(err) {
		return err
	}
	if len(d.Gateways) > 0 {
		if d.Addons, err = portal.Addons(ctx, c.Actor); err != nil {
			return err
		}
	}
	d.RequestID = app.NewUUID()
	v := s.NewView(c, "home", "my.plans_title")
	v.Data = d
	return s.Render(c, http.StatusOK, "plans", v)
}

// pageMyQuote prices an intent and shows it with the confirm button: the
// subscriber sees exactly what executing it will charge.
func (s *site) pageMyQuote(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	in := selfservice.QuoteInput{Intent: selfservice.Intent(f.Get("intent"))}
	if raw := f.Get("profile_id"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return app.ErrValidation("invalid_type", "profile_id")
		}
		in.ProfileID = id
	}
	q, err := selfservice.PriceQuote(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.myRefused(c, err)
	}
	v := s.NewView(c, "home", "my.quote_title")
	v.Form.Set("request_id", app.NewUUID())
	v.Data = q
	return s.Render(c, http.StatusOK, "quote", v)
}

// myRefused shows a business refusal (not enough money, not allowed, the
// month's extensions used) as a message on the plans page.
func (s *site) myRefused(c *web.Ctx, err error) error {
	e := app.AsError(err)
	if e == nil || e.Status >= 500 || e.Status == http.StatusUnauthorized {
		return err
	}
	v := s.NewView(c, "home", "my.plans_title")
	s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
	return web.Redirect(c, myPrefix+"plans")
}

func (s *site) pageMyQuoteConfirm(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	id, err := strconv.ParseInt(f.Get("quote_id"), 10, 64)
	if err != nil {
		return app.ErrValidation("invalid_type", "quote_id")
	}
	ctx, rid := c.R.Context(), f.Get("request_id")
	var res *selfservice.Result
	switch f.Get("intent") {
	case selfservice.IntentExtend:
		res, err = selfservice.Extend(ctx, c.Actor, selfservice.ExtendInput{QuoteID: id, RequestID: rid})
	case selfservice.IntentRenew:
		var r *portalRenewResult
		r, err = s.renewFromQuote(c, rid)
		if err == nil {
			v := s.NewView(c, "home", "my.plans_title")
			s.SetFlash(c, fmt.Sprintf(v.T("my.renewed"), r.plan, r.until), false)
			return web.Redirect(c, myPrefix)
		}
	default:
		res, err = selfservice.ChangeProfile(ctx, c.Actor, selfservice.ChangeInput{QuoteID: id, Intent: selfservice.Intent(f.Get("intent")), RequestID: rid})
	}
	if err != nil {
		return s.myRefused(c, err)
	}
	v := s.NewView(c, "home", "my.plans_title")
	msg := fmt.Sprintf(v.T("my.q_done"), v.Money(res.Charged))
	if res.Pending != nil {
		msg = fmt.Sprintf(v.T("my.q_pending"), v.Date(res.Pending.EffectiveAt.Time))
	}
	s.SetFlash(c, msg, false)
	return web.Redirect(c, myPrefix)
}

type portalRenewResult struct{ plan, until string }

// renewFromQuote renews the current plan (the portal's renew row; its
// price is the quote's).
func (s *site) renewFromQuote(c *web.Ctx, requestID string) (*portalRenewResult, error) {
	res, err := portal.Renew(c.R.Context(), c.Actor, portal.RenewInput{RequestID: requestID})
	if err != nil {
		return nil, err
	}
	v := s.NewView(c, "home", "")
	return &portalRenewResult{plan: res.ProfileName, until: v.Date(res.Expiration.Time)}, nil
}

func (s *site) pageMySpeed(c *web.Ctx) error {
	sp, err := selfservice.GetSpeed(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	v := s.NewView(c, "home", "my.sp_title")
	v.Form.Set("request_id", app.NewUUID())
	v.Data = sp
	return s.Render(c, http.StatusOK, "speed", v)
}

func (s *site) pageMySpeedBuy(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	id, err := strconv.ParseInt(c.R.PostFormValue("option_id"), 10, 64)
	if err != nil {
		return app.ErrValidation("invalid_type", "option_id")
	}
	v := s.NewView(c, "home", "my.sp_title")
	if _, err := selfservice.SetSpeed(c.R.Context(), c.Actor, selfservice.SpeedInput{OptionID: id, RequestID: c.R.PostFormValue("request_id")}); err != nil {
		if e := app.AsError(err); e != nil && e.Status < 500 && e.Status != http.StatusUnauthorized {
			s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
			return web.Redirect(c, myPrefix+"speed")
		}
		return err
	}
	s.SetFlash(c, v.T("my.sp_bought"), false)
	return web.Redirect(c, myPrefix+"speed")
}

func (s *site) pageMySpeedCancel(c *web.Ctx) error {
	v := s.NewView(c, "home", "my.sp_title")
	if _, err := selfservice.CancelSpeed(c.R.Context(), c.Actor); err != nil {
		return err
	}
	s.SetFlash(c, v.T("my.sp_cancelled"), false)
	return web.Redirect(c, myPrefix+"speed")
}

// pageMyAddonBuy pays an add-on online (the portal's purchase row, kind
// addon) and opens the payment's page.
func (s *site) pageMyAddonBuy(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	id, err := strconv.ParseInt(f.Get("addon_id"), 10, 64)
	if err != nil {
		return app.ErrValidation("invalid_type", "addon_id")
	}
	out, err := payments.Purchase(c.R.Context(), c.Actor, payments.PurchaseInput{Gateway: f.Get("gateway"), Kind: "addon", AddonID: id,
		RequestID: f.Get("request_id"), ReturnURL: web.PaymentReturnURL(c.R)})
	if err != nil {
		return s.myRefused(c, err)
	}
	return web.Redirect(c, myPrefix+"payments/"+url.PathEscape(out.Payment.Reference))
}
