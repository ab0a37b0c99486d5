package web_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"layeh.com/radius"

	"xr/app"
	"xr/app/aaa"
	"xr/app/bandwidth"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

func TestBandwidthApplyCoAPerNASType(t *testing.T) {
	t.Parallel()
	k := webtest.NewBandwidthKit(t)
	alice, bob := k.CreateUser("alice"), k.CreateUser("bob")
	k.Online(k.MTNAS, "alice", "a1")
	k.Online(k.CSNAS, "bob", "b1")

	// Authorization before validation: a manager without the permission
	// gets 403 even for a body that would be refused.
	webtest.CreateRole(k.Kit, "acme", "viewer")
	webtest.CreateManager(k.Kit, "acme", 0, "viewer1", "viewer")
	viewer := k.Login("acme", "viewer1", webtest.Password)
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/apply", viewer, map[string]any{"target": map[string]any{"kind": "bogus"}}),
		403, app.CodeForbidden, "insufficient_permissions")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/apply", k.Tok, map[string]any{"target": map[string]any{"kind": "bogus", "ids": []int64{1}},
		"rate_down_kbps": 1, "rate_up_kbps": 1}), 400, app.CodeValidation, "invalid_enum")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/apply", k.Tok, map[string]any{"target": map[string]any{"kind": "users", "ids": []int64{alice}},
		"rate_down_kbps": 0, "rate_up_kbps": 1}), 400, app.CodeValidation, "out_of_range")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/apply", k.Tok, map[string]any{"target": map[string]any{"kind": "users", "ids": []int64{999999}},
		"rate_down_kbps": 1, "rate_up_kbps": 1}), 404, app.CodeNotFound, "not_found")

	r := k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/apply", k.Tok, map[string]any{"name": "storm",
		"target": map[string]any{"kind": "users", "ids": []int64{alice, bob}}, "rate_down_kbps": 20480, "rate_up_kbps": 4096})
	if r.Status != 200 {
		t.Fatalf("apply: %d %s", r.Status, r.Body)
	}
	coa := r.Data()["coa"].(map[string]any)
	if coa["sessions"] != 2.0 || coa["ack"] != 2.0 {
		t.Fatalf("coa: %s", r.Body)
	}
	ruleID := int64(r.Data()["rule"].(map[string]any)["id"].(float64))
	// The NAS-specific attribute, as in Access-Accept.
	mt := k.MT.Requests()
	if len(mt) != 1 || mt[0].Code != radius.CodeCoARequest {
		t.Fatalf("mikrotik got %d requests", len(mt))
	}
	if v := webtest.VendorValues(mt[0], 14988, 8); len(v) != 1 || v[0] != "4096k/20480k" {
		t.Fatalf("Mikrotik-Rate-Limit %q", v)
	}
	cs := k.CS.Requests()
	if len(cs) != 1 {
		t.Fatalf("cisco got %d requests", len(cs))
	}
	if v := webtest.VendorValues(cs[0], 9, 1); len(v) != 2 || !strings.Contains(v[0], "rate-limit input 4096000") || !strings.Contains(v[1], "rate-limit output 20480000") {
		t.Fatalf("Cisco-AVPair %q", v)
	}
	if u := mt[0].Get(1); !bytes.Equal(u, []byte("alice")) {
		t.Fatalf("user name %q", u)
	}
	// A new session gets the override at Access-Accept (from memory).
	if d, u := k.Rate(webtest.MustNAS(t, k.Svc), "alice"); d != 20480 || u != 4096 {
		t.Fatalf("accept rate %d/%d", d, u)
	}
	// Per-session outcomes are recorded and listed.
	h := k.Do("GET", "acme", "/api/v1/admin/tools/bandwidth/history?rule_id="+webtest.Itoa(ruleID), k.Tok, nil)
	if h.Status != 200 || len(h.List()) != 2 {
		t.Fatalf("history: %s", h.Body)
	}
	types := map[string]string{}
	for _, x := range h.List() {
		m := x.(map[string]any)
		types[m["username"].(string)] = m["nas_type"].(string) + "/" + m["outcome"].(string)
	}
	if types["alice"] != "mikrotik/ack" || types["bob"] != "cisco/ack" {
		t.Fatalf("history outcomes %v", types)
	}
	// In force now, shown by the overview.
	o := k.Do("GET", "acme", "/api/v1/admin/tools/bandwidth", k.Tok, nil)
	if o.Status != 200 || len(o.Data()["in_force"].([]any)) != 1 {
		t.Fatalf("overview: %s", o.Body)
	}
	// A NAK is recorded as such.
	k.CS.SetNak(true)
	r = k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/apply", k.Tok, map[string]any{"revert_id": ruleID})
	if r.Status != 200 {
		t.Fatalf("revert: %s", r.Body)
	}
	coa = r.Data()["coa"].(map[string]any)
	if coa["ack"] != 1.0 || coa["nak"] != 1.0 {
		t.Fatalf("revert coa: %s", r.Body)
	}
	if v := webtest.VendorValues(k.MT.Requests()[1], 14988, 8); len(v) != 1 || v[0] != "2048k/10240k" {
		t.Fatalf("revert rate %q", v)
	}
	if d, _ := k.Rate(webtest.MustNAS(t, k.Svc), "alice"); d != 10240 {
		t.Fatalf("after revert %d", d)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/apply", k.Tok, map[string]any{"revert_id": ruleID}), 409, app.CodeConflict, "bandwidth_already_reverted")
	var reverted int
	k.Acquire("acme").DB.R.QueryRow(`SELECT COUNT(*) FROM bandwidth_rules WHERE id = ? AND reverted_at IS NOT NULL`, ruleID).Scan(&reverted)
	if reverted != 1 {
		t.Fatal("not reverted in the store")
	}
}

