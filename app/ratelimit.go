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
func NewMemLimiter() *MemLimiter {
	return &MemLimiter{seed: maphash.MakeSeed(), now: time.Now}
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

// Buckets is every bucket the route table may name.
var Buckets = map[string]BucketDef{
	BucketMutate: {ScopeTenant, 300},
	BucketValues: {ScopeTenant, 600},
	BucketHeavy:  {ScopeTenant, 30},
	BucketProbe:  {ScopeTenant, 10},
	BucketEgress: {ScopeTenant, 5},

	"user_list":          {ScopeOperator, 240},
	"user_resolve":       {ScopeOperator, 120},
	"card_search":        {ScopeOperator, 120},
	"card_timeline":      {ScopeOperator, 120},
	"card_redeem":        {ScopeOperator, 60},
	"card_wallet_redeem": {ScopeOperator, 60},
	"user_login_as":      {ScopeOperator, 30},
	"account_reauth":     {ScopeOperator, 10},
	"api_token_reveal":   {ScopeOperator, 10},

	"login":                     {ScopeIP, 20},
	"refresh":                   {ScopeIP, 60},
	"register_start":            {ScopeIP, 10},
	"register_verify":           {ScopeIP, 10},
	"register_resend":           {ScopeIP, 10},
	"register_complete":         {ScopeIP, 10},
	"card_redeem_public":        {ScopeIP, 60},
	"portal_login":              {ScopeIP, 20},
	"portal_refresh":            {ScopeIP, 60},
	"portal_captcha":            {ScopeIP, 20},
	"portal_exchange":           {ScopeIP, 120},
	"portal_messenger_exchange": {ScopeIP, 120},
	"portal_join":               {ScopeIP, 20},
	"portal_signup":             {ScopeIP, 20},
	"portal_parental_unlock":    {ScopeIP, 20},
	"portal_tunnel_identify":    {ScopeIP, 120},
	"portal_tunnel_tenant":      {ScopeIP, 120},
	"public":                    {ScopeIP, 20},
	"pay_webhook":               {ScopeIP, 600}, // payment providers call back in bursts
	"shop_browse":               {ScopeIP, 120}, // the public storefront
	"shop_buy":                  {ScopeIP, 20},  // a public purchase (starts a payment)
	"shop_hold":                 {ScopeIP, 20},  // cards held by unpaid purchases, counted one per card (app/shop)
	"shop_return":               {ScopeIP, 60},  // the buyer's return page

	"portal_subscriber": {ScopeSubscriber, 120},
	"portal_deposit":    {ScopeSubscriber, 20},
	"portal_guest":      {ScopeSubscriber, 20},
	"pay_init":          {ScopeOperator, 20},
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
