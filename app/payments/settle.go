package payments

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"xr/app"
)

// transition moves p to state `to` inside tx and runs what the move means:
// succeeded runs the purpose's Fulfil (the credit, exactly here) and emits
// payment.succeeded; failed and expired run Release and emit payment.failed
// (expired too: the payer's money never arrived). Each move is logged.
func transition(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *Payment, to, reason, source, eventID string, actorID int64, detail string) error {
	from := p.State
	if err := setState(ctx, tx, t, p, to, reason, actorID); err != nil {
		return err
	}
	if _, err := logEvent(ctx, tx, t, p.ID, source, eventID, "state", from, to, actorID, detail); err != nil {
		return err
	}
	pu, ok := purposeOf(t.App, p.Purpose)
	if !ok {
		return fmt.Errorf("payment %d: unknown purpose %q", p.ID, p.Purpose)
	}
	switch to {
	case StateSucceeded:
		if err := pu.Fulfil(ctx, tx, t, p); err != nil {
			return err
		}
		return app.Emit(ctx, tx, "payment.succeeded", eventData(p))
	case StateFailed, StateExpired:
		if pu.Release != nil {
			if err := pu.Release(ctx, tx, t, p); err != nil {
				return err
			}
		}
		return app.Emit(ctx, tx, "payment.failed", eventData(p))
	}
	return nil
}

func eventData(p *Payment) map[string]any {
	return map[string]any{"payment_id": p.ID, "reference": p.Reference, "gateway": p.Gateway, "purpose": p.Purpose,
		"user_id": p.UserID, "amount": p.Amount, "fee": p.Fee, "total": p.Total, "currency": p.Currency,
		"state": p.State, "reason": p.Reason}
}

// open reports whether p still waits for the payer's money.
func open(p *Payment) bool { return p.State == StateInitiated || p.State == StatePending }

// Settle applies a provider's notice: the one path by which an outcome
// reaches a payment. It is safe against repeats and disorder: a notice whose
// event id was seen is ignored; success on an open payment credits it once
// (or holds it for review when the reported amount or currency differs);
// success after the payment failed or expired is held for review, never
// credited silently; failure or expiry of a settled payment changes nothing.
func Settle(ctx context.Context, t *app.Tenant, n Notice) error {
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var p *Payment
		var err error
		switch {
		case n.ProviderRef != "":
			p, err = readPayment(ctx, tx, "gateway = ? AND provider_ref = ?", n.Gateway, n.ProviderRef)
			if app.AsError(err) != nil && n.Reference != "" {
				p, err = readPayment(ctx, tx, "gateway = ? AND reference = ?", n.Gateway, n.Reference)
			}
		case n.Reference != "":
			p, err = readPayment(ctx, tx, "gateway = ? AND reference = ?", n.Gateway, n.Reference)
		default:
			return app.ErrNotFound()
		}
		if err != nil {
			return err
		}
		if n.EventID != "" {
			fresh, err := logEvent(ctx, tx, t, p.ID, n.Gateway, n.EventID, "notice", p.State, p.State, 0, n.Detail)
			if err != nil || !fresh {
				return err // a repeated notice: already applied
			}
		}
		if p.ProviderRef == "" && n.ProviderRef != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE payments SET provider_ref = ? WHERE id = ?`, n.ProviderRef, p.ID); err != nil {
				return err
			}
			p.ProviderRef = n.ProviderRef
		}
		return apply(ctx, tx, t, p, n, n.Gateway, 0)
	})
	return err
}

// apply is the state machine of an outcome on p.
func apply(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *Payment, n Notice, source string, actorID int64) error {
	switch n.Outcome {
	case StatePending:
		if p.State == StateInitiated {
			return transition(ctx, tx, t, p, StatePending, "", source, "", actorID, n.Detail)
		}
		return nil
	case StateSucceeded:
		if n.HasAmount {
			if _, err := tx.ExecContext(ctx, `UPDATE payments SET received_total = ?, received_currency = ? WHERE id = ?`,
				int64(n.Total), n.Currency, p.ID); err != nil {
				return err
			}
			m := n.Total
			p.Received = &m
		}
		switch {
		case p.State == StateSucceeded || p.State == StateReview:
			return nil
		case !open(p):
			return transition(ctx, tx, t, p, StateReview, "paid_after_"+p.State, source, "", actorID, n.Detail)
		case n.HasAmount && n.Currency != p.Currency:
			return transition(ctx, tx, t, p, StateReview, "currency_mismatch", source, "", actorID, n.Detail)
		case n.HasAmount && n.Total != p.Total:
			return transition(ctx, tx, t, p, StateReview, "amount_mismatch", source, "", actorID, n.Detail)
		}
		return transition(ctx, tx, t, p, StateSucceeded, "", source, "", actorID, n.Detail)
	case StateFailed, StateExpired:
		if open(p) {
			return transition(ctx, tx, t, p, n.Outcome, n.Detail, source, "", actorID, n.Detail)
		}
		return nil
	}
	return app.ErrValidation("notice_invalid", "")
}

// expire is the job at a payment's expires_at: a payment still open then
// expires and releases what it reserved.
func expireJob(ctx context.Context, jc *app.JobContext) (any, error) {
	var p expirePayload
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	return nil, expireOne(ctx, jc.Tenant, p.PaymentID)
}

func expireOne(ctx context.Context, t *app.Tenant, id int64) error {
	err := t.Write(ctx, func(tx *sql.Tx) error {
		pm, err := readPayment(ctx, tx, "id = ?", id)
		if err != nil {
			if app.AsError(err) != nil {
				return nil // deleted with its subscriber's file: nothing to do
			}
			return err
		}
		if !open(pm) || t.Now().Before(pm.ExpiresAt.Time) {
			return nil
		}
		return transition(ctx, tx, t, pm, StateExpired, "expired", "system", "", 0, "")
	})
	return err
}

// ExpireDue expires every open payment whose time is up at now (the job
// does it one by one; tests and maintenance call this).
func ExpireDue(ctx context.Context, t *app.Tenant) (int, error) {
	ids, err := app.QueryIDs(ctx, t.DB.R, `SELECT id FROM payments WHERE state IN ('initiated','pending') AND expires_at <= ?`, t.NowText())
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if err := expireOne(ctx, t, id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
