package selfservice

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"xr/app"
	"xr/app/outbox"
	"xr/app/portal"
	"xr/app/subs"
)

// Job kinds of the area.
const (
	JobAutoRenew   = "selfservice.auto_renew"   // renew a subscriber at its expiration
	JobApplyChange = "selfservice.apply_change" // bind a plan change at the expiration
	JobBoostEnd    = "selfservice.boost_end"    // revert a speed boost at its end
)

// userJob is the payload of the per-subscriber jobs.
type userJob struct {
	UserID int64 `json:"user_id"`
}

// AutoRenewRetry is how long after a failed automatic renewal the job
// tries again (the subscriber may top up meanwhile).
const AutoRenewRetry = time.Hour

// AutoRenewInput is POST /portal/auto-renew.
type AutoRenewInput struct {
	Enabled bool `json:"enabled"`
}

// AutoRenewRun is one outcome of the renewal job.
type AutoRenewRun struct {
	Expiration   app.Time `json:"expiration"`
	Outcome      string   `json:"outcome"` // renewed, failed
	Reason       string   `json:"reason"`
	ActivationID *int64   `json:"activation_id"`
	CreatedAt    app.Time `json:"created_at"`
}

// AutoRenew is the state of automatic renewal.
type AutoRenew struct {
	Enabled bool          `json:"enabled"`
	NextRun app.Time      `json:"next_run_at"` // the expiration the job will renew at
	LastRun *AutoRenewRun `json:"last_run"`
}

// SetAutoRenew switches automatic renewal from the wallet at expiry: on,
// a job renews the subscriber at its expiration (and again at each new
// one); off, the queued job is cancelled.
func SetAutoRenew(ctx context.Context, act *app.Actor, in AutoRenewInput) (*AutoRenew, error) {
	t, uid := act.Tenant, act.SubscriberID
	if err := portal.RequireFeature(ctx, t, portal.FeatureAutoRenew); err != nil {
		return nil, err
	}
	var out *AutoRenew
	var at time.Time
	err := t.Write(ctx, func(tx *sql.Tx) error {
		s, err := readSubscriber(ctx, tx, uid)
		if err != nil {
			return err
		}
		if in.Enabled && s.profileID == 0 {
			return app.ErrValidation("profile_required", "profile_id")
		}
		var job sql.NullInt64
		err = tx.QueryRowContext(ctx, `SELECT job_id FROM ss_auto_renew WHERE user_id = ?`, uid).Scan(&job)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if job.Valid {
			if err := cancelJob(ctx, tx, job.Int64); err != nil {
				return err
			}
		}
		var jobID any
		if in.Enabled {
			at = later(t.Now(), s.expiration)
			id, err := app.EnqueueJob(ctx, tx, JobAutoRenew, userJob{UserID: uid}, at, 0, 5)
			if err != nil {
				return err
			}
			jobID = id
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ss_auto_renew(user_id, enabled, job_id, updated_at) VALUES (?,?,?,?)
			ON CONFLICT(user_id) DO UPDATE SET enabled = excluded.enabled, job_id = excluded.job_id, updated_at = excluded.updated_at`,
			uid, in.Enabled, jobID, t.NowText()); err != nil {
			return err
		}
		out, err = readAutoRenew(ctx, tx, uid)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func readAutoRenew(ctx context.Context, q app.Querier, uid int64) (*AutoRenew, error) {
	out := &AutoRenew{}
	var exp app.Time
	err := q.QueryRowContext(ctx, `SELECT a.enabled, u.expiration FROM ss_auto_renew a JOIN users u ON u.id = a.user_id WHERE a.user_id = ?`, uid).Scan(&out.Enabled, &exp)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if out.Enabled {
		out.NextRun = exp
	}
	var r AutoRenewRun
	var act sql.NullInt64
	err = q.QueryRowContext(ctx, `SELECT expiration, outcome, reason, activation_id, created_at FROM ss_auto_renew_runs WHERE user_id = ? ORDER BY id DESC LIMIT 1`, uid).
		Scan(&r.Expiration, &r.Outcome, &r.Reason, &act, &r.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if act.Valid {
		r.ActivationID = &act.Int64
	}
	out.LastRun = &r
	return out, nil
}

// runAutoRenew renews a subscriber whose expiration has come: the plan
// change waiting for it first, then an activation charged to the wallet.
// It records the outcome and notifies the subscriber (portal inbox); a
// refusal is retried after AutoRenewRetry (recorded and notified once per
// expiration). Renewed, it queues itself at the new expiration.
func runAutoRenew(ctx context.Context, jc *app.JobContext) (any, error) {
	var p userJob
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	now := t.Now()
	var enabled bool
	var job sql.NullInt64
	err := t.DB.R.QueryRowContext(ctx, `SELECT enabled, job_id FROM ss_auto_renew WHERE user_id = ?`, p.UserID).Scan(&enabled, &job)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (!enabled || job.Int64 != jc.Job.ID)) {
		return map[string]string{"skipped": "disabled"}, nil
	}
	if err != nil {
		return nil, err
	}
	s, err := readSubscriber(ctx, t.DB.R, p.UserID)
	if err != nil {
		return nil, err
	}
	if s.deleted {
		return map[string]string{"skipped": "user_deleted"}, nil
	}
	if !s.expiration.IsZero() && s.expiration.Time.After(now) {
		return nil, &app.RetryLater{At: s.expiration.Time, Reason: "not expired yet"}
	}
	sys, err := system(ctx, t)
	if err != nil {
		return nil, err
	}
	var res *subs.ActivationResult
	var next time.Time
	err = t.Write(ctx, func(tx *sql.Tx) error {
		if err := portal.RequireFeature(ctx, t, portal.FeatureAutoRenew); err != nil {
			return err
		}
		if err := applyPending(ctx, tx, sys, p.UserID, now); err != nil {
			return err
		}
		var err error
		res, err = subs.ApplyActivation(ctx, tx, t, 0, p.UserID, 0, subs.ActivationOptions{Charge: subs.ChargeSubscriber, RefType: "auto_renew",
			Note: "automatic renewal"})
		if err != nil {
			return err
		}
		next = res.Expiration.Time
		id, err := app.EnqueueJob(ctx, tx, JobAutoRenew, p, next, 0, 5)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE ss_auto_renew SET job_id = ?, updated_at = ? WHERE user_id = ?`, id, app.FormatTime(now), p.UserID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ss_auto_renew_runs(user_id, expiration, outcome, activation_id, created_at) VALUES (?,?,?,?,?)`,
			p.UserID, s.expiration, "renewed", res.ActivationID, app.FormatTime(now)); err != nil {
			return err
		}
		return notify(ctx, tx, t, p.UserID, tplRenewed, map[string]string{"plan": res.ProfileName, "price": res.Price.String(),
			"expiration": res.Expiration.Format("2006-01-02 15:04")}, fmt.Sprintf("auto_renew:%d:%d", p.UserID, res.ActivationID))
	})
	if e := app.AsError(err); e != nil {
		// Refused (insufficient_balance, profile_disabled, ...): say why
		// once for this expiration and try again later.
		if werr := t.Write(ctx, func(tx *sql.Tx) error {
			r, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO ss_auto_renew_runs(user_id, expiration, outcome, reason, created_at) VALUES (?,?,?,?,?)`,
				p.UserID, s.expiration, "failed", e.Reason, app.FormatTime(now))
			if err != nil {
				return err
			}
			if n, _ := r.RowsAffected(); n == 0 {
				return nil
			}
			return notify(ctx, tx, t, p.UserID, tplRenewFailed, map[string]string{"reason": e.Reason},
				fmt.Sprintf("auto_renew_failed:%d:%s", p.UserID, s.expiration.Format("20060102150405")))
		}); werr != nil {
			return nil, werr
		}
		return nil, &app.RetryLater{At: now.Add(AutoRenewRetry), Reason: e.Reason}
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"renewed": true, "activation_id": res.ActivationID, "expiration": res.Expiration}, nil
}

