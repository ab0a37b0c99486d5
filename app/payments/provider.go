package payments

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"time"

	"xr/app"
)

// Provider is one way of collecting money. Adding a provider is one file:
// a type implementing Provider (and Receiver when the provider calls back),
// and one line of the payments Module (ProviderExtension).
type Provider interface {
	Code() string // stable code stored on gateways and payments
	Name() string
	// SecretKeys are the secret settings a gateway of this provider needs;
	// the API accepts them write-only and keeps them sealed.
	SecretKeys() []string
	// Lifetime is how long a payment may stay open before it expires and
	// what it reserved returns.
	Lifetime() time.Duration
	// Begin asks the provider to collect p.Total, after the payment is
	// recorded and committed (the call is never inside a transaction).
	Begin(ctx context.Context, env Env, p *Payment) (*Begun, error)
}

// Receiver is a provider that reports outcomes by calling xr back
// (POST /payments/webhooks/{gateway}). ParseNotice verifies the request with
// the provider's own verification and answers the outcome it reports;
// (nil, nil) is a notice xr does not act on.
type Receiver interface {
	ParseNotice(env Env, body []byte, header http.Header) (*Notice, error)
}

// Env is what a provider call gets: its gateway row, the unsealed secrets,
// the return address and the HTTP client to reach the provider.
type Env struct {
	Gateway   *Gateway
	Secrets   map[string]string
	ReturnURL string
	Client    *http.Client
	// APIBase overrides the provider's API address (tests run a local
	// stand-in); empty means the provider's real address.
	APIBase string
}

// Begun is the provider's answer to Begin.
type Begun struct {
	ProviderRef string // the provider's id of this payment
	RedirectURL string // where the payer completes it; empty: by instructions
}

// Notice is an outcome reported by a provider (or by staff for manual).
type Notice struct {
	Gateway     string
	EventID     string // the provider's event id: a repeated notice is applied once
	ProviderRef string // the provider's id, or
	Reference   string // xr's reference of the payment
	Outcome     string // StateSucceeded, StateFailed, StateExpired, or StatePending (no change)
	Total       app.Money
	Currency    string
	HasAmount   bool // Total/Currency were reported and must match
	Detail      string
}

// ProviderPoint is the extension point of payment providers: a module
// gives one with ProviderExtension, and gateways find it by code.
const ProviderPoint = "payments.provider"

// ProviderExtension makes p available to gateways of the App a module is
// installed on (Module.Extensions).
func ProviderExtension(p Provider) app.Extension {
	return app.Extension{Point: ProviderPoint, Name: p.Code(), Value: p}
}

func providerOf(a *app.App, code string) (Provider, bool) {
	return app.ExtensionOf[Provider](a, ProviderPoint, code)
}

// ProviderCodes lists the App's providers, sorted.
func ProviderCodes(a *app.App) []string {
	var out []string
	for _, p := range app.Extensions[Provider](a, ProviderPoint) {
		out = append(out, p.Code())
	}
	sort.Strings(out)
	return out
}

// apiBaseKey holds per-App provider API overrides (tests).
type apiBaseKey struct{ code string }

// SetProviderAPI points provider code's API at base for this App (a test's
// local stand-in for the provider). Production never calls it.
func SetProviderAPI(a *app.App, code, base string) { a.SetValue(apiBaseKey{code}, base) }

func envFor(t *app.Tenant, g *Gateway, secrets map[string]string, returnURL string) Env {
	base, _ := t.App.Value(apiBaseKey{g.Code}).(string)
	return Env{Gateway: g, Secrets: secrets, ReturnURL: returnURL, APIBase: strings.TrimRight(base, "/"),
		Client: &http.Client{Timeout: 20 * time.Second}}
}
