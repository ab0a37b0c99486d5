package aaa

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"xr/app"
)

// plan is what a decision needs of a profile.
type plan struct {
	name             string
	rateDown, rateUp int64
	fupDown, fupUp   int64
	simultaneousUse  int
	expiredPool      string
	enabled          bool
}

// record is one subscriber as the authorizer sees it.
type record struct {
	id                     int64
	username               string
	password               string
	enabled, deleted       bool
	expiration             time.Time // zero = never activated
	profileID              int64
	groupID                int64
	bytesLimit, usedBytes  int64
	secondsLimit, usedSecs int64
	macLock                bool
	macs                   map[string]bool
	staticIP               string
	live                   map[string]bool // open acct session keys (nas id + session id)
}

// tenantIndex holds a tenant's records in memory, for one opening of its
// files (a cache of the open tenant: it leaves when they close). Reads
// take the read lock; accounting and refreshes take the write lock
// briefly.
type tenantIndex struct {
	slug string
	t    *app.Tenant // the opening's handle: valid while anyone holds the tenant
	svc  *Service

	loadMu sync.Mutex
	loaded bool

	// refreshMu serializes refreshes (commit hooks and the poll).
	refreshMu sync.Mutex
	// gate keeps a refresh from reading a record between an accounting
	// commit and the moment its usage reaches memory (it would count that
	// usage twice): accounting holds it shared from before its transaction
	// until its effects are applied, a refresh holds it exclusively.
	gate sync.RWMutex

	mu      sync.RWMutex
	users   map[string]*record // by lower-case username
	byID    map[int64]*record
	plans   map[int64]*plan
	lastSeq int64
	interim uint32
	// rules are the bandwidth rules (bandwidth.go), loc the tenant's zone.
	rules []RateRule
	loc   *time.Location
	// parental holds the subscribers with parental state (parental.go).
	parental map[int64]*Parental

	// sessions caches the open accounting sessions (by liveKey), so an
	// Interim needs no SELECT; it changes only after a commit.
	sessions map[string]sessState
	stmts    map[string]*sql.Stmt
	stmtMu   sync.Mutex
}

// sessState is an open session's row as last committed.
type sessState struct {
	rowID         int64
	userID        int64 // 0 = no subscriber
	in, out, secs int64
	closed        bool
	voucher       bool // a prepaid card's session: never a subscriber's
	start         string
	counted       bool // in the usage rollups' sessions (countSession)
}

