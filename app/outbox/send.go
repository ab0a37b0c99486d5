package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"xr/app"
)

// outcome is the result of one attempt to hand a message over.
type outcome struct {
	ok        bool
	permanent bool   // no retry helps (dead at once)
	reason    string // stable reason (last_error)
	detail    string // what the relay or gateway said (last_detail)
}

// claimedMsg is a message claimed for one attempt.
type claimedMsg struct {
	id                 int64
	channel, to        string
	subject, body      string
	attempts, maxTries int
	userID             sql.NullInt64
}

// errStopped is returned when a test hook simulated a crash.
var errStopped = errors.New("outbox: drain stopped")

// runSend is the job handler of JobSend: it drains the tenant's outbox and
// reschedules itself for the next message due (a backoff or the rate
// window); with nothing left it ends.
func runSend(ctx context.Context, jc *app.JobContext) (any, error) {
	s := stateOf(jc.Tenant.App)
	sent, next, err := Drain(ctx, jc.Tenant)
	if err != nil {
		return nil, err
	}
	if !next.IsZero() {
		return nil, &app.RetryLater{At: jc.Tenant.Now().Add(max(next.Sub(s.now()), 0)), Reason: "next message due"}
	}
	return map[string]int{"attempted": sent}, nil
}

// Drain sends the tenant's due messages within its send rate, one claim
// batch after another, and answers how many attempts it made and when the
// next message is due on the outbox's clock (zero when none is waiting).
// The job runner calls it through JobSend; tests call it directly.
func Drain(ctx context.Context, t *app.Tenant) (attempted int, next time.Time, err error) {
	s := stateOf(t.App)
	for ctx.Err() == nil {
		batch, nxt, err := s.claim(ctx, t)
		if err != nil {
			return attempted, time.Time{}, err
		}
		if len(batch) == 0 {
			return attempted, nxt, nil
		}
		for i, m := range batch {
			if s.afterClaim != nil && s.afterClaim(m.id) {
				return attempted, time.Time{}, errStopped
			}
			if ctx.Err() != nil {
				// Shutting down: hand back what was not tried yet.
				s.unclaim(t, batch[i:])
				return attempted, time.Time{}, ctx.Err()
			}
			o := s.deliver(ctx, t, m)
			attempted++
			if s.afterSend != nil && s.afterSend(m.id) {
				return attempted, time.Time{}, errStopped
			}
			if err := s.record(t, m, o); err != nil {
				return attempted, time.Time{}, err
			}
		}
	}
	return attempted, time.Time{}, ctx.Err()
}

// ratePerMinute is the tenant's send rate, clamped to 1-6000.
func ratePerMinute(ctx context.Context, q app.Querier) (int, error) {
	n, err := SettingMessagesPerMinute.Get(ctx, q)
	if err != nil {
		return 0, err
	}
	return int(min(max(n, 1), 6000)), nil
}

