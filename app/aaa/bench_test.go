package aaa_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"xr/app"
	"xr/radiusd/sim"
)

// seedUsers inserts n active subscribers user%05d / pass in one transaction.
func (r *rig) seedUsers(n int) {
	sealed := r.a.Keys.Seal([]byte("pass"))
	exp := app.FormatTime(time.Now().Add(720 * time.Hour))
	err := r.ten.Write(context.Background(), func(tx *sql.Tx) error {
		st, err := tx.Prepare(`INSERT INTO users(username, password_sealed, parent_id, profile_id, enabled, expiration, lookup_token, created_at, updated_at) VALUES (?,?,?,?,1,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		now := app.StampNow()
		for i := range n {
			if _, err := st.Exec(fmt.Sprintf("user%05d", i), sealed, r.ownerID, r.fupPlan, exp, app.RandomToken(12), now, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

func runSim(b *testing.B, r *rig, mode sim.Mode, count int) sim.Report {
	rep, err := sim.Run(context.Background(), sim.Config{AuthAddr: r.auth, AcctAddr: r.acctAddr, Secret: secret, LocalIP: "127.0.0.1",
		Users: 10000, Sessions: 10000, Concurrency: 64, Mode: mode, Count: count, Timeout: 2 * time.Second, Retries: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rep.PerSecond, "req/s")
	b.ReportMetric(rep.P50Ms, "p50-ms")
	b.ReportMetric(rep.P99Ms, "p99-ms")
	b.ReportMetric(float64(rep.Failed), "failed")
	b.ReportMetric(float64(rep.Timeouts), "timeouts")
	return rep
}

// BenchmarkE2EAuth: PAP with Message-Authenticator, 64 in flight, 10,000
// subscribers in a real tenant database, real UDP on loopback.
//
//	go test ./app/aaa -run '^$' -bench E2EAuth -benchtime 200000x
func BenchmarkE2EAuth(b *testing.B) {
	r := newRig(b)
	r.seedUsers(10000)
	runSim(b, r, sim.ModeAuth, 2000) // warm the index
	b.ResetTimer()
	rep := runSim(b, r, sim.ModeAuth, b.N)
	if rep.Rejected > 0 {
		b.Fatalf("%d rejects", rep.Rejected)
	}
}

// BenchmarkE2EInterim: Interim-Updates, each answered after its durable
// group commit.
//
//	go test ./app/aaa -run '^$' -bench E2EInterim -benchtime 100000x
func BenchmarkE2EInterim(b *testing.B) {
	r := newRig(b)
	r.seedUsers(10000)
	b.ResetTimer()
	runSim(b, r, sim.ModeAcctInterim, b.N)
}

// BenchmarkE2EChurn: session churn, every session new: Start, two
// Interims and a Stop (four requests per session), each answered after its
// durable group commit.
//
//	go test ./app/aaa -run '^$' -bench E2EChurn -benchtime 200000x
func BenchmarkE2EChurn(b *testing.B) {
	r := newRig(b)
	r.seedUsers(10000)
	b.ResetTimer()
	rep := runSim(b, r, sim.ModeAcctChurn, b.N)
	if rep.Timeouts > 0 || rep.Failed > 0 {
		b.Fatalf("%d timeouts, %d failed", rep.Timeouts, rep.Failed)
	}
}

// BenchmarkE2EStorm: Accounting-On, then 10,000 auth + Start; no session
// may be lost.
//
//	go test ./app/aaa -run '^$' -bench E2EStorm -benchtime 1x
func BenchmarkE2EStorm(b *testing.B) {
	r := newRig(b)
	r.seedUsers(10000)
	b.ResetTimer()
	rep, err := sim.Run(context.Background(), sim.Config{AuthAddr: r.auth, AcctAddr: r.acctAddr, Secret: secret, LocalIP: "127.0.0.1",
		Users: 10000, Sessions: 10000, Concurrency: 64, Mode: sim.ModeStorm, Timeout: 2 * time.Second, Retries: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(rep.ElapsedSeconds, "seconds")
	b.ReportMetric(float64(rep.SessionsLost), "lost")
	var open int
	r.ten.DB.R.QueryRow(`SELECT COUNT(*) FROM radius_sessions WHERE stop_time IS NULL`).Scan(&open)
	b.ReportMetric(float64(open), "open-sessions")
	if rep.SessionsLost > 0 || open != 10000 {
		b.Fatalf("lost %d, open %d", rep.SessionsLost, open)
	}
}
