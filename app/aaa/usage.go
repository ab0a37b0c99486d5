package aaa

import (
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/subs"
)

// Usage history: the rollups accounting writes (usage_rollups, per
// subscriber per UTC hour and day), a subscriber's closed sessions by
// keyset, and the archive that moves old closed sessions out of the
// database into the tenant's files.
//
// Only subscribers are rolled up. Sessions filed as unknown have no
// subscriber (until linked: their usage so far is rolled up then), and
// prepaid-card (voucher) sessions have no subscriber row and no
// /users/{id}: their usage stays on the raw sessions (and in the archive).

// The hour in progress accumulates on the subscriber's row (see
// 0012_usage.sql). sqlAccumulate is the SET fragment that adds to it:
// ?4 the hour (unix seconds), ?5 input, ?6 output, ?2 seconds, ?7
// sessions; every right-hand side reads the row as it was, so the
// usage_prev_* columns (RETURNING sqlFinished) hold the hour it left, or
// 0 when it stayed in the same hour.
const (
	sqlAccumulate = `usage_hour = ?4,
		usage_in = IIF(usage_hour = ?4, usage_in, 0) + ?5, usage_out = IIF(usage_hour = ?4, usage_out, 0) + ?6,
		usage_secs = IIF(usage_hour = ?4, usage_secs, 0) + ?2, usage_sessions = IIF(usage_hour = ?4, usage_sessions, 0) + ?7,
		usage_prev_hour = IIF(usage_hour = ?4, 0, usage_hour), usage_prev_in = IIF(usage_hour = ?4, 0, usage_in),
		usage_prev_out = IIF(usage_hour = ?4, 0, usage_out), usage_prev_secs = IIF(usage_hour = ?4, 0, usage_secs),
		usage_prev_sessions = IIF(usage_hour = ?4, 0, usage_sessions)`
	sqlFinished = `usage_prev_hour, usage_prev_in, usage_prev_out, usage_prev_secs, usage_prev_sessions`
	// sqlAddToHour is the common case: the record falls in the hour in
	// progress (no row when it does not: then sqlAccumulate).
	sqlAddToHour = `usage_in = usage_in + ?5, usage_out = usage_out + ?6, usage_secs = usage_secs + ?2, usage_sessions = usage_sessions + ?7`
	// sqlRollup adds a finished hour to the subscriber's hour and day rows.
	sqlRollup = `INSERT INTO usage_rollups(user_id, grain, bucket, input_octets, output_octets, seconds, sessions)
	VALUES (?1, 'h', ?2, ?4, ?5, ?6, ?7), (?1, 'd', ?3, ?4, ?5, ?6, ?7)
	ON CONFLICT(user_id, grain, bucket) DO UPDATE SET input_octets = input_octets + excluded.input_octets,
		output_octets = output_octets + excluded.output_octets, seconds = seconds + excluded.seconds, sessions = sessions + excluded.sessions`
)

// finishedHour is a subscriber's hour handed back by sqlAccumulate.
type finishedHour struct{ hour, in, out, secs, sessions int64 }

func (f *finishedHour) dest() []any { return []any{&f.hour, &f.in, &f.out, &f.secs, &f.sessions} }

type rollupKey struct{ uid, hour int64 }

// hourOf is the bucket of an accounting record's time.
func hourOf(at time.Time) int64 {
	return floorTo(at.Unix(), 3600)
}

// finished keeps an hour the subscriber's row handed back; flushRollups
// writes it before the batch commits.
func (b *batch) finished(uid int64, f finishedHour) {
	if f.hour == 0 || (f.in == 0 && f.out == 0 && f.secs == 0 && f.sessions == 0) {
		return
	}
	if b.rollups == nil {
		b.rollups = map[rollupKey]*finishedHour{}
	}
	k := rollupKey{uid, f.hour}
	if s := b.rollups[k]; s != nil {
		s.in, s.out, s.secs, s.sessions = s.in+f.in, s.out+f.out, s.secs+f.secs, s.sessions+f.sessions
		return
	}
	b.rollups[k] = &f
}

