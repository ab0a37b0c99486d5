package web_test

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"sort"
	"testing"
	"time"

	"xr/internal/webtest"
)

// BenchmarkDashboardValues is GET /api/v1/admin/dashboards/me/values (the
// shipped Overview: subscribers by state, online, new today, expiring,
// revenue) over real HTTP on a tenant of 100,000 subscribers (10,000 of
// them under a reseller) with 5,000 online and 50,000 ledger rows, written
// with bulk SQL. It reports p50 and p99 for the owner (tenant-wide) and the
// reseller (its subtree).
//
//	go test ./web -run '^$' -bench BenchmarkDashboardValues -benchtime 300x
func BenchmarkDashboardValues(b *testing.B) {
	k := webtest.New(b)
	owner := k.Owner("acme")
	res := webtest.CreateManager(k, "acme", 0, "res1", "reseller")
	resTok := k.Login("acme", "res1", webtest.Password)
	t := k.Acquire("acme")
	now := time.Now().UTC()
	err := t.Write(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 100000)
			INSERT INTO users(username, password_sealed, parent_id, enabled, expiration, lookup_token, created_at, updated_at)
			SELECT 'bench' || i, x'00', CASE WHEN i % 10 = 0 THEN ? ELSE 1 END, i % 17 != 0,
				strftime('%Y-%m-%d %H:%M:%S', ?, '+' || (i % 90 - 20) || ' days'), 'lt' || i,
				strftime('%Y-%m-%d %H:%M:%S', ?, '-' || (i % 400) || ' days'), ? FROM n`,
			res, now.Format("2006-01-02 15:04:05"), now.Format("2006-01-02 15:04:05"), now.Format("2006-01-02 15:04:05")); err != nil {
			return err
		}
		if _, err := tx.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 5000)
			INSERT INTO radius_sessions(user_id, nas_id, acct_session_id, username, start_time, update_time)
			SELECT i * 7, 1, 'bs' || i, 'bench' || (i * 7), ?, ? FROM n`, now.Format("2006-01-02 15:04:05"), now.Format("2006-01-02 15:04:05")); err != nil {
			return err
		}
		_, err := tx.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 50000)
			INSERT INTO user_ledger(user_id, kind, amount, balance_after, created_at)
			SELECT 1 + i % 100000, CASE WHEN i % 2 = 0 THEN 'deposit' ELSE 'charge' END, CASE WHEN i % 2 = 0 THEN 10000 ELSE -10000 END, 0,
				strftime('%Y-%m-%d %H:%M:%S', ?, '-' || (i % 60) || ' days') FROM n`, now.Format("2006-01-02 15:04:05"))
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := t.DB.W.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, tok string) time.Duration {
		req, _ := http.NewRequest("GET", k.TS.URL+"/api/v1/admin/dashboards/me/values", nil)
		req.Host = "acme.xr.test"
		req.Header.Set("Authorization", "Bearer "+tok)
		start := time.Now()
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		d := time.Since(start)
		if err != nil || r.StatusCode != 200 {
			b.Fatalf("%d %v", r.StatusCode, err)
		}
		return d
	}
	for _, c := range []struct{ name, tok string }{{"owner", owner}, {"reseller", resTok}} {
		b.Run(c.name, func(b *testing.B) {
			get(b, c.tok) // warm the caches, the connection and the shipped dashboards
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lat = append(lat, get(b, c.tok))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
