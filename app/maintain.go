package app

import (
	"context"
	"database/sql"
	"time"
)

// Retention of housekeeping rows. Ledgers, journals and accounting
// history are records and are never pruned.
const (
	keepIdempotencyDays = 30 // the spec's minimum for request_id replays (PruneIdempotency's floor)
	keepEventsDays      = 7  // dispatched outbox rows (deliveries keep their own log)
	keepJobsDays        = 30 // finished jobs (their artifacts go with them)
	keepSessionsDays    = 7  // expired or revoked staff sessions
)

// MaintenanceResult counts what one pass removed.
type MaintenanceResult struct {
	Idempotency, Events, Jobs, Sessions, AuthzChanges int64
}

// Maintain prunes a tenant's housekeeping tables in one transaction.
func Maintain(ctx context.Context, t *Tenant) (MaintenanceResult, error) {
	var r MaintenanceResult
	now := Now()
	cut := func(days int) string { return FormatTime(now.AddDate(0, 0, -days)) }
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		if r.Idempotency, err = PruneIdempotency(ctx, tx, keepIdempotencyDays); err != nil {
			return err
		}
		steps := []struct {
			n    *int64
			q    string
			args []any
		}{
			{&r.Events, `DELETE FROM events WHERE dispatched = 1 AND created_at < ?`, []any{cut(keepEventsDays)}},
			{&r.Jobs, `DELETE FROM jobs WHERE state IN ('done','failed','cancelled') AND COALESCE(finished_at, updated_at) < ?`, []any{cut(keepJobsDays)}},
			{&r.Sessions, `DELETE FROM auth_sessions WHERE (revoked_at IS NOT NULL OR expires_at < ?) AND COALESCE(refresh_expires_at, expires_at) < ?`,
				[]any{NowText(), cut(keepSessionsDays)}},
		}
		for _, s := range steps {
			res, err := tx.ExecContext(ctx, s.q, s.args...)
			if err != nil {
				return err
			}
			*s.n, _ = res.RowsAffected()
		}
		// The RADIUS change log: readers keep their position in memory and
		// reload everything if the log was pruned past them.
		res, err := tx.ExecContext(ctx, `DELETE FROM authz_changes WHERE seq < (SELECT COALESCE(MAX(seq), 0) - 100000 FROM authz_changes)`)
		if err != nil {
			return err
		}
		r.AuthzChanges, _ = res.RowsAffected()
		return nil
	})
	return r, err
}

// RunMaintenance prunes every tenant once an interval until ctx ends.
func (a *App) RunMaintenance(ctx context.Context, every time.Duration) {
	t := time.NewTimer(time.Minute) // not at start: let serve settle
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, slug := range a.TenantSlugs() {
			ten, release, err := a.Acquire(slug)
			if err != nil {
				continue
			}
			if r, err := Maintain(ctx, ten); err != nil {
				a.Log.Warn("maintenance", "tenant", slug, "err", err)
			} else if r != (MaintenanceResult{}) {
				a.Log.Info("maintenance", "tenant", slug, "idempotency", r.Idempotency, "events", r.Events, "jobs", r.Jobs,
					"sessions", r.Sessions, "authz_changes", r.AuthzChanges)
			}
			release()
		}
		t.Reset(every)
	}
}