// countSession counts a subscriber's session, once, in the hour of its
// start: at its first charge or, without one, when it ends (the Start
// writes no subscriber row). It returns 1 when the charge about to run at
// hour carries the count on the subscriber's row (same hour, charged:
// sqlAccumulate's ?7), else adds it to this batch's rollups for its hour
// and returns 0.
func (b *batch) countSession(row *sessState, hour int64, charged bool) (int64, error) {
	if row.counted || row.userID == 0 {
		return 0, nil
	}
	row.counted = true
	start, err := startHour(row.start)
	if err != nil {
		return 0, err
	}
	if charged && start == hour {
		return 1, nil
	}
	b.finished(row.userID, finishedHour{hour: start, sessions: 1})
	return 0, nil
}

// rollupSession counts a session that ends without a charge and outside a
// batch (the sweep, a replaced session) in the hour of its start.
func rollupSession(ctx context.Context, tx *sql.Tx, uid int64, start string) error {
	h, err := startHour(start)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, sqlRollup, uid, h, floorTo(h, 86400), 0, 0, 0, 1)
	return err
}

func startHour(start string) (int64, error) {
	at, err := app.ParseTime(start, false)
	if err != nil {
		return 0, fmt.Errorf("session start %q: %w", start, err)
	}
	return hourOf(at), nil
}

// flushRollups adds the hours finished in this batch to usage_rollups.
func (b *batch) flushRollups(ctx context.Context) error {
	for k, f := range b.rollups {
		if _, err := b.exec(ctx, sqlRollup, k.uid, k.hour, floorTo(k.hour, 86400), f.in, f.out, f.secs, f.sessions); err != nil {
			return err
		}
	}
	b.rollups = nil
	return nil
}

