package dataimport

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/files"
)

// Session history: once a FreeRADIUS import's subscribers are written, the
// radacct rows of the upload are read again (streamed, one chunk of
// historyChunk rows per transaction) and become closed sessions in
// radius_sessions (what GET /users/{id}/sessions and the session reports
// read), close_reason 'imported', with their traffic added to the
// subscribers' usage_rollups (hour and day of the session's start). A
// session still open in the dump is closed at its last update (or start
// plus its session time). History is imported for the subscribers that
// exist in the caller's subtree after the import and have no imported
// history yet, so a re-run does not import it twice; rows of other
// usernames are counted as skipped. StartInput.Sessions false leaves it out.
// The phase's checkpoint (the radacct rows settled) and counts are on the
// run (0036_import_history.sql): a resumed job goes on after its last
// committed chunk.

// historyChunk is the radacct rows of one transaction.
const historyChunk = 50000

// historyChunkOf is historyChunk, or the rows per chunk a test set
// (SetChunkRows).
func historyChunkOf(a *app.App) int {
	if n, ok := a.Value(chunkKey{}).(int); ok && n > 0 {
		return n
	}
	return historyChunk
}

// historyBatch is the rows of one multi-row INSERT.
const historyBatch = 200

// History is what the session-history phase imported.
type History struct {
	State        string `json:"state"` // done, off, cancelled
	Rows         int64  `json:"rows"`  // radacct rows read
	Imported     int64  `json:"imported"`
	Skipped      int64  `json:"skipped"` // usernames without history to import
	InputOctets  int64  `json:"input_octets"`
	OutputOctets int64  `json:"output_octets"`
}

// radacct's column order in FreeRADIUS's schema.sql, for INSERTs that name
// no columns.
var radacctColumns = []string{"radacctid", "acctsessionid", "acctuniqueid", "username", "realm", "nasipaddress", "nasportid", "nasporttype",
	"acctstarttime", "acctupdatetime", "acctstoptime", "acctinterval", "acctsessiontime", "acctauthentic", "connectinfo_start", "connectinfo_stop",
	"acctinputoctets", "acctoutputoctets", "calledstationid", "callingstationid", "acctterminatecause", "servicetype", "framedprotocol",
	"framedipaddress", "framedipv6address", "framedipv6prefix", "framedinterfaceid", "delegatedipv6prefix", "class"}

// acctCols are the radacct columns the history reads, by position.
const (
	acSession = iota
	acUser
	acNASIP
	acPort
	acStart
	acUpdate
	acStop
	acTime
	acIn
	acOut
	acCalling
	acCause
	acFramed
	acPrefix
	acInGiga
	acOutGiga
	acCount
)

var acctNames = [acCount]string{"acctsessionid", "username", "nasipaddress", "nasportid", "acctstarttime", "acctupdatetime", "acctstoptime",
	"acctsessiontime", "acctinputoctets", "acctoutputoctets", "callingstationid", "acctterminatecause", "framedipaddress", "framedipv6prefix",
	"acctinputgigawords", "acctoutputgigawords"}

// acctIndex resolves the column positions once per column list.
type acctIndex struct {
	cols []string
	pos  [acCount]int
}

func (x *acctIndex) resolve(cols []string) {
	if cols == nil {
		cols = radacctColumns
	}
	if len(cols) == len(x.cols) && (len(cols) == 0 || &cols[0] == &x.cols[0]) {
		return
	}
	x.cols = cols
	for i, n := range acctNames {
		x.pos[i] = -1
		for j, c := range cols {
			if c == n {
				x.pos[i] = j
				break
			}
		}
	}
}

func (x *acctIndex) get(row *sqlRow, i int) string {
	if p := x.pos[i]; p >= 0 && p < len(row.Vals) {
		return row.Vals[p].S
	}
	return ""
}

// historyRun is the phase's state while it runs.
type historyRun struct {
	t      *app.Tenant
	runID  int64
	jobID  int64
	users  map[string]int64
	nas    map[string]int64
	h      History
	total  int64
	rollup map[rollupKey]*rollupSums
	vals   []any
	stmt   string // the full batch's INSERT
}

type rollupKey struct{ uid, hour int64 }

type rollupSums struct{ in, out, secs, sessions int64 }

