package sim

import (
	"context"
	"testing"
	"time"
)

// The pacer books requests interval apart, lets a run that fell behind
// catch up by at most 100 ms worth, and gives up when ctx ends.
func TestPacerBooking(t *testing.T) {
	t.Parallel()
	var none *pacer
	if !none.wait(context.Background(), 1) {
		t.Fatal("a nil pacer refused")
	}
	start := time.Now().Add(-time.Hour) // far behind schedule
	p := &pacer{interval: time.Millisecond, next: start}
	if !p.wait(context.Background(), 4) {
		t.Fatal("a late booking refused")
	}
	// The booking was moved up to now-100ms, then 4 intervals were taken.
	if behind := time.Since(p.next); behind > 100*time.Millisecond || behind < 0 {
		t.Fatalf("after catching up the schedule is %v behind", behind)
	}
	p.next = time.Now().Add(time.Hour)
	before := p.next
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if p.wait(ctx, 1) {
		t.Fatal("waited through a cancelled context")
	}
	if got := p.next.Sub(before); got != time.Millisecond {
		t.Fatalf("booking advanced %v, want one interval", got)
	}
}
