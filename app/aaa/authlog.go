package aaa

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"xr/app"
	"xr/app/reports"
)

// The auth log: every Access-Request decision (time, username, NAS,
// calling station, result, reason, latency), written off the hot path;
// under a flood, past authLogRowsPerSecond rows in a second, the rest of
// that second's decisions are counted on aggregate rows.
// The wire layer hands each decision to LogDecision, which never blocks:
// a buffered channel is drained by one goroutine that inserts what it
// collected in one transaction per tenant every authLogEvery or every
// authLogBatch decisions. When the buffer is full the decision is dropped
// and counted (AuthLogStats), so authentication never waits for the disk;
// under a sustained flood the writer also rests between full batches, so
// it takes at most about half a core from authentication.
// The hourly housekeeping (app.Maintain) prunes rows older than the
// tenant setting radius_auth_log_days (default 14).

// AuthDecision is one answered (or dropped) Access-Request.
type AuthDecision struct {
	NAS              *NAS
	Username         string
	CallingStationID string
	// Method is pap, chap, mschapv2, or EAP with the method inside
	// (eap-peap/mschapv2, eap-ttls/pap, ...; eap when none was agreed).
	Method  string
	Result  string // accept, reject, dropped
	Reason  string // "" on accept
	Latency time.Duration
	At      time.Time
}

const (
	authLogBuffer = 65536
	authLogBatch  = 1000
	authLogEvery  = 500 * time.Millisecond
	// authLogChunk is how many rows one INSERT statement carries.
	authLogChunk = 100
)

type authLog struct {
	s        *Service
	budgets  map[string]*rowBudget // per tenant; the writer goroutine's alone
	ch       chan AuthDecision
	flushReq chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	dropped  atomic.Uint64
	written  atomic.Uint64
}

