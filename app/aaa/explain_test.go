package aaa_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/xrtest"
)

// decisions waits until the auth log holds n rows (a decision is queued
// right after its answer is sent) and flushes it.
func (r *rig) decisions(n int) {
	r.t.Helper()
	xrtest.Eventually(r.t, fmt.Sprintf("%d rows in the auth log", n), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := r.svc.FlushAuthLog(ctx)
		cancel()
		if err != nil {
			r.t.Fatal(err)
		}
		return xrtest.Scalar(r.t, r.ten, `SELECT COUNT(*) FROM auth_log`) >= int64(n)
	})
}

// lastDecision reads the newest auth log row once there are n rows.
func (r *rig) lastDecision(n int) (result, reason string, userID sql.NullInt64, latency int64) {
	r.t.Helper()
	r.decisions(n)
	err := r.ten.DB.R.QueryRow(`SELECT result, reason, user_id, latency_us FROM auth_log ORDER BY id DESC LIMIT 1`).Scan(&result, &reason, &userID, &latency)
	if err != nil {
		r.t.Fatalf("auth log: %v", err)
	}
	return
}

func (r *rig) explain(user string, password *string, mac string) *aaa.Explanation {
	r.t.Helper()
	act, err := app.SystemActor(context.Background(), r.ten)
	if err != nil {
		r.t.Fatal(err)
	}
	n, ok := r.svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	if !ok {
		r.t.Fatal("no NAS")
	}
	ex, err := r.svc.Explain(context.Background(), act, aaa.ExplainInput{Username: user, NASID: n.ID, Password: password, CallingStationID: mac})
	if err != nil {
		r.t.Fatalf("explain %s: %v", user, err)
	}
	return ex
}

func check(ex *aaa.Explanation, name string) aaa.Check {
	for _, c := range ex.Checks {
		if c.Name == name {
			return c
		}
	}
	return aaa.Check{}
}

