package aaa_test

import (
	"context"
	"net/netip"
	"testing"

	"xr/app/aaa"
)

// A promoted standby's journal is applied through the primary's
// accounting path, once: a record the primary had already committed
// charges nothing, the growth beyond it is charged, and applying again
// (a retry after a crash) changes nothing, not even by replaying a NAS
// restart that would close the sessions started after it.
func TestApplyJournalChargesOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	uid := r.user("alice", "pass", r.planID, nil)
	// What the primary committed before it died.
	r.record(aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "a1", Username: "alice"},
		aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "a1", Username: "alice", InputOctets: 1000, SessionTime: 60})
	nas, _ := r.svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	j := func(ev aaa.AcctEvent) aaa.JournalEvent {
		return aaa.JournalEvent{Tenant: "isp", NASID: nas.ID, AcctEvent: ev}
	}
	if err := aaa.AppendJournal(r.a.Cfg.DataDir,
		j(aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "a1", Username: "alice", InputOctets: 1000, SessionTime: 60}), // the primary has it
		j(aaa.AcctEvent{Status: aaa.StatusStop, SessionID: "a1", Username: "alice", InputOctets: 3000, SessionTime: 180}),
		j(aaa.AcctEvent{Status: aaa.StatusOn}),
		j(aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "a2", Username: "alice"}),
		j(aaa.AcctEvent{Status: aaa.StatusInterim, SessionID: "a2", Username: "alice", InputOctets: 500, SessionTime: 30}),
	); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{5, 0} {
		rep, err := r.svc.ApplyJournal(context.Background(), r.a.Cfg.DataDir, "g2")
		if err != nil {
			t.Fatal(err)
		}
		if rep.Records != want || rep.Skipped != 0 {
			t.Fatalf("application %d: %+v, want %d records", i+1, rep, want)
		}
		if used := r.count(`SELECT used_bytes FROM users WHERE id = ?`, uid); used != 3500 {
			t.Fatalf("application %d: used_bytes = %d, want 3500 (3000 of a1 + 500 of a2, once)", i+1, used)
		}
		if open := r.count(`SELECT COUNT(*) FROM radius_sessions WHERE acct_session_id = 'a2' AND stop_time IS NULL`); open != 1 {
			t.Fatalf("application %d: session a2 open %d times, want 1", i+1, open)
		}
		if n := r.count(`SELECT COUNT(*) FROM radius_sessions WHERE user_id = ?`, uid); n != 2 {
			t.Fatalf("application %d: %d sessions, want 2", i+1, n)
		}
	}
}
