package payments

import (
	"context"
	"database/sql"
	"errors"

	"xr/app"
	"xr/app/subs"
)

// The purposes the payments area serves itself: a wallet top-up, a
// renewal of the subscriber's plan, an add-on. Other areas declare theirs
// (the shop's shop_card) in their module.
const (
	PurposeDeposit = "deposit"
	PurposeRenewal = "renewal"
	PurposeAddon   = "addon"
)

func prepareDeposit(_ context.Context, _ *sql.Tx, _ *app.Tenant, in *StartInput) (app.Money, int64, error) {
	if in.Amount <= 0 {
		return 0, 0, app.ErrValidation("amount_must_be_positive", "amount")
	}
	return in.Amount, 0, nil
}

// creditWallet credits the payment's amount (not the fee) to the
// subscriber's balance, with a ledger row naming the payment.
func creditWallet(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *Payment) error {
	if p.UserID == nil {
		return errors.New("payments: a wallet credit needs a subscriber")
	}
	_, _, err := subs.CreditBalance(ctx, tx, t, 0, *p.UserID, p.Amount, "deposit", "payment", p.ID)
	return err
}

// prepareRenewal prices a renewal of the subscriber's bound plan.
func prepareRenewal(ctx context.Context, tx *sql.Tx, _ *app.Tenant, in *StartInput) (app.Money, int64, error) {
	var pid sql.NullInt64
	var price int64
	var enabled bool
	err := tx.QueryRowContext(ctx, `SELECT u.profile_id, COALESCE(p.price, 0), COALESCE(p.enabled, 0) FROM users u
		LEFT JOIN profiles p ON p.id = u.profile_id WHERE u.id = ? AND u.deleted_at IS NULL`, in.UserID).Scan(&pid, &price, &enabled)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, 0, app.ErrNotFound()
	case err != nil:
		return 0, 0, err
	case !pid.Valid:
		return 0, 0, app.ErrValidation("profile_required", "profile_id")
	case !enabled:
		return 0, 0, app.ErrConflict("profile_disabled")
	case price <= 0:
		return 0, 0, app.ErrConflict("nothing_to_pay")
	}
	return app.Money(price), pid.Int64, nil
}

// prepareAddon prices in.Quantity of add-on in.Subject for the subscriber,
// refusing what it could not buy from its balance either.
func prepareAddon(ctx context.Context, tx *sql.Tx, t *app.Tenant, in *StartInput) (app.Money, int64, error) {
	if in.Subject <= 0 {
		return 0, 0, app.ErrValidation("addon_id_required", "addon_id")
	}
	// Dry run inside a savepoint: the add-on's own rules (allowed for the
	// plan, a quota to add to) decide, then everything is undone.
	if _, err := tx.ExecContext(ctx, `SAVEPOINT addon_check`); err != nil {
		return 0, 0, err
	}
	r, aerr := subs.ApplyAddon(ctx, tx, t, 0, in.UserID, in.Subject, int64(max(in.Quantity, 1)), subs.ChargeNone, "")
	if _, err := tx.ExecContext(ctx, `ROLLBACK TO addon_check`); err != nil {
		return 0, 0, err
	}
	if _, err := tx.ExecContext(ctx, `RELEASE addon_check`); err != nil {
		return 0, 0, err
	}
	if aerr != nil {
		return 0, 0, aerr
	}
	if r.Price <= 0 {
		return 0, 0, app.ErrConflict("nothing_to_pay")
	}
	return r.Price, in.Subject, nil
}

// fulfilAddon credits the payment and buys the add-on from it; refused
// since (the plan changed), the money stays in the wallet.
func fulfilAddon(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *Payment) error {
	return creditThen(ctx, tx, t, p, "addon", func() error {
		_, err := subs.ApplyAddon(ctx, tx, t, 0, *p.UserID, p.PurposeRef, p.Quantity, subs.ChargeSubscriber, "")
		return err
	})
}

// fulfilRenewal credits the payment and renews the plan from it in the
// same transaction. If the plan can no longer be renewed (disabled since,
// or its price rose), the money stays in the wallet and the log says why:
// the payer's money is never lost to a refused activation.
func fulfilRenewal(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *Payment) error {
	return creditThen(ctx, tx, t, p, "renewal", func() error {
		_, err := subs.ApplyActivation(ctx, tx, t, 0, *p.UserID, p.PurposeRef, subs.ActivationOptions{Charge: subs.ChargeSubscriber,
			RefType: "payment", RefID: p.ID, Note: "online renewal " + p.Reference})
		return err
	})
}

// creditThen credits the payment to the wallet and runs buy, which spends
// it, in a savepoint: a refused purchase (a business refusal, not a
// failure) is undone and logged while the credit stays.
func creditThen(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *Payment, what string, buy func() error) error {
	if err := creditWallet(ctx, tx, t, p); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `SAVEPOINT purchase`); err != nil {
		return err
	}
	if err := buy(); err != nil {
		if app.AsError(err) == nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `ROLLBACK TO purchase`); err != nil {
			return err
		}
		if _, lerr := logEvent(ctx, tx, t, p.ID, "system", "", what+"_refused", p.State, p.State, 0, app.AsError(err).Reason); lerr != nil {
			return lerr
		}
	}
	_, err := tx.ExecContext(ctx, `RELEASE purchase`)
	return err
}
