package selfservice

import (
	"context"
	"database/sql"
	"testing"

	"xr/app"
	"xr/app/subs"
	"xr/internal/xrtest"
)

// BenchmarkChargeBuckets measures the accounting hook for one Interim of
// a subscriber with a limited data quota who chose a bucket order (inside
// accounting's transaction); NoOrder for one who did not:
// go test ./app/selfservice -run '^$' -bench ChargeBuckets
func BenchmarkChargeBuckets(b *testing.B) { benchCharge(b, true) }

func BenchmarkChargeBucketsNoOrder(b *testing.B) { benchCharge(b, false) }

func benchCharge(b *testing.B, chose bool) {
	a := xrtest.TenantApp(b, "acme", subs.Module, Module)
	t := xrtest.Acquire(b, a, "acme")
	ctx := context.Background()
	sys := xrtest.System(b, t)
	p, err := subs.CreateProfile(ctx, sys, subs.ProfileInput{Name: app.Opt[string]{Set: true, V: "Metered"},
		DurationDays: app.Opt[int64]{Set: true, V: 30}, BytesLimit: app.Opt[int64]{Set: true, V: 1 << 40}})
	if err != nil {
		b.Fatal(err)
	}
	var uid int64
	if err := t.Write(ctx, func(tx *sql.Tx) error {
		u, err := subs.CreateUser(ctx, tx, t, subs.NewUser{Username: "bench", Password: "bench-pass", ParentID: sys.ManagerID, ProfileID: p.ID})
		if err != nil {
			return err
		}
		uid = u.ID
		_, err = subs.ApplyActivation(ctx, tx, t, 0, uid, 0, subs.ActivationOptions{})
		return err
	}); err != nil {
		b.Fatal(err)
	}
	if chose {
		if _, err := SetBucketOrder(ctx, app.SubscriberActor(t, uid, ""), BucketOrderInput{Order: []string{BucketAddon, BucketPlan, BucketBonus}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	if err := t.Write(ctx, func(tx *sql.Tx) error {
		for i := 0; i < b.N; i++ {
			if err := chargeBuckets(ctx, t, tx, uid, 1000, 1<<40); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
}
