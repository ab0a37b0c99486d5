package web_test

import (
	"context"
	"testing"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/webtest"
)

// The sweep's flags show in GET /admin/sessions as fields and filters; the
// record of a closed session says why it ended.
func TestSessionsTruthFlagsAndFilters(t *testing.T) {
	t.Parallel()
	k := webtest.NewSessionsKit(t)
	k.User("zoe", 1, "")
	k.User("oli", 1, "") // no plan: one session allowed
	k.User("dee", 1, "")
	k.Start("zoe", "z1", "", "")
	k.Start("oli", "o1", "", "")
	k.Start("oli", "o2", "", "")
	k.Start("dee", "d1", "", "")
	k.Exec(`UPDATE radius_sessions SET update_time = ? WHERE acct_session_id = 'o1'`, app.FormatTime(time.Now().Add(-2*time.Minute)))
	k.Exec(`UPDATE users SET enabled = 0 WHERE username = 'zoe'`)
	// An ACKed disconnect that no Stop followed for more than two intervals.
	if r := k.Do("POST", "acme", "/api/v1/admin/sessions/"+k.SessionID("d1")+"/disconnect", k.OwnerToken, nil); r.Status != 200 {
		t.Fatalf("disconnect: %s", r.Body)
	}
	k.Exec(`UPDATE radius_sessions SET disconnect_at = ? WHERE acct_session_id = 'd1'`, app.FormatTime(time.Now().Add(-11*time.Minute)))
	res, err := k.Svc.Sweep(context.Background(), "acme")
	if err != nil || res.Zombie != 1 || res.OverLimit != 1 || res.Unconfirmed != 1 || res.Stale != 0 {
		t.Fatalf("sweep: %+v %v", res, err)
	}

	list := func(query string) []map[string]any {
		t.Helper()
		r := k.Do("GET", "acme", "/api/v1/admin/sessions?"+query, k.OwnerToken, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		var out []map[string]any
		for _, x := range r.List() {
			out = append(out, x.(map[string]any))
		}
		return out
	}
	one := func(query, sid string) map[string]any {
		t.Helper()
		rows := list(query)
		if len(rows) != 1 || rows[0]["acct_session_id"] != sid {
			t.Fatalf("%s: %v, want only %s", query, rows, sid)
		}
		return rows[0]
	}
	if row := one("filter[zombie]=true", "z1"); row["zombie"] != true || row["over_limit"] != false || row["disconnect_unconfirmed"] != false {
		t.Fatalf("zombie row: %v", row)
	}
	if row := one("filter[over_limit]=true", "o1"); row["over_limit"] != true || row["zombie"] != false {
		t.Fatalf("over-limit row: %v", row)
	}
	if row := one("filter[disconnect_unconfirmed]=true", "d1"); row["disconnect_unconfirmed"] != true || row["interim_interval"].(float64) != 0 {
		t.Fatalf("unconfirmed row: %v", row)
	}
	if got := len(list("filter[zombie]=false")); got != 3 {
		t.Fatalf("filter[zombie]=false: %d rows", got)
	}
	if got := len(list("filter[over_limit]=false&filter[zombie]=false&filter[disconnect_unconfirmed]=false")); got != 1 {
		t.Fatalf("no flag: %d rows", got)
	}
	for _, bad := range []string{"filter[zombie]=maybe", "filter[over_limit]=2x", "filter[disconnect_unconfirmed]=yes-ish"} {
		webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/sessions?"+bad, k.OwnerToken, nil), 400, app.CodeValidation, "invalid_filter")
	}
	// Live rows carry no stop cause; the record of a stopped session does.
	if _, ok := one("filter[zombie]=true", "z1")["stop_cause"]; ok {
		t.Fatal("a live row has a stop_cause")
	}
	if err := k.Svc.RecordAccounting(context.Background(), []aaa.AcctEvent{{NAS: k.NAS, Status: aaa.StatusStop, SessionID: "o1", Username: "oli",
		TerminateCause: "User-Request", EventTime: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	r := k.Do("GET", "acme", "/api/v1/admin/sessions/"+k.SessionID("o1"), k.OwnerToken, nil)
	if r.Status != 200 || r.Data()["stop_cause"] != "user_request" || r.Data()["terminate_cause"] != "User-Request" || r.Data()["over_limit"] != true {
		t.Fatalf("stopped record: %s", r.Body)
	}
	var stored string
	k.Acquire("acme").DB.R.QueryRow(`SELECT stop_cause FROM radius_sessions WHERE acct_session_id = 'o1'`).Scan(&stored)
	if stored != "user_request" {
		t.Fatalf("stored stop_cause %q", stored)
	}
	// The next sweep: o2 is alone now, so nothing is over the limit.
	if _, err := k.Svc.Sweep(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	if got := len(list("filter[over_limit]=true")); got != 0 {
		t.Fatalf("over limit after the stop: %d", got)
	}
}