// hourInProgress reads the subscriber's unflushed hour.
func hourInProgress(ctx context.Context, q app.Querier, uid int64) (finishedHour, error) {
	var f finishedHour
	err := q.QueryRowContext(ctx, `SELECT usage_hour, usage_in, usage_out, usage_secs, usage_sessions FROM users WHERE id = ?`, uid).Scan(f.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return f, err
}

func floorTo(v, step int64) int64 {
	r := v % step
	if r < 0 {
		r += step
	}
	return v - r
}

// userScope answers a subscriber outside the caller's subtree exactly like
// a missing one (as GET /users/{id} does).
func userScope(ctx context.Context, q app.Querier, act *app.Actor, id int64) error {
	_, err := subs.Lookup(ctx, q, act, id)
	return err
}

// ---- GET /users/{id}/usage

// UsageBucket is one bucket of GET /users/{id}/usage: what the subscriber
// used in the hour, day or month starting at Bucket (UTC). Bytes are
// dated by the accounting record that reported them; sessions are those
// that started in the bucket.
type UsageBucket struct {
	Bucket       app.Time `json:"bucket"`
	InputOctets  int64    `json:"input_octets"`
	OutputOctets int64    `json:"output_octets"`
	TotalBytes   int64    `json:"total_bytes"`
	Seconds      int64    `json:"seconds"`
	Sessions     int64    `json:"sessions"`
}

// UsageSpec is GET /users/{id}/usage's query: granularity (hour|day|
// month, default day), from, to (yyyy-MM-dd or yyyy-MM-dd HH:mm:ss UTC; a
// date-only "to" covers that whole day). Bare names and filter[...] both
// work.
var UsageSpec = app.ListSpec{
	Filters: map[string]app.FilterKind{"granularity": app.FilterString, "from": app.FilterString, "to": app.FilterString},
	Aliases: []string{"granularity", "from", "to"},
}

// Most buckets one usage read returns (the range is refused beyond).
var maxBuckets = map[string]int{"hour": 24 * 31, "day": 732, "month": 120}

// UsageRange is a parsed usage query: buckets from From to To (both bucket
// starts, inclusive).
type UsageRange struct {
	Granularity string
	From, To    time.Time
}

func bucketStart(t time.Time, g string) time.Time {
	t = t.UTC()
	switch g {
	case "hour":
		return t.Truncate(time.Hour)
	case "day":
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

func nextBucket(t time.Time, g string) time.Time {
	switch g {
	case "hour":
		return t.Add(time.Hour)
	case "day":
		return t.AddDate(0, 0, 1)
	}
	return t.AddDate(0, 1, 0)
}

// ParseUsageRange validates the query: 400 invalid_enum (granularity),
// invalid_filter (from/to unparseable), from_after_to, usage_range_too_long
// (more than 744 hours, 732 days or 120 months). Defaults: the last 24
// hours, 30 days or 12 months up to now.
func ParseUsageRange(lq app.ListQuery, now time.Time) (UsageRange, error) {
	g, _ := lq.Str("granularity")
	if g == "" {
		g = "day"
	}
	if _, ok := maxBuckets[g]; !ok {
		return UsageRange{}, app.ErrValidation("invalid_enum", "granularity")
	}
	r := UsageRange{Granularity: g}
	to := now
	if s, ok := lq.Str("to"); ok {
		s = strings.TrimSpace(s)
		t, err := app.ParseTime(s, true)
		if err != nil {
			return r, app.ErrValidation("invalid_filter", "to")
		}
		if len(s) == len(app.DateLayout) {
			t = t.Add(24*time.Hour - time.Second) // the whole day
		}
		to = t
	}
	r.To = bucketStart(to, g)
	if s, ok := lq.Str("from"); ok {
		t, err := app.ParseTime(strings.TrimSpace(s), true)
		if err != nil {
			return r, app.ErrValidation("invalid_filter", "from")
		}
		r.From = bucketStart(t, g)
	} else {
		switch g {
		case "hour":
			r.From = r.To.Add(-23 * time.Hour)
		case "day":
			r.From = r.To.AddDate(0, 0, -29)
		default:
			r.From = r.To.AddDate(0, -11, 0)
		}
	}
	if r.From.After(r.To) {
		return r, app.ErrValidation("from_after_to", "from")
	}
	n := 0
	for b := r.From; !b.After(r.To); b = nextBucket(b, g) {
		if n++; n > maxBuckets[g] {
			return r, app.ErrValidation("usage_range_too_long", "from").With("max_buckets", maxBuckets[g])
		}
	}
	return r, nil
}

// UserUsage is GET /users/{id}/usage: one bucket per hour, day or month
// of the range (empty ones included, oldest first), read from the rollups
// only; meta.aggregates has the range's totals. A subscriber outside the
// caller's subtree is a 404 like a missing one.
func UserUsage(ctx context.Context, act *app.Actor, id int64, lq app.ListQuery) (app.Page[UsageBucket], error) {
	if err := act.Require(subs.PermUsersIndex); err != nil {
		return app.Page[UsageBucket]{}, err
	}
	var page app.Page[UsageBucket]
	r, err := ParseUsageRange(lq, act.Tenant.Now())
	if err != nil {
		return page, err
	}
	grain := "h"
	if r.Granularity != "hour" {
		grain = "d" // months are summed from days
	}
	last := nextBucket(r.To, r.Granularity).Unix() - 1
	sums := map[int64]*UsageBucket{}
	err = act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		if err := userScope(ctx, tx, act, id); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT bucket, input_octets, output_octets, seconds, sessions FROM usage_rollups
			WHERE user_id = ? AND grain = ? AND bucket BETWEEN ? AND ? ORDER BY bucket`, id, grain, r.From.Unix(), last)
		if err != nil {
			return err
		}
		defer rows.Close()
		add := func(bucket, in, out, secs, n int64) {
			key := bucketStart(time.Unix(bucket, 0), r.Granularity).Unix()
			s := sums[key]
			if s == nil {
				s = &UsageBucket{}
				sums[key] = s
			}
			s.InputOctets += in
			s.OutputOctets += out
			s.Seconds += secs
			s.Sessions += n
		}
		for rows.Next() {
			var bucket, in, out, secs, n int64
			if err := rows.Scan(&bucket, &in, &out, &secs, &n); err != nil {
				return err
			}
			add(bucket, in, out, secs, n)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		f, err := hourInProgress(ctx, tx, id)
		if err != nil {
			return err
		}
		if f.hour != 0 && f.hour >= r.From.Unix() && f.hour <= last {
			add(f.hour, f.in, f.out, f.secs, f.sessions)
		}
		return nil
	})
	if err != nil {
		return page, err
	}
	var tot UsageBucket
	for b := r.From; !b.After(r.To); b = nextBucket(b, r.Granularity) {
		row := UsageBucket{}
		if s := sums[b.Unix()]; s != nil {
			row = *s
		}
		row.Bucket = app.T(b)
		row.TotalBytes = row.InputOctets + row.OutputOctets
		tot.InputOctets += row.InputOctets
		tot.OutputOctets += row.OutputOctets
		tot.Seconds += row.Seconds
		tot.Sessions += row.Sessions
		page.Rows = append(page.Rows, row)
	}
	page.Meta = app.OnePage(len(page.Rows))
	page.Meta.Aggregates = map[string]any{"input_octets": tot.InputOctets, "output_octets": tot.OutputOctets,
		"total_bytes": tot.InputOctets + tot.OutputOctets, "seconds": tot.Seconds, "sessions": tot.Sessions}
	return page, nil
}

// ---- GET /users/{id}/sessions

// ClosedSession is a row of GET /users/{id}/sessions.
type ClosedSession struct {
	ID               int64    `json:"id"`
	AcctSessionID    string   `json:"acct_session_id"`
	NASID            *int64   `json:"nas_id"`
	NASName          string   `json:"nas_name"`
	NASIP            string   `json:"nas_ip"`
	FramedIP         string   `json:"framed_ip"`
	CallingStationID string   `json:"calling_station_id"`
	ProfileName      string   `json:"profile_name"`
	StartTime        app.Time `json:"start_time"`
	StopTime         app.Time `json:"stop_time"`
	SessionTime      int64    `json:"session_time"`
	InputOctets      int64    `json:"input_octets"`
	OutputOctets     int64    `json:"output_octets"`
	TotalBytes       int64    `json:"total_bytes"`
	// StopCause is why it ended, normalized (user_request, idle_timeout,
	// admin_disconnect, nas_reboot, stale, ..., unknown); TerminateCause is
	// the NAS's Acct-Terminate-Cause as sent; CloseReason says who closed
	// it: nas, disconnect_confirmed, nas_reboot or stale.
	StopCause      string `json:"stop_cause"`
	TerminateCause string `json:"terminate_cause"`
	CloseReason    string `json:"close_reason"`
}

// UserSessionSpec is GET /users/{id}/sessions: newest first (order=asc
// for oldest first), page_size as every list, and cursor: the opaque
// meta.next_cursor of the previous page (page still works without one).
var UserSessionSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "s.id"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"cursor": app.FilterString},
	Aliases:     []string{"cursor"},
}

// sessionCursor is the position after which the next page starts.
type sessionCursor struct {
	desc  bool
	page  int
	after int64
}

func (c sessionCursor) encode() string {
	d := "a"
	if c.desc {
		d = "d"
	}
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("s1.%s.%d.%d", d, c.page, c.after)))
}

func decodeSessionCursor(s string) (sessionCursor, error) {
	bad := app.ErrValidation("invalid_cursor", "cursor")
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return sessionCursor{}, bad
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 4 || parts[0] != "s1" || (parts[1] != "a" && parts[1] != "d") {
		return sessionCursor{}, bad
	}
	page, err1 := strconv.Atoi(parts[2])
	after, err2 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil || page < 2 || after < 0 {
		return sessionCursor{}, bad
	}
	return sessionCursor{desc: parts[1] == "d", page: page, after: after}, nil
}

const closedCols = `s.id, s.acct_session_id, s.nas_id, COALESCE(n.name, ''), s.nas_ip, s.framed_ip, s.calling_station_id, s.profile_name,
	s.start_time, s.stop_time, s.session_time, s.input_octets, s.output_octets, s.stop_cause, s.terminate_cause, s.close_reason`

// ListUserSessions is GET /users/{id}/sessions: the subscriber's closed
// sessions, newest first, by keyset (meta.next_cursor; meta.total counts
// them all). A subscriber outside the caller's subtree is a 404 like a
// missing one; a cursor that is not one of ours is 400 invalid_cursor (so
// is one given with the other order).
func ListUserSessions(ctx context.Context, act *app.Actor, id int64, lq app.ListQuery) (app.Page[ClosedSession], error) {
	if err := act.Require(subs.PermUsersIndex); err != nil {
		return app.Page[ClosedSession]{}, err
	}
	var page app.Page[ClosedSession]
	cur := sessionCursor{desc: lq.Desc, page: lq.Page}
	keyset := false
	if s, ok := lq.Str("cursor"); ok {
		c, err := decodeSessionCursor(s)
		if err != nil {
			return page, err
		}
		if c.desc != lq.Desc {
			return page, app.ErrValidation("invalid_cursor", "cursor")
		}
		cur, keyset = c, true
	}
	dir, cmp := "DESC", "<"
	if !cur.desc {
		dir, cmp = "ASC", ">"
	}
	where := `s.user_id = ? AND s.stop_time IS NOT NULL`
	args := []any{id}
	tail := fmt.Sprintf(` ORDER BY s.id %s LIMIT %d`, dir, lq.PageSize+1)
	if keyset {
		where += ` AND s.id ` + cmp + ` ?`
		args = append(args, cur.after)
	} else if lq.Offset() > 0 {
		tail += fmt.Sprintf(` OFFSET %d`, lq.Offset())
	}
	var total int
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		if err := userScope(ctx, tx, act, id); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM radius_sessions s WHERE s.user_id = ? AND s.stop_time IS NOT NULL`, id).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+closedCols+` FROM radius_sessions s LEFT JOIN nas n ON n.id = s.nas_id WHERE `+where+tail, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r ClosedSession
			var nas sql.NullInt64
			if err := rows.Scan(&r.ID, &r.AcctSessionID, &nas, &r.NASName, &r.NASIP, &r.FramedIP, &r.CallingStationID, &r.ProfileName,
				&r.StartTime, &r.StopTime, &r.SessionTime, &r.InputOctets, &r.OutputOctets, &r.StopCause, &r.TerminateCause, &r.CloseReason); err != nil {
				return err
			}
			if nas.Valid {
				r.NASID = &nas.Int64
			}
			r.TotalBytes = r.InputOctets + r.OutputOctets
			page.Rows = append(page.Rows, r)
		}
		return rows.Err()
	})
	if err != nil {
		return page, err
	}
	hasNext := len(page.Rows) > lq.PageSize
	if hasNext {
		page.Rows = page.Rows[:lq.PageSize]
	}
	page.Meta = app.Meta{Page: cur.page, PageSize: lq.PageSize, Total: total, HasNext: hasNext}
	if hasNext {
		page.Meta.NextCursor = sessionCursor{desc: cur.desc, page: cur.page + 1, after: page.Rows[len(page.Rows)-1].ID}.encode()
	}
	return page, nil
}

