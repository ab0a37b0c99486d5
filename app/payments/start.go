package payments

import (
	"context"
	"database/sql"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/subs"
)

// jobExpire expires one payment at its expires_at.
const jobExpire = "payments.expire"

type expirePayload struct {
	PaymentID int64 `json:"payment_id"`
}

// Start records a payment for in.Purpose and asks the gateway's provider to
// collect it. A replay of the same request_id by the same payer answers the
// same payment (and, if the server stopped before the provider was asked,
// asks it now: providers are idempotent on the payment's reference); the
// same key with another body is 409 request_id_conflict.
func Start(ctx context.Context, t *app.Tenant, in StartInput) (*Checkout, error) {
	if in.RequestID == "" {
		return nil, app.ErrValidation("request_id_required", "request_id")
	}
	if !app.IsUUID(in.RequestID) {
		return nil, app.ErrValidation("request_id_invalid", "request_id")
	}
	if in.Gateway == "" {
		return nil, app.ErrValidation("gateway_required", "gateway")
	}
	pu, ok := purposeOf(t.App, in.Purpose)
	if !ok {
		return nil, app.ErrValidation("purpose_invalid", "kind")
	}
	pr, ok := providerOf(t.App, in.Gateway)
	if !ok {
		return nil, app.ErrValidation("gateway_unavailable", "gateway")
	}
	fp, err := app.Fingerprint(struct {
		G, P string
		S    int64
		Q    int
		A    app.Money
		U    int64
		C    string
	}{in.Gateway, in.Purpose, in.Subject, in.Quantity, in.Amount, in.UserID, in.Contact})
	if err != nil {
		return nil, err
	}
	var p *Payment
	var g *Gateway
	var secrets map[string]string
	err = t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		var storedFP string
		err = tx.QueryRowContext(ctx, `SELECT id, fingerprint FROM payments WHERE payer_key = ? AND request_id = ?`, in.PayerKey, in.RequestID).Scan(new(int64), &storedFP)
		switch {
		case err == nil:
			if storedFP != fp {
				return app.ErrConflict("request_id_conflict")
			}
			p, err = readPayment(ctx, tx, "payer_key = ? AND request_id = ?", in.PayerKey, in.RequestID)
			if err != nil {
				return err
			}
			g, secrets, err = readGateway(ctx, t, tx, p.Gateway)
			return err
		case err != sql.ErrNoRows:
			return err
		}
		if g, secrets, err = readGateway(ctx, t, tx, in.Gateway); err != nil {
			return err
		}
		if !g.Enabled {
			return app.ErrValidation("gateway_unavailable", "gateway")
		}
		amount, ref, err := pu.Prepare(ctx, tx, t, &in)
		if err != nil {
			return err
		}
		if amount <= 0 || !amount.InAmountRange() {
			return app.ErrAmountOutOfRange("amount")
		}
		if amount < g.MinAmount {
			return app.ErrValidation("amount_below_minimum", "amount").With("min_amount", g.MinAmount)
		}
		fee, err := g.fee(amount)
		if err != nil {
			return err
		}
		total, err := amount.Add(fee)
		if err != nil {
			return app.ErrAmountOutOfRange("amount")
		}
		if _, err := toMinor(total, g.Currency); err != nil {
			return err
		}
		now := t.Now()
		life := pr.Lifetime()
		if pu.Lifetime != nil {
			pl, err := pu.Lifetime(ctx, tx)
			if err != nil {
				return err
			}
			life = min(life, pl)
		}
		expires := now.Add(life)
		var uid, mgr any
		if in.UserID != 0 {
			uid = in.UserID
			u, err := subs.Read(ctx, tx, in.UserID)
			if err != nil {
				return err
			}
			mgr = u.ParentID
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO payments(reference, gateway, purpose, purpose_ref, quantity, user_id, manager_id, amount, fee, total, currency, state,
			payer_key, request_id, fingerprint, created_at, updated_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,'initiated',?,?,?,?,?,?)`,
			newReference(), in.Gateway, in.Purpose, ref, max(in.Quantity, 1), uid, mgr, int64(amount), int64(fee), int64(total), g.Currency,
			in.PayerKey, in.RequestID, fp, app.FormatTime(now), app.FormatTime(now), app.FormatTime(expires))
		if err != nil {
			return err
		}
		id, _ := r.LastInsertId()
		if _, err := logEvent(ctx, tx, t, id, "system", "", "created", "", StateInitiated, 0, ""); err != nil {
			return err
		}
		if _, err := app.EnqueueJob(ctx, tx, jobExpire, expirePayload{PaymentID: id}, expires, 0, 5); err != nil {
			return err
		}
		p, err = readPayment(ctx, tx, "id = ?", id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.State == StateInitiated {
		if err := begin(ctx, t, pr, g, secrets, p, in.ReturnURL); err != nil {
			return nil, err
		}
	}
	return &Checkout{Payment: *p, RedirectURL: p.RedirectURL, Instructions: instructionsFor(g, p)}, nil
}

// begin asks the provider to collect p and records its answer; a provider
// that refuses fails the payment (and releases what it reserved).
func begin(ctx context.Context, t *app.Tenant, pr Provider, g *Gateway, secrets map[string]string, p *Payment, returnURL string) error {
	returnURL = strings.ReplaceAll(returnURL, ReferencePlaceholder, url.PathEscape(p.Reference))
	b, berr := pr.Begin(ctx, envFor(t, g, secrets, returnURL), p)
	failed := false
	err := t.Write(ctx, func(tx *sql.Tx) error {
		cur, err := readPayment(ctx, tx, "id = ?", p.ID)
		if err != nil {
			return err
		}
		*p = *cur
		if p.State != StateInitiated {
			return nil // a notice or the expiry got there first
		}
		if berr != nil {
			reason := "payment_provider_error"
			if e := app.AsError(berr); e != nil {
				reason = e.Reason
			}
			failed = true
			return transition(ctx, tx, t, p, StateFailed, reason, "system", "", 0, berr.Error())
		}
		if _, err := tx.ExecContext(ctx, `UPDATE payments SET provider_ref = ?, redirect_url = ? WHERE id = ?`, b.ProviderRef, b.RedirectURL, p.ID); err != nil {
			return err
		}
		p.ProviderRef, p.RedirectURL = b.ProviderRef, b.RedirectURL
		return transition(ctx, tx, t, p, StatePending, "", "system", "", 0, "provider accepted")
	})
	if err != nil {
		return err
	}
	if failed {
		return berr
	}
	return nil
}

func instructionsFor(g *Gateway, p *Payment) string {
	if g == nil || g.Instructions == "" {
		return ""
	}
	r := strings.NewReplacer("{reference}", p.Reference, "{total}", p.Total.String(), "{currency}", p.Currency,
		"{expires_at}", app.FormatTime(p.ExpiresAt.Time), "{id}", strconv.FormatInt(p.ID, 10))
	return r.Replace(g.Instructions)
}