// TestBandwidthOverrideDuration: an override for a duration runs out by
// itself: the index stops applying it and the expire job sends the rate
// back.
func TestBandwidthOverrideDuration(t *testing.T) {
	t.Parallel()
	k := webtest.NewBandwidthKit(t)
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	k.App.SetClock(func() time.Time { return now })
	k.CreateUser("carol")
	k.Online(k.MTNAS, "carol", "c1")
	r := k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/apply", k.Tok, map[string]any{
		"target": map[string]any{"kind": "plan", "ids": []int64{k.Plan}}, "rate_down_kbps": 512, "rate_up_kbps": 256, "duration_minutes": 30})
	if r.Status != 200 || r.Data()["coa"].(map[string]any)["ack"] != 1.0 {
		t.Fatalf("apply: %s", r.Body)
	}
	if d, _ := k.Rate(webtest.MustNAS(t, k.Svc), "carol"); d != 512 {
		t.Fatalf("in force %d", d)
	}
	now = now.Add(31 * time.Minute)
	if d, _ := k.Rate(webtest.MustNAS(t, k.Svc), "carol"); d != 10240 {
		t.Fatalf("after the duration %d", d)
	}
	if n, err := k.App.Jobs.RunDue(context.Background(), "acme", now); err != nil || n != 1 {
		t.Fatalf("run due: %d %v", n, err)
	}
	reqs := k.MT.Requests()
	if v := webtest.VendorValues(reqs[len(reqs)-1], 14988, 8); len(v) != 1 || v[0] != "2048k/10240k" {
		t.Fatalf("expire rate %q", v)
	}
	var n int
	k.Acquire("acme").DB.R.QueryRow(`SELECT COUNT(*) FROM bandwidth_coa WHERE action = 'expire' AND outcome = 'ack'`).Scan(&n)
	if n != 1 {
		t.Fatalf("expire rows %d", n)
	}
}

