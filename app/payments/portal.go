package payments

import (
	"context"
	"database/sql"
	"fmt"

	"xr/app"
	"xr/app/portal"
)

// The portal's payment rows: the gateways a subscriber may use, a wallet
// top-up, a purchase, and its own payments. All need the tenant's
// "payments" portal feature.

// Gateways is GET /portal/payments/gateways.
func Gateways(ctx context.Context, act *app.Actor) ([]PortalGateway, error) {
	if err := portal.RequireFeature(ctx, act.Tenant, portal.FeaturePayments); err != nil {
		return nil, err
	}
	return EnabledGateways(ctx, act.Tenant)
}

// DepositInput is POST /portal/deposit: top up the wallet by Amount
// through Gateway. ReturnURL is set by the web layer from the request host.
type DepositInput struct {
	Gateway   string    `json:"gateway"`
	Amount    app.Money `json:"amount"`
	RequestID string    `json:"request_id"`
	ReturnURL string    `json:"-"`
}

// Deposit starts a wallet top-up.
func Deposit(ctx context.Context, act *app.Actor, in DepositInput) (*Checkout, error) {
	if err := portal.RequireFeature(ctx, act.Tenant, portal.FeaturePayments); err != nil {
		return nil, err
	}
	return Start(ctx, act.Tenant, StartInput{Gateway: in.Gateway, RequestID: in.RequestID, Amount: in.Amount,
		Purpose: PurposeDeposit, UserID: act.SubscriberID, PayerKey: payerKey(act), ReturnURL: in.ReturnURL})
}

// PurchaseInput is POST /portal/purchase: pay online for a renewal of the
// subscriber's plan (kind "renewal"), an add-on (kind "addon", addon_id,
// quantity) or prepaid cards of a series published in the shop (kind
// "card", series_id, quantity).
type PurchaseInput struct {
	Gateway   string `json:"gateway"`
	Kind      string `json:"kind"`
	AddonID   int64  `json:"addon_id"`
	SeriesID  int64  `json:"series_id"`
	Quantity  int    `json:"quantity"`
	RequestID string `json:"request_id"`
	ReturnURL string `json:"-"`
}

// PurposeShopCard is the shop's purpose (registered by app/shop).
const PurposeShopCard = "shop_card"

// Purchase starts a paid purchase.
func Purchase(ctx context.Context, act *app.Actor, in PurchaseInput) (*Checkout, error) {
	if err := portal.RequireFeature(ctx, act.Tenant, portal.FeaturePayments); err != nil {
		return nil, err
	}
	st := StartInput{Gateway: in.Gateway, RequestID: in.RequestID, UserID: act.SubscriberID, PayerKey: payerKey(act), ReturnURL: in.ReturnURL}
	switch in.Kind {
	case "renewal":
		st.Purpose = PurposeRenewal
	case "card", "addon":
		if in.Quantity == 0 {
			in.Quantity = 1
		}
		if in.Quantity < 0 || in.Quantity > 20 {
			return nil, app.ErrValidation("out_of_range", "quantity")
		}
		st.Quantity = in.Quantity
		if in.Kind == "addon" {
			st.Purpose, st.Subject = PurposeAddon, in.AddonID
			break
		}
		if in.SeriesID <= 0 {
			return nil, app.ErrValidation("series_id_required", "series_id")
		}
		st.Purpose, st.Subject = PurposeShopCard, in.SeriesID
	case "":
		return nil, app.ErrValidation("kind_required", "kind")
	default:
		return nil, app.ErrValidation("kind_invalid", "kind")
	}
	return Start(ctx, act.Tenant, st)
}

func payerKey(act *app.Actor) string { return fmt.Sprintf("u:%d", act.SubscriberID) }

var txSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "id", "created_at": "id"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"state": app.FilterString, "purpose": app.FilterString},
}

// TransactionSpec is the list spec of GET /portal/payments/transactions.
func TransactionSpec() app.ListSpec { return txSpec }

// Transactions is GET /portal/payments/transactions: the subscriber's own
// payments, newest first.
func Transactions(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Payment], error) {
	if err := portal.RequireFeature(ctx, act.Tenant, portal.FeaturePayments); err != nil {
		return app.Page[Payment]{}, err
	}
	from, args := `FROM payments WHERE user_id = ?`, []any{act.SubscriberID}
	if v, ok := lq.Str("state"); ok {
		from += ` AND state = ?`
		args = append(args, v)
	}
	if v, ok := lq.Str("purpose"); ok {
		from += ` AND purpose = ?`
		args = append(args, v)
	}
	return app.QueryPage(ctx, act.Tenant, lq, paymentCols, from, args, "id", func(rows *sql.Rows) (Payment, error) {
		p, err := scanPayment(rows)
		if err != nil {
			return Payment{}, err
		}
		return *p, nil
	})
}

// MyPayment answers one of the caller's own payments by reference, with
// its gateway's instructions (the portal's payment page); anyone else's is
// the 404 of a missing one.
func MyPayment(ctx context.Context, act *app.Actor, reference string) (*Payment, string, error) {
	if err := portal.RequireFeature(ctx, act.Tenant, portal.FeaturePayments); err != nil {
		return nil, "", err
	}
	t := act.Tenant
	p, err := readPayment(ctx, t.DB.R, "reference = ? AND user_id = ?", reference, act.SubscriberID)
	if err != nil {
		return nil, "", err
	}
	g, _, err := readGateway(ctx, t, t.DB.R, p.Gateway)
	if err != nil {
		return nil, "", err
	}
	return p, instructionsFor(g, p), nil
}