// claim marks up to one batch of due messages as sending (within the send
// rate: attempts started in the last minute count) and answers them, or,
// when none can go now, when the next one can (zero: none is waiting).
func (s *state) claim(ctx context.Context, t *app.Tenant) ([]claimedMsg, time.Time, error) {
	now := s.now()
	nowText := app.FormatTime(now)
	var out []claimedMsg
	var next time.Time
	err := t.Write(ctx, func(tx *sql.Tx) error {
		out, next = nil, time.Time{}
		rate, err := ratePerMinute(ctx, tx)
		if err != nil {
			return err
		}
		windowStart := app.FormatTime(now.Add(-time.Minute))
		var used int
		var oldest sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), MIN(last_attempt_at) FROM outbox_messages WHERE last_attempt_at > ?`, windowStart).Scan(&used, &oldest); err != nil {
			return err
		}
		room := min(rate-used, s.batch)
		var due sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT MIN(next_at) FROM outbox_messages WHERE state IN ('queued','sending','failed')`).Scan(&due); err != nil {
			return err
		}
		if !due.Valid {
			return nil
		}
		dueAt, err := app.ParseTime(due.String, false)
		if err != nil {
			return fmt.Errorf("outbox next_at %q: %w", due.String, err)
		}
		if dueAt.After(now) {
			next = dueAt
			return nil
		}
		if room <= 0 {
			// The window is full: the next slot opens when its oldest
			// attempt leaves it.
			at, err := app.ParseTime(oldest.String, false)
			if err != nil {
				return fmt.Errorf("outbox last_attempt_at %q: %w", oldest.String, err)
			}
			next = at.Add(time.Minute + time.Second)
			return nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, channel, recipient, subject, body, attempts, max_attempts, user_id FROM outbox_messages
			WHERE state IN ('queued','sending','failed') AND next_at <= ? ORDER BY next_at, id LIMIT ?`, nowText, room)
		if err != nil {
			return err
		}
		var batch []claimedMsg
		for rows.Next() {
			var m claimedMsg
			if err := rows.Scan(&m.id, &m.channel, &m.to, &m.subject, &m.body, &m.attempts, &m.maxTries, &m.userID); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, m)
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		lease := app.FormatTime(now.Add(s.lease))
		for _, m := range batch {
			if m.attempts >= m.maxTries {
				// A claim that lapsed on its last attempt (its process
				// died mid-send): give up rather than exceed the limit.
				if _, err := tx.ExecContext(ctx, `UPDATE outbox_messages SET state = 'dead', last_error = 'interrupted', next_at = ? WHERE id = ?`, nowText, m.id); err != nil {
					return err
				}
				t.App.Log.Warn("message dead", "tenant", t.Slug, "message", m.id, "channel", m.channel, "reason", "interrupted", "attempts", m.attempts)
				continue
			}
			m.attempts++
			if _, err := tx.ExecContext(ctx, `UPDATE outbox_messages SET state = 'sending', attempts = ?, next_at = ?, last_attempt_at = ? WHERE id = ?`,
				m.attempts, lease, nowText, m.id); err != nil {
				return err
			}
			out = append(out, m)
		}
		if len(batch) > 0 && len(out) == 0 {
			next = now // only dead-lettered: look again at once
		}
		return nil
	})
	return out, next, err
}

// record stores the outcome of m's attempt, provided the claim is still
// ours (a lapsed claim another drain took over is left to it).
func (s *state) record(t *app.Tenant, m claimedMsg, o outcome) error {
	now := s.now()
	nowText := app.FormatTime(now)
	var res sql.Result
	err := t.Write(context.Background(), func(tx *sql.Tx) error {
		var err error
		switch {
		case o.ok:
			res, err = tx.Exec(`UPDATE outbox_messages SET state = 'sent', sent_at = ?, next_at = ?, last_error = '', last_detail = ? WHERE id = ? AND state = 'sending' AND attempts = ?`,
				nowText, nowText, o.detail, m.id, m.attempts)
		case o.permanent || m.attempts >= m.maxTries:
			res, err = tx.Exec(`UPDATE outbox_messages SET state = 'dead', next_at = ?, last_error = ?, last_detail = ? WHERE id = ? AND state = 'sending' AND attempts = ?`,
				nowText, o.reason, o.detail, m.id, m.attempts)
		default:
			s.mu.Lock()
			base, ceil := s.retryBase, s.retryMax
			s.mu.Unlock()
			at := app.FormatTime(now.Add(Backoff(base, ceil, m.attempts)))
			res, err = tx.Exec(`UPDATE outbox_messages SET state = 'failed', next_at = ?, last_error = ?, last_detail = ? WHERE id = ? AND state = 'sending' AND attempts = ?`,
				at, o.reason, o.detail, m.id, m.attempts)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("record message %d: %w", m.id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		t.App.Log.Warn("message outcome not recorded: its claim was taken over", "tenant", t.Slug, "message", m.id)
	}
	switch {
	case o.ok:
	case o.permanent || m.attempts >= m.maxTries:
		t.App.Log.Warn("message dead", "tenant", t.Slug, "message", m.id, "channel", m.channel, "reason", o.reason, "detail", o.detail, "attempts", m.attempts)
	default:
		t.App.Log.Warn("message failed, will retry", "tenant", t.Slug, "message", m.id, "channel", m.channel, "reason", o.reason, "detail", o.detail, "attempts", m.attempts)
	}
	return nil
}

// unclaim hands claimed messages back untried (shutdown), without counting
// the attempt.
func (s *state) unclaim(t *app.Tenant, ms []claimedMsg) {
	nowText := app.FormatTime(s.now())
	err := t.Write(context.Background(), func(tx *sql.Tx) error {
		for _, m := range ms {
			if _, err := tx.Exec(`UPDATE outbox_messages SET state = CASE WHEN attempts > 1 THEN 'failed' ELSE 'queued' END, attempts = attempts - 1, next_at = ?
				WHERE id = ? AND state = 'sending' AND attempts = ?`, nowText, m.id, m.attempts); err != nil {
				return err
			}
		}
		return nil
	})
	// The claims lapse on their own and the messages are sent then.
	if err != nil {
		t.App.Log.Error("hand back claimed messages", "tenant", t.Slug, "err", err)
	}
}

// deliver makes one attempt.
func (s *state) deliver(ctx context.Context, t *app.Tenant, m claimedMsg) outcome {
	ctx, cancel := context.WithTimeout(ctx, s.sendTO)
	defer cancel()
	switch m.channel {
	case ChannelEmail:
		return s.sendEmail(ctx, t, m)
	case ChannelSMS:
		return s.sendSMS(ctx, t, m)
	default:
		return outcome{ok: true}
	}
}

// SweepEvery is how often xr serve looks, while messages of a tenant wait,
// whether a drain job is queued for them (one left by a drain job that
// failed); a tenant with no message waiting is not looked at.
const SweepEvery = 10 * time.Minute

// wake is the outbox.sweep tenant task: it queues a drain job for the
// tenant when messages wait and none is queued or running (messages
// written by another process, or left by a drain job that failed). It
// runs when the tenant opens or is reconciled, then every SweepEvery while
// messages wait.
func wake(ctx context.Context, t *app.Tenant) (time.Time, error) {
	var waiting, draining bool
	err := t.Read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM outbox_messages WHERE state IN ('queued','sending','failed'))`).Scan(&waiting); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM jobs WHERE kind = ? AND state IN ('queued','running'))`, JobSend).Scan(&draining)
	})
	if err != nil || !waiting {
		return time.Time{}, err
	}
	if !draining {
		if err := t.Write(ctx, func(tx *sql.Tx) error { return ensureDrain(ctx, tx, t.Now()) }); err != nil {
			return time.Time{}, err
		}
	}
	return t.Now().Add(SweepEvery), nil
}

// releaseClaims is the outbox.release_claims tenant task, run when the
// tenant opens in xr serve: the messages a previous holder was sending
// when it stopped (xr serve is the only sender of a data directory, as it
// is the only job runner, and a sender holds the tenant open) become due
// now rather than when their claim lapses (the attempt they were claimed
// for still counts).
func releaseClaims(ctx context.Context, t *app.Tenant) (time.Time, error) {
	now := app.FormatTime(stateOf(t.App).now())
	var claimed bool
	if err := t.DB.R.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM outbox_messages WHERE state = 'sending' AND next_at > ?)`, now).Scan(&claimed); err != nil || !claimed {
		return time.Time{}, err
	}
	return time.Time{}, t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE outbox_messages SET next_at = ? WHERE state = 'sending' AND next_at > ?`, now, now)
		return err
	})
}
