package aaa

import (
	"context"
	"database/sql"
	"errors"
	"net/netip"
	"strings"
	"time"

	"xr/app"
	"xr/db"
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
	FramedIPv6Prefix            netip.Prefix
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
	if s.app.IsStandby() {
		return s.journalAccounting(ctx, evs)
	}
	if err := s.fenced(); err != nil {
		return err
	}
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
		if err := s.recordTenant(ctx, slug, bySlug[slug], nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// fenced refuses RADIUS on a fenced box (another box holds the replica):
// the packet goes unanswered, so the NAS turns to its next server, the
// promoted one, instead of hearing this box's stale answers.
func (s *Service) fenced() error {
	if _, ok := s.app.Fenced(); ok {
		return db.ErrFenced
	}
	return nil
}

// recordTenant applies evs of one tenant in one transaction; also, when
// set, runs in it last (a journal replay records how far it got).
func (s *Service) recordTenant(ctx context.Context, slug string, evs []AcctEvent, also func(*sql.Tx) error) error {
	ti, release, err := s.tenant(ctx, slug)
	if err != nil {
		return err
	}
	defer release()
	if err := ti.prepare(ctx, sqlLookup, sqlInsertSession, sqlInterim, sqlStop, sqlCharge, sqlUserByName, sqlLinkSession, app.InsertEventSQL, sqlRollup, sqlChargeNewHour, sqlChargeUnlimited); err != nil {
		return err
	}
	var b *batch
	// The transaction runs detached, as every Write does; its statements
	// too: for a context that can end, the driver starts a watcher
	// goroutine per statement.
	ctx = context.WithoutCancel(ctx)
	ti.gate.RLock()
	// WriteNoHooks: accounting changes no authorization fact, and the
	// commit hook's refresh would wait on the gate held here.
	err = ti.t.WriteNoHooks(ctx, func(tx *sql.Tx) error {
		b = &batch{ti: ti, tx: tx, pending: map[string]sessState{}}
		var err error
		if b.events, err = s.sessionEvents(ctx, tx, b.exec); err != nil {
			return err
		}
		for i := range evs {
			if err := s.applyOne(ctx, b, &evs[i]); err != nil {
				return err
			}
		}
		// Open sessions are swept while they last (aaa.sweep).
		app.TaskDue(tx, SweepTask, ti.t.Now().Add(SweepEvery))
		if err := b.flush(ctx); err != nil {
			return err
		}
		if err := b.flushRollups(ctx); err != nil || also == nil {
			return err
		}
		return also(tx)
	})
	if err != nil {
		ti.gate.RUnlock()
		return err
	}
	// Committed: now memory may follow.
	var coas []*pendingCoA
	ti.mu.Lock()
	for key, st := range b.pending {
		if st.closed {
			delete(ti.sessions, key)
		} else {
			ti.sessions[key] = st
		}
	}
	for _, e := range b.effects {
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
	ti.gate.RUnlock()
	for _, c := range coas {
		go s.enforceQuota(slug, c)
	}
	return nil
}

// batch is one group commit in progress: its transaction, the session
// states it changed (seen by later records of the same batch, applied to
// the cache after commit), and the effects for memory.
type batch struct {
	ti      *tenantIndex
	tx      *sql.Tx
	bound   map[string]*sql.Stmt // prepared statements bound to tx
	pending map[string]sessState
	effects []effect
	events  *sessionEvents
	rollups map[rollupKey]*finishedHour // usage.go: hours finished in this batch, written at its end
	// coalesce.go: the session rows and charges the batch's records
	// change, written once each before the commit.
	writes  map[int64]*sessWrite
	charges map[int64]*sessCharge
	order   []int64 // session rows in the order the batch first touched them
}

// txStmt binds a prepared statement to the batch's transaction once.
func (b *batch) txStmt(ctx context.Context, query string) *sql.Stmt {
	if st := b.bound[query]; st != nil {
		return st
	}
	st := b.ti.stmt(query)
	if st == nil {
		return nil
	}
	if b.bound == nil {
		b.bound = map[string]*sql.Stmt{}
	}
	b.bound[query] = b.tx.StmtContext(ctx, st)
	return b.bound[query]
}

func (b *batch) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := b.txStmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return b.tx.ExecContext(ctx, query, args...)
}

func (b *batch) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := b.txStmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return b.tx.QueryRowContext(ctx, query, args...)
}

// lookup finds a session: this batch's pending state, the cache of open
// sessions, then (closed or unknown sessions) the database. (Folding a
// Start's lookup into its insert, INSERT ... SELECT ... WHERE NOT EXISTS,
// was tried: SQLite runs an INSERT that reads its own table through a
// temporary table, and the yardstick ran no faster.)
func (b *batch) lookup(ctx context.Context, nasID int64, sid, key string) (sessState, bool, error) {
	if st, ok := b.pending[key]; ok {
		return st, true, nil
	}
	b.ti.mu.RLock()
	st, ok := b.ti.sessions[key]
	b.ti.mu.RUnlock()
	if ok {
		return st, true, nil
	}
	var stop, start sql.NullString
	err := b.queryRow(ctx, sqlLookup, nasID, sid).
		Scan(&st.rowID, &st.userID, &stop, &start, &st.in, &st.out, &st.secs, &st.voucher, &st.counted)
	if errors.Is(err, sql.ErrNoRows) {
		return st, false, nil
	}
	st.closed, st.start = stop.Valid, start.String
	return st, err == nil, err
}

const (
	sqlLookup = `SELECT id, COALESCE(user_id, 0), stop_time, start_time, input_octets, output_octets, session_time, kind = 'voucher', usage_counted
		FROM radius_sessions WHERE nas_id = ? AND acct_session_id = ? ORDER BY id DESC LIMIT 1`
	sqlInsertSession = `INSERT INTO radius_sessions(acct_session_id, user_id, username, nas_id, nas_ip, framed_ip, framed_ipv6_prefix, calling_station_id, nas_port_id,
		start_time, update_time, stop_time, kind, profile_name, usage_counted) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	sqlInterim = `UPDATE radius_sessions SET input_octets = ?, output_octets = ?, input_packets = ?, output_packets = ?, session_time = ?,
		update_time = ?, charged_bytes = charged_bytes + ?, charged_seconds = charged_seconds + ?, ` + sqlSetInterval + `,
		` + sqlSetFramed + `, usage_counted = ? WHERE id = ?`
	// sqlSetInterval keeps the longest gap of 60 s or more between a
	// session's updates: the gaps between the batch's own Interims of the
	// session (computed in Go), and the gap from the stored update_time to
	// its first Interim ('' when none). Arguments: gap, first, first, first.
	sqlSetInterval = `interim_interval = MAX(interim_interval, ?,
		IIF(? <> '' AND unixepoch(?) - unixepoch(update_time) >= 60, unixepoch(?) - unixepoch(update_time), 0))`
	// sqlSetFramed records the addresses a record carries (a NAS may learn
	// them after the Start: the first Interim-Update tells); a record
	// without them keeps what is stored. Arguments: ip, ip, prefix, prefix.
	sqlSetFramed = `framed_ip = CASE WHEN ? <> '' THEN ? ELSE framed_ip END,
		framed_ipv6_prefix = CASE WHEN ? <> '' THEN ? ELSE framed_ipv6_prefix END`
	sqlFramedOnly = `UPDATE radius_sessions SET ` + sqlSetFramed + ` WHERE id = ?`
	sqlStop       = `UPDATE radius_sessions SET input_octets = ?, output_octets = ?, input_packets = ?, output_packets = ?, session_time = ?,
		update_time = ?, charged_bytes = charged_bytes + ?, charged_seconds = charged_seconds + ?, ` + sqlSetInterval + `,
		stop_time = ?, terminate_cause = ?, stop_cause = ?,
		close_reason = CASE WHEN disconnect_outcome IN ('ok', 'nak') AND disconnect_kind <> 'rate' THEN 'disconnect_confirmed' ELSE 'nas' END,
		` + sqlSetFramed + `, usage_counted = ? WHERE id = ?`
	// sqlUserByName resolves a user name the index does not know (yet): a
	// subscriber created by another process since the last poll.
	sqlUserByName = `SELECT id, COALESCE(profile_id, 0) FROM users WHERE username = ? AND deleted_at IS NULL`
	// sqlLinkSession attaches a session filed as unknown to the subscriber
	// that now has its user name.
	sqlLinkSession = `UPDATE radius_sessions SET user_id = ?, kind = 'subscriber', profile_name = ?, usage_counted = 1 WHERE id = ? AND user_id IS NULL`
	// ... and the hour in progress of its rollups (usage.go); no row when
	// the record is of another hour: then sqlChargeNewHour.
	//
	// Ownership of users: the subs area owns the table and every other
	// area changes a subscriber through its functions (subs/effects.go,
	// subs/effects_account.go) inside its own transaction. These charges
	// (and usage.go's sqlSessionInHour/sqlSessionStarted) are the one
	// exception: RADIUS accounting owns the usage counters — used_bytes,
	// used_seconds and the hour-in-progress columns (usage_hour, usage_in,
	// usage_out, usage_secs, usage_sessions, usage_prev_*) — because they
	// move on every Interim/Stop in the hot path, as prepared statements
	// batched per transaction, with no event per record. Subs only resets
	// the counters (activation, reset-quota); it never adds to them, and
	// accounting writes no other column of users.
	sqlCharge = `UPDATE users SET used_bytes = used_bytes + ?1, used_seconds = used_seconds + ?2, ` + sqlAddToHour + `
		WHERE id = ?3 AND usage_hour = ?4 RETURNING used_bytes, bytes_limit, used_seconds, seconds_limit`
	// sqlChargeUnlimited is sqlCharge for a subscriber without limits: no
	// row when it has one after all.
	sqlChargeUnlimited = `UPDATE users SET used_bytes = used_bytes + ?1, used_seconds = used_seconds + ?2, ` + sqlAddToHour + `
		WHERE id = ?3 AND usage_hour = ?4 AND bytes_limit = 0 AND seconds_limit = 0`
	sqlChargeNewHour = `UPDATE users SET used_bytes = used_bytes + ?1, used_seconds = used_seconds + ?2, ` + sqlAccumulate + ` WHERE id = ?3
		RETURNING used_bytes, bytes_limit, used_seconds, seconds_limit, ` + sqlFinished
)

func (s *Service) applyOne(ctx context.Context, b *batch, ev *AcctEvent) error {
	ti := b.ti
	if ev.EventTime.IsZero() {
		ev.EventTime = s.app.Now() // from here on every step reads the event's time
	}
	now := app.FormatTime(ev.EventTime)
	switch ev.Status {
	case StatusOn, StatusOff:
		return s.closeNAS(ctx, b, ev.NAS.ID, now)
	case StatusStart, StatusInterim, StatusStop:
	default:
		return nil
	}
	key := liveKey(ev.NAS.ID, ev.SessionID)
	row, found, err := b.lookup(ctx, ev.NAS.ID, ev.SessionID, key)
	if err != nil {
		return err
	}

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
	if rec == nil && (!found || (row.userID == 0 && !row.voucher && !row.closed)) {
		// Not in the index: the subscriber may have been created by another
		// process since the last poll. Ask the database before filing the
		// session as unknown (or while it still is).
		var profileID int64
		err := b.queryRow(ctx, sqlUserByName, ev.Username).Scan(&uid, &profileID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			uid = 0
		case err != nil:
			return err
		default:
			rec = &record{id: uid, username: ev.Username, profileID: profileID}
			ti.mu.RLock()
			if p = ti.plans[profileID]; p != nil {
				planName = p.name
			}
			ti.mu.RUnlock()
		}
	}
	if found && !row.closed && row.userID == 0 && rec != nil {
		// A session filed as unknown whose subscriber now exists: link it
		// and charge what it used so far.
		res, err := b.exec(ctx, sqlLinkSession, uid, planName, row.rowID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 1 {
			row.userID, row.counted = uid, false
			eff := effect{user: uid, open: key, addBytes: row.in + row.out, addSecs: row.secs}
			sessions, err := b.countSession(&row, hourOf(ev.EventTime), eff.addBytes > 0 || eff.addSecs > 0)
			if err != nil {
				return err
			}
			b.pending[key] = row
			if err := b.addCharge(ctx, ev, row, p, row.in, row.out, eff.addSecs, sessions, false); err != nil {
				return err
			}
			b.effects = append(b.effects, eff)
		}
	}

	switch {
	case ev.Status == StatusStart && found && (!row.closed || row.start == sessionStart(ev)):
		return nil // a retransmitted Start
	case ev.Status != StatusStart && found && row.closed:
		return nil // a late Interim or a repeated Stop of a closed session
	case !found || (ev.Status == StatusStart && row.closed):
		// A new session, or one first heard of by its Interim/Stop (out of
		// order, or after a server restart).
		kind := "subscriber"
		var user any
		switch {
		case rec != nil:
			user = uid
		case s.IsVoucher != nil && s.IsVoucher(ctx, b.tx, ev.Username):
			kind = "voucher"
		case s.IsGuest != nil && s.IsGuest(ctx, b.tx, ev.Username):
			kind = "guest"
		default:
			kind = "unknown"
		}
		var stopAt any
		if ev.Status == StatusStop {
			stopAt = now
		}
		start := sessionStart(ev)
		// A subscriber's session is counted at its first charge (or its
		// end): the Start writes no subscriber row.
		counted := rec == nil
		r, err := b.exec(ctx, sqlInsertSession, ev.SessionID, user, ev.Username, ev.NAS.ID, ev.NAS.IP.String(), addrText(ev.FramedIP),
			prefixText(ev.FramedIPv6Prefix), ev.CallingStationID, ev.NASPortID, start, now, stopAt, kind, planName, counted)
		if err != nil {
			return err
		}
		row = sessState{userID: uid, start: start, voucher: kind == "voucher", counted: counted}
		row.rowID, _ = r.LastInsertId()
		if keys := b.events.wanted.Filter("session.started"); keys != nil {
			if err := b.events.emit(ctx, keys, map[string]any{"session_id": row.rowID, "acct_session_id": ev.SessionID,
				"username": ev.Username, "user_id": user, "nas_id": ev.NAS.ID}); err != nil {
				return err
			}
		}
		if ev.Status == StatusStart {
			b.pending[key] = row
			if rec != nil {
				b.effects = append(b.effects, effect{user: uid, open: key})
			}
			return nil
		}
	}

	// Interim or Stop on an open (or just opened) row: charge the growth.
	in, out := int64(ev.InputOctets), int64(ev.OutputOctets)
	if ev.Status == StatusInterim && (int64(ev.SessionTime) < row.secs ||
		(int64(ev.SessionTime) == row.secs && in+out < row.in+row.out)) {
		return nil // an older report overtaken by a newer one: stale
	}
	dIn, dOut := counterDelta(row.in, in), counterDelta(row.out, out)
	dSecs := max(int64(ev.SessionTime)-row.secs, 0)
	addB := dIn + dOut
	closing := ev.Status == StatusStop
	fip, fpfx := addrText(ev.FramedIP), prefixText(ev.FramedIPv6Prefix)
	if !closing && addB == 0 && dSecs == 0 && row.in == in && row.out == out {
		// The same counters again: a duplicate, or an Interim-Update whose
		// news is the address alone (the NAS learnt it after the Start).
		if fip != "" || fpfx != "" {
			b.write(row.rowID).framed(fip, fpfx)
		}
		return nil
	}
	grows := addB > 0 || dSecs > 0
	var sessions int64
	if grows || closing {
		if sessions, err = b.countSession(&row, hourOf(ev.EventTime), grows); err != nil {
			return err
		}
	}
	b.write(row.rowID).record(ev, now, addB, dSecs, row.counted)
	row.in, row.out, row.secs, row.closed = in, out, max(int64(ev.SessionTime), row.secs), closing
	b.pending[key] = row
	eff := effect{user: row.userID, addBytes: addB, addSecs: dSecs}
	if closing {
		eff.close = key
		if keys := b.events.wanted.Filter(sessionEndedKeys...); keys != nil {
			if err := b.events.emit(ctx, keys, map[string]any{"session_id": row.rowID, "acct_session_id": ev.SessionID, "username": ev.Username,
				"user_id": nullID(row.userID), "terminate_cause": ev.TerminateCause, "input_octets": ev.InputOctets, "output_octets": ev.OutputOctets,
				"session_time": ev.SessionTime}); err != nil {
				return err
			}
		}
	} else {
		eff.open = key
	}
	if err := b.addCharge(ctx, ev, row, p, dIn, dOut, dSecs, sessions, closing); err != nil {
		return err
	}
	b.effects = append(b.effects, eff)
	return nil
}

// unlimited reports whether the index knows the subscriber without a data
// or time limit.
func (b *batch) unlimited(uid int64) bool {
	b.ti.mu.RLock()
	defer b.ti.mu.RUnlock()
	r := b.ti.byID[uid]
	return r != nil && r.bytesLimit == 0 && r.secondsLimit == 0
}

// charge adds a session's growth in one hour (its records of the batch,
// summed: coalesce.go) to its subscriber's usage, emits the thresholds it
// crosses, and returns the Disconnect (or FUP CoA) to send when a limit
// ran out on a session that stays open.
func (b *batch) charge(ctx context.Context, c *sessCharge) (*pendingCoA, error) {
	row, dIn, dOut, dSecs, sessions, hour := c.row, c.dIn, c.dOut, c.dSecs, c.sessions, c.hour
	addB := dIn + dOut
	if b.unlimited(row.userID) {
		// No limit, so no threshold to look for: nothing to read back.
		// The statement checks it again (the index may lag a change) and
		// touches no row when the subscriber has a limit now or the record
		// is of another hour: then the charge below.
		res, err := b.exec(ctx, sqlChargeUnlimited, addB, dSecs, row.userID, hour, dIn, dOut, sessions)
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return nil, err
		}
	}
	var usedB, limB, usedS, limS int64
	err := b.queryRow(ctx, sqlCharge, addB, dSecs, row.userID, hour, dIn, dOut, sessions).Scan(&usedB, &limB, &usedS, &limS)
	if errors.Is(err, sql.ErrNoRows) {
		var f finishedHour
		err = b.queryRow(ctx, sqlChargeNewHour, addB, dSecs, row.userID, hour, dIn, dOut, sessions).Scan(append([]any{&usedB, &limB, &usedS, &limS}, f.dest()...)...)
		b.finished(row.userID, f)
	}
	if err != nil {
		return nil, err
	}
	if err := b.usageHook(ctx, row.userID, addB, limB); err != nil { // usage_hook.go
		return nil, err
	}
	exhausted, err := b.thresholds(ctx, row.userID, c.username, "data", usedB-addB, usedB, limB)
	if err != nil {
		return nil, err
	}
	exhausted2, err := b.thresholds(ctx, row.userID, c.username, "time", usedS-dSecs, usedS, limS)
	if err != nil {
		return nil, err
	}
	if !(exhausted || exhausted2) || c.closing {
		return nil, nil
	}
	coa := &pendingCoA{nas: c.nas, rowID: row.rowID, username: c.username, sid: c.sid, ip: c.ip}
	if p := c.plan; exhausted && !exhausted2 && p != nil && (p.fupDown > 0 || p.fupUp > 0) {
		coa.fupDown, coa.fupUp = p.fupDown, p.fupUp
	}
	return coa, nil
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// thresholds emits usage.threshold when usage crosses 80 % or 100 % of a
// limit, and reports whether it crossed 100 %.
func (b *batch) thresholds(ctx context.Context, uid int64, username, dim string, before, after, limit int64) (exhausted bool, err error) {
	if limit <= 0 {
		return false, nil
	}
	for _, pct := range []int64{80, 100} {
		mark := limit * pct / 100
		if before < mark && after >= mark {
			if keys := b.events.wanted.Filter("usage.threshold"); keys != nil {
				if err := b.events.emit(ctx, keys, map[string]any{"user_id": uid, "username": username, "dimension": dim,
					"percent": pct, "used": after, "limit": limit}); err != nil {
					return false, err
				}
			}
			if pct == 100 {
				exhausted = true
			}
		}
	}
	return exhausted, nil
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
	t := ev.EventTime // never zero: applyOne sets it
	if ev.Status != StatusStart && ev.SessionTime > 0 {
		t = t.Add(-time.Duration(ev.SessionTime) * time.Second)
	}
	return app.FormatTime(t)
}

func prefixText(p netip.Prefix) string {
	if !p.IsValid() {
		return ""
	}
	return p.String()
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
func (s *Service) closeNAS(ctx context.Context, b *batch, nasID int64, now string) error {
	// The query below reads the session rows: the batch's pending writes
	// go first.
	if err := b.flush(ctx); err != nil {
		return err
	}
	// Sessions opened earlier in this batch are not in the database view
	// of the cache yet; close them through the same query (they are rows).
	effs, closedKeys, err := closeWhere(ctx, b.tx, b.events, "nas_id = ? AND stop_time IS NULL", []any{nasID}, now, "nas_reboot", "NAS-Reboot")
	if err != nil {
		return err
	}
	for _, k := range closedKeys {
		st := b.pending[k]
		st.closed = true
		b.pending[k] = st
	}
	b.effects = append(b.effects, effs...)
	return nil
}

func closeWhere(ctx context.Context, tx *sql.Tx, events *sessionEvents, cond string, args []any, now, reason, cause string) ([]effect, []string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, user_id, nas_id, acct_session_id, username, usage_counted, start_time FROM radius_sessions WHERE `+cond, args...)
	if err != nil {
		return nil, nil, err
	}
	type closed struct {
		id, nas  int64
		user     sql.NullInt64
		sid, usr string
		counted  bool
		start    string
	}
	var list []closed
	for rows.Next() {
		var c closed
		if err := rows.Scan(&c.id, &c.user, &c.nas, &c.sid, &c.usr, &c.counted, &c.start); err != nil {
			rows.Close()
			return nil, nil, err
		}
		list = append(list, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	var effs []effect
	var keys []string
	for _, c := range list {
		if _, err := tx.ExecContext(ctx, `UPDATE radius_sessions SET stop_time = ?, close_reason = ?, stop_cause = ?, terminate_cause = ?, usage_counted = 1 WHERE id = ?`, now, reason, reason, cause, c.id); err != nil {
			return nil, nil, err
		}
		if c.user.Valid && !c.counted {
			// Ended without a charge: counted in the hour of its start.
			if err := rollupSession(ctx, tx, c.user.Int64, c.start); err != nil {
				return nil, nil, err
			}
		}
		if keys := events.wanted.Filter(sessionEndedKeys...); keys != nil {
			if err := events.emit(ctx, keys, map[string]any{"session_id": c.id, "acct_session_id": c.sid, "username": c.usr,
				"user_id": nullable(c.user), "terminate_cause": cause}); err != nil {
				return nil, nil, err
			}
		}
		key := liveKey(c.nas, c.sid)
		keys = append(keys, key)
		if c.user.Valid {
			effs = append(effs, effect{user: c.user.Int64, close: key})
		}
	}
	return effs, keys, nil
}

// SweepStale runs the tenant's sweep (Sweep in truth.go: stale sessions
// closed after a multiple of their own interim interval, zombie, over-limit
// and unconfirmed-disconnect flags) and reports how many it closed as stale.
func (s *Service) SweepStale(ctx context.Context, slug string) (int, error) {
	res, err := s.Sweep(ctx, slug)
	return res.Stale, err
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
	kind := "disconnect"
	if c.fupDown > 0 || c.fupUp > 0 {
		kind = "rate"
	}
	if err := s.recordCoA(ctx, slug, c.rowID, kind, outcome); err != nil {
		// The NAS has acted; only the record of it is missing, and the
		// sweep still sees the session's own accounting.
		s.log.Error("record CoA outcome", "tenant", slug, "session", c.rowID, "err", err)
	}
}

// RecordCoAOutcome stores the result of a Disconnect on a session row (an
// ACK then waits for its Accounting-Stop: see Sweep).
func (s *Service) RecordCoAOutcome(ctx context.Context, slug string, rowID int64, outcome string) error {
	return s.recordCoA(ctx, slug, rowID, "disconnect", outcome)
}

// recordCoA stores the outcome of a Disconnect (kind disconnect) or a rate
// CoA (kind rate) on a session row.
func (s *Service) recordCoA(ctx context.Context, slug string, rowID int64, kind, outcome string) error {
	t, release, err := s.app.Acquire(slug)
	if err != nil {
		return err
	}
	defer release()
	return t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE radius_sessions SET disconnect_outcome = ?, disconnect_kind = ?, disconnect_at = ? WHERE id = ?`,
			outcome, kind, t.NowText(), rowID)
		return err
	})
}

// DisconnectUser asks the NAS of every open session of a subscriber to end
// it (RFC 5176) and records each outcome on its session. It returns how
// many the NASes answered (ACK, or NAK: the session is already gone); when
// none answered it is a 503 upstream_unreachable.
func (s *Service) DisconnectUser(ctx context.Context, t *app.Tenant, userID int64) (int, error) {
	if s.Disconnect == nil {
		return 0, app.ErrUnavailable("disconnect_unavailable")
	}
	rows, err := t.DB.R.QueryContext(ctx, `SELECT id, nas_id, acct_session_id, username, framed_ip FROM radius_sessions WHERE user_id = ? AND stop_time IS NULL`, userID)
	if err != nil {
		return 0, err
	}
	type open struct {
		id, nas       int64
		sid, user, ip string
	}
	var list []open
	for rows.Next() {
		var o open
		if err := rows.Scan(&o.id, &o.nas, &o.sid, &o.user, &o.ip); err != nil {
			rows.Close()
			return 0, err
		}
		list = append(list, o)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return 0, err
	}
	rows.Close()
	answered := 0
	for _, o := range list {
		nas := s.nasByID(t.Slug, o.nas)
		outcome := "unreachable"
		if nas != nil {
			ip, _ := netip.ParseAddr(o.ip)
			if out, err := s.Disconnect(ctx, nas, o.user, o.sid, ip); err == nil || out != "" {
				outcome = out
			}
		}
		if err := s.RecordCoAOutcome(ctx, t.Slug, o.id, outcome); err != nil {
			// The caller still hears what the NAS answered.
			s.log.Error("record disconnect outcome", "tenant", t.Slug, "session", o.id, "err", err)
		}
		if outcome == "ok" || outcome == "nak" {
			answered++
		}
	}
	if len(list) > 0 && answered == 0 {
		return 0, app.ErrUnavailable("upstream_unreachable")
	}
	return answered, nil
}
