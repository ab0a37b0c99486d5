package payments

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v84"
	"github.com/stripe/stripe-go/v84/webhook"

	"xr/app"
)

// stripeProvider collects through Stripe Checkout with the official
// library: Begin creates a Checkout Session (idempotent on the payment's
// reference) and sends the payer to its URL; Stripe reports the outcome to
// the webhook row, verified with the library's signature check.
type stripeProvider struct{}

func (stripeProvider) Code() string         { return "stripe" }
func (stripeProvider) Name() string         { return "Card (Stripe)" }
func (stripeProvider) SecretKeys() []string { return []string{"api_key", "webhook_secret"} }

// stripeMinSession is the shortest Checkout Session Stripe accepts: a
// payment expiring sooner (a shop hold) keeps its session open that long,
// and a success after the payment expired is held for review (settle.go).
const stripeMinSession = 31 * time.Minute

// Lifetime: an hour (Stripe accepts 30 minutes to 24 hours for a session).
func (stripeProvider) Lifetime() time.Duration { return time.Hour }

func (stripeProvider) client(env Env) *stripe.Client {
	cfg := &stripe.BackendConfig{HTTPClient: env.Client, MaxNetworkRetries: stripe.Int64(1),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}}
	if env.APIBase != "" {
		cfg.URL = stripe.String(env.APIBase)
	}
	b := stripe.GetBackendWithConfig(stripe.APIBackend, cfg)
	return stripe.NewClient(env.Secrets["api_key"], stripe.WithBackends(&stripe.Backends{API: b, Connect: b, Uploads: b, MeterEvents: b}))
}

func (s stripeProvider) Begin(ctx context.Context, env Env, p *Payment) (*Begun, error) {
	if env.Secrets["api_key"] == "" {
		return nil, app.ErrConflict("gateway_not_configured")
	}
	minor, err := toMinor(p.Total, p.Currency)
	if err != nil {
		return nil, err
	}
	ret := env.ReturnURL
	sep := "?"
	if strings.Contains(ret, "?") {
		sep = "&"
	}
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		ClientReferenceID: stripe.String(p.Reference),
		SuccessURL:        stripe.String(ret + sep + "result=success"),
		CancelURL:         stripe.String(ret + sep + "result=cancel"),
		ExpiresAt:         stripe.Int64(max(p.ExpiresAt.Unix(), time.Now().Add(stripeMinSession).Unix())),
		Metadata:          map[string]string{"xr_reference": p.Reference},
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(strings.ToLower(p.Currency)),
				UnitAmount:  stripe.Int64(minor),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(describe(p))},
			},
		}},
	}
	params.SetIdempotencyKey("xr-" + p.Reference)
	cs, err := s.client(env).V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		var se *stripe.Error
		if errors.As(err, &se) {
			return nil, app.ErrBadGateway("payment_provider_error").With("provider_message", se.Msg)
		}
		return nil, app.ErrBadGateway("payment_provider_unreachable")
	}
	return &Begun{ProviderRef: cs.ID, RedirectURL: cs.URL}, nil
}

// ParseNotice verifies Stripe's signature (webhook.ConstructEventWithOptions
// with the gateway's signing secret and the default 5-minute tolerance) and
// maps the Checkout Session events to outcomes.
func (stripeProvider) ParseNotice(env Env, body []byte, header http.Header) (*Notice, error) {
	secret := env.Secrets["webhook_secret"]
	if secret == "" {
		return nil, app.ErrConflict("gateway_not_configured")
	}
	ev, err := webhook.ConstructEventWithOptions(body, header.Get("Stripe-Signature"), secret,
		webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		return nil, app.ErrValidation("signature_invalid", "")
	}
	var outcome string
	switch ev.Type {
	case "checkout.session.completed":
		outcome = StatePending
	case "checkout.session.async_payment_succeeded":
		outcome = StateSucceeded
	case "checkout.session.async_payment_failed":
		outcome = StateFailed
	case "checkout.session.expired":
		outcome = StateExpired
	default:
		return nil, nil
	}
	var cs stripe.CheckoutSession
	if ev.Data == nil || cs.UnmarshalJSON(ev.Data.Raw) != nil || cs.ID == "" {
		return nil, app.ErrValidation("notice_invalid", "")
	}
	if ev.Type == "checkout.session.completed" && cs.PaymentStatus == stripe.CheckoutSessionPaymentStatusPaid {
		outcome = StateSucceeded
	}
	cur := strings.ToUpper(string(cs.Currency))
	total, err := fromMinor(cs.AmountTotal, cur)
	if err != nil {
		return nil, app.ErrValidation("notice_invalid", "")
	}
	return &Notice{Gateway: "stripe", EventID: ev.ID, ProviderRef: cs.ID, Reference: cs.ClientReferenceID,
		Outcome: outcome, Total: total, Currency: cur, HasAmount: outcome == StateSucceeded,
		Detail: string(ev.Type)}, nil
}

// Stripe counts in the currency's minor unit: most currencies have two
// decimals, these none and these three (Stripe's currency list).
var (
	zeroDecimal  = set("BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF")
	threeDecimal = set("BHD JOD KWD OMR TND")
)

func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(s) {
		m[f] = true
	}
	return m
}

// minorFactor is how many thousandths one minor unit of cur is.
func minorFactor(cur string) int64 {
	switch {
	case zeroDecimal[strings.ToUpper(cur)]:
		return 1000
	case threeDecimal[strings.ToUpper(cur)]:
		return 1
	}
	return 10
}

func toMinor(m app.Money, cur string) (int64, error) {
	f := minorFactor(cur)
	if int64(m)%f != 0 {
		return 0, app.ErrValidation("amount_precision", "amount")
	}
	return int64(m) / f, nil
}

func fromMinor(n int64, cur string) (app.Money, error) {
	f := minorFactor(cur)
	if n < 0 || n > (1<<62)/f {
		return 0, fmt.Errorf("amount out of range")
	}
	return app.Money(n * f), nil
}

func describe(p *Payment) string {
	return "Payment " + p.Reference + " (" + p.Purpose + ")"
}