// prepare readies the statements of the accounting path on the tenant's
// single writer connection (modernc re-parses unprepared SQL on every call,
// triggers included). It must run outside a write transaction: that
// transaction holds the one connection the preparation needs. stmtMu is
// not held while it waits for that connection: a transaction running on
// it (accounting's batch) takes stmtMu in stmt, and would wait forever.
func (ti *tenantIndex) prepare(ctx context.Context, queries ...string) error {
	ti.stmtMu.Lock()
	var missing []string
	for _, q := range queries {
		if ti.stmts[q] == nil {
			missing = append(missing, q)
		}
	}
	ti.stmtMu.Unlock()
	for _, q := range missing {
		st, err := ti.t.DB.W.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		ti.stmtMu.Lock()
		if ti.stmts == nil {
			ti.stmts = map[string]*sql.Stmt{}
		}
		if ti.stmts[q] == nil {
			ti.stmts[q], st = st, nil
		}
		ti.stmtMu.Unlock()
		if st != nil { // prepared meanwhile by another caller
			if err := st.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}

// stmt returns a prepared statement, or nil if it was not prepared.
func (ti *tenantIndex) stmt(query string) *sql.Stmt {
	ti.stmtMu.Lock()
	defer ti.stmtMu.Unlock()
	return ti.stmts[query]
}

// ensureLoaded loads the index on first use (again after a failed load).
func (ti *tenantIndex) ensureLoaded(ctx context.Context, s *Service) error {
	ti.loadMu.Lock()
	defer ti.loadMu.Unlock()
	if ti.loaded {
		return nil
	}
	if err := ti.load(ctx, s); err != nil {
		return err
	}
	ti.loaded = true
	s.mu.Lock()
	s.tenants[ti.slug] = ti
	s.mu.Unlock()
	return nil
}

func (ti *tenantIndex) isLoaded() bool {
	ti.loadMu.Lock()
	defer ti.loadMu.Unlock()
	return ti.loaded
}

// Close drops the index as its tenant's files close: the statements
// prepared on the writer go, and the service forgets it (idempotent).
func (ti *tenantIndex) Close() {
	ti.stmtMu.Lock()
	for _, st := range ti.stmts {
		st.Close()
	}
	ti.stmts = nil
	ti.stmtMu.Unlock()
	if s := ti.svc; s != nil {
		s.mu.Lock()
		if s.tenants[ti.slug] == ti {
			delete(s.tenants, ti.slug)
		}
		s.mu.Unlock()
	}
}

const recordCols = `u.id, u.username, u.password_sealed, u.enabled, u.deleted_at IS NOT NULL, COALESCE(u.expiration, ''), COALESCE(u.profile_id, 0),
	u.bytes_limit, u.used_bytes, u.seconds_limit, u.used_seconds, u.mac_lock_enabled, u.mac_locked_addrs, u.static_ip, COALESCE(u.group_id, 0)`

// load reads the whole index from ti.t (held by the caller).
func (ti *tenantIndex) load(ctx context.Context, s *Service) error {
	t := ti.t
	ti.users, ti.byID, ti.plans = map[string]*record{}, map[int64]*record{}, map[int64]*plan{}
	ti.sessions = map[string]sessState{}
	ti.interim = uint32(SettingRadiusInterimInterval.GetOr(ctx, t.DB.R))
	return t.Read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM authz_changes`).Scan(&ti.lastSeq); err != nil {
			return err
		}
		if err := ti.loadPlans(ctx, tx, 0); err != nil {
			return err
		}
		if err := ti.loadRules(ctx, tx); err != nil {
			return err
		}
		if err := ti.loadParental(ctx, tx, 0); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+recordCols+` FROM users u WHERE u.deleted_at IS NULL`)
		if err != nil {
			return err
		}
		for rows.Next() {
			r, err := scanRecord(rows, s)
			if err != nil {
				rows.Close()
				return err
			}
			ti.put(r)
		}
		rows.Close()
		return ti.loadLive(ctx, tx, 0)
	})
}

func scanRecord(row interface{ Scan(...any) error }, s *Service) (*record, error) {
	r := &record{macs: map[string]bool{}, live: map[string]bool{}}
	var sealed []byte
	var exp, macs string
	if err := row.Scan(&r.id, &r.username, &sealed, &r.enabled, &r.deleted, &exp, &r.profileID, &r.bytesLimit, &r.usedBytes,
		&r.secondsLimit, &r.usedSecs, &r.macLock, &macs, &r.staticIP, &r.groupID); err != nil {
		return nil, err
	}
	if pw, err := s.app.Keys.Open(sealed); err == nil {
		r.password = string(pw)
	}
	if exp != "" {
		var err error
		if r.expiration, err = app.ParseTime(exp, true); err != nil {
			return nil, fmt.Errorf("user %d expiration %q: %w", r.id, exp, err)
		}
	}
	var list []string
	if err := json.Unmarshal([]byte(macs), &list); err != nil && macs != "" {
		return nil, fmt.Errorf("user %d mac_locked_addrs: %w", r.id, err)
	}
	for _, m := range list {
		r.macs[normMAC(m)] = true
	}
	return r, nil
}

func (ti *tenantIndex) put(r *record) {
	if old := ti.byID[r.id]; old != nil {
		r.live = old.live
		delete(ti.users, strings.ToLower(old.username))
	}
	ti.byID[r.id] = r
	ti.users[strings.ToLower(r.username)] = r
}

func (ti *tenantIndex) loadPlans(ctx context.Context, q app.Querier, only int64) error {
	query := `SELECT id, name, rate_down_kbps, rate_up_kbps, fup_rate_down_kbps, fup_rate_up_kbps, simultaneous_use, expired_pool, enabled FROM profiles`
	var args []any
	if only != 0 {
		query += ` WHERE id = ?`
		args = append(args, only)
		delete(ti.plans, only)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		p := &plan{}
		var id int64
		if err := rows.Scan(&id, &p.name, &p.rateDown, &p.rateUp, &p.fupDown, &p.fupUp, &p.simultaneousUse, &p.expiredPool, &p.enabled); err != nil {
			return err
		}
		ti.plans[id] = p
	}
	return rows.Err()
}

func (ti *tenantIndex) loadLive(ctx context.Context, q app.Querier, userID int64) error {
	query := `SELECT id, COALESCE(user_id, 0), nas_id, acct_session_id, input_octets, output_octets, session_time, COALESCE(start_time, ''), kind = 'voucher', usage_counted
		FROM radius_sessions WHERE stop_time IS NULL`
	var args []any
	if userID != 0 {
		query += ` AND user_id = ?`
		args = append(args, userID)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var st sessState
		var nas int64
		var sid string
		if err := rows.Scan(&st.rowID, &st.userID, &nas, &sid, &st.in, &st.out, &st.secs, &st.start, &st.voucher, &st.counted); err != nil {
			return err
		}
		key := liveKey(nas, sid)
		ti.sessions[key] = st
		if r := ti.byID[st.userID]; r != nil {
			r.live[key] = true
		}
	}
	return rows.Err()
}

// refresh applies the change log since the last poll: a subscriber's
// record, or a plan, reloaded from the database. It runs after every commit
// of this process (read-your-writes) and on the poll (other processes), one
// at a time per tenant, and applies the whole log before it returns.
func (ti *tenantIndex) refresh(ctx context.Context, s *Service) error {
	ti.refreshMu.Lock()
	defer ti.refreshMu.Unlock()
	for {
		more, err := ti.refreshStep(ctx, s)
		if err != nil || !more {
			return err
		}
	}
}

// refreshBatch bounds one step of the change log.
const refreshBatch = 10000

// refreshStep applies up to refreshBatch changes and reports whether more
// are waiting.
func (ti *tenantIndex) refreshStep(ctx context.Context, s *Service) (more bool, err error) {
	type change struct{ seq, user, profile int64 }
	var changes []change
	err = ti.t.Read(ctx, func(tx *sql.Tx) error {
		var max int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM authz_changes`).Scan(&max); err != nil {
			return err
		}
		if max == ti.lastSeq {
			return nil
		}
		if max < ti.lastSeq {
			// The file was restored or the log pruned past us: reload all.
			changes = []change{{seq: max, user: -1}}
			return nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT seq, COALESCE(user_id, 0), COALESCE(profile_id, 0) FROM authz_changes WHERE seq > ? ORDER BY seq LIMIT ?`, ti.lastSeq, refreshBatch)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c change
			if err := rows.Scan(&c.seq, &c.user, &c.profile); err != nil {
				return err
			}
			changes = append(changes, c)
		}
		return rows.Err()
	})
	if err != nil || len(changes) == 0 {
		return false, err
	}
	ti.gate.Lock()
	defer ti.gate.Unlock()
	if changes[0].user == -1 {
		fresh := &tenantIndex{slug: ti.slug, t: ti.t}
		if err := fresh.load(ctx, s); err != nil {
			return false, err
		}
		ti.mu.Lock()
		ti.users, ti.byID, ti.plans, ti.lastSeq, ti.sessions = fresh.users, fresh.byID, fresh.plans, fresh.lastSeq, fresh.sessions
		ti.rules, ti.loc, ti.parental = fresh.rules, fresh.loc, fresh.parental
		ti.mu.Unlock()
		return false, nil
	}
	users := map[int64]bool{}
	profiles := map[int64]bool{}
	for _, c := range changes {
		if c.user != 0 {
			users[c.user] = true
		}
		if c.profile != 0 {
			profiles[c.profile] = true
		}
	}
	ti.mu.Lock()
	defer ti.mu.Unlock()
	for pid := range profiles {
		if pid == -1 { // a bandwidth rule changed
			if err := ti.loadRules(ctx, ti.t.DB.R); err != nil {
				return false, err
			}
			continue
		}
		if err := ti.loadPlans(ctx, ti.t.DB.R, pid); err != nil {
			return false, err
		}
	}
	for uid := range users {
		if err := ti.loadParental(ctx, ti.t.DB.R, uid); err != nil {
			return false, err
		}
		r, err := scanRecord(ti.t.DB.R.QueryRowContext(ctx, `SELECT `+recordCols+` FROM users u WHERE u.id = ?`, uid), s)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && r.deleted) {
			if old := ti.byID[uid]; old != nil {
				delete(ti.users, strings.ToLower(old.username))
				delete(ti.byID, uid)
			}
			continue
		}
		if err != nil {
			return false, err
		}
		known := ti.byID[uid] != nil
		ti.put(r)
		if !known {
			// New to this index: its open sessions (accounting may have
			// linked them already) count for simultaneous use.
			if err := ti.loadLive(ctx, ti.t.DB.R, uid); err != nil {
				return false, err
			}
		}
	}
	ti.lastSeq = changes[len(changes)-1].seq
	// The log is pruned by the hourly housekeeping (app.Maintain), never
	// here: a refresh runs inside another write's commit hook.
	return len(changes) == refreshBatch, nil
}

func liveKey(nasID int64, sid string) string {
	return strconv.FormatInt(nasID, 10) + "/" + sid
}

// normMAC folds the MAC notations NASes send (aa:bb.., AA-BB.., aabb.cc..)
// into one lower-case colon form.
func normMAC(s string) string {
	var hex []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
			hex = append(hex, c)
		case c >= 'A' && c <= 'F':
			hex = append(hex, c+32)
		}
	}
	if len(hex) != 12 {
		return strings.ToLower(strings.TrimSpace(s))
	}
	out := make([]byte, 0, 17)
	for i := 0; i < 12; i += 2 {
		if i > 0 {
			out = append(out, ':')
		}
		out = append(out, hex[i], hex[i+1])
	}
	return string(out)
}
