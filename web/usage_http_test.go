package web_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"xr/app"
	"xr/internal/webtest"
)

// GET /users/{id}/sessions and /users/{id}/usage through HTTP: the list
// meta with next_cursor, the cursor walk, 403 before anything for a caller
// without prm_users_index, the same 404 for a subscriber outside the
// caller's subtree as for a missing one, and 400s naming the parameter.
func TestUserUsageHTTP(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	resID, rtok := s.Manager(s.OwnerID, "usage-res", "prm_users_index", "prm_users_create")
	_, other := s.Manager(s.OwnerID, "usage-other", "prm_users_index")
	_, nope := s.Manager(s.OwnerID, "usage-noperm", "prm_users_create")
	uid := s.User(rtok, map[string]any{"username": "u-usage"})
	now := time.Now().UTC()
	for i := range 5 {
		st := now.Add(time.Duration(i-10) * time.Hour)
		s.Exec(`INSERT INTO radius_sessions(acct_session_id, user_id, username, nas_ip, start_time, update_time, stop_time, session_time,
			input_octets, output_octets, terminate_cause, close_reason) VALUES (?, ?, 'u-usage', '10.0.0.1', ?, ?, ?, 600, ?, 10, 'Lost-Carrier', 'nas')`,
			fmt.Sprint("hs", i), uid, app.FormatTime(st), app.FormatTime(st), app.FormatTime(st.Add(10*time.Minute)), 100*(i+1))
	}
	s.Exec(`INSERT INTO radius_sessions(acct_session_id, user_id, username, start_time) VALUES ('live', ?, 'u-usage', ?)`, uid, app.StampNow())
	day := now.Truncate(24 * time.Hour)
	s.Exec(`INSERT INTO usage_rollups(user_id, grain, bucket, input_octets, output_octets, seconds, sessions) VALUES (?, 'd', ?, 1500, 50, 3000, 5)`,
		uid, day.Unix())

	// The cursor walk: 2 + 2 + 1, newest first, meta as every list plus next_cursor.
	var ids []int64
	path := fmt.Sprintf("/users/%d/sessions?page_size=2", uid)
	for page := 1; ; page++ {
		r := s.Call("GET", path, rtok, nil)
		if r.Status != 200 {
			t.Fatalf("page %d: %d %s", page, r.Status, r.Body)
		}
		m := r.Meta()
		if m["total"] != float64(5) || m["page"] != float64(page) || m["page_size"] != float64(2) {
			t.Fatalf("meta %v", m)
		}
		for _, row := range r.List() {
			rm := row.(map[string]any)
			if rm["terminate_cause"] != "Lost-Carrier" || rm["close_reason"] != "nas" || rm["stop_time"] == nil {
				t.Fatalf("row %v", rm)
			}
		}
		ids = append(ids, suIDs(r)...)
		if m["has_next"] != true {
			if _, ok := m["next_cursor"]; ok {
				t.Fatalf("last page has a cursor: %v", m)
			}
			break
		}
		path = fmt.Sprintf("/users/%d/sessions?page_size=2&cursor=%s", uid, url.QueryEscape(m["next_cursor"].(string)))
	}
	if len(ids) != 5 || ids[0] < ids[4] {
		t.Fatalf("ids %v", ids)
	}
	webtest.ExpectErr(t, s.Call("GET", fmt.Sprintf("/users/%d/sessions?cursor=nonsense", uid), rtok, nil), 400, "ERR_VALIDATION", "invalid_cursor")

	r := s.Call("GET", fmt.Sprintf("/users/%d/usage?granularity=day&from=%s&to=%s", uid, day.AddDate(0, 0, -1).Format(time.DateOnly), day.Format(time.DateOnly)), rtok, nil)
	if r.Status != 200 || len(r.List()) != 2 || r.Meta()["has_next"] != false || r.Meta()["total"] != float64(2) {
		t.Fatalf("usage: %d %s", r.Status, r.Body)
	}
	if b := r.List()[1].(map[string]any); b["total_bytes"] != float64(1550) || b["sessions"] != float64(5) || b["bucket"] != app.FormatTime(day) {
		t.Fatalf("bucket %v", b)
	}
	if a := r.Meta()["aggregates"].(map[string]any); a["total_bytes"] != float64(1550) || a["seconds"] != float64(3000) {
		t.Fatalf("aggregates %v", a)
	}
	r = s.Call("GET", fmt.Sprintf("/users/%d/usage?granularity=fortnight", uid), rtok, nil)
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "invalid_enum")
	if r.Field() != "granularity" {
		t.Fatalf("field %q", r.Field())
	}
	r = s.Call("GET", fmt.Sprintf("/users/%d/usage?granularity=hour&from=2024-01-01&to=2024-06-01", uid), rtok, nil)
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "usage_range_too_long")

	// Authorization first: 403 without the permission, even for bad input.
	for _, p := range []string{"/users/%d/sessions", "/users/%d/usage?granularity=bogus"} {
		webtest.ExpectErr(t, s.Call("GET", fmt.Sprintf(p, uid), nope, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	}
	// Outside the caller's subtree answers exactly like a missing subscriber.
	for _, p := range []string{"/users/%d/sessions", "/users/%d/usage"} {
		out := s.Call("GET", fmt.Sprintf(p, uid), other, nil)
		missing := s.Call("GET", fmt.Sprintf(p, uid+1000), other, nil)
		webtest.ExpectErr(t, out, 404, "ERR_NOT_FOUND", "not_found")
		if noRequestID(out) != noRequestID(missing) {
			t.Fatalf("out of scope %s, missing %s", out.Body, missing.Body)
		}
	}
	// The users report sums the rollups over its period: whole days from the
	// daily rows, the edge hours from the hourly ones.
	s.Exec(`UPDATE users SET created_at = '2020-01-01 00:00:00', usage_hour = ?, usage_in = 3 WHERE id = ?`, day.Unix(), uid) // + the hour in progress
	s.Exec(`INSERT INTO usage_rollups(user_id, grain, bucket, input_octets) VALUES (?, 'h', ?, 7), (?, 'h', ?, 11), (?, 'd', ?, 100)`,
		uid, day.Add(-22*time.Hour).Unix(), uid, day.Add(-2*time.Hour).Unix(), uid, day.AddDate(0, 0, -1).Unix())
	for _, c := range []struct {
		from, to string
		want     float64
	}{
		{day.AddDate(0, 0, -1).Format(time.DateOnly), day.AddDate(0, 0, -1).Format(time.DateOnly), 100},                              // the daily row
		{app.FormatTime(day.Add(-23 * time.Hour)), app.FormatTime(day.Add(-3 * time.Hour)), 7},                                       // hours only
		{app.FormatTime(day.Add(-2*time.Hour + 30*time.Minute)), app.FormatTime(day.Add(24*time.Hour - time.Second)), 11 + 1550 + 3}, // edge hour + a day
		{day.AddDate(0, 0, -1).Format(time.DateOnly), app.FormatTime(day.Add(24*time.Hour - time.Second)), 100 + 1550 + 3},           // two days
	} {
		r := s.Call("GET", "/admin/reports/users?filter[from]="+url.QueryEscape(c.from)+"&filter[to]="+url.QueryEscape(c.to), s.Tok, nil)
		if r.Status != 200 || r.Meta()["aggregates"].(map[string]any)["total_bytes"] != c.want {
			t.Fatalf("users report %s..%s: %d %s", c.from, c.to, r.Status, r.Body)
		}
	}
	// The owner sees it too.
	if r := s.Call("GET", fmt.Sprintf("/users/%d/sessions", uid), s.Tok, nil); r.Status != 200 || len(r.List()) != 5 {
		t.Fatalf("owner: %d %s", r.Status, r.Body)
	}
	_ = resID
}

// noRequestID is an error body without its per-request id.
func noRequestID(r webtest.Resp) string {
	e, _ := r.JSON["error"].(map[string]any)
	delete(e, "request_id")
	b, _ := json.Marshal(r.JSON)
	return string(b)
}