func TestBandwidthScheduleEdges(t *testing.T) {
	t.Parallel()
	k := webtest.NewBandwidthKit(t)
	// Monday 2026-11-23 21:00 UTC (the tenant's zone is UTC).
	now := time.Date(2026, 11, 23, 21, 0, 0, 0, time.UTC)
	k.App.SetClock(func() time.Time { return now })
	k.CreateUser("dave")
	k.Online(k.MTNAS, "dave", "d1")
	night := map[string]any{"name": "night boost", "target": map[string]any{"kind": "plan", "ids": []int64{k.Plan}},
		"rate_down_kbps": 51200, "rate_up_kbps": 10240, "weekdays": []string{"mon"}, "start": "22:00", "end": "06:00"}
	r := k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/schedules", k.Tok, night)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := int64(r.Data()["id"].(float64))
	// Overlapping windows for the same plan are refused with a reason.
	over := map[string]any{"target": map[string]any{"kind": "plan", "ids": []int64{k.Plan}}, "rate_down_kbps": 1024, "rate_up_kbps": 512,
		"weekdays": []string{"tue"}, "start": "05:00", "end": "07:00"}
	x := k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/schedules", k.Tok, over)
	webtest.ExpectErr(t, x, 409, app.CodeConflict, "bandwidth_schedule_overlap")
	if d, _ := x.JSON["error"].(map[string]any)["details"].(map[string]any); d["schedule_id"] != float64(id) {
		t.Fatalf("overlap details: %s", x.Body)
	}
	over["start"] = "06:00"
	if r := k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/schedules", k.Tok, over); r.Status != 201 {
		t.Fatalf("adjacent window: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/schedules", k.Tok, map[string]any{"target": map[string]any{"kind": "plan", "ids": []int64{k.Plan}},
		"rate_down_kbps": 1, "rate_up_kbps": 1, "start": "25:00", "end": "01:00"}), 400, app.CodeValidation, "invalid_time_of_day")
	// The effective rate at a given moment.
	at := func(when string) float64 {
		r := k.Do("GET", "acme", "/api/v1/admin/tools/bandwidth?at="+strings.ReplaceAll(when, " ", "%20"), k.Tok, nil)
		if r.Status != 200 {
			t.Fatalf("at %s: %s", when, r.Body)
		}
		return r.Data()["plans"].([]any)[0].(map[string]any)["effective_rate_down_kbps"].(float64)
	}
	if at("2026-11-23 21:59:00") != 10240 || at("2026-11-23 23:00:00") != 51200 || at("2026-11-24 05:59:00") != 51200 || at("2026-11-24 06:30:00") != 1024 {
		t.Fatal("effective rates at moments")
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/tools/bandwidth?at=yesterday", k.Tok, nil), 400, app.CodeValidation, "invalid_value")
	// The job runner applies the window at its start edge...
	var next string
	k.Acquire("acme").DB.R.QueryRow(`SELECT next_run_at FROM schedules WHERE key = ?`, "bandwidth."+webtest.Itoa(id)+".start").Scan(&next)
	if next != "2026-11-23 22:00:00" {
		t.Fatalf("start edge %q", next)
	}
	now = time.Date(2026, 11, 23, 22, 0, 0, 0, time.UTC)
	if n, err := k.App.Jobs.RunDue(context.Background(), "acme", now); err != nil || n != 1 {
		t.Fatalf("start edge ran %d %v", n, err)
	}
	reqs := k.MT.Requests()
	if len(reqs) != 1 || webtest.VendorValues(reqs[0], 14988, 8)[0] != "10240k/51200k" {
		t.Fatalf("start edge CoA: %d", len(reqs))
	}
	if d, _ := k.Rate(webtest.MustNAS(t, k.Svc), "dave"); d != 51200 {
		t.Fatalf("accept in window %d", d)
	}
	// ...and reverts it at its end (the next day, it crosses midnight).
	k.Acquire("acme").DB.R.QueryRow(`SELECT next_run_at FROM schedules WHERE key = ?`, "bandwidth."+webtest.Itoa(id)+".end").Scan(&next)
	if next != "2026-11-24 06:00:00" {
		t.Fatalf("end edge %q", next)
	}
	now = time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	if n, err := k.App.Jobs.RunDue(context.Background(), "acme", now); err != nil || n != 2 {
		t.Fatalf("end edge ran %d %v", n, err) // the night's end and the morning window's start
	}
	var actions string
	k.Acquire("acme").DB.R.QueryRow(`SELECT group_concat(action || ':' || rate_down_kbps || ':' || outcome, ',') FROM (SELECT * FROM bandwidth_coa ORDER BY id)`).Scan(&actions)
	if actions != "window_start:51200:ack,window_end:1024:ack,window_start:1024:ack" && actions != "window_start:51200:ack,window_start:1024:ack,window_end:1024:ack" {
		t.Fatalf("coa log %s", actions)
	}
	// PATCH and DELETE; bulk-delete reports per id.
	p := k.Do("PATCH", "acme", "/api/v1/admin/tools/bandwidth/schedules/"+webtest.Itoa(id), k.Tok, map[string]any{"rate_down_kbps": 40960})
	if p.Status != 200 || p.Data()["rate_down_kbps"] != 40960.0 {
		t.Fatalf("patch: %s", p.Body)
	}
	webtest.ExpectErr(t, k.Do("PATCH", "acme", "/api/v1/admin/tools/bandwidth/schedules/"+webtest.Itoa(id), k.Tok, map[string]any{"end": "07:00"}), 409, app.CodeConflict, "bandwidth_schedule_overlap")
	b := k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/schedules/bulk-delete", k.Tok, map[string]any{"ids": []int64{id, 424242}})
	if b.Status != 200 || len(b.Data()["updated"].([]any)) != 1 || len(b.Data()["failed"].([]any)) != 1 {
		t.Fatalf("bulk delete: %s", b.Body)
	}
	var left int
	k.Acquire("acme").DB.R.QueryRow(`SELECT COUNT(*) FROM schedules WHERE key LIKE ?`, "bandwidth."+webtest.Itoa(id)+".%").Scan(&left)
	if left != 0 {
		t.Fatalf("schedules left %d", left)
	}
	l := k.Do("GET", "acme", "/api/v1/admin/tools/bandwidth/schedules", k.Tok, nil)
	if l.Status != 200 || len(l.List()) != 1 {
		t.Fatalf("list: %s", l.Body)
	}
}

