package aaa

import (
	"context"
	"database/sql"
	"errors"
	"net/netip"
	"strings"
	"time"

	"xr/app"
)

// Acct-Status-Type values.
const (
	StatusStart   = 1
	StatusStop    = 2
	StatusInterim = 3
	StatusOn      = 7
	StatusOff     = 8
)

// AcctEvent is one accounting record from a NAS.
type AcctEvent struct {
	NAS                         *NAS
	Status                      int
	SessionID, Username         string
	InputOctets, OutputOctets   uint64
	InputPackets, OutputPackets uint64
	SessionTime                 uint32
	FramedIP                    netip.Addr
	CallingStationID, NASPortID string
	TerminateCause              string
	EventTime                   time.Time
}

// usage effects applied to memory after the commit.
type effect struct {
	user        int64
	addBytes    int64
	addSecs     int64
	open, close string // live keys
	disconnect  *pendingCoA
}

type pendingCoA struct {
	nas      *NAS
	rowID    int64
	username string
	sid      string
	ip       netip.Addr
	fupDown  int64
	fupUp    int64
}

// RecordAccounting applies a batch: one durable transaction per tenant,
// returning only after every commit (radiusd answers the NAS after that).
// The same Start/Interim/Stop for the same session and counters is applied
// once, whatever its identifier or Acct-Delay-Time.
func (s *Service) RecordAccounting(ctx context.Context, evs []AcctEvent) error {
	bySlug := map[string][]AcctEvent{}
	var order []string
	for _, ev := range evs {
		if ev.NAS == nil {
			continue
		}
		if _, ok := bySlug[ev.NAS.TenantSlug]; !ok {
			order = append(order, ev.NAS.TenantSlug)
		}
		bySlug[ev.NAS.TenantSlug] = append(bySlug[ev.NAS.TenantSlug], ev)
	}
	var errs []error
	for _, slug := range order {
		if err := s.recordTenant(ctx, slug, bySlug[slug]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Service) recordTenant(ctx context.Context, slug string, evs []AcctEvent) error {
	ti, err := s.tenant(ctx, slug)
	if err != nil {
		return err
	}
	var effects []effect
	emitted := false
	err = ti.t.Write(ctx, func(tx *sql.Tx) error {
		effects = effects[:0]
		emitted = false
		for i := range evs {
			eff, em, err := s.applyOne(ctx, tx, ti, &evs[i])
			if err != nil {
				return err
			}
			effects = append(effects, eff...)
			emitted = emitted || em
		}
		return nil
	})
	if err != nil {
		return err
	}
	var coas []*pendingCoA
	ti.mu.Lock()
	for _, e := range effects {
		r := ti.byID[e.user]
		if r == nil {
			continue
		}
		r.usedBytes += e.addBytes
		r.usedSecs += e.addSecs
		if e.open != "" {
			r.live[e.open] = true
		}
		if e.close != "" {
			delete(r.live, e.close)
		}
		if e.disconnect != nil {
			coas = append(coas, e.disconnect)
		}
	}
	ti.mu.Unlock()
	if emitted {
		ti.t.EventsEmitted()
	}
	for _, c := range coas {
		go s.enforceQuota(slug, c)
	}
	return nil
}

type sessionRow struct {
	id                 int64
	userID             sql.NullInt64
	closed             bool
	start              string
	in, out            int64
	secs               int64
	chargedB, chargedS int64
}

func (s *Service) applyOne(ctx context.Context, tx *sql.Tx, ti *tenantIndex, ev *AcctEvent) ([]effect, bool, error) {
	now := app.FormatTime(ev.EventTime)
	if ev.EventTime.IsZero() {
		now = app.NowText()
	}
	switch ev.Status {
	case StatusOn, StatusOff:
		return s.closeNAS(ctx, tx, ti, ev.NAS.ID, now)
	case StatusStart, StatusInterim, StatusStop:
	default:
		return nil, false, nil
	}
	var row sessionRow
	var stop sql.NullString
	var start sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT id, user_id, stop_time, start_time, input_octets, output_octets, session_time, charged_bytes, charged_seconds
		FROM radius_sessions WHERE nas_id = ? AND acct_session_id = ? ORDER BY id DESC LIMIT 1`, ev.NAS.ID, ev.SessionID).
		Scan(&row.id, &row.userID, &stop, &start, &row.in, &row.out, &row.secs, &row.chargedB, &row.chargedS)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, false, err
	}
	row.closed, row.start = stop.Valid, start.String

	ti.mu.RLock()
	rec := ti.users[strings.ToLower(ev.Username)]
	var uid int64
	var planName string
	var p *plan
	if rec != nil {
		uid = rec.id
		if p = ti.plans[rec.profileID]; p != nil {
			planName = p.name
		}
	}
	ti.mu.RUnlock()
	key := liveKey(ev.NAS.ID, ev.SessionID)

	switch {
	case ev.Status == StatusStart && found && (!row.closed || row.start == sessionStart(ev)):
		return nil, false, nil // a retransmitted Start
	case ev.Status != StatusStart && found && row.closed:
		return nil, false, nil // a late Interim or a repeated Stop of a closed session
	case !found || (ev.Status == StatusStart && row.closed):
		// A new session, or one first heard of by its Interim/Stop (out of
		// order, or after a server restart).
		kind := "subscriber"
		var user any
		if rec != nil {
			user = uid
		} else {
			kind = "unknown"
		}
		var stopAt any
		if ev.Status == StatusStop {
			stopAt = now
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO radius_sessions(acct_session_id, user_id, username, nas_id, nas_ip, framed_ip, calling_station_id, nas_port_id,
			start_time, update_time, stop_time, kind, profile_name) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			ev.SessionID, user, ev.Username, ev.NAS.ID, ev.NAS.IP.String(), addrText(ev.FramedIP), ev.CallingStationID, ev.NASPortID,
			sessionStart(ev), now, stopAt, kind, planName)
		if err != nil {
			return nil, false, err
		}
		row = sessionRow{}
		row.id, _ = r.LastInsertId()
		if rec != nil {
			row.userID = sql.NullInt64{Int64: uid, Valid: true}
		}
		if err := app.Emit(ctx, tx, "session.started", map[string]any{"session_id": row.id, "acct_session_id": ev.SessionID,
			"username": ev.Username, "user_id": user, "nas_id": ev.NAS.ID}); err != nil {
			return nil, false, err
		}
		if ev.Status == StatusStart {
			eff := []effect{}
			if rec != nil {
				eff = append(eff, effect{user: uid, open: key})
			}
			return eff, true, nil
		}
	}

	// Interim or Stop on an open (or just opened) row: charge the growth.
	dIn := counterDelta(row.in, int64(ev.InputOctets))
	dOut := counterDelta(row.out, int64(ev.OutputOctets))
	dSecs := max(int64(ev.SessionTime)-row.secs, 0)
	addB := dIn + dOut
	closing := ev.Status == StatusStop
	if addB == 0 && dSecs == 0 && !closing && row.in == int64(ev.InputOctets) && row.out == int64(ev.OutputOctets) {
		return nil, false, nil // the same counters again: a duplicate
	}
	var stopAt any
	if closing {
		stopAt = now
	}
	if _, err := tx.ExecContext(ctx, `UPDATE radius_sessions SET input_octets = ?, output_octets = ?, input_packets = ?, output_packets = ?, session_time = ?,
		update_time = ?, stop_time = COALESCE(?, stop_time), terminate_cause = CASE WHEN ? IS NULL THEN terminate_cause ELSE ? END,
		close_reason = CASE WHEN ? IS NULL THEN close_reason ELSE 'nas' END,
		framed_ip = CASE WHEN ? <> '' THEN ? ELSE framed_ip END,
		charged_bytes = charged_bytes + ?, charged_seconds = charged_seconds + ? WHERE id = ?`,
		int64(ev.InputOctets), int64(ev.OutputOctets), int64(ev.InputPackets), int64(ev.OutputPackets), int64(ev.SessionTime),
		now, stopAt, stopAt, ev.TerminateCause, stopAt, addrText(ev.FramedIP), addrText(ev.FramedIP), addB, dSecs, row.id); err != nil {
		return nil, false, err
	}
	eff := effect{user: uid, addBytes: addB, addSecs: dSecs}
	if closing {
		eff.close = key
	} else {
		eff.open = key
	}
	emitted := false
	if closing {
		data := map[string]any{"session_id": row.id, "acct_session_id": ev.SessionID, "username": ev.Username,
			"user_id": nullable(row.userID), "terminate_cause": ev.TerminateCause, "input_octets": ev.InputOctets, "output_octets": ev.OutputOctets,
			"session_time": ev.SessionTime}
		if err := app.Emit(ctx, tx, "session.ended", data); err != nil {
			return nil, false, err
		}
		if err := app.Emit(ctx, tx, "user.disconnected", data); err != nil {
			return nil, false, err
		}
		emitted = true
	}
	if rec != nil && (addB > 0 || dSecs > 0) {
		var usedB, limB, usedS, limS int64
		if err := tx.QueryRowContext(ctx, `UPDATE users SET used_bytes = used_bytes + ?, used_seconds = used_seconds + ? WHERE id = ?
			RETURNING used_bytes, bytes_limit, used_seconds, seconds_limit`, addB, dSecs, uid).Scan(&usedB, &limB, &usedS, &limS); err != nil {
			return nil, false, err
		}
		em, exhausted, err := thresholds(ctx, tx, uid, ev.Username, "data", usedB-addB, usedB, limB)
		if err != nil {
			return nil, false, err
		}
		em2, exhausted2, err := thresholds(ctx, tx, uid, ev.Username, "time", usedS-dSecs, usedS, limS)
		if err != nil {
			return nil, false, err
		}
		emitted = emitted || em || em2
		if (exhausted || exhausted2) && !closing {
			c := &pendingCoA{nas: ev.NAS, rowID: row.id, username: ev.Username, sid: ev.SessionID, ip: ev.FramedIP}
			if exhausted && !exhausted2 && p != nil && (p.fupDown > 0 || p.fupUp > 0) {
				c.fupDown, c.fupUp = p.fupDown, p.fupUp
			}
			eff.disconnect = c
		}
	}
	return []effect{eff}, emitted, nil
}

// thresholds emits usage.threshold when usage crosses 80 % or 100 % of a
// limit, and reports whether it crossed 100 %.
func thresholds(ctx context.Context, tx *sql.Tx, uid int64, username, dim string, before, after, limit int64) (emitted, exhausted bool, err error) {
	if limit <= 0 {
		return false, false, nil
	}
	for _, pct := range []int64{80, 100} {
		mark := limit * pct / 100
		if before < mark && after >= mark {
			if err := app.Emit(ctx, tx, "usage.threshold", map[string]any{"user_id": uid, "username": username, "dimension": dim,
				"percent": pct, "used": after, "limit": limit}); err != nil {
				return false, false, err
			}
			emitted = true
			if pct == 100 {
				exhausted = true
			}
		}
	}
	return emitted, exhausted, nil
}

// counterDelta is the growth of a counter. A NAS that sends no gigawords
// wraps at 2^32: a large drop from near the top is a wrap; any other drop is
// a reset and charges nothing.
func counterDelta(old, cur int64) int64 {
	switch {
	case cur >= old:
		return cur - old
	case old < 1<<32 && old-cur > 1<<31:
		return cur + 1<<32 - old
	}
	return 0
}

func sessionStart(ev *AcctEvent) string {
	t := ev.EventTime
	if t.IsZero() {
		t = app.Now()
	}
	if ev.Status != StatusStart && ev.SessionTime > 0 {
		t = t.Add(-time.Duration(ev.SessionTime) * time.Second)
	}
	return app.FormatTime(t)
}

func addrText(a netip.Addr) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func nullable(v sql.NullInt64) any {
	if v.Valid {
		return v.Int64
	}
	return nil
}

// closeNAS ends every open session of a NAS (Accounting-On/Off: it rebooted).
func (s *Service) closeNAS(ctx context.Context, tx *sql.Tx, ti *tenantIndex, nasID int64, now string) ([]effect, bool, error) {
	return s.closeWhere(ctx, tx, "nas_id = ? AND stop_time IS NULL", []any{nasID}, now, "nas_reboot", "NAS-Reboot")
}

func (s *Service) closeWhere(ctx context.Context, tx *sql.Tx, cond string, args []any, now, reason, cause string) ([]effect, bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, user_id, nas_id, acct_session_id, username FROM radius_sessions WHERE `+cond, args...)
	if err != nil {
		return nil, false, err
	}
	type closed struct {
		id, nas  int64
		user     sql.NullInt64
		sid, usr string
	}
	var list []closed
	for rows.Next() {
		var c closed
		rows.Scan(&c.id, &c.user, &c.nas, &c.sid, &c.usr)
		list = append(list, c)
	}
	rows.Close()
	var effs []effect
	for _, c := range list {
		if _, err := tx.ExecContext(ctx, `UPDATE radius_sessions SET stop_time = ?, close_reason = ?, terminate_cause = ? WHERE id = ?`, now, reason, cause, c.id); err != nil {
			return nil, false, err
		}
		data := map[string]any{"session_id": c.id, "acct_session_id": c.sid, "username": c.usr, "user_id": nullable(c.user), "terminate_cause": cause}
		if err := app.Emit(ctx, tx, "session.ended", data); err != nil {
			return nil, false, err
		}
		if err := app.Emit(ctx, tx, "user.disconnected", data); err != nil {
			return nil, false, err
		}
		if c.user.Valid {
			effs = append(effs, effect{user: c.user.Int64, close: liveKey(c.nas, c.sid)})
		}
	}
	return effs, len(list) > 0, nil
}

// SweepStale closes sessions with no accounting update for longer than the
// tenant's idle window (their NAS lost them or the Stop was lost).
func (s *Service) SweepStale(ctx context.Context, slug string) (int, error) {
	ti, err := s.tenant(ctx, slug)
	if err != nil {
		return 0, err
	}
	cut := app.FormatTime(app.Now().Add(-ti.idle))
	var effs []effect
	err = ti.t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		effs, _, err = s.closeWhere(ctx, tx, "stop_time IS NULL AND COALESCE(update_time, start_time) < ?", []any{cut}, app.NowText(), "stale", "Stale-Session")
		return err
	})
	if err != nil {
		return 0, err
	}
	ti.mu.Lock()
	for _, e := range effs {
		if r := ti.byID[e.user]; r != nil {
			delete(r.live, e.close)
		}
	}
	ti.mu.Unlock()
	if len(effs) > 0 {
		ti.t.EventsEmitted()
	}
	return len(effs), nil
}

// enforceQuota asks the NAS to cut a session whose quota ran out, or to
// drop it to the plan's FUP rate, and records the outcome on the session.
func (s *Service) enforceQuota(slug string, c *pendingCoA) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var outcome string
	var err error
	switch {
	case c.fupDown > 0 || c.fupUp > 0:
		if s.ChangeRate == nil {
			return
		}
		outcome, err = s.ChangeRate(ctx, c.nas, c.username, c.sid, c.fupDown, c.fupUp)
	default:
		if s.Disconnect == nil {
			return
		}
		outcome, err = s.Disconnect(ctx, c.nas, c.username, c.sid, c.ip)
	}
	if err != nil && outcome == "" {
		outcome = "unreachable"
	}
	s.RecordCoAOutcome(ctx, slug, c.rowID, outcome)
}

// RecordCoAOutcome stores the result of a Disconnect/CoA on a session row.
func (s *Service) RecordCoAOutcome(ctx context.Context, slug string, rowID int64, outcome string) error {
	t, release, err := s.app.Acquire(slug)
	if err != nil {
		return err
	}
	defer release()
	return t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE radius_sessions SET disconnect_outcome = ?, disconnect_at = ? WHERE id = ?`, outcome, app.NowText(), rowID)
		return err
	})
}
