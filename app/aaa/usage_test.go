package aaa_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/subs"
	"xr/internal/xrtest"
)

func (r *rig) owner() *app.Actor {
	return &app.Actor{Tenant: r.ten, ManagerID: r.ownerID, TenantWide: true, IsAdmin: true, Perms: map[app.Perm]bool{}}
}

func (r *rig) record(evs ...aaa.AcctEvent) {
	r.t.Helper()
	nas, _ := r.svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	for i := range evs {
		evs[i].NAS = nas
	}
	if err := r.svc.RecordAccounting(context.Background(), evs); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) count(q string, args ...any) int64 {
	r.t.Helper()
	var n int64
	if err := r.ten.DB.R.QueryRow(q, args...).Scan(&n); err != nil {
		r.t.Fatalf("%s: %v", q, err)
	}
	return n
}

func lq(t *testing.T, spec app.ListSpec, v url.Values) app.ListQuery {
	t.Helper()
	q, err := app.ParseList(v, spec)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func wantReason(t *testing.T, err error, code, reason, field string) {
	t.Helper()
	var ae *app.Error
	if !errors.As(err, &ae) || ae.Code != code || ae.Reason != reason || (field != "" && ae.Field != field) {
		t.Fatalf("got %v, want %s %s %s", err, code, reason, field)
	}
}

// Accounting writes the hourly and daily rollups in the batch that charges
// the subscriber: growth dated by the record that reported it, sessions by
// their start; sessions of unknown users and prepaid cards are not rolled
// up. GET /users/{id}/usage reads them by hour, day and month.
func TestUsageRollupsFollowAccounting(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	uid := r.user("alice", "pass", r.planID, nil)
	r.svc.IsVoucher = func(ctx context.Context, q app.Querier, username string) bool { return username == "card-1" }
	d1 := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -2)
	at := func(h, m int) time.Time { return d1.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	r.record(aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "a1", Username: "alice", EventTime: at(23, 30)},
		aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "g1", Username: "ghost", EventTime: at(23, 30)},
		aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "c1", Username: "card-1", EventTime: at(23, 30)})
	r.record(aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "a1", Username: "alice", InputOctets: 1000, OutputOctets: 100, SessionTime: 1200, EventTime: at(23, 50)},
		aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "g1", Username: "ghost", InputOctets: 5000, OutputOctets: 5000, SessionTime: 1200, EventTime: at(23, 50)},
		aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "c1", Username: "card-1", InputOctets: 7000, OutputOctets: 7000, SessionTime: 1200, EventTime: at(23, 50)})
	// The same Interim again charges nothing and rolls nothing up.
	r.record(aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "a1", Username: "alice", InputOctets: 1000, OutputOctets: 100, SessionTime: 1200, EventTime: at(23, 50)})
	r.record(aaa.AcctEvent{Status: aaa.StatusStop, SessionID: "a1", Username: "alice", InputOctets: 3000, OutputOctets: 700, SessionTime: 3000,
		TerminateCause: "User-Request", EventTime: at(24, 20)},
		aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "a2", Username: "alice", EventTime: at(24, 40)})

	if n := r.count(`SELECT COUNT(*) FROM usage_rollups WHERE user_id <> ?`, uid); n != 0 {
		t.Fatalf("%d rollup rows for unknown or card sessions", n)
	}
	type row struct{ in, out, secs, n int64 }
	read := func(grain string, bucket time.Time) row {
		var v row
		err := r.ten.DB.R.QueryRow(`SELECT input_octets, output_octets, seconds, sessions FROM usage_rollups WHERE user_id = ? AND grain = ? AND bucket = ?`,
			uid, grain, bucket.Unix()).Scan(&v.in, &v.out, &v.secs, &v.n)
		if err != nil {
			t.Fatalf("%s %s: %v", grain, bucket, err)
		}
		return v
	}
	// The finished hour is in the rollups; the hour in progress is on the
	// subscriber's row until a record of another hour hands it over.
	for _, c := range []struct {
		grain  string
		bucket time.Time
		want   row
	}{
		{"h", at(23, 0), row{1000, 100, 1200, 1}},
		{"d", d1, row{1000, 100, 1200, 1}},
	} {
		if got := read(c.grain, c.bucket); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.grain, c.bucket, got, c.want)
		}
	}
	// a2 has used nothing yet: a session is counted at its first charge
	// (or its end), in the hour of its start.
	var cur row
	var hour int64
	if err := r.ten.DB.R.QueryRow(`SELECT usage_hour, usage_in, usage_out, usage_secs, usage_sessions FROM users WHERE id = ?`, uid).
		Scan(&hour, &cur.in, &cur.out, &cur.secs, &cur.n); err != nil || hour != at(24, 0).Unix() || cur != (row{2000, 600, 1800, 0}) {
		t.Fatalf("hour in progress %d %+v: %v", hour, cur, err)
	}
	if n := r.count(`SELECT COUNT(*) FROM usage_rollups WHERE user_id = ? AND bucket >= ?`, uid, at(24, 0).Unix()); n != 0 {
		t.Fatalf("%d rows for the hour in progress", n)
	}
	// The rollups and the hour in progress add up to the charged counters.
	if used, sum := r.count(`SELECT used_bytes FROM users WHERE id = ?`, uid),
		r.count(`SELECT SUM(input_octets + output_octets) FROM usage_rollups WHERE user_id = ? AND grain = 'h'`, uid)+cur.in+cur.out; used != sum || used != 3700 {
		t.Fatalf("used_bytes %d, rollups %d", used, sum)
	}
	// A record of a later hour hands the hour over: hour and day rows.
	r.record(aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "a2", Username: "alice", InputOctets: 5, OutputOctets: 5, SessionTime: 60, EventTime: at(26, 1)})
	if got := read("h", at(24, 0)); got != (row{2000, 600, 1800, 1}) {
		t.Fatalf("handed-over hour %+v", got)
	}
	if got := read("d", d1.AddDate(0, 0, 1)); got != (row{2000, 600, 1800, 1}) {
		t.Fatalf("handed-over day %+v", got)
	}

	act := r.owner()
	p, err := aaa.UserUsage(context.Background(), act, uid, lq(t, aaa.UsageSpec, url.Values{"granularity": {"hour"},
		"from": {app.FormatTime(at(22, 0))}, "to": {app.FormatTime(at(25, 59))}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 4 || p.Rows[0].TotalBytes != 0 || p.Rows[1].TotalBytes != 1100 || p.Rows[2].TotalBytes != 2600 || p.Rows[3].TotalBytes != 0 ||
		!p.Rows[1].Bucket.Equal(at(23, 0)) || p.Meta.Total != 4 || p.Meta.HasNext {
		t.Fatalf("hours: %+v %+v", p.Rows, p.Meta)
	}
	agg := p.Meta.Aggregates.(map[string]any)
	if agg["total_bytes"] != int64(3700) || agg["sessions"] != int64(2) || agg["seconds"] != int64(3000) || agg["input_octets"] != int64(3000) {
		t.Fatalf("aggregates %v", agg)
	}
	p, err = aaa.UserUsage(context.Background(), act, uid, lq(t, aaa.UsageSpec, url.Values{"granularity": {"day"}, "from": {d1.Format(time.DateOnly)},
		"to": {d1.AddDate(0, 0, 1).Format(time.DateOnly)}}))
	if err != nil || len(p.Rows) != 2 || p.Rows[0].TotalBytes != 1100 || p.Rows[1].TotalBytes != 2610 || p.Rows[1].Sessions != 1 {
		t.Fatalf("days: %v %+v", err, p.Rows)
	}
	// A date-only "to" covers its whole day.
	p, err = aaa.UserUsage(context.Background(), act, uid, lq(t, aaa.UsageSpec, url.Values{"granularity": {"hour"},
		"from": {d1.AddDate(0, 0, 1).Format(time.DateOnly)}, "to": {d1.AddDate(0, 0, 1).Format(time.DateOnly)}}))
	if err != nil || len(p.Rows) != 24 || p.Rows[0].TotalBytes != 2600 || p.Rows[2].TotalBytes != 10 || p.Meta.Aggregates.(map[string]any)["total_bytes"] != int64(2610) {
		t.Fatalf("one day by hour: %v %+v", err, p.Meta)
	}
	p, err = aaa.UserUsage(context.Background(), act, uid, lq(t, aaa.UsageSpec, url.Values{"granularity": {"month"}}))
	if err != nil || len(p.Rows) != 12 || p.Meta.Aggregates.(map[string]any)["total_bytes"] != int64(3710) {
		t.Fatalf("months: %v %+v", err, p.Rows)
	}

	// Bad queries are 400s naming the parameter.
	for _, c := range []struct {
		v             url.Values
		reason, field string
	}{
		{url.Values{"granularity": {"week"}}, "invalid_enum", "granularity"},
		{url.Values{"from": {"yesterday"}}, "invalid_filter", "from"},
		{url.Values{"to": {"2025-13-01"}}, "invalid_filter", "to"},
		{url.Values{"from": {"2025-02-01"}, "to": {"2025-01-01"}}, "from_after_to", "from"},
		{url.Values{"granularity": {"hour"}, "from": {"2025-01-01"}, "to": {"2025-03-01"}}, "usage_range_too_long", "from"},
	} {
		_, err := aaa.UserUsage(context.Background(), act, uid, lq(t, aaa.UsageSpec, c.v))
		wantReason(t, err, "ERR_VALIDATION", c.reason, c.field)
	}
	// A missing subscriber and one outside the caller's subtree are the same 404.
	other := r.exec(`INSERT INTO managers(username, parent_id, password_hash, created_at, updated_at) VALUES ('res', ?, '', ?, ?)`,
		r.ownerID, app.StampNow(), app.StampNow())
	res := &app.Actor{Tenant: r.ten, ManagerID: other, Perms: map[app.Perm]bool{subs.PermUsersIndex: true}}
	_, err = aaa.UserUsage(context.Background(), res, uid, lq(t, aaa.UsageSpec, nil))
	wantReason(t, err, app.CodeNotFound, "not_found", "")
	_, err = aaa.UserUsage(context.Background(), act, uid+1000, lq(t, aaa.UsageSpec, nil))
	wantReason(t, err, app.CodeNotFound, "not_found", "")
}

// A session is counted once in the hour of its start: at its first
// charge, or, without one, when its Stop comes or the sweep closes it.
func TestSessionCountedOnceInItsStartHour(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	uid := r.user("bob", "pass", r.planID, nil)
	h := time.Now().UTC().Truncate(time.Hour).Add(-5 * time.Hour)
	at := func(m int) time.Time { return h.Add(time.Duration(m) * time.Minute) }
	sessions := func(hour time.Time) int64 {
		return r.count(`SELECT COALESCE(SUM(sessions), 0) FROM usage_rollups WHERE user_id = ? AND grain = 'h' AND bucket = ?`, uid, hour.Unix()) +
			r.count(`SELECT IIF(usage_hour = ?, usage_sessions, 0) FROM users WHERE id = ?`, hour.Unix(), uid)
	}
	// Charged twice, counted once.
	r.record(aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "b1", Username: "bob", EventTime: at(1)})
	r.record(aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "b1", Username: "bob", InputOctets: 10, SessionTime: 60, EventTime: at(2)})
	r.record(aaa.AcctEvent{Status: aaa.StatusStop, SessionID: "b1", Username: "bob", InputOctets: 20, SessionTime: 120, EventTime: at(3)})
	if n := sessions(h); n != 1 {
		t.Fatalf("charged session counted %d times", n)
	}
	// Ended without a charge.
	r.record(aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "b2", Username: "bob", EventTime: at(4)},
		aaa.AcctEvent{Status: aaa.StatusStop, SessionID: "b2", Username: "bob", EventTime: at(5)})
	if n := sessions(h); n != 2 {
		t.Fatalf("%d sessions after one without usage", n)
	}
	// First charged in a later hour: counted in the hour it started.
	r.record(aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "b3", Username: "bob", EventTime: at(50)})
	r.record(aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "b3", Username: "bob", InputOctets: 5, SessionTime: 1200, EventTime: at(70)})
	r.record(aaa.AcctEvent{Status: aaa.StatusStop, SessionID: "b3", Username: "bob", InputOctets: 9, SessionTime: 1300, EventTime: at(72)})
	if n, next := sessions(h), sessions(h.Add(time.Hour)); n != 3 || next != 0 {
		t.Fatalf("sessions %d in its start hour, %d in the next", n, next)
	}
	// Closed by the sweep without a charge.
	r.record(aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "b4", Username: "bob", EventTime: at(10)})
	r.touch("b4", 2*time.Hour)
	if res := r.sweep(); res.Stale != 1 {
		t.Fatalf("sweep: %+v", res)
	}
	if n := sessions(h); n != 4 {
		t.Fatalf("%d sessions after a swept one", n)
	}
	if n := r.count(`SELECT COUNT(*) FROM radius_sessions WHERE usage_counted = 0`); n != 0 {
		t.Fatalf("%d closed sessions left uncounted", n)
	}
}

