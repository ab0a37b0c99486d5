package app

import (
	"context"
	"database/sql"
	"errors"
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
	AuthLog                                           int64 // RADIUS decisions older than radius_auth_log_days
	// ArchiveJob is the session-archive job this pass queued (0: none).
	ArchiveJob int64
}

// The RADIUS session archive (app/aaa registers the job): raw closed
// sessions older than the tenant's radius_session_retention_days (default
// 180; 0 or less: never) move to a file. Maintain queues it at most once
// per UTC day, and only when the oldest session started before the cutoff.
const (
	SessionArchiveJob           = "radius.archive_sessions"
	SessionRetentionSetting     = "radius_session_retention_days"
	DefaultSessionRetentionDays = 180
)

// Maintain prunes a tenant's housekeeping tables in one transaction (the
// kernel's tenant task kernel.maintain runs it every hour).
func Maintain(ctx context.Context, t *Tenant) (MaintenanceResult, error) {
	var r MaintenanceResult
	now := t.Now()
	cut := func(days int) string { return FormatTime(now.AddDate(0, 0, -days)) }
	// The RADIUS auth log is kept radius_auth_log_days (default 14, at least 1).
	logDays, err := SettingRadiusAuthLogDays.Get(ctx, t.DB.R)
	if err != nil {
		return r, err
	}
	authLogDays := int(max(logDays, 1))
	err = t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		if r.Idempotency, err = PruneIdempotency(ctx, tx, now, keepIdempotencyDays); err != nil {
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
				[]any{t.NowText(), cut(keepSessionsDays)}},
			{&r.AuthLog, `DELETE FROM auth_log WHERE at < ?`, []any{cut(authLogDays)}},
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
		r.ArchiveJob, err = queueSessionArchive(ctx, t, tx, now)
		return err
	})
	return r, err
}

// queueSessionArchive queues the session archive when it is due.
func queueSessionArchive(ctx context.Context, t *Tenant, tx *sql.Tx, now time.Time) (int64, error) {
	days, err := SettingRadiusSessionRetention.Get(ctx, tx)
	if err != nil || days <= 0 {
		return 0, err
	}
	var oldest sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT COALESCE(start_time, stop_time) FROM radius_sessions ORDER BY id LIMIT 1`).Scan(&oldest)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (!oldest.Valid || oldest.String >= FormatTime(now.AddDate(0, 0, -int(days))))) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	day := FormatTime(time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC))
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE kind = ? AND (created_at >= ? OR state IN ('queued', 'running'))`,
		SessionArchiveJob, day).Scan(&n); err != nil || n > 0 {
		return 0, err
	}
	return EnqueueJob(ctx, tx, SessionArchiveJob, map[string]any{}, now, 0, 3)
}