// ---- Session archive

// Retention of raw closed sessions: the tenant setting
// radius_session_retention_days (default 180; 0 or less keeps them all).
const (
	RetentionSetting     = app.SessionRetentionSetting
	DefaultRetentionDays = app.DefaultSessionRetentionDays
	archiveChunk         = 5000 // rows per gzip member and per delete transaction
	archiveMetaKey       = "session_archive_file"
)

// runArchive is the session archive job (declared in Module).
func runArchive(ctx context.Context, jc *app.JobContext) (any, error) {
	return ArchiveSessions(ctx, jc.Tenant, jc.Tenant.Now())
}

// ArchiveResult is what one archive run moved.
type ArchiveResult struct {
	Archived int64  `json:"archived"`
	File     string `json:"file,omitempty"` // relative to the tenant's files
	Cutoff   string `json:"cutoff,omitempty"`
}

// ArchiveDir is where a tenant's session archive files live:
// DATA/files/<slug>/archive/sessions-YYYYMMDD.jsonl.gz (one per run day;
// each file is a sequence of gzip members, read as one stream by any gzip
// reader: one JSON object per line with every column of radius_sessions).
func ArchiveDir(t *app.Tenant) string { return filepath.Join(t.App.FilesDir(t.Slug), "archive") }

// ArchiveSessions moves closed sessions that stopped before the retention
// cutoff into the tenant's archive file and deletes them from the database
// (rollups stay). Each chunk is appended and synced before the transaction
// that deletes its rows and records the file's committed length: a run
// interrupted between the two truncates the file back to that length when
// it starts again, so no session is archived twice or lost.
func ArchiveSessions(ctx context.Context, t *app.Tenant, now time.Time) (ArchiveResult, error) {
	var res ArchiveResult
	days, err := app.SettingRadiusSessionRetention.Get(ctx, t.DB.R)
	if err != nil || days <= 0 {
		return res, err
	}
	cut := app.FormatTime(now.AddDate(0, 0, -int(days)))
	res.Cutoff = cut
	dir := ArchiveDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return res, err
	}
	// Recover: only the file named in meta can hold an uncommitted tail.
	var mark string
	if err := t.DB.R.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, archiveMetaKey).Scan(&mark); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return res, err
	}
	if name, size, ok := parseArchiveMark(mark); ok {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Size() > size {
			if err := os.Truncate(filepath.Join(dir, name), size); err != nil {
				return res, err
			}
		}
	}
	bound, err := archiveBound(ctx, t.DB.R, cut)
	if err != nil || bound == 0 {
		return res, err
	}
	name := "sessions-" + now.UTC().Format("20060102") + ".jsonl.gz"
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return res, err
	}
	defer f.Close()
	size, err := f.Seek(0, 2)
	if err != nil {
		return res, err
	}
	if err := setArchiveMark(ctx, t, name, size, nil); err != nil {
		return res, err
	}
	var after int64
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		lines, ids, err := readArchiveChunk(ctx, t, after, bound, cut)
		if err != nil {
			return res, err
		}
		if len(ids) == 0 {
			break
		}
		gz := gzip.NewWriter(f)
		for _, l := range lines {
			if _, err := gz.Write(l); err != nil {
				return res, err
			}
		}
		if err := gz.Close(); err != nil {
			return res, err
		}
		if err := f.Sync(); err != nil {
			return res, err
		}
		if size, err = f.Seek(0, 1); err != nil {
			return res, err
		}
		if err := setArchiveMark(ctx, t, name, size, ids); err != nil {
			return res, err
		}
		res.Archived += int64(len(ids))
		after = ids[len(ids)-1]
	}
	if size == 0 {
		// Nothing was archived: drop the empty file this run created.
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, err
		}
	} else if res.Archived > 0 {
		res.File = filepath.Join("archive", name)
	}
	return res, nil
}