const historyCols = `acct_session_id, user_id, username, nas_id, nas_ip, framed_ip, framed_ipv6_prefix, calling_station_id, nas_port_id,
	start_time, update_time, stop_time, session_time, input_octets, output_octets, terminate_cause, stop_cause, close_reason, kind`

const historyArgs = 17 // close_reason and kind are literals

func historyInsert(n int) string {
	var b strings.Builder
	// OR IGNORE: no constraint can abort the statement, so SQLite keeps
	// no statement journal for the multi-row INSERT (radius_sessions has
	// no unique key but its rowid; the values are never NULL).
	b.WriteString(`INSERT OR IGNORE INTO radius_sessions(` + historyCols + `) VALUES `)
	tuple := "(" + strings.Repeat("?,", historyArgs) + "'imported','subscriber')"
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(tuple)
	}
	return b.String()
}

// rollupBatch is the subscriber-hours of one rollup upsert.
const rollupBatch = 100

// historyRollup adds n subscriber-hours to usage_rollups (their hour and
// day rows): 6 arguments each (user, hour, input, output, seconds,
// sessions).
func historyRollup(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO usage_rollups(user_id, grain, bucket, input_octets, output_octets, seconds, sessions) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`(?, 'h', ?, ?, ?, ?, ?), (?, 'd', ?, ?, ?, ?, ?)`)
	}
	b.WriteString(` ON CONFLICT(user_id, grain, bucket) DO UPDATE SET input_octets = input_octets + excluded.input_octets,
		output_octets = output_octets + excluded.output_octets, seconds = seconds + excluded.seconds, sessions = sessions + excluded.sessions`)
	return b.String()
}

// acctKeep is the sqlDump keep of the history: radacct's columns it reads.
func acctKeep(table string, cols []string) []bool {
	if cols == nil {
		cols = radacctColumns
	}
	keep := make([]bool, len(cols))
	for i, c := range cols {
		for _, n := range acctNames {
			if c == n {
				keep[i] = true
			}
		}
	}
	return keep
}

