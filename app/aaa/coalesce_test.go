package aaa_test

import (
	"fmt"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"xr/app/aaa"
)

// A batch that carries several records of one session writes what the same
// records write batch by batch: the session's row, the subscriber's usage
// and its rollups are the same, whether the records come together (a NAS
// replaying its queue) or one per commit.
func TestBatchCoalescesRecordsOfASession(t *testing.T) {
	t.Parallel()
	h := time.Now().UTC().Truncate(time.Hour).Add(-5 * time.Hour)
	at := func(m int) time.Time { return h.Add(time.Duration(m) * time.Minute) }
	ip := netip.MustParseAddr("10.9.0.7")
	start := func(m int) aaa.AcctEvent { return aaa.AcctEvent{Status: aaa.StatusStart, EventTime: at(m)} }
	upd := func(status int, m int, in, out uint64, secs uint32) aaa.AcctEvent {
		return aaa.AcctEvent{Status: status, EventTime: at(m), InputOctets: in, OutputOctets: out, InputPackets: in / 100, OutputPackets: out / 100,
			SessionTime: secs, TerminateCause: "User-Request"}
	}
	withIP := func(ev aaa.AcctEvent) aaa.AcctEvent { ev.FramedIP = ip; return ev }
	cases := []struct {
		name   string
		opened []aaa.AcctEvent // recorded first, in batches of their own
		batch  []aaa.AcctEvent // together, or one per batch
		used   int64           // the subscriber's bytes at the end
	}{
		{name: "two interims and the stop", opened: []aaa.AcctEvent{start(0)},
			batch: []aaa.AcctEvent{upd(aaa.StatusInterim, 5, 1000, 9000, 300), withIP(upd(aaa.StatusInterim, 15, 2000, 19000, 900)),
				upd(aaa.StatusStop, 17, 2500, 20000, 1020)}, used: 22500},
		{name: "a duplicate inside the batch", opened: []aaa.AcctEvent{start(0)},
			batch: []aaa.AcctEvent{upd(aaa.StatusInterim, 5, 1000, 9000, 300), upd(aaa.StatusInterim, 5, 1000, 9000, 300),
				upd(aaa.StatusInterim, 10, 3000, 9000, 600), upd(aaa.StatusInterim, 5, 1000, 9000, 300)}, used: 12000},
		{name: "start, interims, an address alone", batch: []aaa.AcctEvent{start(0), upd(aaa.StatusInterim, 3, 10, 20, 180),
			withIP(upd(aaa.StatusInterim, 3, 10, 20, 180)), upd(aaa.StatusInterim, 9, 70, 20, 540)}, used: 90},
		{name: "across an hour", opened: []aaa.AcctEvent{start(50)},
			batch: []aaa.AcctEvent{upd(aaa.StatusInterim, 58, 100, 100, 480), upd(aaa.StatusInterim, 63, 300, 100, 780),
				upd(aaa.StatusStop, 68, 400, 150, 1080)}, used: 550},
		{name: "a late interim after the stop", opened: []aaa.AcctEvent{start(0)},
			batch: []aaa.AcctEvent{upd(aaa.StatusStop, 20, 500, 500, 1200), upd(aaa.StatusInterim, 10, 300, 300, 600)}, used: 1000},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			var users [2]int64
			for k, name := range []string{"apart", "together"} {
				user := fmt.Sprintf("%s%d", name, i)
				users[k] = r.user(user, "pass", r.planID, nil)
				for _, ev := range c.opened {
					ev.SessionID, ev.Username = "s-"+user, user
					r.record(ev)
				}
			}
			var together []aaa.AcctEvent
			for _, ev := range c.batch {
				apart := ev
				apart.SessionID, apart.Username = fmt.Sprintf("s-apart%d", i), fmt.Sprintf("apart%d", i)
				r.record(apart)
				ev.SessionID, ev.Username = fmt.Sprintf("s-together%d", i), fmt.Sprintf("together%d", i)
				together = append(together, ev)
			}
			r.record(together...)
			apart, got := r.stored(users[0]), r.stored(users[1])
			if !reflect.DeepEqual(apart, got) {
				t.Fatalf("one batch stored\n%v\nrecord by record\n%v", got, apart)
			}
			if used := r.count(`SELECT used_bytes FROM users WHERE id = ?`, users[1]); used != c.used {
				t.Fatalf("used %d bytes, want %d", used, c.used)
			}
		})
	}
}

// stored is what accounting keeps of a subscriber: its session rows (less
// their ids and names), its usage counters and its rollups.
func (r *rig) stored(uid int64) []string {
	r.t.Helper()
	var out []string
	read := func(q string) {
		rows, err := r.ten.DB.R.Query(q, uid)
		if err != nil {
			r.t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				r.t.Fatal(err)
			}
			out = append(out, fmt.Sprint(vals...))
		}
		if err := rows.Err(); err != nil {
			r.t.Fatal(err)
		}
	}
	read(`SELECT input_octets, output_octets, input_packets, output_packets, session_time, start_time, update_time, stop_time,
		charged_bytes, charged_seconds, interim_interval, framed_ip, framed_ipv6_prefix, terminate_cause, stop_cause, close_reason,
		usage_counted, kind FROM radius_sessions WHERE user_id = ? ORDER BY id`)
	read(`SELECT used_bytes, used_seconds, usage_hour, usage_in, usage_out, usage_secs, usage_sessions FROM users WHERE id = ?`)
	read(`SELECT grain, bucket, input_octets, output_octets, seconds, sessions FROM usage_rollups WHERE user_id = ? ORDER BY grain, bucket`)
	return out
}

// A Start the cache does not know is looked up in the database: the Start of
// a closed session sent again adds nothing, a new Start with the same
// Acct-Session-Id opens a new row, in its own batch or in the Stop's.
func TestStartOfAClosedSession(t *testing.T) {
	t.Parallel()
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	start := aaa.AcctEvent{Status: aaa.StatusStart, SessionID: "s1", Username: "carol", EventTime: at}
	stop := aaa.AcctEvent{Status: aaa.StatusStop, SessionID: "s1", Username: "carol", InputOctets: 50, SessionTime: 60, EventTime: at.Add(time.Minute)}
	later := start
	later.EventTime = at.Add(10 * time.Minute)
	cases := []struct {
		name    string
		batches [][]aaa.AcctEvent
		rows    int64
	}{
		{"the same start again", [][]aaa.AcctEvent{{start}, {stop}, {start}}, 1},
		{"the same start in the stop's batch", [][]aaa.AcctEvent{{start}, {stop, start}}, 1},
		{"a new start", [][]aaa.AcctEvent{{start}, {stop}, {later}, {later}}, 2},
		{"a new start in the stop's batch", [][]aaa.AcctEvent{{start}, {stop, later}}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.user("carol", "pass", r.planID, nil)
			for _, evs := range c.batches {
				r.record(evs...)
			}
			if n := r.count(`SELECT COUNT(*) FROM radius_sessions WHERE acct_session_id = 's1'`); n != c.rows {
				t.Fatalf("%d rows, want %d", n, c.rows)
			}
			if n := r.count(`SELECT COUNT(*) FROM radius_sessions WHERE stop_time IS NULL`); n != c.rows-1 {
				t.Fatalf("%d open rows, want %d", n, c.rows-1)
			}
		})
	}
}
