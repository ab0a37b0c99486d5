package aaa

import (
	"context"
	"database/sql"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"xr/app"
)

// Session truth: the periodic sweep keeps the live-session list honest.
//
//   - Stale: a session is closed (close_reason and stop_cause "stale") when
//     no accounting arrived for radius_stale_multiplier_pct % (default 250)
//     of its own interim interval, and never sooner than
//     radius_stale_floor_seconds (default 300). A session's own interval is
//     the longest gap of 60 s or more seen between two of its accounting
//     updates (RFC 2869 says an interval SHOULD NOT be under 60 s, so
//     shorter gaps are extra updates, not the period); until one is seen it
//     is the tenant's radius_interim_interval, which every Access-Accept
//     carries.
//   - Zombie: an open session of a subscriber who should not be connected
//     (deleted, disabled, expired or never activated without the plan's
//     expired pool, data quota used up without the plan's FUP rate, time
//     quota used up). With radius_zombie_disconnect = 1 the sweep sends it a
//     Disconnect-Request.
//   - Over limit: a subscriber with more open sessions than the plan's
//     simultaneous use; the sessions beyond the limit, least recently heard
//     from first, are flagged (the likely lost Stops).
//   - Disconnect unconfirmed: an ACKed Disconnect (operator, quota cut or
//     zombie cleanup) that no Accounting-Stop followed within two of the
//     session's interim intervals, or before the session was closed as
//     stale; counted in radius_disconnect_unconfirmed_total.
//
// The zombie and over-limit flags follow the truth while a session is open
// and keep their last value once it is closed; disconnect_unconfirmed stays.

// Tenant settings of the sweep, with their defaults.
const (
	// minObservedInterval is the shortest gap taken as an interim period.
	minObservedInterval = 60
	// maxZombieDisconnects bounds the Disconnect-Requests of one sweep.
	maxZombieDisconnects = 256
)

// truthRule is a tenant's sweep settings, read once per sweep.
type truthRule struct {
	pct, floor, interval int64
	zombieDisconnect     bool
}

func readTruthRule(ctx context.Context, t *app.Tenant) truthRule {
	r := truthRule{
		pct:              SettingRadiusStalePct.GetOr(ctx, t.DB.R),
		floor:            SettingRadiusStaleFloor.GetOr(ctx, t.DB.R),
		interval:         SettingRadiusInterimInterval.GetOr(ctx, t.DB.R),
		zombieDisconnect: SettingRadiusZombieDisconnect.GetOr(ctx, t.DB.R) == 1,
	}
	// Closing a session before its next update is due would lose usage.
	r.pct = max(r.pct, 100)
	r.floor = max(r.floor, minObservedInterval)
	if r.interval <= 0 {
		r.interval = 300
	}
	return r
}

// intervalSQL is a session's interim interval in seconds (SQL over the
// radius_sessions columns, unqualified).
func (r truthRule) intervalSQL() string {
	return "(CASE WHEN interim_interval > 0 THEN interim_interval ELSE " + strconv.FormatInt(r.interval, 10) + " END)"
}

// staleSQL selects the open sessions past their stale threshold at now.
func (r truthRule) staleSQL(now time.Time) (string, []any) {
	last := "COALESCE(update_time, start_time)"
	// The floor bounds every threshold from below: a cheap text pre-filter.
	cond := "stop_time IS NULL AND " + last + " < ? AND unixepoch(" + last + ") + MAX(" + strconv.FormatInt(r.floor, 10) + ", " +
		r.intervalSQL() + " * " + strconv.FormatInt(r.pct, 10) + " / 100) < ?"
	return cond, []any{app.FormatTime(now.Add(-time.Duration(r.floor) * time.Second)), now.Unix()}
}

// SweepResult counts what one sweep of a tenant did.
type SweepResult struct {
	Stale        int // sessions closed as stale
	Zombie       int // sessions newly flagged zombie
	OverLimit    int // sessions newly flagged over_limit
	Unconfirmed  int // sessions newly flagged disconnect_unconfirmed
	Disconnected int // zombie Disconnect-Requests the NAS answered (ACK or NAK)
}

// zombieTarget is a zombie session to disconnect after the sweep commits.
type zombieTarget struct {
	id, nas       int64
	sid, user, ip string
}

