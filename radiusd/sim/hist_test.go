package sim

import (
	"testing"
	"time"
)

func TestLatencyHistogram(t *testing.T) {
	t.Parallel()
	var h latencyHist
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * 10 * time.Microsecond) // 10 µs .. 10 ms
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5 * time.Millisecond}, {0.99, 9900 * time.Microsecond}, {1, 10 * time.Millisecond}} {
		got := h.quantile(c.q)
		if d := got - c.want; d < -c.want/50 || d > c.want/50 { // 2 %
			t.Errorf("q%.2f = %v, want %v", c.q, got, c.want)
		}
	}
	var o latencyHist
	o.add(time.Hour) // beyond the last bucket: clamped, never out of range
	h.merge(&o)
	if h.n != 1001 || h.max != time.Hour {
		t.Fatalf("merge: n %d max %v", h.n, h.max)
	}
	for us := uint64(0); us < 1<<20; us += 7 {
		if b := bucketOf(us); lowerBound(b) > us || (b+1 < len(h.counts) && lowerBound(b+1) <= us) {
			t.Fatalf("%d µs in bucket %d [%d, %d)", us, b, lowerBound(b), lowerBound(b+1))
		}
	}
}
