package aaa_test

import (
	"bytes"
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/xrtest"
	"xr/radiusd"
)

// ago is a database timestamp d before now.
func ago(d time.Duration) string { return app.FormatTime(time.Now().Add(-d)) }

func (r *rig) setting(key, value string) {
	r.exec(`INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
}

// touch sets when a session was last heard from.
func (r *rig) touch(sid string, d time.Duration) {
	r.exec(`UPDATE radius_sessions SET update_time = ? WHERE acct_session_id = ?`, ago(d), sid)
}

func (r *rig) sweep() aaa.SweepResult {
	r.t.Helper()
	res, err := r.svc.Sweep(context.Background(), "isp")
	if err != nil {
		r.t.Fatalf("sweep: %v", err)
	}
	return res
}

// truth reads a session's truth columns.
type truthRow struct {
	open                            bool
	closeReason, stopCause, outcome string
	interval                        int64
	zombie, overLimit, unconfirmed  bool
	disconnectKind, terminateCause  string
	disconnectAt                    sql.NullString
}

func (r *rig) truth(sid string) truthRow {
	r.t.Helper()
	var tr truthRow
	var stop sql.NullString
	err := r.ten.DB.R.QueryRow(`SELECT stop_time, close_reason, stop_cause, disconnect_outcome, interim_interval, zombie, over_limit,
		disconnect_unconfirmed, disconnect_kind, terminate_cause, disconnect_at FROM radius_sessions WHERE acct_session_id = ? ORDER BY id DESC LIMIT 1`, sid).
		Scan(&stop, &tr.closeReason, &tr.stopCause, &tr.outcome, &tr.interval, &tr.zombie, &tr.overLimit, &tr.unconfirmed,
			&tr.disconnectKind, &tr.terminateCause, &tr.disconnectAt)
	if err != nil {
		r.t.Fatalf("session %s: %v", sid, err)
	}
	tr.open = !stop.Valid
	return tr
}

// stop sends an Accounting-Stop with an Acct-Terminate-Cause (0 = none).
func (r *rig) stop(user, sid string, cause rfc2866.AcctTerminateCause) {
	r.t.Helper()
	p := radius.New(radius.CodeAccountingRequest, []byte(secret))
	rfc2866.AcctStatusType_Set(p, rfc2866.AcctStatusType_Value_Stop)
	rfc2865.UserName_SetString(p, user)
	rfc2866.AcctSessionID_SetString(p, sid)
	rfc2866.AcctSessionTime_Set(p, 10)
	if cause != 0 {
		rfc2866.AcctTerminateCause_Set(p, cause)
	}
	if resp := r.send(p, r.acctAddr); resp.Code != radius.CodeAccountingResponse {
		r.t.Fatalf("stop %s: %v", sid, resp.Code)
	}
}

func TestStaleSweepUsesTheSessionsOwnInterval(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.subscribe("session.ended")
	r.user("sam", "pw", r.fupPlan, nil)
	r.user("tom", "pw", r.fupPlan, nil)
	// No interim seen: the tenant's interval (300 s) × 250 % = 750 s.
	r.acct(rfc2866.AcctStatusType_Value_Start, "sam", "a1", 0, 0, 0)
	r.touch("a1", 700*time.Second)
	if res := r.sweep(); res.Stale != 0 || !r.truth("a1").open {
		t.Fatalf("closed before 750 s: %+v", res)
	}
	r.touch("a1", 800*time.Second)
	if res := r.sweep(); res.Stale != 1 {
		t.Fatalf("not closed after 800 s: %+v", res)
	}
	if tr := r.truth("a1"); tr.open || tr.closeReason != "stale" || tr.stopCause != "stale" || tr.terminateCause != "Stale-Session" {
		t.Fatalf("stale close: %+v", tr)
	}
	if r.events("session.ended") != 1 {
		t.Fatalf("session.ended events: %d", r.events("session.ended"))
	}

	// A NAS that reports every 600 s: the session's own interval is 600,
	// so it is stale after 1500 s, not 750 s.
	r.acct(rfc2866.AcctStatusType_Value_Start, "tom", "b1", 0, 0, 0)
	r.touch("b1", 600*time.Second)
	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "tom", "b1", 100, 100, 600)
	if iv := r.truth("b1").interval; iv < 598 || iv > 605 {
		t.Fatalf("observed interval %d, want about 600", iv)
	}
	// An extra update seconds later (new information) is no period.
	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "tom", "b1", 200, 100, 602)
	if iv := r.truth("b1").interval; iv < 598 {
		t.Fatalf("a short gap shrank the interval to %d", iv)
	}
	r.touch("b1", 1400*time.Second)
	if res := r.sweep(); res.Stale != 0 {
		t.Fatalf("closed at 1400 s of a 600 s interval: %+v", res)
	}
	r.touch("b1", 1600*time.Second)
	if res := r.sweep(); res.Stale != 1 || r.truth("b1").open {
		t.Fatalf("not closed at 1600 s: %+v", res)
	}

	// The tenant's multiplier and floor.
	r.setting("radius_stale_multiplier_pct", "400") // 300 s × 4 = 1200 s
	r.acct(rfc2866.AcctStatusType_Value_Start, "sam", "c1", 0, 0, 0)
	r.touch("c1", 1000*time.Second)
	if res := r.sweep(); res.Stale != 0 {
		t.Fatalf("multiplier 400 %%: closed at 1000 s: %+v", res)
	}
	r.setting("radius_stale_multiplier_pct", "100")
	r.setting("radius_stale_floor_seconds", "1100") // the floor wins over 300 s
	if res := r.sweep(); res.Stale != 0 {
		t.Fatalf("floor 1100 s: closed at 1000 s: %+v", res)
	}
	r.setting("radius_stale_floor_seconds", "900")
	if res := r.sweep(); res.Stale != 1 {
		t.Fatalf("floor 900 s: not closed at 1000 s: %+v", res)
	}
	// Swept sessions no longer count for simultaneous use.
	if resp := r.accessRequest("sam", "pw", ""); resp.Code != radius.CodeAccessAccept {
		t.Fatalf("after the sweep: %v", resp.Code)
	}
}

func TestStopCauseRecorded(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.user("ann", "pw", r.fupPlan, nil)
	cases := map[string]struct {
		cause rfc2866.AcctTerminateCause
		want  string
	}{
		"u1": {rfc2866.AcctTerminateCause_Value_UserRequest, "user_request"},
		"u2": {rfc2866.AcctTerminateCause_Value_AdminReset, "admin_disconnect"},
		"u3": {rfc2866.AcctTerminateCause_Value_IdleTimeout, "idle_timeout"},
		"u4": {rfc2866.AcctTerminateCause_Value_NASReboot, "nas_reboot"},
		"u5": {rfc2866.AcctTerminateCause_Value_LostCarrier, "lost_carrier"},
		"u6": {0, "unknown"},
	}
	for sid, c := range cases {
		r.acct(rfc2866.AcctStatusType_Value_Start, "ann", sid, 0, 0, 0)
		r.stop("ann", sid, c.cause)
		if tr := r.truth(sid); tr.open || tr.stopCause != c.want || tr.closeReason != "nas" {
			t.Errorf("%s: %+v, want stop_cause %s", sid, tr, c.want)
		}
	}
	// Accounting-On: the NAS rebooted.
	r.acct(rfc2866.AcctStatusType_Value_Start, "ann", "u7", 0, 0, 0)
	r.acct(rfc2866.AcctStatusType_Value_AccountingOn, "", "", 0, 0, 0)
	if tr := r.truth("u7"); tr.open || tr.stopCause != "nas_reboot" || tr.closeReason != "nas_reboot" {
		t.Fatalf("accounting-on: %+v", tr)
	}
}

func TestZombieSessionsFlaggedAndDisconnected(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	past := ago(time.Hour)
	r.user("fine", "pw", r.planID, nil)
	r.user("off", "pw", r.planID, nil)
	r.user("gone", "pw", r.planID, nil)
	r.user("late", "pw", r.planID, map[string]any{"expiration": past})
	r.user("parked", "pw", r.poolPlan, map[string]any{"expiration": past})
	r.user("full", "pw", r.planID, map[string]any{"bytes_limit": 1000, "used_bytes": 1000})
	r.user("slowed", "pw", r.fupPlan, map[string]any{"bytes_limit": 1000, "used_bytes": 1000})
	r.user("timed", "pw", r.planID, map[string]any{"seconds_limit": 60, "used_seconds": 60})
	for _, u := range []string{"fine", "off", "gone", "late", "parked", "full", "slowed", "timed"} {
		r.acct(rfc2866.AcctStatusType_Value_Start, u, "z-"+u, 0, 0, 0)
	}
	r.exec(`UPDATE users SET enabled = 0 WHERE username = 'off'`)
	r.exec(`UPDATE users SET deleted_at = ? WHERE username = 'gone'`, app.StampNow())
	zombies := map[string]bool{"off": true, "gone": true, "late": true, "full": true, "timed": true}

	// Flagged, but not disconnected: the tenant setting is off by default.
	if res := r.sweep(); res.Zombie != len(zombies) || res.Disconnected != 0 {
		t.Fatalf("sweep: %+v", res)
	}
	for _, u := range []string{"fine", "off", "gone", "late", "parked", "full", "slowed", "timed"} {
		if tr := r.truth("z-" + u); tr.zombie != zombies[u] || !tr.open || tr.outcome != "" {
			t.Errorf("%s: %+v, want zombie %v", u, tr, zombies[u])
		}
	}
	select {
	case <-r.coaSeen:
		t.Fatal("a Disconnect-Request was sent with radius_zombie_disconnect off")
	default:
	}
	// A flag follows the truth while the session is open.
	r.exec(`UPDATE users SET enabled = 1 WHERE username = 'off'`)
	delete(zombies, "off")
	if res := r.sweep(); res.Zombie != 0 || r.truth("z-off").zombie {
		t.Fatalf("re-enabled subscriber still a zombie: %+v", res)
	}

	// With the setting on, each zombie gets one Disconnect-Request.
	r.setting("radius_zombie_disconnect", "1")
	if res := r.sweep(); res.Disconnected != len(zombies) {
		t.Fatalf("sweep with disconnect: %+v", res)
	}
	for range zombies {
		select {
		case b := <-r.coaSeen:
			if b[0] != byte(radius.CodeDisconnectRequest) {
				t.Fatalf("code %d", b[0])
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a zombie got no Disconnect-Request")
		}
	}
	for u := range zombies {
		if tr := r.truth("z-" + u); tr.outcome != "ok" || tr.disconnectKind != "disconnect" {
			t.Errorf("%s: outcome %+v", u, tr)
		}
	}
	if res := r.sweep(); res.Disconnected != 0 {
		t.Fatalf("an answered zombie was disconnected again: %+v", res)
	}
	// The NAS ends one: the Stop confirms the disconnect; the flag stays on
	// the record.
	r.stop("late", "z-late", rfc2866.AcctTerminateCause_Value_AdminReset)
	if tr := r.truth("z-late"); tr.open || !tr.zombie || tr.closeReason != "disconnect_confirmed" || tr.stopCause != "admin_disconnect" {
		t.Fatalf("stopped zombie: %+v", tr)
	}
}

func TestOverLimitFlagged(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.user("one", "pw", r.planID, nil)  // simultaneous use 1
	r.user("two", "pw", r.fupPlan, nil) // simultaneous use 2
	r.acct(rfc2866.AcctStatusType_Value_Start, "one", "o1", 0, 0, 0)
	r.acct(rfc2866.AcctStatusType_Value_Start, "one", "o2", 0, 0, 0)
	r.acct(rfc2866.AcctStatusType_Value_Start, "two", "t1", 0, 0, 0)
	r.acct(rfc2866.AcctStatusType_Value_Start, "two", "t2", 0, 0, 0)
	r.touch("o1", 5*time.Minute) // o1's Stop was lost: heard from least recently
	if res := r.sweep(); res.OverLimit != 1 {
		t.Fatalf("sweep: %+v", res)
	}
	if !r.truth("o1").overLimit || r.truth("o2").overLimit || r.truth("t1").overLimit || r.truth("t2").overLimit {
		t.Fatalf("flags: o1 %+v o2 %+v t1 %+v t2 %+v", r.truth("o1"), r.truth("o2"), r.truth("t1"), r.truth("t2"))
	}
	// The plan allows more: the flag clears.
	r.exec(`UPDATE profiles SET simultaneous_use = 2 WHERE id = ?`, r.planID)
	if r.sweep(); r.truth("o1").overLimit {
		t.Fatal("flag kept under a raised limit")
	}
	r.exec(`UPDATE profiles SET simultaneous_use = 1 WHERE id = ?`, r.planID)
	r.sweep()
	r.stop("one", "o1", rfc2866.AcctTerminateCause_Value_LostCarrier)
	if r.sweep(); !r.truth("o1").overLimit || r.truth("o2").overLimit {
		t.Fatalf("after o1's stop: o1 %+v o2 %+v", r.truth("o1"), r.truth("o2"))
	}
}

func unconfirmedMetric(t *testing.T, svc *aaa.Service) string {
	t.Helper()
	var buf bytes.Buffer
	m := radiusd.NewMetrics()
	m.SessionTruth = svc.DisconnectsUnconfirmed
	m.WritePrometheus(&buf)
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(line, `radius_disconnect_unconfirmed_total{tenant="isp"} `) {
			return strings.TrimPrefix(line, `radius_disconnect_unconfirmed_total{tenant="isp"} `)
		}
	}
	return "0"
}

func TestDisconnectUnconfirmed(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.user("zed", "pw", r.planID, map[string]any{"bytes_limit": 1000})
	r.user("fay", "pw", r.fupPlan, map[string]any{"bytes_limit": 1000})
	r.user("kit", "pw", r.fupPlan, nil)
	// A quota cut the NAS ACKs.
	r.acct(rfc2866.AcctStatusType_Value_Start, "zed", "q1", 0, 0, 0)
	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "zed", "q1", 900, 200, 30)
	// A FUP rate change: no Stop is expected after it.
	r.acct(rfc2866.AcctStatusType_Value_Start, "fay", "f1", 0, 0, 0)
	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "fay", "f1", 900, 200, 30)
	xrtest.Eventually(t, "q1 and f1 judged ok", func() bool {
		return r.truth("q1").outcome == "ok" && r.truth("f1").outcome == "ok"
	})
	if tr := r.truth("f1"); tr.disconnectKind != "rate" {
		t.Fatalf("fup coa kind: %+v", tr)
	}
	before := unconfirmedMetric(t, r.svc)
	// Within two intervals (600 s): nothing yet.
	r.exec(`UPDATE radius_sessions SET disconnect_at = ? WHERE acct_session_id IN ('q1', 'f1')`, ago(500*time.Second))
	if res := r.sweep(); res.Unconfirmed != 0 {
		t.Fatalf("flagged within two intervals: %+v", res)
	}
	r.exec(`UPDATE radius_sessions SET disconnect_at = ? WHERE acct_session_id IN ('q1', 'f1')`, ago(700*time.Second))
	if res := r.sweep(); res.Unconfirmed != 1 {
		t.Fatalf("sweep: %+v", res)
	}
	if !r.truth("q1").unconfirmed || r.truth("f1").unconfirmed {
		t.Fatalf("flags: q1 %+v f1 %+v", r.truth("q1"), r.truth("f1"))
	}
	if got := unconfirmedMetric(t, r.svc); got == before {
		t.Fatalf("radius_disconnect_unconfirmed_total stayed %s", got)
	}
	if res := r.sweep(); res.Unconfirmed != 0 {
		t.Fatalf("counted twice: %+v", res)
	}
	// The late Stop closes it; the flag stays.
	r.stop("zed", "q1", rfc2866.AcctTerminateCause_Value_AdminReset)
	if tr := r.truth("q1"); tr.open || !tr.unconfirmed || tr.closeReason != "disconnect_confirmed" {
		t.Fatalf("after the late stop: %+v", tr)
	}
	// An operator's ACKed disconnect whose session goes silent is flagged
	// when the sweep closes it as stale, even before two intervals.
	r.acct(rfc2866.AcctStatusType_Value_Start, "kit", "k1", 0, 0, 0)
	if n, err := r.svc.DisconnectUser(context.Background(), r.ten, r.userID("kit")); err != nil || n != 1 {
		t.Fatalf("disconnect: %d %v", n, err)
	}
	r.touch("k1", time.Hour)
	if res := r.sweep(); res.Unconfirmed != 1 || res.Stale != 1 {
		t.Fatalf("stale with a pending disconnect: %+v", res)
	}
	if tr := r.truth("k1"); tr.open || !tr.unconfirmed || tr.stopCause != "stale" {
		t.Fatalf("k1: %+v", tr)
	}
}

func (r *rig) userID(name string) int64 {
	var id int64
	if err := r.ten.DB.R.QueryRow(`SELECT id FROM users WHERE username = ?`, name).Scan(&id); err != nil {
		r.t.Fatal(err)
	}
	return id
}
