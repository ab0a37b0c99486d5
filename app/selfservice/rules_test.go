package selfservice

import (
	"testing"
	"time"

	"xr/app"
)

// TestCredit: the unused part of the current plan under each proration mode.
func TestCredit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	cur := &planRow{id: 1, price: 30000, durationDays: 30}
	exp := app.T(now.Add(10*24*time.Hour + 12*time.Hour)) // 10.5 days left
	for _, c := range []struct {
		mode string
		want app.Money
	}{{"daily", 10000}, {"exact", 10500}, {"none", 0}} {
		got, unused, err := credit(c.mode, cur, exp, now)
		if err != nil || got != c.want || unused != 10*86400+12*3600 {
			t.Fatalf("%s: %v %d %v", c.mode, got, unused, err)
		}
	}
	// Expired, no plan, or more time than a period: never more than the price.
	if got, _, _ := credit("daily", cur, app.T(now.Add(-time.Hour)), now); got != 0 {
		t.Fatalf("expired: %v", got)
	}
	if got, _, _ := credit("daily", nil, exp, now); got != 0 {
		t.Fatalf("no plan: %v", got)
	}
	if got, _, _ := credit("exact", cur, app.T(now.Add(90*24*time.Hour)), now); got != 30000 {
		t.Fatalf("capped: %v", got)
	}
}

// TestConsume: buckets fill in order, the excess goes to the last.
func TestConsume(t *testing.T) {
	t.Parallel()
	limits := map[string]int64{BucketPlan: 1000, BucketAddon: 300, BucketBonus: 500}
	used := map[string]int64{}
	consume([]string{BucketBonus, BucketAddon, BucketPlan}, limits, used, 600)
	if used[BucketBonus] != 500 || used[BucketAddon] != 100 || used[BucketPlan] != 0 {
		t.Fatalf("600: %v", used)
	}
	consume([]string{BucketPlan, BucketAddon, BucketBonus}, limits, used, 1500)
	if used[BucketPlan] != 1000 || used[BucketAddon] != 300 || used[BucketBonus] != 800 {
		t.Fatalf("over: %v", used)
	}
	if validOrder([]string{"plan", "plan", "bonus"}) || validOrder([]string{"plan"}) || !validOrder([]string{"addon", "plan", "bonus"}) {
		t.Fatal("validOrder")
	}
}
