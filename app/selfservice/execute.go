package selfservice

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"xr/app"
	"xr/app/portal"
	"xr/app/subs"
)

// ChangeInput is POST /portal/change-profile: a quote to execute
// (quote_id) or the body of one (intent change_now — the default — or
// change_at_renewal, and profile_id).
type ChangeInput struct {
	QuoteID   int64  `json:"quote_id,omitempty"`
	Intent    Intent `json:"intent,omitempty"`
	ProfileID int64  `json:"profile_id,omitempty"`
	RequestID string `json:"request_id"`
}

// ExtendInput is POST /portal/extend: a quote to execute or none (the
// plan's extension now).
type ExtendInput struct {
	QuoteID   int64  `json:"quote_id,omitempty"`
	RequestID string `json:"request_id"`
}

// Result is what an execution did: the quote it applied (recomputed at
// execution; Charged equals its Total), the new state of the wallet and
// the service.
type Result struct {
	Quote        Quote     `json:"quote"`
	Charged      app.Money `json:"charged"`
	Balance      app.Money `json:"balance"`
	ProfileID    *int64    `json:"profile_id"`
	Expiration   app.Time  `json:"expiration"`
	ActivationID *int64    `json:"activation_id"`
	ExtensionID  *int64    `json:"extension_id"`
	Pending      *Pending  `json:"pending_change"`
	Replay       bool      `json:"replay"`
}

// Pending is a plan change waiting for the expiration.
type Pending struct {
	ProfileID   int64    `json:"profile_id"`
	EffectiveAt app.Time `json:"effective_at"`
}

// ChangeProfile executes a plan change for the caller: the computation of
// the quote (a quote_id must still price the same, else 409
// quote_stale), charged to the wallet within the debt limit (409
// insufficient_balance), or refused with 409 profile_not_allowed. A
// refusal writes nothing. Idempotent on request_id.
func ChangeProfile(ctx context.Context, act *app.Actor, in ChangeInput) (*Result, error) {
	t := act.Tenant
	if err := portal.RequireFeature(ctx, t, portal.FeatureChangeProfile); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if in.QuoteID == 0 && in.Intent == "" {
		in.Intent = IntentChangeNow
	}
	if in.QuoteID == 0 && in.Intent != IntentChangeNow && in.Intent != IntentChangeAtRenewal {
		return nil, app.ErrValidation("invalid_enum", "intent")
	}
	return execute(ctx, act, "change-profile", in.RequestID, in, in.QuoteID, QuoteInput{Intent: in.Intent, ProfileID: in.ProfileID},
		IntentChangeNow, IntentChangeAtRenewal)
}

// Extend executes an extension for the caller: the plan's days added to
// max(now, expiration), its price charged on credit (within the debt
// limit: 409 insufficient_balance), at most the month's cap (409
// extension_limit). A refusal writes nothing. Idempotent on request_id.
func Extend(ctx context.Context, act *app.Actor, in ExtendInput) (*Result, error) {
	t := act.Tenant
	if err := portal.RequireFeature(ctx, t, portal.FeatureExtend); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	return execute(ctx, act, "extend", in.RequestID, in, in.QuoteID, QuoteInput{Intent: IntentExtend}, IntentExtend)
}

func execute(ctx context.Context, act *app.Actor, op, requestID string, input any, quoteID int64, body QuoteInput, allowed ...string) (*Result, error) {
	t, uid := act.Tenant, act.SubscriberID
	sys, err := system(ctx, t)
	if err != nil {
		return nil, err
	}
	var out Result
	var replay bool
	err = t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: requestID, Subject: fmt.Sprintf("portal/%d/%s", uid, op), Input: input},
			func() (Result, error) {
				now := t.Now()
				var sq *storedQuote
				if quoteID != 0 {
					if sq, err = takeQuote(ctx, tx, uid, quoteID, now, allowed...); err != nil {
						return Result{}, err
					}
					body = sq.body
				}
				q, err := compute(ctx, tx, uid, body, now)
				if err != nil {
					return Result{}, err
				}
				if sq != nil {
					q.ID = sq.id
					if q.Total != sq.total {
						return Result{}, app.ErrConflict("quote_stale").With("field", "quote_id").With("total", q.Total)
					}
				}
				if !q.Sufficient {
					return Result{}, app.ErrConflict("insufficient_balance").With("balance", q.Balance).With("total", q.Total)
				}
				res, err := apply(ctx, tx, t, sys, uid, q, requestID, now)
				if err != nil {
					return Result{}, err
				}
				return *res, nil
			})
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

