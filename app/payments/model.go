package payments

import (
	"context"
	"database/sql"
	"time"

	"xr/app"
)

// Payment states. A payment moves initiated → pending → succeeded | failed
// | expired; review holds a payment whose provider reported an amount or a
// currency other than asked, or a success after it expired: nothing is
// credited until staff confirm or reject it.
const (
	StateInitiated = "initiated"
	StatePending   = "pending"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
	StateExpired   = "expired"
	StateReview    = "review"
)

// Payment is one attempt to collect money through a gateway.
type Payment struct {
	ID          int64      `json:"id"`
	Reference   string     `json:"reference"` // what the payer quotes (bank transfer) and sees on receipts
	Gateway     string     `json:"gateway"`
	Purpose     string     `json:"purpose"`     // deposit, renewal, addon, shop_card...
	PurposeRef  int64      `json:"purpose_ref"` // the purpose's subject: profile, add-on, shop sale
	Quantity    int64      `json:"quantity"`
	UserID      *int64     `json:"user_id"` // the paying subscriber; null for a shop buyer
	Amount      app.Money  `json:"amount"`  // what the purpose receives
	Fee         app.Money  `json:"fee"`     // the gateway's fee charged to the payer
	Total       app.Money  `json:"total"`   // amount + fee: what the payer pays
	Currency    string     `json:"currency"`
	State       string     `json:"state"`
	Reason      string     `json:"reason"`       // why failed or held for review
	RedirectURL string     `json:"redirect_url"` // where the payer completes it (stripe); empty for manual
	ProviderRef string     `json:"provider_ref"` // the provider's id (a Checkout Session id)
	CreatedAt   app.Time   `json:"created_at"`
	ExpiresAt   app.Time   `json:"expires_at"`
	SettledAt   *app.Time  `json:"settled_at"`
	Received    *app.Money `json:"received_total"` // what the provider reported
}

// Purpose is what a payment pays for. Each purpose is declared once, by
// the module of its area (PurposeExtension); the payments area calls it
// inside ITS transactions, so the effect and the state change commit
// together:
//   - Prepare runs in the transaction that records a new payment: it checks
//     the subject, answers the amount and may reserve stock (a shop card).
//   - Fulfil runs in the transaction that moves the payment to succeeded:
//     the credit happens exactly there, exactly once.
//   - Release runs in the transaction that moves it to failed or expired:
//     reserved stock returns.
type Purpose struct {
	Name    string
	Prepare func(ctx context.Context, tx *sql.Tx, t *app.Tenant, in *StartInput) (amount app.Money, ref int64, err error)
	Fulfil  func(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *Payment) error
	Release func(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *Payment) error
	// Lifetime, when set, shortens how long a payment of the purpose stays
	// open (the provider's Lifetime otherwise): what Prepare holds returns
	// at the expiry (the shop holds cards minutes, not the days a bank
	// transfer may take).
	Lifetime func(ctx context.Context, tx *sql.Tx) (time.Duration, error)
}

// PurposePoint is the extension point of payment purposes: the payments
// module gives its own (deposit, renewal, addon), other areas theirs (the
// shop's shop_card) with PurposeExtension in their Module.
const PurposePoint = "payments.purpose"

// PurposeExtension makes p a purpose of the App a module is installed on
// (Module.Extensions).
func PurposeExtension(p Purpose) app.Extension {
	return app.Extension{Point: PurposePoint, Name: p.Name, Value: p}
}

func purposeOf(a *app.App, name string) (Purpose, bool) {
	return app.ExtensionOf[Purpose](a, PurposePoint, name)
}

// StartInput starts a payment (Start). Portal rows fill UserID from the
// caller; the shop's public rows leave it 0 and give the buyer's contact.
type StartInput struct {
	Gateway   string    `json:"gateway"`
	RequestID string    `json:"request_id"` // a UUID: the payer's retry key
	Amount    app.Money `json:"amount"`     // deposit only; other purposes price themselves
	Purpose   string    `json:"-"`
	Subject   int64     `json:"-"` // the purpose's subject id (profile, add-on, series)
	Quantity  int       `json:"-"`
	UserID    int64     `json:"-"`
	Contact   string    `json:"-"` // a shop buyer's email or phone
	ReturnURL string    `json:"-"` // where the provider sends the payer back; ReferencePlaceholder in it becomes the payment's reference
	PayerKey  string    `json:"-"` // scope of RequestID uniqueness: "u:<id>" or "shop:<contact>"
	ClientIP  string    `json:"-"` // the address the payer asked from (not part of a replay's identity)
}

// ReferencePlaceholder in a StartInput.ReturnURL is replaced by the
// payment's reference (not known before the payment is recorded).
const ReferencePlaceholder = "{reference}"

// Checkout is what the payer does next: follow RedirectURL (stripe) or pay
// by the instructions quoting Reference (manual).
type Checkout struct {
	Payment      Payment `json:"payment"`
	RedirectURL  string  `json:"redirect_url"`
	Instructions string  `json:"instructions"`
}
