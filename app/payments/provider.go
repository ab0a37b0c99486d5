package payments

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"xr/app"
)

// Provider is one way of collecting money. Adding a provider is one file:
// a type implementing Provider (and Receiver when the provider calls back),
// registered from an init function with RegisterProvider.
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

var (
	providersMu sync.RWMutex
	providers   = map[string]Provider{}
)

// RegisterProvider makes a provider available to gateways.
func RegisterProvider(p Provider) {
	providersMu.Lock()
	defer providersMu.Unlock()
	providers[p.Code()] = p
}

func providerOf(code string) (Provider, bool) {
	providersMu.RLock()
	defer providersMu.RUnlock()
	p, ok := providers[code]
	return p, ok
}

// ProviderCodes lists the registered providers, sorted.
func ProviderCodes() []string {
	providersMu.RLock()
	defer providersMu.RUnlock()
	out := make([]string, 0, len(providers))
	for c := range providers {
		out = append(out, c)
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