// apply carries out a computed quote in tx.
func apply(ctx context.Context, tx *sql.Tx, t *app.Tenant, sys *app.Actor, uid int64, q *Quote, requestID string, now time.Time) (*Result, error) {
	res := &Result{Quote: *q, Charged: q.Total}
	switch q.Intent {
	case IntentChangeNow:
		if q.Expiration.IsZero() {
			return nil, app.ErrInternal(fmt.Errorf("change_now without expiration"))
		}
		s, err := readSubscriber(ctx, tx, uid)
		if err != nil {
			return nil, err
		}
		if !s.expiration.IsZero() && s.expiration.Time.After(now) {
			// The new plan starts now: the unused time was credited.
			exp := app.DateOrTime{Time: app.T(now)}
			if err := subs.ApplyChanges(ctx, tx, sys, uid, []subs.Change{{Op: subs.OpSetExpiration, Expiration: &exp}}); err != nil {
				return nil, err
			}
		}
		price := q.Total
		a, err := subs.ApplyActivation(ctx, tx, t, 0, uid, *q.ProfileID, subs.ActivationOptions{Charge: subs.ChargeSubscriber, Price: &price,
			RefType: "portal_change", RequestID: requestID, Note: "portal plan change"})
		if err != nil {
			return nil, err
		}
		if err := dropPending(ctx, tx, uid); err != nil {
			return nil, err
		}
		res.ActivationID, res.ProfileID, res.Expiration = &a.ActivationID, &a.ProfileID, a.Expiration
	case IntentChangeAtRenewal:
		if q.Total > 0 {
			if _, _, err := subs.MoveBalance(ctx, tx, subs.Movement{UserID: uid, Amount: -q.Total, Kind: "plan_change_fee", RefType: "portal_change",
				RequestID: requestID, Note: "portal plan change at renewal", CheckCredit: true}); err != nil {
				return nil, err
			}
		}
		if err := dropPending(ctx, tx, uid); err != nil {
			return nil, err
		}
		pid := *q.ProfileID
		if !q.EffectiveAt.Time.After(now) {
			// Expired (or never activated): the plan is bound now; the
			// next renewal renews into it.
			if err := subs.ApplyChanges(ctx, tx, sys, uid, []subs.Change{{Op: subs.OpSetPlan, ProfileID: &pid}}); err != nil {
				return nil, err
			}
			res.ProfileID = &pid
		} else {
			job, err := app.EnqueueJob(ctx, tx, JobApplyChange, userJob{UserID: uid}, q.EffectiveAt.Time, 0, 5)
			if err != nil {
				return nil, err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO ss_pending_changes(user_id, profile_id, effective_at, job_id, created_at) VALUES (?,?,?,?,?)`,
				uid, pid, q.EffectiveAt, job, app.FormatTime(now)); err != nil {
				return nil, err
			}
			res.Pending = &Pending{ProfileID: pid, EffectiveAt: q.EffectiveAt}
			s, err := readSubscriber(ctx, tx, uid)
			if err != nil {
				return nil, err
			}
			res.ProfileID = &s.profileID
		}
		res.Expiration = q.Expiration
	case IntentExtend:
		var ledger any
		if q.Total > 0 {
			_, lid, err := subs.MoveBalance(ctx, tx, subs.Movement{UserID: uid, Amount: -q.Total, Kind: "extension", RefType: "ss_extension",
				RequestID: requestID, Note: fmt.Sprintf("portal extension, %d days", q.Days), CheckCredit: true})
			if err != nil {
				return nil, err
			}
			ledger = lid
		}
		s, err := readSubscriber(ctx, tx, uid)
		if err != nil {
			return nil, err
		}
		if err := subs.ApplyChanges(ctx, tx, sys, uid, []subs.Change{{Op: subs.OpAddDays, Days: q.Days}}); err != nil {
			return nil, err
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO ss_extensions(user_id, profile_id, days, price, ledger_id, old_expiration, new_expiration, request_id, created_at)
			VALUES (?,?,?,?,?,?,?,?,?)`, uid, s.profileID, q.Days, int64(q.Total), ledger, s.expiration, q.Expiration, requestID, app.FormatTime(now))
		if err != nil {
			return nil, err
		}
		id, _ := r.LastInsertId()
		res.ExtensionID, res.ProfileID, res.Expiration = &id, &s.profileID, q.Expiration
	default:
		return nil, app.ErrValidation("quote_not_found", "quote_id")
	}
	s, err := readSubscriber(ctx, tx, uid)
	if err != nil {
		return nil, err
	}
	res.Balance = app.Money(s.balance)
	return res, nil
}

// dropPending forgets a plan change waiting for the expiration (and its job).
func dropPending(ctx context.Context, tx *sql.Tx, uid int64) error {
	var job sql.NullInt64
	err := tx.QueryRowContext(ctx, `DELETE FROM ss_pending_changes WHERE user_id = ? RETURNING job_id`, uid).Scan(&job)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if job.Valid {
		return cancelJob(ctx, tx, job.Int64)
	}
	return nil
}

// cancelJob cancels a queued job; one already finished is left as it is.
func cancelJob(ctx context.Context, tx *sql.Tx, id int64) error {
	err := app.CancelJob(ctx, tx, id)
	if e := app.AsError(err); e != nil && e.Reason == "job_not_cancellable" {
		return nil
	}
	return err
}
