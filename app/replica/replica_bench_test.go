package replica_test

import (
	"context"
	"testing"
	"time"

	"xr/app"
	"xr/app/replica"
	"xr/app/subs"
	"xr/db"
	"xr/internal/xrtest"
)

// BenchmarkColdTenantOpen measures what replication adds to the opening
// of a closed tenant (ns/op: the Acquire a request waits for) and to its
// close (close-ms/op: the final sync, which on a reopened file is a
// snapshot of the whole file, since SQLite folded the WAL into the file
// at the previous close).
func BenchmarkColdTenantOpen(b *testing.B) {
	for _, replicated := range []bool{false, true} {
		name := "plain"
		if replicated {
			name = "replicated"
		}
		b.Run(name, func(b *testing.B) {
			cfg := app.Config{}
			if replicated {
				cfg.Checkpoints = db.CheckpointExternal
			}
			a := xrtest.Seeded(b, cfg, "acme", subs.Module)
			defer a.Close()
			if replicated {
				target, err := replica.ParseTarget("file://" + b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				rep, err := replica.Start(context.Background(), a, target, replica.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer rep.Close(context.Background())
			}
			a.Pool.CloseIdle()
			var closing time.Duration
			b.ResetTimer()
			for range b.N {
				_, release, err := a.Acquire("acme")
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				release()
				t0 := time.Now()
				a.Pool.CloseIdle()
				closing += time.Since(t0)
				b.StartTimer()
			}
			b.ReportMetric(float64(closing.Milliseconds())/float64(b.N), "close-ms/op")
		})
	}
}