// Sweep is the periodic truth pass over a tenant's sessions: in one
// transaction it flags unconfirmed disconnects, closes stale sessions and
// recomputes the zombie and over-limit flags; then (radius_zombie_disconnect
// = 1) it asks the NAS to end zombie sessions, recording each outcome.
func (s *Service) Sweep(ctx context.Context, slug string) (SweepResult, error) {
	var res SweepResult
	ti, release, err := s.tenant(ctx, slug)
	if err != nil {
		return res, err
	}
	defer release()
	rule := readTruthRule(ctx, ti.t)
	now := s.app.Now()
	var effs []effect
	var keys []string
	var targets []zombieTarget
	ti.gate.RLock()
	err = ti.t.WriteNoHooks(ctx, func(tx *sql.Tx) error {
		var err error
		if res.Unconfirmed, err = flagUnconfirmed(ctx, tx, rule, now); err != nil {
			return err
		}
		events, err := s.sessionEvents(ctx, tx, tx.ExecContext)
		if err != nil {
			return err
		}
		stale, args := rule.staleSQL(now)
		if effs, keys, err = closeWhere(ctx, tx, events, stale, args, app.FormatTime(now), "stale", "Stale-Session"); err != nil {
			return err
		}
		if res.Zombie, err = flagZombies(ctx, tx, now); err != nil {
			return err
		}
		if res.OverLimit, err = flagOverLimit(ctx, tx); err != nil {
			return err
		}
		if rule.zombieDisconnect {
			targets, err = zombieTargets(ctx, tx, now.Add(-time.Duration(rule.interval)*time.Second))
		}
		return err
	})
	if err != nil {
		ti.gate.RUnlock()
		return SweepResult{}, err
	}
	res.Stale = len(keys)
	ti.mu.Lock()
	for _, k := range keys {
		delete(ti.sessions, k)
	}
	for _, e := range effs {
		if r := ti.byID[e.user]; r != nil {
			delete(r.live, e.close)
		}
	}
	ti.mu.Unlock()
	ti.gate.RUnlock()
	if res.Unconfirmed > 0 {
		s.unconfirmedCounter(slug).Add(uint64(res.Unconfirmed))
	}
	res.Disconnected = s.disconnectZombies(ctx, slug, targets)
	if res != (SweepResult{}) {
		s.log.Info("session sweep", "tenant", slug, "stale", res.Stale, "zombie", res.Zombie, "over_limit", res.OverLimit,
			"disconnect_unconfirmed", res.Unconfirmed, "zombie_disconnected", res.Disconnected)
	}
	return res, nil
}

