package aaa_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"xr/app/aaa"
)

// BenchmarkRecordInterim measures the accounting path alone (no UDP, no
// load generator): Interim-Updates of open sessions in batches of 64.
//
//	go test ./app/aaa -run "^$" -bench RecordInterim -benchtime 300x
func BenchmarkRecordInterim(b *testing.B) {
	r := newRig(b)
	r.seedUsers(10000)
	nas, _ := r.svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	ctx := context.Background()
	// open sessions
	for i := 0; i < 10000; i += 64 {
		var evs []aaa.AcctEvent
		for k := i; k < i+64 && k < 10000; k++ {
			evs = append(evs, aaa.AcctEvent{NAS: nas, Status: aaa.StatusStart, SessionID: fmt.Sprint("s", k), Username: fmt.Sprintf("user%05d", k), EventTime: time.Now()})
		}
		if err := r.svc.RecordAccounting(ctx, evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		evs := make([]aaa.AcctEvent, 64)
		for k := range evs {
			n++
			u := n % 10000
			evs[k] = aaa.AcctEvent{NAS: nas, Status: aaa.StatusInterim, SessionID: fmt.Sprint("s", u), Username: fmt.Sprintf("user%05d", u),
				InputOctets: uint64(n * 10), OutputOctets: uint64(n), SessionTime: uint32(n / 1000), EventTime: time.Now()}
		}
		if err := r.svc.RecordAccounting(ctx, evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/record")
}

// BenchmarkRecordChurn measures the accounting path alone under session
// churn: every session is new and plays Start, two Interims and a Stop;
// batches of 64 records mix the four phases of 16 sessions in flight.
//
//	go test ./app/aaa -run "^$" -bench RecordChurn -benchtime 500x
func BenchmarkRecordChurn(b *testing.B) {
	r := newRig(b)
	r.seedUsers(10000)
	nas, _ := r.svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	ctx := context.Background()
	n, j := 0, 0
	b.ResetTimer()
	for b.Loop() {
		// A pipeline of 16 lanes: batch j carries the Start of round j,
		// the Interims of rounds j-1 and j-2 and the Stop of round j-3.
		evs := make([]aaa.AcctEvent, 0, 64)
		for phase := range 4 {
			round := j - phase
			if round < 0 {
				continue
			}
			for lane := range 16 {
				s := round*16 + lane
				ev := aaa.AcctEvent{NAS: nas, SessionID: fmt.Sprint("c", s), Username: fmt.Sprintf("user%05d", s%10000), EventTime: time.Now()}
				sessionPhase(&ev, phase)
				evs = append(evs, ev)
				n++
			}
		}
		j++
		if err := r.svc.RecordAccounting(ctx, evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/record")
}

// BenchmarkRecordReplay measures batches that carry whole sessions: a NAS
// replaying its queue after an outage sends Start, two Interims and the
// Stop of each of 16 sessions in one batch of 64 records (coalesce.go
// writes each session's row and charge once).
//
//	go test ./app/aaa -run "^$" -bench RecordReplay -benchtime 500x
func BenchmarkRecordReplay(b *testing.B) {
	r := newRig(b)
	r.seedUsers(10000)
	nas, _ := r.svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	ctx := context.Background()
	n, j := 0, 0
	b.ResetTimer()
	for b.Loop() {
		evs := make([]aaa.AcctEvent, 0, 64)
		t0 := time.Now().Add(-20 * time.Minute)
		for lane := range 16 {
			s := j*16 + lane
			ev := aaa.AcctEvent{NAS: nas, SessionID: fmt.Sprint("r", s), Username: fmt.Sprintf("user%05d", s%10000)}
			for phase := range 4 {
				ev.EventTime = t0.Add(time.Duration(phase*300) * time.Second)
				sessionPhase(&ev, phase)
				evs = append(evs, ev)
				n++
			}
		}
		j++
		if err := r.svc.RecordAccounting(ctx, evs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/record")
}

// sessionPhase makes ev the record of a session's phase: 0 the Start, 1
// and 2 Interims, 3 the Stop (300 s apart, growing counters).
func sessionPhase(ev *aaa.AcctEvent, phase int) {
	switch phase {
	case 0:
		ev.Status = aaa.StatusStart
	case 1, 2:
		ev.Status, ev.InputOctets, ev.OutputOctets, ev.SessionTime = aaa.StatusInterim, uint64(phase*7000), uint64(phase*90000), uint32(phase*300)
	case 3:
		ev.Status, ev.InputOctets, ev.OutputOctets, ev.SessionTime = aaa.StatusStop, 21000, 270000, 900
	}
}