func parseArchiveMark(s string) (string, int64, bool) {
	name, n, ok := strings.Cut(s, " ")
	if !ok || strings.ContainsAny(name, `/\`) || name == "" {
		return "", 0, false
	}
	size, err := strconv.ParseInt(n, 10, 64)
	return name, size, err == nil && size >= 0
}

// setArchiveMark deletes the archived ids and records the file's committed
// length in one transaction.
func setArchiveMark(ctx context.Context, t *app.Tenant, name string, size int64, ids []int64) error {
	return t.Write(ctx, func(tx *sql.Tx) error {
		if len(ids) > 0 {
			b, err := json.Marshal(ids)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM radius_sessions WHERE id IN (SELECT value FROM json_each(?)) AND stop_time IS NOT NULL`, string(b)); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
			archiveMetaKey, fmt.Sprintf("%s %d", name, size))
		return err
	})
}

// archiveBound is an id past which no session can have stopped before cut:
// the first id (found by bisection: ids grow with start times) whose
// session started at or after cut. 0 when there is nothing to look at.
func archiveBound(ctx context.Context, q app.Querier, cut string) (int64, error) {
	var lo, hi sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MIN(id), MAX(id) FROM radius_sessions`).Scan(&lo, &hi); err != nil || !lo.Valid {
		return 0, err
	}
	startAt := func(id int64) (int64, string, error) {
		var got int64
		var st sql.NullString
		err := q.QueryRowContext(ctx, `SELECT id, COALESCE(start_time, stop_time) FROM radius_sessions WHERE id >= ? ORDER BY id LIMIT 1`, id).Scan(&got, &st)
		return got, st.String, err
	}
	// The smallest x such that the first session at or after id x started
	// at or after cut; every id below it started before.
	a, b := lo.Int64, hi.Int64+1
	for a < b {
		mid := a + (b-a)/2
		id, st, err := startAt(mid)
		if err != nil {
			return 0, err
		}
		if st != "" && st >= cut {
			b = mid
		} else {
			a = id + 1
		}
	}
	return a, nil
}

// readArchiveChunk reads the next chunk of archivable sessions after id
// `after` (below bound) as JSON lines with every column.
func readArchiveChunk(ctx context.Context, t *app.Tenant, after, bound int64, cut string) ([][]byte, []int64, error) {
	rows, err := t.DB.R.QueryContext(ctx, `SELECT * FROM radius_sessions WHERE id > ? AND id < ? AND stop_time IS NOT NULL AND stop_time < ?
		ORDER BY id LIMIT ?`, after, bound, cut, archiveChunk)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var lines [][]byte
	var ids []int64
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		m := make(map[string]any, len(cols))
		for i, c := range cols {
			v := vals[i]
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			m[c] = v
			if c == "id" {
				id, ok := v.(int64)
				if !ok {
					return nil, nil, fmt.Errorf("archive: id %v", v)
				}
				ids = append(ids, id)
			}
		}
		line, err := json.Marshal(m)
		if err != nil {
			return nil, nil, err
		}
		lines = append(lines, append(line, '\n'))
	}
	return lines, ids, rows.Err()
}