// notify tells the subscriber in its portal inbox, and by email when it
// has an address.
func notify(ctx context.Context, tx *sql.Tx, t *app.Tenant, uid int64, tpl string, vars map[string]string, cause string) error {
	if _, err := outbox.Enqueue(ctx, tx, t, outbox.Message{Channel: outbox.ChannelInbox, UserID: uid, Template: tpl, Vars: vars, Cause: cause}); err != nil {
		return err
	}
	u, err := subs.Read(ctx, tx, uid)
	if err != nil {
		return err
	}
	email := u.Email
	if email == "" {
		return nil
	}
	_, err = outbox.Enqueue(ctx, tx, t, outbox.Message{Channel: outbox.ChannelEmail, To: email, UserID: uid, Template: tpl, Vars: vars, Cause: cause})
	return err
}

// applyPending binds the plan change waiting for the expiration when it
// has come (nothing otherwise).
func applyPending(ctx context.Context, tx *sql.Tx, sys *app.Actor, uid int64, now time.Time) error {
	var pid int64
	var at app.Time
	err := tx.QueryRowContext(ctx, `SELECT profile_id, effective_at FROM ss_pending_changes WHERE user_id = ?`, uid).Scan(&pid, &at)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && at.Time.After(now)) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM ss_pending_changes WHERE user_id = ?`, uid); err != nil {
		return err
	}
	return subs.ApplyChanges(ctx, tx, sys, uid, []subs.Change{{Op: subs.OpSetPlan, ProfileID: &pid}})
}

// runApplyChange binds a pending plan change at the expiration (a renewal
// since moved the expiration: it waits for the new one).
func runApplyChange(ctx context.Context, jc *app.JobContext) (any, error) {
	var p userJob
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	now := t.Now()
	s, err := readSubscriber(ctx, t.DB.R, p.UserID)
	if err != nil {
		return nil, err
	}
	if !s.expiration.IsZero() && s.expiration.Time.After(now) {
		var at app.Time
		err := t.DB.R.QueryRowContext(ctx, `SELECT effective_at FROM ss_pending_changes WHERE user_id = ?`, p.UserID).Scan(&at)
		if errors.Is(err, sql.ErrNoRows) {
			return map[string]string{"skipped": "gone"}, nil
		}
		if err != nil {
			return nil, err
		}
		if at.Time.After(now) {
			return nil, &app.RetryLater{At: at.Time, Reason: "not due"}
		}
		// The subscriber renewed before the change came due: the change
		// waits for the new expiration.
		err = t.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE ss_pending_changes SET effective_at = ? WHERE user_id = ?`, s.expiration, p.UserID)
			return err
		})
		if err != nil {
			return nil, err
		}
		return nil, &app.RetryLater{At: s.expiration.Time, Reason: "renewed meanwhile"}
	}
	sys, err := system(ctx, t)
	if err != nil {
		return nil, err
	}
	err = t.Write(ctx, func(tx *sql.Tx) error { return applyPending(ctx, tx, sys, p.UserID, now) })
	if err != nil {
		return nil, err
	}
	return map[string]bool{"applied": true}, nil
}
