package web_test

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/webtest"
)

func TestSessionsListAndFilters(t *testing.T) {
	t.Parallel()
	k := webtest.NewSessionsKit(t)
	k.User("alice", 1, ", bytes_limit, used_bytes")
	k.Start("alice", "a1", "100.64.0.10", "AA:BB:CC:DD:EE:01")
	k.Start("ghost", "g1", "", "")
	r := k.Do("GET", "acme", "/api/v1/admin/sessions", k.OwnerToken, nil)
	if r.Status != 200 || len(r.List()) != 2 || r.Meta()["total"].(float64) != 2 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	for _, row := range r.List() {
		s := row.(map[string]any)
		switch s["username"] {
		case "alice":
			if s["kind"] != "subscriber" || s["user_id"] == nil || s["nas_name"] != "core-1" || s["vendor"] != "mikrotik" || s["framed_ip"] != "100.64.0.10" {
				t.Fatalf("alice row: %v", s)
			}
			st, _ := s["status"].(map[string]any)
			u, _ := s["usage"].(map[string]any)
			if st["online"] != true || u["dimension"] != "data" || u["percent"].(float64) != 25 {
				t.Fatalf("alice status/usage: %v %v", st, u)
			}
		case "ghost":
			if s["kind"] != "unknown" || s["user_id"] != nil || s["status"] != nil || s["usage"] != nil {
				t.Fatalf("ghost row: %v", s)
			}
		}
	}
	count := func(query string) int {
		r := k.Do("GET", "acme", "/api/v1/admin/sessions?"+query, k.OwnerToken, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		return len(r.List())
	}
	for q, want := range map[string]int{
		"q=alic": 1, "q=100.64": 1, "q=aa:bb:cc": 1, "q=core-1": 2, "filter[kind]=unknown": 1, "filter[kind]=subscriber": 1,
		"filter[has_ip]=true": 1, "filter[has_ip]=false": 1, "filter[expired]=false": 1, "filter[expired]=true": 0,
		"filter[duration_band]=stale": 0, "filter[nas_id]=1": 2, "filter[nas_id]=99": 0, "filter[whatever]=1": 2,
	} {
		if got := count(q); got != want {
			t.Errorf("%s: %d rows, want %d", q, got, want)
		}
	}
	k.Exec(`UPDATE radius_sessions SET update_time = ? WHERE acct_session_id = 'g1'`, app.FormatTime(time.Now().Add(-2*time.Hour)))
	if got := count("filter[duration_band]=stale"); got != 1 {
		t.Errorf("stale: %d", got)
	}
	for _, bad := range []string{"filter[kind]=robot", "filter[duration_band]=eternal", "filter[has_ip]=maybe", "filter[nas_id]=x"} {
		webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/sessions?"+bad, k.OwnerToken, nil), 400, app.CodeValidation, "invalid_filter")
	}
	// A closed session is no longer live.
	k.Svc.RecordAccounting(context.Background(), []aaa.AcctEvent{{NAS: k.NAS, Status: aaa.StatusStop, SessionID: "g1", Username: "ghost", EventTime: time.Now()}})
	if got := count(""); got != 1 {
		t.Fatalf("after stop: %d live", got)
	}
	// The record of a closed session still reads, with its closing fields.
	r = k.Do("GET", "acme", "/api/v1/admin/sessions/"+k.SessionID("g1"), k.OwnerToken, nil)
	if r.Status != 200 || r.Data()["stop_time"] == nil || r.Data()["close_reason"] != "nas" {
		t.Fatalf("closed record: %s", r.Body)
	}
}

func TestSessionsScope(t *testing.T) {
	t.Parallel()
	k := webtest.NewSessionsKit(t)
	r := k.Do("POST", "acme", "/api/v1/managers", k.OwnerToken, map[string]any{"username": "res1", "password": "Reseller-pass-1"})
	if r.Status != 201 {
		t.Fatalf("reseller: %s", r.Body)
	}
	resID := int64(r.Data()["id"].(float64))
	roles := k.Do("GET", "acme", "/api/v1/roles", k.OwnerToken, nil)
	var resellerRole float64
	for _, x := range roles.List() {
		if x.(map[string]any)["name"] == "reseller" {
			resellerRole = x.(map[string]any)["id"].(float64)
		}
	}
	k.Do("PUT", "acme", "/api/v1/managers/"+webtest.Itoa(resID)+"/roles", k.OwnerToken, map[string]any{"role_ids": []float64{resellerRole}})
	k.User("mine", resID, "")
	k.User("theirs", 1, "")
	k.Start("mine", "m1", "", "")
	k.Start("theirs", "t1", "", "")
	res := k.Login("acme", "res1", "Reseller-pass-1")
	r = k.Do("GET", "acme", "/api/v1/admin/sessions", res, nil)
	if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["username"] != "mine" {
		t.Fatalf("reseller list: %s", r.Body)
	}
	outside := k.Do("GET", "acme", "/api/v1/admin/sessions/"+k.SessionID("t1"), res, nil)
	missing := k.Do("GET", "acme", "/api/v1/admin/sessions/99999", res, nil)
	webtest.ExpectErr(t, outside, 404, app.CodeNotFound, "not_found")
	if stripRequestID(outside.Body) != stripRequestID(missing.Body) {
		t.Fatalf("out of scope and missing differ:\n%s\n%s", outside.Body, missing.Body)
	}
}

func stripRequestID(b []byte) string {
	s := string(b)
	if i := strings.Index(s, `"request_id":"`); i >= 0 {
		j := strings.Index(s[i+14:], `"`)
		s = s[:i] + s[i+14+j+1:]
	}
	return s
}

func json64(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }

func TestSessionsDisconnect(t *testing.T) {
	t.Parallel()
	k := webtest.NewSessionsKit(t)
	k.User("bob", 1, "")
	k.Start("bob", "b1", "", "")
	k.Start("bob", "b2", "", "")
	path := func(sid string) string { return "/api/v1/admin/sessions/" + k.SessionID(sid) + "/disconnect" }
	r := k.Do("POST", "acme", path("b1"), k.OwnerToken, nil)
	if r.Status != 200 || r.Data()["ok"] != true || r.Data()["nak"] != false {
		t.Fatalf("ack: %s", r.Body)
	}
	k.Outcome = "nak"
	r = k.Do("POST", "acme", path("b1"), k.OwnerToken, nil)
	if r.Status != 200 || r.Data()["ok"] != false || r.Data()["nak"] != true {
		t.Fatalf("nak: %s", r.Body)
	}
	k.Outcome = "unreachable"
	webtest.ExpectErr(t, k.Do("POST", "acme", path("b2"), k.OwnerToken, nil), 502, app.CodeUnavailable, "nas_unreachable")
	var outcome string
	k.Acquire("acme").DB.R.QueryRow(`SELECT disconnect_outcome FROM radius_sessions WHERE acct_session_id = 'b2'`).Scan(&outcome)
	if outcome != "unreachable" {
		t.Fatalf("outcome %q", outcome)
	}
	// Bulk: a per-id report; a 200 does not mean every one was sent.
	k.Outcome = "ok"
	r = k.Do("POST", "acme", "/api/v1/admin/sessions/bulk-disconnect", k.OwnerToken, map[string]any{"ids": []any{json64(k.SessionID("b1")), 424242}})
	if r.Status != 200 || len(r.Data()["updated"].([]any)) != 1 || r.Data()["failed"].([]any)[0].(map[string]any)["reason"] != "not_found" {
		t.Fatalf("bulk: %s", r.Body)
	}
	// A closed session cannot be disconnected; an API without RADIUS says so.
	k.Svc.RecordAccounting(context.Background(), []aaa.AcctEvent{{NAS: k.NAS, Status: aaa.StatusStop, SessionID: "b2", Username: "bob", EventTime: time.Now()}})
	webtest.ExpectErr(t, k.Do("POST", "acme", path("b2"), k.OwnerToken, nil), 409, app.CodeConflict, "session_not_live")
	k.Srv.Radius = nil
	webtest.ExpectErr(t, k.Do("POST", "acme", path("b1"), k.OwnerToken, nil), 503, app.CodeUnavailable, "disconnect_unavailable")
}

func TestSessionsLockMACAndTraffic(t *testing.T) {
	t.Parallel()
	k := webtest.NewSessionsKit(t)
	k.User("cat", 1, "")
	k.Start("cat", "c1", "100.64.0.20", "aa-bb-cc-00-11-22")
	k.Start("ghost", "g1", "", "")
	id := k.SessionID("c1")
	r := k.Do("POST", "acme", "/api/v1/admin/sessions/"+id+"/lock-mac", k.OwnerToken, nil)
	if r.Status != 200 || r.Data()["mac"] != "aa:bb:cc:00:11:22" || len(r.Data()["locked_macs"].([]any)) != 1 {
		t.Fatalf("lock-mac: %s", r.Body)
	}
	var enabled int
	var macs string
	k.Acquire("acme").DB.R.QueryRow(`SELECT mac_lock_enabled, mac_locked_addrs FROM users WHERE username = 'cat'`).Scan(&enabled, &macs)
	if enabled != 1 || !strings.Contains(macs, "aa:bb:cc:00:11:22") {
		t.Fatalf("stored: %d %s", enabled, macs)
	}
	// Again: no duplicate entry.
	r = k.Do("POST", "acme", "/api/v1/admin/sessions/"+id+"/lock-mac", k.OwnerToken, nil)
	if len(r.Data()["locked_macs"].([]any)) != 1 {
		t.Fatalf("duplicated: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/sessions/"+k.SessionID("g1")+"/lock-mac", k.OwnerToken, nil), 409, app.CodeConflict, "session_has_no_subscriber")

	k.Svc.RecordAccounting(context.Background(), []aaa.AcctEvent{{NAS: k.NAS, Status: aaa.StatusInterim, SessionID: "c1", Username: "cat",
		InputOctets: 5000, OutputOctets: 700, SessionTime: 60, EventTime: time.Now()}})
	r = k.Do("GET", "acme", "/api/v1/admin/sessions/"+id+"/traffic", k.OwnerToken, nil)
	d := r.Data()
	if r.Status != 200 || d["input_octets"].(float64) != 5000 || d["output_octets"].(float64) != 700 || d["session_time"].(float64) != 60 || d["sampled_at"] == nil || d["update_time"] == nil {
		t.Fatalf("traffic: %s", r.Body)
	}
	r = k.Do("GET", "acme", "/api/v1/admin/sessions/"+id+"/live-traffic", k.OwnerToken, nil)
	if r.Data()["source"] != "interim" || r.Data()["rx_bps"].(float64) != 0 {
		t.Fatalf("live-traffic: %s", r.Body)
	}
	// The stream answers server-sent events.
	req, _ := http.NewRequest("GET", k.TS.URL+"/api/v1/admin/sessions/"+id+"/live-traffic/stream", nil)
	req.Host = "acme.xr.test"
	req.Header.Set("Authorization", "Bearer "+k.OwnerToken)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", res.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(res.Body)
	sc.Scan()
	if sc.Text() != "event: traffic" {
		t.Fatalf("first line %q", sc.Text())
	}
	sc.Scan()
	if !strings.HasPrefix(sc.Text(), "data: {") || !strings.Contains(sc.Text(), `"input_octets":5000`) {
		t.Fatalf("data line %q", sc.Text())
	}
}

func TestSessionsPing(t *testing.T) {
	t.Parallel()
	k := webtest.NewSessionsKit(t)
	k.User("dee", 1, "")
	k.Start("dee", "d1", "127.0.0.1", "")
	k.Start("dee2", "d2", "", "")
	r := k.Do("POST", "acme", "/api/v1/admin/sessions/"+k.SessionID("d1")+"/ping", k.OwnerToken, nil)
	if r.Status == 503 && r.Reason() == "ping_unavailable" {
		t.Skip("no ICMP socket on this machine")
	}
	if r.Status != 200 || r.Data()["sent"].(float64) != 3 || r.Data()["received"].(float64) != 3 {
		t.Fatalf("ping: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/sessions/"+k.SessionID("d2")+"/ping", k.OwnerToken, nil), 409, app.CodeConflict, "session_has_no_ip")
}