func startAuthLog(s *Service) *authLog {
	l := &authLog{s: s, budgets: map[string]*rowBudget{}, ch: make(chan AuthDecision, authLogBuffer), flushReq: make(chan chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// LogDecision queues a decision for the auth log without blocking.
func (s *Service) LogDecision(d AuthDecision) {
	if s.authLog == nil {
		return
	}
	select {
	case s.authLog.ch <- d:
	default:
		s.authLog.dropped.Add(1)
	}
}

// AuthLogStats reports how many decisions were written and how many were
// dropped because the buffer was full (or their tenant was gone).
func (s *Service) AuthLogStats() (written, dropped uint64) {
	if s.authLog == nil {
		return 0, 0
	}
	return s.authLog.written.Load(), s.authLog.dropped.Load()
}

// FlushAuthLog writes every decision queued so far before it returns.
func (s *Service) FlushAuthLog(ctx context.Context) error {
	if s.authLog == nil {
		return nil
	}
	ack := make(chan struct{})
	select {
	case s.authLog.flushReq <- ack:
	case <-s.authLog.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ack:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close writes what is queued and stops the writer.
func (l *authLog) close() {
	if l == nil {
		return
	}
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

func (l *authLog) run() {
	defer close(l.done)
	tick := time.NewTicker(authLogEvery)
	defer tick.Stop()
	buf := make([]AuthDecision, 0, authLogBatch)
	var warned uint64
	var warnedAt time.Time
	flush := func() time.Duration {
		if len(buf) == 0 {
			return 0
		}
		start := time.Now()
		l.flush(buf)
		clear(buf)
		buf = buf[:0]
		return time.Since(start)
	}
	// drain takes what is queued now (not what keeps arriving).
	drain := func() {
		for n := len(l.ch); n > 0; n-- {
			buf = append(buf, <-l.ch)
			if len(buf) >= authLogBatch {
				flush()
			}
		}
	}
	for {
		select {
		case d := <-l.ch:
			buf = append(buf, d)
			if len(buf) >= authLogBatch {
				// A full batch means a flood: rest as long as writing it
				// took, so the writer never takes more than about half a
				// core from authentication. The buffer absorbs the burst;
				// past it decisions are dropped and counted.
				time.Sleep(flush())
			}
		case <-tick.C:
			flush()
			if n := l.dropped.Load(); n != warned && time.Since(warnedAt) > time.Minute {
				l.s.log.Warn("auth log: decisions dropped (buffer full or write failed)", "dropped_total", n)
				warned, warnedAt = n, time.Now()
			}
		case ack := <-l.flushReq:
			drain()
			flush()
			close(ack)
		case <-l.stop:
			drain()
			flush()
			return
		}
	}
}

// flush writes a batch: one transaction per tenant.
func (l *authLog) flush(batch []AuthDecision) {
	bySlug := map[string][]*AuthDecision{}
	for i := range batch {
		d := &batch[i]
		if d.NAS == nil {
			l.dropped.Add(1)
			continue
		}
		bySlug[d.NAS.TenantSlug] = append(bySlug[d.NAS.TenantSlug], d)
	}
	for slug, list := range bySlug {
		if err := l.write(slug, l.shape(slug, list)); err != nil {
			l.dropped.Add(uint64(len(list)))
			l.s.log.Warn("auth log write", "tenant", slug, "rows", len(list), "err", err)
			continue
		}
		l.written.Add(uint64(len(list)))
	}
}

// authLogRowsPerSecond is a tenant's budget of auth log rows per second:
// past it, the decisions of that second are counted on one row per NAS,
// method, result and reason (a flood costs a few rows a second, not a row
// per request).
const authLogRowsPerSecond = 1000

// logRow is one auth_log row: one decision, or the count of a flood's.
type logRow struct {
	d         *AuthDecision // its fields, but for an aggregate: no username, station or subscriber
	at        time.Time
	n         int64
	latencyUS int64
	aggregate bool
}

// floodKey groups the decisions of one second beyond the budget.
type floodKey struct {
	sec                    int64
	nas                    int64
	method, result, reason string
}

// shape turns a tenant's decisions into rows: one per decision within the
// tenant's budget for its second, aggregates past it.
func (l *authLog) shape(slug string, list []*AuthDecision) []logRow {
	b := l.budgets[slug]
	if b == nil {
		if len(l.budgets) > 4096 { // tenants come and go; keep the map bounded
			clear(l.budgets)
		}
		b = &rowBudget{}
		l.budgets[slug] = b
	}
	rows := make([]logRow, 0, len(list))
	var floods map[floodKey]int // index in rows
	for _, d := range list {
		sec := d.At.Unix()
		if sec != b.sec {
			b.sec, b.rows = sec, 0
		}
		if b.rows < authLogRowsPerSecond {
			b.rows++
			rows = append(rows, logRow{d: d, at: d.At, n: 1, latencyUS: d.Latency.Microseconds()})
			continue
		}
		k := floodKey{sec: sec, nas: d.NAS.ID, method: d.Method, result: d.Result, reason: d.Reason}
		if i, ok := floods[k]; ok {
			r := &rows[i]
			r.latencyUS += d.Latency.Microseconds() // a sum until the end
			r.n++
			continue
		}
		if floods == nil {
			floods = map[floodKey]int{}
		}
		floods[k] = len(rows)
		rows = append(rows, logRow{d: d, at: time.Unix(sec, 0), n: 1, latencyUS: d.Latency.Microseconds(), aggregate: true})
	}
	for _, i := range floods {
		rows[i].latencyUS /= rows[i].n
	}
	return rows
}

// rowBudget is a tenant's count of rows written in the current second.
type rowBudget struct {
	sec  int64
	rows int
}

func (l *authLog) write(slug string, list []logRow) error {
	s := l.s
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The decisions' tenant may have closed since: it opens again.
	ti, release, err := s.tenant(ctx, slug)
	if err != nil {
		return err
	}
	defer release()
	// The subscriber a decision was about, for scoping. Unknown usernames
	// stay without one (only tenant-wide managers see them), and so do
	// aggregates.
	uids := make([]any, len(list))
	ti.mu.RLock()
	for i, r := range list {
		if r.aggregate || r.d.Reason == ReasonUnknownUser {
			continue
		}
		if u := ti.users[strings.ToLower(r.d.Username)]; u != nil {
			uids[i] = u.id
		}
	}
	ti.mu.RUnlock()
	// The full chunk's statement is prepared once per tenant (outside the
	// transaction, on the writer connection): SQLite would parse its
	// hundred rows of placeholders again on every call.
	if err := ti.prepare(ctx, fullChunkSQL); err != nil {
		return err
	}
	var at string
	var atSec int64
	args := make([]any, 0, authLogChunk*authLogValues)
	return ti.t.WriteNoHooks(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		var chunk *sql.Stmt
		for start := 0; start < len(list); start += authLogChunk {
			end := min(start+authLogChunk, len(list))
			args = args[:0]
			for i := start; i < end; i++ {
				r := &list[i]
				if sec := r.at.Unix(); sec != atSec || at == "" {
					at, atSec = app.FormatTime(r.at), sec
				}
				user, station := r.d.Username, r.d.CallingStationID
				if r.aggregate {
					user, station = "", ""
				}
				args = append(args, at, user, uids[i], r.d.NAS.ID, station, r.d.Method, r.d.Result, r.d.Reason, r.latencyUS, r.n)
			}
			var err error
			if end-start == authLogChunk {
				if chunk == nil {
					chunk = tx.StmtContext(ctx, ti.stmt(fullChunkSQL))
				}
				_, err = chunk.ExecContext(ctx, args...)
			} else {
				_, err = tx.ExecContext(ctx, buildInsertAuthLog(end-start), args...)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

var fullChunkSQL = buildInsertAuthLog(authLogChunk)

// authLogValues is how many values one auth_log row takes.
const authLogValues = 10

func buildInsertAuthLog(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO auth_log(at, username, user_id, nas_id, calling_station_id, method, result, reason, latency_us, decisions) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?,?,?,?,?,?,?,?,?,?)")
	}
	return b.String()
}

// AuthLogEntry is a row of GET /admin/radius/auth-log.
type AuthLogEntry struct {
	ID               int64    `json:"id"`
	At               app.Time `json:"at"`
	Username         string   `json:"username"`
	UserID           *int64   `json:"user_id"`
	NASID            *int64   `json:"nas_id"`
	NASName          string   `json:"nas_name"`
	CallingStationID string   `json:"calling_station_id"`
	// Method: pap, chap, mschapv2, eap-peap/mschapv2, eap-ttls/pap,
	// eap-ttls/mschapv2, eap-ttls/eap-mschapv2, eap-mschapv2, eap ("" for
	// decisions logged before methods were).
	Method string `json:"method"`
	Result string `json:"result"`
	Reason string `json:"reason"`
	// LatencyUS is the decision's latency (the mean of an aggregate's).
	LatencyUS int64 `json:"latency_us"`
	// Count is how many decisions the row stands for: 1, or more for the
	// aggregate of a flood's second beyond the tenant's budget of rows
	// (1000 a second): then username and calling_station_id are empty.
	Count int64 `json:"count"`
}

// AuthLogListSpec is GET /admin/radius/auth-log's allow-list. username
// matches exactly (case-insensitively, as RADIUS does); from and to bound
// the decision time (inclusive); q searches username and calling station.
var AuthLogListSpec = app.ListSpec{
	Sorts:       map[string]string{"at": "a.at", "id": "a.id", "username": "a.username", "latency_us": "a.latency_us"},
	DefaultSort: "at",
	Filters: map[string]app.FilterKind{"username": app.FilterString, "nas_id": app.FilterInt, "user_id": app.FilterInt,
		"result": app.FilterString, "reason": app.FilterString, "method": app.FilterString, "from": app.FilterTime, "to": app.FilterTime},
}

var authResults = map[string]bool{"accept": true, "reject": true, "dropped": true}

// resultOf is the result a logged reason goes with.
func resultOf(reason string) string {
	switch reason {
	case "":
		return "accept"
	case "backend_error":
		return "dropped"
	}
	return "reject"
}

const authLogCols = `a.id, a.at, a.username, a.user_id, a.nas_id, COALESCE(n.name, ''), a.calling_station_id, a.method, a.result, a.reason, a.latency_us, a.decisions`

const authLogFrom = `FROM auth_log a LEFT JOIN nas n ON n.id = a.nas_id LEFT JOIN users u ON u.id = a.user_id`

// ListAuthLog lists decisions in the caller's scope: a manager without
// tenant-wide visibility sees the decisions about its subtree's
// subscribers only (never those about unknown usernames).
func ListAuthLog(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[AuthLogEntry], error) {
	if err := act.Require(reports.PermReportSessions); err != nil {
		return app.Page[AuthLogEntry]{}, err
	}
	var where []string
	var args []any
	add := func(cond string, a ...any) { where = append(where, cond); args = append(args, a...) }
	if !act.TenantWide {
		cond, a := act.ScopeSQL("u.parent_id")
		add("a.user_id IS NOT NULL AND "+cond, a...)
	}
	if v, ok := lq.Str("username"); ok {
		add("a.username = ? COLLATE NOCASE", v)
	}
	if v, ok := lq.Int("nas_id"); ok {
		add("a.nas_id = ?", v)
	}
	if v, ok := lq.Int("user_id"); ok {
		add("a.user_id = ?", v)
	}
	if v, ok := lq.Str("method"); ok {
		add("a.method = ?", v)
	}
	if v, ok := lq.Str("result"); ok {
		if !authResults[v] {
			return app.Page[AuthLogEntry]{}, app.ErrValidation("invalid_filter", "filter[result]")
		}
		add("a.result = ?", v)
	}
	if v, ok := lq.Str("reason"); ok {
		// A reason implies its result, which lets the (result, reason, at)
		// index serve the filter.
		add("a.result = ? AND a.reason = ?", resultOf(v), v)
	}
	if v, ok := lq.TimeF("from"); ok {
		add("a.at >= ?", app.FormatTime(v.Time))
	}
	if v, ok := lq.TimeF("to"); ok {
		add("a.at <= ?", app.FormatTime(v.Time))
	}
	if lq.Q != "" {
		like := "%" + app.LikeEscape(lq.Q) + "%"
		add(`(a.username LIKE ? ESCAPE '\' OR a.calling_station_id LIKE ? ESCAPE '\')`, like, like)
	}
	from := authLogFrom
	if len(where) > 0 {
		from += " WHERE " + strings.Join(where, " AND ")
	}
	return app.QueryPage(ctx, act.Tenant, lq, authLogCols, from, args, "a.id", func(rows *sql.Rows) (AuthLogEntry, error) {
		var e AuthLogEntry
		var uid, nas sql.NullInt64
		if err := rows.Scan(&e.ID, &e.At, &e.Username, &uid, &nas, &e.NASName, &e.CallingStationID, &e.Method, &e.Result, &e.Reason, &e.LatencyUS, &e.Count); err != nil {
			return e, err
		}
		if uid.Valid {
			e.UserID = &uid.Int64
		}
		if nas.Valid {
			e.NASID = &nas.Int64
		}
		return e, nil
	})
}