// A subscriber without limits is charged without reading its counters
// back; a limit the index does not know yet (here: never, its change log
// row is gone) is still seen by the charge, which the database checks.
func TestChargeSeesALimitTheIndexLacks(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.subscribe("usage.threshold")
	uid := r.user("lim", "pass", r.planID, nil)
	r.record(aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "l1", Username: "lim"},
		aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "l1", Username: "lim", InputOctets: 100, SessionTime: 60})
	// Through the file's writer, not the tenant's: no commit hook refreshes
	// the index, and the poll finds no change to apply.
	err := r.ten.DB.Write(context.Background(), func(tx *sql.Tx) error {
		var last int64
		if err := tx.QueryRow(`SELECT COALESCE(MAX(seq), 0) FROM authz_changes`).Scan(&last); err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE users SET bytes_limit = 1000 WHERE id = ?`, uid); err != nil {
			return err
		}
		_, err := tx.Exec(`DELETE FROM authz_changes WHERE seq > ?`, last)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r.record(aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "l1", Username: "lim", InputOctets: 900, SessionTime: 120})
	if used := r.used("lim"); used != 900 || r.events("usage.threshold") != 1 {
		t.Fatalf("used %d, %d threshold events", used, r.events("usage.threshold"))
	}
}

// GET /users/{id}/sessions: closed sessions only, newest first, pages by
// cursor without overlap or gap; total counts them all.
func TestUserSessionsKeyset(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	uid := r.user("bob", "pass", r.planID, nil)
	base := time.Now().UTC().Add(-10 * time.Hour)
	for i := range 7 {
		sid := fmt.Sprint("b", i)
		r.record(aaa.AcctEvent{Status: aaa.StatusStart, SessionID: sid, Username: "bob", EventTime: base.Add(time.Duration(i) * time.Hour)})
		r.record(aaa.AcctEvent{Status: aaa.StatusStop, SessionID: sid, Username: "bob", InputOctets: uint64(100 * (i + 1)), SessionTime: 60,
			TerminateCause: "Idle-Timeout", EventTime: base.Add(time.Duration(i)*time.Hour + time.Minute)})
	}
	r.record(aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "live", Username: "bob", EventTime: time.Now()})
	act := r.owner()
	ctx := context.Background()
	var got []int64
	v := url.Values{"page_size": {"3"}}
	for page := 1; ; page++ {
		p, err := aaa.ListUserSessions(ctx, act, uid, lq(t, aaa.UserSessionSpec, v))
		if err != nil {
			t.Fatal(err)
		}
		if p.Meta.Total != 7 || p.Meta.Page != page || p.Meta.PageSize != 3 || p.Meta.HasNext != (p.Meta.NextCursor != "") {
			t.Fatalf("page %d meta %+v", page, p.Meta)
		}
		for _, s := range p.Rows {
			if s.TerminateCause != "Idle-Timeout" || s.StopCause != "idle_timeout" || s.CloseReason != "nas" || s.StopTime.IsZero() || s.TotalBytes == 0 {
				t.Fatalf("row %+v", s)
			}
			got = append(got, s.ID)
		}
		if !p.Meta.HasNext {
			break
		}
		v = url.Values{"page_size": {"3"}, "cursor": {p.Meta.NextCursor}}
	}
	if len(got) != 7 {
		t.Fatalf("ids %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] >= got[i-1] {
			t.Fatalf("not newest first: %v", got)
		}
	}
	// Offset pages agree with the cursor walk.
	p, err := aaa.ListUserSessions(ctx, act, uid, lq(t, aaa.UserSessionSpec, url.Values{"page_size": {"3"}, "page": {"2"}}))
	if err != nil || len(p.Rows) != 3 || p.Rows[0].ID != got[3] || p.Meta.NextCursor == "" {
		t.Fatalf("page 2: %v %+v", err, p)
	}
	// Oldest first.
	p, err = aaa.ListUserSessions(ctx, act, uid, lq(t, aaa.UserSessionSpec, url.Values{"order": {"asc"}, "page_size": {"2"}}))
	if err != nil || len(p.Rows) != 2 || p.Rows[0].ID != got[6] {
		t.Fatalf("asc: %v %+v", err, p.Rows)
	}
	// A cursor of the other order, and garbage, are 400 invalid_cursor.
	_, err = aaa.ListUserSessions(ctx, act, uid, lq(t, aaa.UserSessionSpec, url.Values{"order": {"desc"}, "cursor": {p.Meta.NextCursor}}))
	wantReason(t, err, "ERR_VALIDATION", "invalid_cursor", "cursor")
	for _, c := range []string{"zz", "czE.ZC4yLjU", "!!"} {
		_, err = aaa.ListUserSessions(ctx, act, uid, lq(t, aaa.UserSessionSpec, url.Values{"cursor": {c}}))
		wantReason(t, err, "ERR_VALIDATION", "invalid_cursor", "cursor")
	}
}

func readArchive(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(gz)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The archive moves closed sessions older than the retention into a
// gzipped JSON-lines file under the tenant's files and deletes them; open
// and recent sessions and the rollups stay. An interrupted run's
// uncommitted tail is cut off by the next one, so nothing is archived
// twice. Maintain queues the job at most once a day, and the job runs.
func TestArchiveSessions(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	uid := r.user("carol", "pass", r.planID, nil)
	now := time.Now().UTC()
	old := func(days int) string { return app.FormatTime(now.AddDate(0, 0, -days)) }
	insert := func(sid, start string, stop any) int64 {
		return r.exec(`INSERT INTO radius_sessions(acct_session_id, user_id, username, nas_id, start_time, update_time, stop_time, input_octets,
			terminate_cause, close_reason) VALUES (?, ?, 'carol', 1, ?, ?, ?, 10, 'User-Request', 'nas')`, sid, uid, start, start, stop)
	}
	var oldIDs []int64
	for i := range 12 {
		oldIDs = append(oldIDs, insert(fmt.Sprint("old", i), old(200-i), old(199-i)))
	}
	openOld := insert("open-old", old(300), nil)   // still open: stays
	recent := insert("recent", old(10), old(9))    // within retention: stays
	closedLate := insert("late", old(190), old(1)) // started long ago, stopped recently: stays
	r.exec(`INSERT INTO usage_rollups(user_id, grain, bucket, input_octets) VALUES (?, 'd', 0, 5)`, uid)

	// Maintain queues the archive once a day.
	ctx := context.Background()
	m, err := app.Maintain(ctx, r.ten)
	if err != nil || m.ArchiveJob == 0 {
		t.Fatalf("maintain: %v %+v", err, m)
	}
	if m2, err := app.Maintain(ctx, r.ten); err != nil || m2.ArchiveJob != 0 {
		t.Fatalf("second maintain: %v %+v", err, m2)
	}
	// The runner runs it.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.a.Jobs.Run(runCtx)
	r.a.Jobs.Notify(r.ten.Slug, time.Now().UTC())
	var state, result string
	xrtest.Eventually(t, "the archive job to end", func() bool {
		if err := r.ten.DB.R.QueryRow(`SELECT state, result FROM jobs WHERE id = ?`, m.ArchiveJob).Scan(&state, &result); err != nil {
			t.Fatal(err)
		}
		return state == "done" || state == "failed"
	})
	if state != "done" {
		t.Fatalf("job %s %s", state, result)
	}
	var res aaa.ArchiveResult
	if err := json.Unmarshal([]byte(result), &res); err != nil || res.Archived != 12 || res.File == "" {
		t.Fatalf("result %s: %v", result, err)
	}
	path := filepath.Join(r.a.FilesDir(r.ten.Slug), res.File)
	lines := readArchive(t, path)
	if len(lines) != 12 || lines[0]["id"] != float64(oldIDs[0]) || lines[0]["acct_session_id"] != "old0" || lines[0]["terminate_cause"] != "User-Request" ||
		lines[11]["id"] != float64(oldIDs[11]) {
		t.Fatalf("archive lines %v", lines)
	}
	if n := r.count(`SELECT COUNT(*) FROM radius_sessions WHERE acct_session_id LIKE 'old%'`); n != 0 {
		t.Fatalf("%d archived sessions left", n)
	}
	for _, id := range []int64{openOld, recent, closedLate} {
		if n := r.count(`SELECT COUNT(*) FROM radius_sessions WHERE id = ?`, id); n != 1 {
			t.Fatalf("session %d was removed", id)
		}
	}
	if n := r.count(`SELECT COUNT(*) FROM usage_rollups WHERE user_id = ?`, uid); n != 1 {
		t.Fatalf("rollups: %d", n)
	}

	// A run interrupted after appending and before its commit left a tail:
	// the next run cuts it off, then appends.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half a gzip member"))
	f.Close()
	more := []int64{insert("more0", old(250), old(249)), insert("more1", old(250), old(248))}
	res2, err := aaa.ArchiveSessions(ctx, r.ten, time.Now().UTC())
	if err != nil || res2.Archived != 2 {
		t.Fatalf("second run: %v %+v", err, res2)
	}
	lines = readArchive(t, path)
	if len(lines) != 14 || lines[12]["id"] != float64(more[0]) || lines[13]["id"] != float64(more[1]) {
		t.Fatalf("after second run: %d lines", len(lines))
	}
	// Nothing left: a third run archives nothing and leaves the file.
	if res3, err := aaa.ArchiveSessions(ctx, r.ten, time.Now().UTC()); err != nil || res3.Archived != 0 || len(readArchive(t, path)) != 14 {
		t.Fatalf("third run: %v %+v", err, res3)
	}
	// A tenant setting of 0 keeps everything.
	r.exec(`INSERT INTO settings(key, value) VALUES (?, '0')`, app.SessionRetentionSetting)
	insert("kept", old(400), old(399))
	if res4, err := aaa.ArchiveSessions(ctx, r.ten, time.Now().UTC()); err != nil || res4.Archived != 0 {
		t.Fatalf("retention 0: %v %+v", err, res4)
	}
	if m3, err := app.Maintain(ctx, r.ten); err != nil || m3.ArchiveJob != 0 {
		t.Fatalf("maintain with retention 0: %v %+v", err, m3)
	}
}
