package aaa_test

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"layeh.com/radius"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/xrtest"
)

// TestAuthLogWritesAndPrunes: every decision reaches the auth log through
// the batched writer; the hourly housekeeping prunes rows older than
// radius_auth_log_days (default 14).
func TestAuthLogWritesAndPrunes(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.user("ann", "pw", r.fupPlan, nil)
	for i := range 30 {
		pw := "pw"
		if i%3 == 0 {
			pw = "bad"
		}
		resp := r.accessRequest("ann", pw, fmt.Sprintf("aa-bb-cc-dd-ee-%02d", i))
		if (resp.Code == radius.CodeAccessAccept) != (i%3 != 0) {
			t.Fatalf("request %d: %v", i, resp.Code)
		}
	}
	r.decisions(30)
	var accepts, rejects, stations int
	r.ten.DB.R.QueryRow(`SELECT SUM(result = 'accept'), SUM(result = 'reject' AND reason = 'bad_password'), COUNT(DISTINCT calling_station_id)
		FROM auth_log WHERE username = 'ann'`).Scan(&accepts, &rejects, &stations)
	if accepts != 20 || rejects != 10 || stations != 30 {
		t.Fatalf("auth log: %d accepts, %d bad passwords, %d stations", accepts, rejects, stations)
	}
	if written, dropped := r.svc.AuthLogStats(); written != 30 || dropped != 0 {
		t.Fatalf("stats: written %d dropped %d", written, dropped)
	}

	old := func(days int) string { return app.FormatTime(time.Now().AddDate(0, 0, -days)) }
	r.exec(`INSERT INTO auth_log(at, username, result, reason) VALUES (?, 'x', 'reject', 'unknown_user'), (?, 'y', 'reject', 'unknown_user')`, old(20), old(3))
	count := func() (n int) {
		r.ten.DB.R.QueryRow(`SELECT COUNT(*) FROM auth_log`).Scan(&n)
		return n
	}
	res, err := app.Maintain(context.Background(), r.ten)
	if err != nil || res.AuthLog != 1 || count() != 31 {
		t.Fatalf("prune at 14 days: %+v %v, %d rows left", res, err, count())
	}
	r.exec(`INSERT INTO settings(key, value) VALUES ('radius_auth_log_days', '2')`)
	if res, err := app.Maintain(context.Background(), r.ten); err != nil || res.AuthLog != 1 || count() != 30 {
		t.Fatalf("prune at 2 days: %+v %v, %d rows left", res, err, count())
	}
}

// TestAuthLogAggregatesAFlood: past the tenant's budget of rows in a
// second, that second's decisions are counted on one row per NAS, method,
// result and reason; every decision is still counted, the list shows the
// count, and the next second starts a new budget.
func TestAuthLogAggregatesAFlood(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.user("ann", "pw", r.planID, nil)
	n, _ := r.svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	r.svc.Authorize(context.Background(), n, "ann", "") // load the index
	sec := time.Now().Truncate(time.Second).Add(-time.Minute)
	for i := range 3000 {
		d := aaa.AuthDecision{NAS: n, Username: fmt.Sprintf("u%04d", i), CallingStationID: "aa:bb:cc:dd:ee:ff", Method: "pap",
			Result: "accept", Latency: 100 * time.Microsecond, At: sec.Add(time.Duration(i) * 100 * time.Microsecond)}
		if i%4 == 3 {
			d.Result, d.Reason, d.Latency = "reject", "bad_password", 300*time.Microsecond
		}
		r.svc.LogDecision(d)
	}
	r.svc.LogDecision(aaa.AuthDecision{NAS: n, Username: "ann", Method: "pap", Result: "accept", At: sec.Add(time.Second)})
	if err := r.svc.FlushAuthLog(context.Background()); err != nil {
		t.Fatal(err)
	}
	if written, dropped := r.svc.AuthLogStats(); written != 3001 || dropped != 0 {
		t.Fatalf("stats: written %d dropped %d", written, dropped)
	}
	var rows, singles, decisions int
	r.ten.DB.R.QueryRow(`SELECT COUNT(*), SUM(decisions = 1 AND username <> ''), SUM(decisions) FROM auth_log`).Scan(&rows, &singles, &decisions)
	// A few aggregate rows: one per key and flush of the writer (it
	// flushes every authLogBatch decisions).
	if decisions != 3001 || singles != 1001 || rows > 1001+2*4 {
		t.Fatalf("%d rows (%d single), %d decisions", rows, singles, decisions)
	}
	type agg struct {
		result, reason, user, station string
		n, latency                    int64
	}
	var got []agg
	rs, err := r.ten.DB.R.Query(`SELECT result, reason, MAX(username), MAX(calling_station_id), SUM(decisions), MAX(latency_us) FROM auth_log
		WHERE decisions > 1 GROUP BY result, reason ORDER BY result`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var a agg
		rs.Scan(&a.result, &a.reason, &a.user, &a.station, &a.n, &a.latency)
		got = append(got, a)
	}
	rs.Close()
	if len(got) != 2 || got[0] != (agg{"accept", "", "", "", 1500, 100}) || got[1] != (agg{"reject", "bad_password", "", "", 500, 300}) {
		t.Fatalf("aggregates %+v", got)
	}
	page, err := aaa.ListAuthLog(context.Background(), xrtest.System(t, r.ten), lq(t, aaa.AuthLogListSpec, url.Values{"filter[reason]": {"bad_password"}, "sort": {"id"}, "order": {"desc"}, "page_size": {"1"}}))
	if err != nil || len(page.Rows) != 1 || page.Rows[0].Count < 2 || page.Rows[0].Username != "" {
		t.Fatalf("list: %+v %v", page.Rows, err)
	}
}

// BenchmarkAuthLogWrite: the batched writer's throughput (rows/s), off
// the authentication path. Decisions are a millisecond apart, so each
// is a row (the tenant's budget is 1000 rows a second).
//
//	go test ./app/aaa -run '^$' -bench AuthLogWrite -benchtime 200000x
func BenchmarkAuthLogWrite(b *testing.B) {
	r := newRig(b)
	r.seedUsers(1000)
	n, _ := r.svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	r.svc.Authorize(context.Background(), n, "user00000", "") // load the index
	now := time.Now()
	b.ResetTimer()
	for i := range b.N {
		r.svc.LogDecision(aaa.AuthDecision{NAS: n, Username: fmt.Sprintf("user%05d", i%1000), CallingStationID: "aa:bb:cc:dd:ee:ff",
			Result: "accept", Latency: 300 * time.Microsecond, At: now.Add(time.Duration(i) * time.Millisecond)})
		if i%8192 == 8191 {
			r.svc.FlushAuthLog(context.Background())
		}
	}
	r.svc.FlushAuthLog(context.Background())
	b.StopTimer()
	written, dropped := r.svc.AuthLogStats()
	b.ReportMetric(float64(written)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(dropped), "dropped")
}
