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
