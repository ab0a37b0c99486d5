package aaa_test

import (
	"context"
	"testing"

	"layeh.com/radius/rfc2866"

	"xr/app/webhooks"
)

// session plays Start, Interim and Stop of one session.
func (r *rig) session3(user, sid string) {
	r.t.Helper()
	r.acct(rfc2866.AcctStatusType_Value_Start, user, sid, 0, 0, 0)
	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, user, sid, 100, 200, 60)
	r.acct(rfc2866.AcctStatusType_Value_Stop, user, sid, 300, 400, 120)
}

func (r *rig) outbox() map[string]int {
	r.t.Helper()
	rows, err := r.ten.DB.R.Query(`SELECT type, COUNT(*) FROM events GROUP BY type`)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var typ string
		var n int
		if err := rows.Scan(&typ, &n); err != nil {
			r.t.Fatal(err)
		}
		out[typ] = n
	}
	return out
}

// Session events cost nothing while no endpoint wants them; once one does,
// the very next change writes them (read in the accounting transaction),
// one row per change whatever number of keys it carries, and the
// dispatcher delivers each key to the endpoints that want it.
func TestSessionEventsWrittenOnlyWhenWanted(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.user("ann", "pw", r.planID, map[string]any{"bytes_limit": 1000})
	r.session3("ann", "e1")
	if got := r.outbox(); len(got) != 0 {
		t.Fatalf("no endpoint, yet outbox rows %v", got)
	}
	if open, in, out, charged, _ := r.session("e1"); open || in != 300 || out != 400 || charged != 700 {
		t.Fatalf("session not recorded: open=%v in=%d out=%d charged=%d", open, in, out, charged)
	}

	// A disabled endpoint wants nothing.
	off := r.subscribe("session.started", "session.ended")
	r.exec(`UPDATE webhook_endpoints SET enabled = 0 WHERE id = ?`, off)
	r.session3("ann", "e2")
	if got := r.outbox(); len(got) != 0 {
		t.Fatalf("disabled endpoint, yet outbox rows %v", got)
	}

	ended := r.subscribe("session.ended")
	r.session3("ann", "e3")
	if got := r.outbox(); len(got) != 1 || got["session.ended"] != 1 {
		t.Fatalf("want one session.ended row, got %v", got)
	}

	disc := r.subscribe("user.disconnected")
	r.session3("ann", "e4")
	if got := r.outbox(); len(got) != 2 || got["session.ended,user.disconnected"] != 1 {
		t.Fatalf("want one row for the end of e4 under both keys, got %v", got)
	}

	if _, err := webhooks.DispatchTenant(context.Background(), r.ten); err != nil {
		t.Fatal(err)
	}
	rows, err := r.ten.DB.R.Query(`SELECT endpoint_id, event_type, event_id FROM webhook_deliveries ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type delivery struct {
		ep       int64
		typ, eid string
	}
	var got []delivery
	for rows.Next() {
		var d delivery
		if err := rows.Scan(&d.ep, &d.typ, &d.eid); err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	// e3 to the session.ended endpoint; e4 to both, under its two keys.
	if len(got) != 3 || got[0].ep != ended || got[0].typ != "session.ended" ||
		got[1].ep != ended || got[1].typ != "session.ended" || got[2].ep != disc || got[2].typ != "user.disconnected" {
		t.Fatalf("deliveries %+v", got)
	}
	if got[1].eid == got[2].eid || got[0].eid == got[1].eid {
		t.Fatalf("one event id for two deliveries: %+v", got)
	}
	var rowID string
	r.ten.DB.R.QueryRow(`SELECT event_id FROM events WHERE type = 'session.ended,user.disconnected'`).Scan(&rowID)
	if got[1].eid != rowID {
		t.Fatalf("first key's delivery carries %s, the row is %s", got[1].eid, rowID)
	}
}
