package app

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fndClockLimiter is a MemLimiter on a clock the test moves.
func fndClockLimiter(start time.Time) (*MemLimiter, func(time.Time)) {
	var now atomic.Int64
	now.Store(start.UnixNano())
	l := NewMemLimiterOn(func() time.Time { return time.Unix(0, now.Load()) })
	return l, func(t time.Time) { now.Store(t.UnixNano()) }
}

func fndHits(l Limiter, key string, limit, n int) (allowed int) {
	for i := 0; i < n; i++ {
		if l.Allow(key, limit) {
			allowed++
		}
	}
	return allowed
}

// Fixed windows aligned to the clock minute: a budget spent at :59 is
// whole again at :00, and nothing carries over.
func TestMemLimiterFixedMinuteWindows(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2024, 5, 6, 12, 0, 0, 0, time.UTC)
	l, set := fndClockLimiter(t0.Add(59*time.Second + 900*time.Millisecond))
	if got := fndHits(l, "k", 3, 5); got != 3 {
		t.Fatalf("allowed %d of 5 with limit 3", got)
	}
	set(t0.Add(time.Minute)) // 12:01:00.000 — a new window, not a sliding one
	if got := fndHits(l, "k", 3, 5); got != 3 {
		t.Fatalf("new minute: allowed %d", got)
	}
	set(t0.Add(time.Minute + 59*time.Second + 999*time.Millisecond)) // same window until :59.999
	if l.Allow("k", 3) {
		t.Fatal("budget refilled inside the window")
	}
	set(t0.Add(2 * time.Minute))
	if !l.Allow("k", 3) {
		t.Fatal("budget not refilled at the next minute")
	}
	// A refused hit does not count: after the window turns, the full budget.
	set(t0.Add(3 * time.Minute))
	if got := fndHits(l, "k", 2, 10); got != 2 {
		t.Fatalf("allowed %d", got)
	}
	set(t0.Add(4 * time.Minute))
	if got := fndHits(l, "k", 2, 10); got != 2 {
		t.Fatalf("refused hits were counted into the next window: %d", got)
	}
	// Going back in time (clock step) does not crash or refill wrongly.
	set(t0.Add(3 * time.Minute))
	if got := fndHits(l, "k", 2, 10); got != 2 {
		t.Fatalf("after a clock step back: %d", got)
	}
}

func TestMemLimiterKeysAreIndependent(t *testing.T) {
	t.Parallel()
	l, _ := fndClockLimiter(time.Date(2024, 5, 6, 12, 0, 30, 0, time.UTC))
	// Many keys, so several share a shard: each keeps its own count.
	for i := 0; i < 500; i++ {
		key := fmt.Sprintf("t:%d:t_mutate", i)
		if got := fndHits(l, key, 2, 3); got != 2 {
			t.Fatalf("%s: allowed %d", key, got)
		}
	}
	if !l.Allow("another", 1) {
		t.Fatal("an untouched key was refused")
	}
	if l.Allow("zero", 0) {
		t.Fatal("limit 0 allowed a hit")
	}
}

// Concurrent hits on one key: exactly limit are allowed.
func TestMemLimiterConcurrent(t *testing.T) {
	t.Parallel()
	l, _ := fndClockLimiter(time.Date(2024, 5, 6, 12, 0, 30, 0, time.UTC))
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 50; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				if l.Allow("hot", 777) {
					allowed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != 777 {
		t.Fatalf("allowed %d of 2000 with limit 777", allowed.Load())
	}
}

// Tier scaling: the reference times the tier's share, rounded up, never zero.
func TestScaledLimit(t *testing.T) {
	t.Parallel()
	tiers := []string{"small", "medium", "large", "xl", "max"}
	want := map[string][]int{
		BucketHeavy:  {8, 15, 30, 60, 120}, // the spec's example
		BucketMutate: {75, 150, 300, 600, 1200},
		BucketValues: {150, 300, 600, 1200, 2400},
		BucketProbe:  {3, 5, 10, 20, 40}, // 2.5 rounds up to 3
		BucketEgress: {2, 3, 5, 10, 20},  // 1.25 → 2, 2.5 → 3
	}
	for bucket, limits := range want {
		ref := kernelBuckets[bucket].Limit
		for i, tier := range tiers {
			if got := ScaledLimit(ref, tier); got != limits[i] {
				t.Errorf("%s %s: %d, want %d", bucket, tier, got, limits[i])
			}
		}
	}
	// Never zero, even for the smallest reference.
	for _, tier := range tiers {
		if got := ScaledLimit(1, tier); got < 1 {
			t.Errorf("ScaledLimit(1, %s) = %d", tier, got)
		}
	}
	if ScaledLimit(1, "small") != 1 || ScaledLimit(0, "small") != 1 {
		t.Error("a scaled limit reached zero")
	}
	// The reference numbers of the spec's tenant buckets.
	for bucket, ref := range map[string]int{BucketMutate: 300, BucketHeavy: 30, BucketProbe: 10, BucketEgress: 5, BucketValues: 600} {
		if d := kernelBuckets[bucket]; d.Limit != ref || d.Scope != ScopeTenant {
			t.Errorf("%s: %+v, want tenant-scoped %d", bucket, d, ref)
		}
	}
}

func TestDeriveTier(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	cases := []struct {
		pinned string
		max    *int64
		want   string
	}{
		{"", nil, "xl"}, // uncapped
		{"", n(0), "small"},
		{"", n(1), "small"},
		{"", n(100), "small"},
		{"", n(101), "medium"},
		{"", n(1000), "medium"},
		{"", n(1001), "large"},
		{"", n(10000), "large"},
		{"", n(10001), "xl"},
		{"", n(1 << 40), "xl"},
		{"max", n(10), "max"}, // max is explicit only, and a pin wins
		{"small", nil, "small"},
	}
	for _, c := range cases {
		if got := DeriveTier(c.pinned, c.max); got != c.want {
			m := "nil"
			if c.max != nil {
				m = fmt.Sprint(*c.max)
			}
			t.Errorf("DeriveTier(%q, %s) = %s, want %s", c.pinned, m, got, c.want)
		}
		ti := &TenantInfo{TierPinned: c.pinned, MaxUsers: c.max}
		if ti.Tier() != c.want {
			t.Errorf("TenantInfo.Tier: %s", ti.Tier())
		}
	}
	for _, tier := range []string{"small", "medium", "large", "xl", "max"} {
		if !ValidTier(tier) {
			t.Errorf("%s not valid", tier)
		}
	}
	if ValidTier("huge") || ValidTier("") || ValidTier("Small") {
		t.Error("unknown tier accepted")
	}
}