// importHistory runs the session-history phase of a legacy run (a
// FreeRADIUS upload); stop reports a cancel between chunks.
func importHistory(ctx context.Context, act *app.Actor, jobID int64, j *Job, f *files.File, c *catalogue, on bool) (*History, error) {
	t := act.Tenant
	var state string
	h := History{}
	var rolled int64
	err := t.DB.R.QueryRowContext(ctx, `SELECT history_state, history_rows, history_rollup_rows, history_imported, history_skipped, history_input_octets,
		history_output_octets FROM import_runs WHERE id = ?`, j.ID).Scan(&state, &h.Rows, &rolled, &h.Imported, &h.Skipped, &h.InputOctets, &h.OutputOctets)
	if err != nil {
		return nil, err
	}
	switch {
	case state == "done" || state == "off":
		h.State = state
		return &h, nil
	case !on || c.sessions == 0:
		h.State = "off"
		return &h, t.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE import_runs SET history_state = 'off' WHERE id = ?`, j.ID)
			return err
		})
	case state == "":
		if err := historyBegin(ctx, act, j.ID, c); err != nil {
			return nil, err
		}
	}
	size := historyChunkOf(t.App)
	hr := &historyRun{t: t, runID: j.ID, jobID: jobID, h: h, total: int64(c.sessions), rollup: map[rollupKey]*rollupSums{}, stmt: historyInsert(historyBatch)}
	if err := hr.load(ctx); err != nil {
		return nil, err
	}
	sp, err := spoolHistory(hr, f, c.sessions, size*spoolPassChunks)
	if err != nil {
		return nil, err
	}
	defer sp.remove()
	restore, err := bigWriteCache(ctx, t)
	if err != nil {
		return nil, err
	}
	defer restore()
	// The checkpoints count the skipped rows (all known once spooled)
	// first, then the sessions in spool order.
	hr.h.Skipped = sp.skipped
	done, rolled := max(h.Rows-sp.skipped, 0), max(rolled-sp.skipped, 0)
	var seen int64
	chunk := make([]histRow, 0, size)
	for k := range sp.rows {
		rd := sp.reader(k)
		for {
			row, err := rd.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			seen++
			switch {
			case seen <= rolled:
				continue // stored with its rollups
			case seen <= done:
				// Stored, its rollups not yet (a resumed job): added
				// to the sums the next write flushes.
				hr.add(row.uid, &row.s)
				continue
			}
			if chunk = append(chunk, row); len(chunk) < size {
				continue
			}
			stop, err := hr.write(ctx, chunk, seen, false)
			if err != nil {
				return nil, err
			}
			chunk = chunk[:0]
			if stop {
				hr.h.State = "cancelled"
				return &hr.h, nil
			}
		}
		// The range's end: its subscribers' rollups are complete, and no
		// later range adds to them.
		last := k == len(sp.rows)-1
		if seen <= rolled && !last {
			continue
		}
		stop, err := hr.write(ctx, chunk, seen, true)
		if err != nil {
			return nil, err
		}
		chunk = chunk[:0]
		if stop && !last {
			hr.h.State = "cancelled"
			return &hr.h, nil
		}
	}
	hr.h.State = "done"
	return &hr.h, t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE import_runs SET history_state = 'done' WHERE id = ?`, j.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM import_history_users WHERE run_id = ?`, j.ID)
		return err
	})
}

// historyBegin fixes the subscribers whose history the run imports.
func historyBegin(ctx context.Context, act *app.Actor, runID int64, c *catalogue) error {
	t := act.Tenant
	return t.Write(ctx, func(tx *sql.Tx) error {
		scope, args := act.ScopeSQL("u.parent_id")
		rows, err := tx.QueryContext(ctx, `SELECT u.id, u.username FROM users u WHERE u.deleted_at IS NULL AND `+scope, args...)
		if err != nil {
			return err
		}
		var ids []int64
		for rows.Next() {
			var id int64
			var name string
			if err := rows.Scan(&id, &name); err != nil {
				rows.Close()
				return err
			}
			if u, ok := c.users[name]; ok && problemOf(u) == "" {
				ids = append(ids, id)
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		probe, err := tx.PrepareContext(ctx, `SELECT EXISTS(SELECT 1 FROM radius_sessions WHERE user_id = ? AND close_reason = 'imported')`)
		if err != nil {
			return err
		}
		defer probe.Close()
		ins, err := tx.PrepareContext(ctx, `INSERT INTO import_history_users(run_id, user_id) VALUES (?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, id := range ids {
			var had bool
			if err := probe.QueryRowContext(ctx, id).Scan(&had); err != nil {
				return err
			}
			if had {
				continue
			}
			if _, err := ins.ExecContext(ctx, runID, id); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE import_runs SET history_state = 'running' WHERE id = ?`, runID)
		return err
	})
}

// load reads the subscribers of the phase and the NAS by address.
func (hr *historyRun) load(ctx context.Context) error {
	hr.users, hr.nas = map[string]int64{}, map[string]int64{}
	rows, err := hr.t.DB.R.QueryContext(ctx, `SELECT u.username, u.id FROM import_history_users h JOIN users u ON u.id = h.user_id WHERE h.run_id = ?`, hr.runID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var name string
		var id int64
		if err := rows.Scan(&name, &id); err != nil {
			rows.Close()
			return err
		}
		hr.users[name] = id
	}
	if err := rows.Close(); err != nil {
		return err
	}
	rows, err = hr.t.DB.R.QueryContext(ctx, `SELECT ip, id FROM nas`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ip string
		var id int64
		if err := rows.Scan(&ip, &id); err != nil {
			return err
		}
		hr.nas[ip] = id
	}
	return rows.Err()
}

// rollupKeys bounds the subscriber-hours summed in memory across chunks:
// a chunk that leaves more writes them (and at the end). Summing across
// chunks writes each subscriber-hour about once instead of once a chunk.
const rollupKeys = 200000

// add sums a session into its subscriber-hour.
func (hr *historyRun) add(uid int64, s *session) {
	k := rollupKey{uid, s.hour}
	r := hr.rollup[k]
	if r == nil {
		r = &rollupSums{}
		hr.rollup[k] = r
	}
	r.in, r.out, r.secs, r.sessions = r.in+s.in, r.out+s.out, r.secs+s.secs, r.sessions+1
}

// write commits one chunk with the checkpoint (seen: sessions stored, in
// spool order) and reports a cancel asked meanwhile. The rollups summed so
// far are written with it when they are many, at a range's end (flush) or
// when a cancel was asked; history_rollup_rows says up to which row they
// are, so a job resumed after a crash sums again the rows stored since.
func (hr *historyRun) write(ctx context.Context, chunk []histRow, seen int64, flush bool) (stop bool, err error) {
	t := hr.t
	h := hr.h
	rolled := false
	// In subscriber order: the inserts into the (user_id, id) indexes then
	// walk their pages forward, each page once a chunk.
	sort.SliceStable(chunk, func(i, j int) bool { return chunk[i].uid < chunk[j].uid })
	err = t.Write(ctx, func(tx *sql.Tx) error {
		h = hr.h
		full, err := tx.PrepareContext(ctx, hr.stmt)
		if err != nil {
			return err
		}
		defer full.Close()
		vals := hr.vals[:0]
		n := 0
		insert := func() error {
			if n == 0 {
				return nil
			}
			var err error
			if n == historyBatch {
				_, err = full.ExecContext(ctx, vals...)
			} else {
				_, err = tx.ExecContext(ctx, historyInsert(n), vals...)
			}
			vals, n = vals[:0], 0
			return err
		}
		for i := range chunk {
			uid, s := chunk[i].uid, &chunk[i].s
			var nas any
			if id, ok := hr.nas[s.nasIP]; ok {
				nas = id
			}
			hr.add(uid, s)
			vals = append(vals, s.sid, uid, s.user, nas, s.nasIP, s.framed, s.prefix, s.calling, s.port,
				sqlText(s.start), sqlText(s.update), sqlText(s.stop), s.secs, s.in, s.out, s.cause, stopCause(s.cause))
			n++
			h.Imported++
			h.InputOctets += s.in
			h.OutputOctets += s.out
			if n == historyBatch {
				if err := insert(); err != nil {
					return err
				}
			}
		}
		if err := insert(); err != nil {
			return err
		}
		hr.vals = vals
		h.Rows = max(h.Rows, h.Skipped+seen)
		if _, err := tx.ExecContext(ctx, `UPDATE import_runs SET history_rows = ?, history_imported = ?, history_skipped = ?, history_input_octets = ?,
			history_output_octets = ?, updated_at = ? WHERE id = ?`, h.Rows, h.Imported, h.Skipped, h.InputOctets, h.OutputOctets, t.NowText(), hr.runID); err != nil {
			return err
		}
		if err := jobProgress(ctx, tx, t, hr.jobID, h.Rows, hr.total); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT cancel_requested FROM import_runs WHERE id = ?`, hr.runID).Scan(&stop); err != nil {
			return err
		}
		if rolled = flush || stop || len(hr.rollup) >= rollupKeys; rolled {
			if err := hr.flushRollups(ctx, tx); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE import_runs SET history_rollup_rows = ? WHERE id = ?`, h.Skipped+seen, hr.runID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		// The chunk rolled back: its sessions' sums are read again
		// when the job is retried (from history_rollup_rows).
		return false, err
	}
	if rolled {
		clear(hr.rollup)
	}
	hr.h = h
	return stop, nil
}

// flushRollups writes the summed subscriber-hours.
func (hr *historyRun) flushRollups(ctx context.Context, tx *sql.Tx) error {
	if len(hr.rollup) == 0 {
		return nil
	}
	up, err := tx.PrepareContext(ctx, historyRollup(rollupBatch))
	if err != nil {
		return err
	}
	defer up.Close()
	args := make([]any, 0, rollupBatch*12)
	m := 0
	flush := func() error {
		var err error
		switch m {
		case 0:
		case rollupBatch:
			_, err = up.ExecContext(ctx, args...)
		default:
			_, err = tx.ExecContext(ctx, historyRollup(m), args...)
		}
		args, m = args[:0], 0
		return err
	}
	for k, r := range hr.rollup {
		args = append(args, k.uid, k.hour, r.in, r.out, r.secs, r.sessions, k.uid, k.hour-k.hour%86400, r.in, r.out, r.secs, r.sessions)
		if m++; m == rollupBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// histRow is a session of the chunk and its subscriber.
type histRow struct {
	uid int64
	s   session
}

// session is one radacct row as xr stores it (times in Unix seconds).
type session struct {
	sid, user, nasIP, port, framed, prefix, calling, cause string
	start, update, stop                                    int64
	secs, in, out, hour                                    int64
}

// sqlText is a Unix time as radius_sessions stores it.
func sqlText(unix int64) string { return time.Unix(unix, 0).UTC().Format(app.TimeLayout) }

// sessionOf reads a radacct row; ok false without a start time.
func sessionOf(ix *acctIndex, row *sqlRow) (session, bool) {
	s := session{sid: ix.get(row, acSession), user: ix.get(row, acUser), nasIP: ix.get(row, acNASIP), port: ix.get(row, acPort),
		framed: ix.get(row, acFramed), prefix: ix.get(row, acPrefix), calling: ix.get(row, acCalling), cause: ix.get(row, acCause)}
	start, ok := sqlTime(ix.get(row, acStart))
	if !ok {
		return s, false
	}
	s.secs, _ = strconv.ParseInt(ix.get(row, acTime), 10, 64)
	s.in, _ = strconv.ParseInt(ix.get(row, acIn), 10, 64)
	s.out, _ = strconv.ParseInt(ix.get(row, acOut), 10, 64)
	if g, _ := strconv.ParseInt(ix.get(row, acInGiga), 10, 64); g > 0 {
		s.in += g << 32
	}
	if g, _ := strconv.ParseInt(ix.get(row, acOutGiga), 10, 64); g > 0 {
		s.out += g << 32
	}
	s.secs, s.in, s.out = max(s.secs, 0), max(s.in, 0), max(s.out, 0)
	s.start = start.Unix()
	s.hour = s.start - s.start%3600
	update, hasUpdate := sqlTime(ix.get(row, acUpdate))
	stop, hasStop := sqlTime(ix.get(row, acStop))
	if !hasStop { // open in the dump: closed at its last news
		stop = start.Add(time.Duration(s.secs) * time.Second)
		if hasUpdate && update.After(stop) {
			stop = update
		}
		if s.cause == "" {
			s.cause = "Lost-Service"
		}
	}
	if !hasUpdate {
		update = stop
	}
	s.update, s.stop = update.Unix(), stop.Unix()
	if s.secs == 0 && stop.After(start) {
		s.secs = int64(stop.Sub(start) / time.Second)
	}
	return s, true
}

// sqlTime reads a dump's timestamp: MySQL's 2006-01-02 15:04:05, or
// PostgreSQL's with fractions and a zone (+00, +03:00); the zero dates
// MySQL writes for "none" read as none.
func sqlTime(v string) (time.Time, bool) {
	if len(v) < 19 || strings.HasPrefix(v, "0000") {
		return time.Time{}, false
	}
	if len(v) == 19 {
		y, m, d := atoi(v[0:4]), atoi(v[5:7]), atoi(v[8:10])
		hh, mm, ss := atoi(v[11:13]), atoi(v[14:16]), atoi(v[17:19])
		if y > 0 && m >= 1 && m <= 12 && d >= 1 && d <= 31 && hh >= 0 && hh < 24 && mm >= 0 && mm < 60 && ss >= 0 && ss < 61 && v[4] == '-' && (v[10] == ' ' || v[10] == 'T') {
			return time.Date(y, time.Month(m), d, hh, mm, ss, 0, time.UTC), true
		}
	}
	for _, l := range []string{"2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999",
		time.RFC3339Nano} {
		if at, err := time.Parse(l, v); err == nil {
			return at.UTC(), true
		}
	}
	return time.Time{}, false
}

// atoi reads unsigned decimal digits (-1 when one is not a digit).
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// stopCause normalizes a Terminate-Cause as accounting does
// (0011_session_truth.sql).
func stopCause(cause string) string {
	switch cause {
	case "":
		return "unknown"
	case "Admin-Reset":
		return "admin_disconnect"
	case "Admin-Reboot", "NAS-Reboot":
		return "nas_reboot"
	}
	return strings.ToLower(strings.ReplaceAll(cause, "-", "_"))
}

// writeCacheKiB is the page cache of the tenant's write connection while a
// legacy run writes its large chunks: SQLite's default (2 MB) spills the
// chunk's dirty index pages to the WAL before the commit.
const writeCacheKiB = 96 << 10

// bigWriteCache raises the write connection's page cache for a phase; the
// returned func puts the setting back.
func bigWriteCache(ctx context.Context, t *app.Tenant) (func(), error) {
	var old int64
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&old); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `PRAGMA cache_size = -`+strconv.Itoa(writeCacheKiB))
		return err
	})
	if err != nil {
		return nil, err
	}
	return func() {
		_ = t.Write(context.WithoutCancel(ctx), func(tx *sql.Tx) error { // best effort: the setting only sizes a cache
			_, err := tx.ExecContext(ctx, `PRAGMA cache_size = `+strconv.FormatInt(old, 10))
			return err
		})
	}, nil
}
