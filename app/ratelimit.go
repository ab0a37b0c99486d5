package app

import (
	"hash/maphash"
	"math"
	"sync"
	"time"
)

// Limiter counts requests in fixed one-minute windows aligned to the clock
// minute. It is an interface so a shared store can replace the in-process
// one when several replicas run.
type Limiter interface {
	// Allow counts one hit on key and reports whether it stays within limit.
	Allow(key string, limit int) bool
}

// MemLimiter is the in-process Limiter: sharded counters that reset when
// the minute turns.
type MemLimiter struct {
	seed   maphash.Seed
	shards [64]limShard
	now    func() time.Time
}

type limShard struct {
	mu     sync.Mutex
	minute int64
	counts map[string]int
}

// NewMemLimiter makes an empty limiter.
func NewMemLimiter() *MemLimiter { return NewMemLimiterOn(time.Now) }

// NewMemLimiterOn makes an empty limiter whose windows follow now: tests
// hold the minute still, or move it, instead of racing the wall clock.
func NewMemLimiterOn(now func() time.Time) *MemLimiter {
	return &MemLimiter{seed: maphash.MakeSeed(), now: now}
}

func (l *MemLimiter) Allow(key string, limit int) bool {
	s := &l.shards[maphash.String(l.seed, key)%uint64(len(l.shards))]
	minute := l.now().Unix() / 60
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.minute != minute || s.counts == nil {
		// A new window: the old counts are worthless, drop them wholesale.
		s.minute, s.counts = minute, map[string]int{}
	}
	if s.counts[key] >= limit {
		return false
	}
	s.counts[key]++
	return true
}

// Bucket names and their reference numbers per minute.
const (
	BucketMutate = "t_mutate"
	BucketValues = "t_values"
	BucketHeavy  = "t_heavy"
	BucketProbe  = "t_probe"
	BucketEgress = "t_egress"
)

// BucketScope says what a bucket is keyed on.
type BucketScope int

const (
	ScopeTenant     BucketScope = iota // tier-scaled, keyed on the tenant
	ScopeOperator                      // flat, keyed on tenant and manager
	ScopeIP                            // public, keyed on source IP
	ScopeSubscriber                    // portal, keyed on tenant and subscriber
)

// BucketDef is one named bucket.
type BucketDef struct {
	Scope BucketScope
	Limit int // per minute; the reference value for tenant buckets
}

// kernelBuckets are the buckets the route middleware applies itself:
// the tier-scaled tenant buckets, a public row's own bucket and the
// portal's per-subscriber bucket. Areas declare theirs in their Module.
var kernelBuckets = map[string]BucketDef{
	BucketMutate: {ScopeTenant, 300},
	BucketValues: {ScopeTenant, 600},
	BucketHeavy:  {ScopeTenant, 30},
	BucketProbe:  {ScopeTenant, 10},
	BucketEgress: {ScopeTenant, 5},

	"public":            {ScopeIP, 20},
	"portal_subscriber": {ScopeSubscriber, 120},
}

// Tier percentages of the reference value.
var tierPercent = map[string]int{"small": 25, "medium": 50, "large": 100, "xl": 200, "max": 400}

// ValidTier reports whether t names a tier.
func ValidTier(t string) bool { _, ok := tierPercent[t]; return ok }

// DeriveTier picks the tier from the licensed cap unless one is pinned.
func DeriveTier(pinned string, maxUsers *int64) string {
	if pinned != "" {
		return pinned
	}
	switch {
	case maxUsers == nil:
		return "xl"
	case *maxUsers <= 100:
		return "small"
	case *maxUsers <= 1000:
		return "medium"
	case *maxUsers <= 10000:
		return "large"
	}
	return "xl"
}

// ScaledLimit is the tenant's slice of a reference limit: rounded up, never zero.
func ScaledLimit(ref int, tier string) int {
	p, ok := tierPercent[tier]
	if !ok {
		p = 100
	}
	return max(1, int(math.Ceil(float64(ref)*float64(p)/100)))
}