// TestExplainParity: for every reason the server can give an
// Access-Request, the explainer (same policy code, no effects) gives the
// same one, and the auth log records it.
func TestExplainParity(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	past := app.FormatTime(time.Now().Add(-time.Hour))
	off := r.exec(`INSERT INTO profiles(name, price, duration_days, simultaneous_use, enabled, created_at, updated_at) VALUES ('Off', 1, 30, 1, 0, ?, ?)`,
		app.StampNow(), app.StampNow())
	r.user("alice", "alice-pw", r.planID, map[string]any{"static_ip": "10.9.8.7"})
	r.user("bob", "bob-pw", r.planID, map[string]any{"enabled": 0})
	r.user("carol", "carol-pw", r.planID, map[string]any{"expiration": past})
	r.user("dave", "dave-pw", r.planID, map[string]any{"expiration": nil})
	r.user("erin", "erin-pw", r.planID, map[string]any{"bytes_limit": 1000, "used_bytes": 1000})
	r.user("frank", "frank-pw", r.fupPlan, map[string]any{"bytes_limit": 1000, "used_bytes": 5000})
	r.user("gina", "gina-pw", r.planID, map[string]any{"mac_lock_enabled": 1, "mac_locked_addrs": `["AA:BB:CC:DD:EE:FF"]`})
	r.user("hank", "hank-pw", r.poolPlan, map[string]any{"expiration": past})
	r.user("ivy", "ivy-pw", r.planID, map[string]any{"seconds_limit": 100, "used_seconds": 100})
	r.user("jack", "jack-pw", r.planID, map[string]any{"deleted_at": app.StampNow()})
	r.user("kate", "kate-pw", r.planID, nil)
	r.user("liam", "liam-pw", off, nil)
	r.acct(rfc2866.AcctStatusType_Value_Start, "kate", "k1", 0, 0, 0) // kate is online: a second login is over the limit

	pw := func(s string) *string { return &s }
	cases := []struct {
		user, password, mac, want string
	}{
		{"alice", "alice-pw", "", ""},
		{"alice", "wrong", "", aaa.ReasonBadPassword},
		{"nobody", "x", "", aaa.ReasonUnknownUser},
		{"bob", "bob-pw", "", "disabled"},
		{"bob", "nope", "", aaa.ReasonBadPassword}, // the password is checked before the account
		{"carol", "carol-pw", "", "expired"},
		{"dave", "dave-pw", "", "not_activated"},
		{"erin", "erin-pw", "", "quota_exhausted"},
		{"frank", "frank-pw", "", ""}, // FUP rate instead of a refusal
		{"gina", "gina-pw", "11-22-33-44-55-66", "mac_not_allowed"},
		{"gina", "gina-pw", "aabb.ccdd.eeff", ""},
		{"hank", "hank-pw", "", ""}, // the expired pool instead of a refusal
		{"ivy", "ivy-pw", "", "time_exhausted"},
		// A deleted subscriber is not in the index: the server answers it as
		// an unknown username, and so does the explainer.
		{"jack", "jack-pw", "", aaa.ReasonUnknownUser},
		{"kate", "kate-pw", "", "simultaneous_use"},
		{"liam", "liam-pw", "", "plan_disabled"},
	}
	for i, c := range cases {
		resp := r.accessRequest(c.user, c.password, c.mac)
		result, reason, uid, latency := r.lastDecision(i + 1)
		wantResult, wantCode := "accept", radius.CodeAccessAccept
		if c.want != "" {
			wantResult, wantCode = "reject", radius.CodeAccessReject
		}
		if resp.Code != wantCode || result != wantResult || reason != c.want {
			t.Fatalf("%s/%s: server %v, logged %s/%q, want %s/%q", c.user, c.password, resp.Code, result, reason, wantResult, c.want)
		}
		if uid.Valid == (c.want == aaa.ReasonUnknownUser) || latency <= 0 {
			t.Fatalf("%s: logged user_id %v latency %d", c.user, uid, latency)
		}
		ex := r.explain(c.user, pw(c.password), c.mac)
		if ex.Result != wantResult || ex.Reason != c.want {
			t.Fatalf("%s/%s: explainer says %s/%q, server %s/%q (checks %+v)", c.user, c.password, ex.Result, ex.Reason, result, reason, ex.Checks)
		}
		// The decisive check is the first failure and carries the reason.
		for _, ch := range ex.Checks {
			if ch.Outcome == aaa.OutcomeFail {
				if ch.Reason != c.want {
					t.Fatalf("%s: first failing check %+v, want reason %q", c.user, ch, c.want)
				}
				break
			}
		}
	}

	// The accept attributes are the ones the NAS receives.
	ex := r.explain("alice", nil, "")
	if check(ex, "password").Outcome != aaa.OutcomeSkip || ex.Result != "accept" || ex.NASType != "mikrotik" {
		t.Fatalf("alice without password: %+v", ex)
	}
	want := map[string]string{"Framed-IP-Address": "10.9.8.7", "Acct-Interim-Interval": "300", "Mikrotik-Rate-Limit": "2048k/10240k"}
	got := map[string]string{}
	for _, a := range ex.Attributes {
		got[a.Name] = a.Value
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("attribute %s = %q, want %q (all %+v)", k, got[k], v, ex.Attributes)
		}
	}
	resp := r.accessRequest("alice", "alice-pw", "") // decision len(cases)+1
	if rfc2865.FramedIPAddress_Get(resp).String() != got["Framed-IP-Address"] || !hasVendorAttr(resp, 14988, 8, got["Mikrotik-Rate-Limit"]) {
		t.Fatalf("the server's Access-Accept differs from the explained one")
	}
	if got["Class"] != string(rfc2865.Class_Get(resp)) {
		t.Fatalf("class %q vs %q", got["Class"], rfc2865.Class_Get(resp))
	}
	if c := check(r.explain("frank", nil, ""), "fup"); c.Outcome != aaa.OutcomeAdjusted {
		t.Fatalf("frank's fup check: %+v", c)
	}
	if ex := r.explain("bob", pw("bob-pw"), ""); len(ex.Attributes) < 2 || ex.Attributes[1].Name != "Reply-Message" || ex.Attributes[1].Value != "Your account is suspended." {
		t.Fatalf("bob's reject attributes: %+v", ex.Attributes)
	}
	if ex := r.explain("jack", nil, ""); check(ex, "exists").Detail == "no subscriber has this username" {
		t.Fatalf("a deleted subscriber's explanation says nothing of it: %+v", ex.Checks)
	}

	// Last: a blocked licence refuses everyone, on both sides.
	blocked := true
	if _, err := r.a.UpdateTenant(context.Background(), "isp", app.TenantUpdate{Blocked: &blocked}); err != nil {
		t.Fatal(err)
	}
	sent := len(cases) + 1
	xrtest.Eventually(t, "alice rejected", func() bool { sent++; return r.accessRequest("alice", "alice-pw", "").Code == radius.CodeAccessReject })
	if _, reason, _, _ := r.lastDecision(sent); reason != "tenant_locked" {
		t.Fatalf("blocked tenant logged %q", reason)
	}
	if ex := r.explain("alice", pw("alice-pw"), ""); ex.Reason != "tenant_locked" {
		t.Fatalf("blocked tenant explained as %q", ex.Reason)
	}
}