// TestBandwidthLargeChangeQueued: beyond SyncCoALimit online sessions the
// CoAs are a job; the answer says so and every session gets its CoA.
func TestBandwidthLargeChangeQueued(t *testing.T) {
	t.Parallel()
	k := webtest.NewBandwidthKit(t)
	n := bandwidth.SyncCoALimit + 1
	var evs []aaa.AcctEvent
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("bulk%03d", i)
		k.CreateUser(name)
		evs = append(evs, aaa.AcctEvent{NAS: k.MTNAS, Status: aaa.StatusStart, SessionID: "s" + name, Username: name, EventTime: time.Now()})
	}
	if err := k.Svc.RecordAccounting(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	r := k.Do("POST", "acme", "/api/v1/admin/tools/bandwidth/apply", k.Tok, map[string]any{
		"target": map[string]any{"kind": "plan", "ids": []int64{k.Plan}}, "rate_down_kbps": 4096, "rate_up_kbps": 1024})
	coa, _ := r.Data()["coa"].(map[string]any)
	if r.Status != 200 || coa["queued"] != true || coa["sessions"] != float64(n) || coa["job_id"] == nil {
		t.Fatalf("apply: %s", r.Body)
	}
	if _, err := k.App.Jobs.RunDue(context.Background(), "acme", time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "every session's CoA recorded", func() bool {
		var got int
		k.Acquire("acme").DB.R.QueryRow(`SELECT COUNT(*) FROM bandwidth_coa WHERE action = 'apply' AND outcome = 'ack'`).Scan(&got)
		return got == n
	})
	if len(k.MT.Requests()) != n {
		t.Fatalf("the NAS got %d CoA", len(k.MT.Requests()))
	}
}