// flagUnconfirmed flags the open sessions whose ACKed Disconnect has had no
// Accounting-Stop for two interim intervals, or that are about to be closed
// as stale without one.
func flagUnconfirmed(ctx context.Context, tx *sql.Tx, rule truthRule, now time.Time) (int, error) {
	stale, args := rule.staleSQL(now)
	res, err := tx.ExecContext(ctx, `UPDATE radius_sessions SET disconnect_unconfirmed = 1
		WHERE stop_time IS NULL AND disconnect_unconfirmed = 0 AND disconnect_kind = 'disconnect' AND disconnect_outcome = 'ok'
		AND disconnect_at IS NOT NULL AND (unixepoch(disconnect_at) + 2 * `+rule.intervalSQL()+` < ? OR (`+stale+`))`,
		append([]any{now.Unix()}, args...)...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// zombieSQL is 1 for a subscriber (users u, plan p) who should not be
// connected at ?, as Authorize would refuse them; 0 otherwise.
const zombieSQL = `CASE
		WHEN u.id IS NULL OR u.deleted_at IS NOT NULL OR u.enabled = 0 THEN 1
		WHEN (u.expiration IS NULL OR u.expiration <= ?) AND COALESCE(p.expired_pool, '') = '' THEN 1
		WHEN u.bytes_limit > 0 AND u.used_bytes >= u.bytes_limit AND COALESCE(p.fup_rate_down_kbps, 0) = 0 AND COALESCE(p.fup_rate_up_kbps, 0) = 0 THEN 1
		WHEN u.seconds_limit > 0 AND u.used_seconds >= u.seconds_limit THEN 1
		ELSE 0 END`

// flagZombies sets each open subscriber session's zombie flag to the
// current truth and returns how many were newly flagged.
func flagZombies(ctx context.Context, tx *sql.Tx, now time.Time) (int, error) {
	return countFlagged(tx.QueryContext(ctx, `UPDATE radius_sessions SET zombie = f.z
		FROM (SELECT r.id, `+zombieSQL+` AS z
			FROM radius_sessions r LEFT JOIN users u ON u.id = r.user_id LEFT JOIN profiles p ON p.id = u.profile_id
			WHERE r.stop_time IS NULL AND r.user_id IS NOT NULL) f
		WHERE radius_sessions.id = f.id AND radius_sessions.zombie <> f.z RETURNING zombie`, app.FormatTime(now)))
}

// flagOverLimit flags, per subscriber, the open sessions beyond the plan's
// simultaneous use (0 = unlimited; no plan = 1, as Authorize counts),
// keeping the most recently heard from; the others are cleared.
func flagOverLimit(ctx context.Context, tx *sql.Tx) (int, error) {
	return countFlagged(tx.QueryContext(ctx, `UPDATE radius_sessions SET over_limit = f.o
		FROM (SELECT id, IIF(lim > 0 AND rn > lim, 1, 0) AS o FROM (
			SELECT r.id, CASE WHEN p.id IS NULL THEN 1 ELSE p.simultaneous_use END AS lim,
				ROW_NUMBER() OVER (PARTITION BY r.user_id ORDER BY COALESCE(r.update_time, r.start_time) DESC, r.id DESC) AS rn
			FROM radius_sessions r LEFT JOIN users u ON u.id = r.user_id LEFT JOIN profiles p ON p.id = u.profile_id
			WHERE r.stop_time IS NULL AND r.user_id IS NOT NULL)) f
		WHERE radius_sessions.id = f.id AND radius_sessions.over_limit <> f.o RETURNING over_limit`))
}

// countFlagged counts the rows an UPDATE … RETURNING flag turned on.
func countFlagged(rows *sql.Rows, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var on bool
		if err := rows.Scan(&on); err != nil {
			return 0, err
		}
		if on {
			n++
		}
	}
	return n, rows.Err()
}

// zombieTargets lists the open zombie sessions to disconnect: none whose
// Disconnect the NAS already answered (ACK or NAK), nor one tried since
// retryCut.
func zombieTargets(ctx context.Context, tx *sql.Tx, retryCut time.Time) ([]zombieTarget, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, COALESCE(nas_id, 0), acct_session_id, username, framed_ip FROM radius_sessions
		WHERE stop_time IS NULL AND zombie = 1
		AND NOT (disconnect_kind = 'disconnect' AND (disconnect_outcome IN ('ok', 'nak') OR disconnect_at >= ?))
		ORDER BY id LIMIT ?`, app.FormatTime(retryCut), maxZombieDisconnects)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []zombieTarget
	for rows.Next() {
		var z zombieTarget
		if err := rows.Scan(&z.id, &z.nas, &z.sid, &z.user, &z.ip); err != nil {
			return nil, err
		}
		out = append(out, z)
	}
	return out, rows.Err()
}

// disconnectZombies sends the Disconnect-Requests (a few at a time) and
// records each outcome; it returns how many the NAS answered.
func (s *Service) disconnectZombies(ctx context.Context, slug string, targets []zombieTarget) int {
	if len(targets) == 0 || s.Disconnect == nil {
		return 0
	}
	var answered atomic.Int64
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, z := range targets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outcome := "unreachable"
			if nas := s.nasByID(slug, z.nas); nas != nil {
				cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
				ip, _ := netip.ParseAddr(z.ip)
				if out, err := s.Disconnect(cctx, nas, z.user, z.sid, ip); err == nil || out != "" {
					outcome = out
				}
				cancel()
			}
			if err := s.RecordCoAOutcome(ctx, slug, z.id, outcome); err != nil {
				s.log.Warn("zombie disconnect outcome", "tenant", slug, "session", z.id, "err", err)
			}
			if outcome == "ok" || outcome == "nak" {
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	return int(answered.Load())
}

// stopCause normalizes an Acct-Terminate-Cause name (as radiusd names it)
// into a session's stop_cause: snake case, with Admin-Reset →
// admin_disconnect and both reboots → nas_reboot; none → unknown.
func stopCause(terminateCause string) string {
	switch terminateCause {
	case "":
		return "unknown"
	case "Admin-Reset":
		return "admin_disconnect"
	case "Admin-Reboot", "NAS-Reboot":
		return "nas_reboot"
	}
	return strings.ToLower(strings.ReplaceAll(terminateCause, "-", "_"))
}

// unconfirmedCounter counts, per tenant, the sessions this service flagged
// disconnect_unconfirmed (radius_disconnect_unconfirmed_total).
func (s *Service) unconfirmedCounter(slug string) *atomic.Uint64 {
	if c, ok := s.unconfirmed.Load(slug); ok {
		return c.(*atomic.Uint64)
	}
	c, _ := s.unconfirmed.LoadOrStore(slug, new(atomic.Uint64))
	return c.(*atomic.Uint64)
}

// DisconnectsUnconfirmed returns, by tenant slug, how many ACKed
// Disconnects this service found not followed by an Accounting-Stop within
// two interim intervals.
func (s *Service) DisconnectsUnconfirmed() map[string]uint64 {
	out := map[string]uint64{}
	s.unconfirmed.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return out
}
