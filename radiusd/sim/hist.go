package sim

import (
	"math/bits"
	"time"
)

// latencyHist is a log-linear histogram of microseconds with 64 sub-buckets
// per power of two (≤1.6 % error). Fixed size, so a long run costs no more
// memory than a short one, and per-worker copies merge by addition.
type latencyHist struct {
	counts [128 + 40*64]uint64
	max    time.Duration
	n      uint64
}

func bucketOf(us uint64) int {
	if us < 128 {
		return int(us)
	}
	e := bits.Len64(us) - 7 // keep the top 7 bits: us>>e is in [64,128)
	i := 128 + (e-1)*64 + int(us>>e) - 64
	if i >= len(latencyHist{}.counts) {
		i = len(latencyHist{}.counts) - 1
	}
	return i
}

// lowerBound is the smallest value in bucket i, in microseconds.
func lowerBound(i int) uint64 {
	if i < 128 {
		return uint64(i)
	}
	e := (i-128)/64 + 1
	m := uint64((i-128)%64 + 64)
	return m << e
}

func (h *latencyHist) add(d time.Duration) {
	h.counts[bucketOf(uint64(d/time.Microsecond))]++
	h.n++
	if d > h.max {
		h.max = d
	}
}

func (h *latencyHist) merge(o *latencyHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the q-quantile (0..1) as a duration.
func (h *latencyHist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n-1)) + 1
	var cum uint64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			// Report the middle of the bucket.
			lo := lowerBound(i)
			hi := lo + 1
			if i+1 < len(h.counts) {
				hi = lowerBound(i + 1)
			}
			return min(time.Duration((lo+hi)/2)*time.Microsecond, h.max)
		}
	}
	return h.max
}