// TestReplaceStaleSession: a login over the simultaneous-use limit
// replaces the subscriber's stale session (a lost Stop) on real UDP: the
// session is closed as replaced, the NAS gets a Disconnect-Request for it,
// and the login is accepted. A fresh session, a wrong password or the
// setting off keep the refusal.
func TestReplaceStaleSession(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.subscribe("session.ended")
	r.user("sam", "pw", r.planID, nil)
	r.acct(rfc2866.AcctStatusType_Value_Start, "sam", "old1", 0, 0, 0)

	// Fresh: refused.
	expectReject(t, r.accessRequest("sam", "pw", ""), "already connected")

	// Unheard of for 20 min (2.5 × the 300 s interim interval is 750 s).
	stale := app.FormatTime(time.Now().Add(-20 * time.Minute))
	r.exec(`UPDATE radius_sessions SET update_time = ? WHERE acct_session_id = 'old1'`, stale)
	var rowID int64
	r.ten.DB.R.QueryRow(`SELECT id FROM radius_sessions WHERE acct_session_id = 'old1'`).Scan(&rowID)

	// The explainer previews the replacement and changes nothing.
	ex := r.explain("sam", nil, "")
	if ex.Result != "accept" || len(ex.ReplacesSessions) != 1 || ex.ReplacesSessions[0] != rowID || check(ex, "simultaneous_use").Outcome != aaa.OutcomeAdjusted {
		t.Fatalf("explain: %+v", ex)
	}
	if open, _, _, _, _ := r.session("old1"); !open {
		t.Fatal("the explainer closed the session")
	}

	// A wrong password replaces nothing.
	expectReject(t, r.accessRequest("sam", "nope", ""), "")
	if open, _, _, _, _ := r.session("old1"); !open {
		t.Fatal("a login with a wrong password replaced a session")
	}

	if resp := r.accessRequest("sam", "pw", ""); resp.Code != radius.CodeAccessAccept {
		t.Fatalf("login over a stale session: %v %q", resp.Code, rfc2865.ReplyMessage_GetString(resp))
	}
	if result, reason, _, _ := r.lastDecision(3); result != "accept" || reason != "" {
		t.Fatalf("logged %s/%q", result, reason)
	}
	var reason, cause string
	var stop sql.NullString
	r.ten.DB.R.QueryRow(`SELECT close_reason, terminate_cause, stop_time FROM radius_sessions WHERE id = ?`, rowID).Scan(&reason, &cause, &stop)
	if reason != "replaced" || !stop.Valid {
		t.Fatalf("replaced session: close_reason %q stop %v", reason, stop)
	}
	if r.events("session.ended") != 1 {
		t.Fatalf("session.ended events: %d", r.events("session.ended"))
	}
	select {
	case b := <-r.coaSeen:
		p, err := radius.Parse(b, []byte(secret))
		if err != nil || p.Code != radius.CodeDisconnectRequest || rfc2866.AcctSessionID_GetString(p) != "old1" {
			t.Fatalf("the NAS got %v for session %q (%v)", p.Code, rfc2866.AcctSessionID_GetString(p), err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no Disconnect-Request for the replaced session")
	}
	xrtest.Eventually(t, "disconnect outcome ok", func() bool {
		var outcome string
		r.ten.DB.R.QueryRow(`SELECT disconnect_outcome FROM radius_sessions WHERE id = ?`, rowID).Scan(&outcome)
		return outcome == "ok"
	})

	// The new session opens; once it is stale too, with the setting off the
	// next login is refused and nothing is closed.
	r.acct(rfc2866.AcctStatusType_Value_Start, "sam", "new1", 0, 0, 0)
	r.exec(`UPDATE radius_sessions SET update_time = ? WHERE acct_session_id = 'new1'`, stale)
	r.exec(`INSERT INTO settings(key, value) VALUES ('radius_replace_stale_session', 'false')
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`)
	expectReject(t, r.accessRequest("sam", "pw", ""), "already connected")
	if _, reason, _, _ := r.lastDecision(4); reason != "simultaneous_use" {
		t.Fatalf("logged %q", reason)
	}
	if open, _, _, _, _ := r.session("new1"); !open {
		t.Fatal("setting off, yet the session was replaced")
	}
	if ex := r.explain("sam", nil, ""); ex.Reason != "simultaneous_use" || len(ex.ReplacesSessions) != 0 {
		t.Fatalf("explain with the setting off: %+v", ex)
	}
}

// TestExplainMethod: the method decides whether a password imported
// hashed can be checked (PAP only, also inside TTLS), and what the answer
// carries (EAP-Message with the EAP methods).
func TestExplainMethod(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.user("plain", "secret-pw", r.planID, nil)
	r.user("hashed", aaa.LegacyHashPrefix+"md5:5ebe2294ecd0e0f08eab7690d2a6ee69", r.planID, nil)
	act := xrtest.System(t, r.ten)
	n, ok := r.svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	if !ok {
		t.Fatal("no NAS in the directory")
	}
	for _, tc := range []struct {
		user, method, result, reason, eap string
	}{
		{"plain", "", "accept", "", ""},
		{"plain", "eap-peap/mschapv2", "accept", "", "EAP-Success"},
		{"hashed", "eap-ttls/pap", "accept", "", "EAP-Success"},
		{"hashed", "eap-peap/mschapv2", "reject", aaa.ReasonPasswordReset, "EAP-Failure"},
		{"hashed", "mschapv2", "reject", aaa.ReasonPasswordReset, ""},
	} {
		ex, err := r.svc.Explain(context.Background(), act, aaa.ExplainInput{Username: tc.user, NASID: n.ID, Method: aaa.AuthMethod(tc.method)})
		if err != nil {
			t.Fatal(err)
		}
		want := tc.method
		if want == "" {
			want = "pap"
		}
		if ex.Method != want || ex.Result != tc.result || ex.Reason != tc.reason {
			t.Errorf("%s %s: %s %s %q", tc.user, want, ex.Method, ex.Result, ex.Reason)
		}
		switch c := check(ex, "method"); {
		case tc.method == "" && c.Name != "":
			t.Errorf("%s: a method check without a method asked: %+v", tc.user, c)
		case tc.method != "" && (c.Detail == "" || (tc.reason != "") != (c.Outcome == aaa.OutcomeFail)):
			t.Errorf("%s %s: method check %+v", tc.user, want, c)
		}
		eap := ""
		for _, a := range ex.Attributes {
			if a.Name == "EAP-Message" {
				eap = a.Value
			}
		}
		if eap != tc.eap {
			t.Errorf("%s %s: EAP-Message %q, want %q", tc.user, want, eap, tc.eap)
		}
	}
	var m aaa.AuthMethod
	if err := m.UnmarshalJSON([]byte(`"eap-leap"`)); err == nil {
		t.Error("an unknown method was accepted")
	}
}
