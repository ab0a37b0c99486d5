package backups

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"xr/internal/xrtest"
)

// BenchmarkBackupVerify: one backup (snapshot, counts, zstd, verification)
// of a tenant with 100,000 subscribers and 1,000,000 closed RADIUS
// sessions, built with bulk inserts. It reports the wall time of the
// backup as ms/backup and the file sizes; peak RSS is measured from
// outside (/usr/bin/time -v go test -run '^$' -bench BenchmarkBackupVerify).
func BenchmarkBackupVerify(b *testing.B) {
	_, ten, act := newEnv(b)
	ctx := context.Background()
	start := time.Now()
	err := ten.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('users_fts_deferred', '1')`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
			INSERT INTO users(username, password_sealed, parent_id, lookup_token, email, firstname, created_at, updated_at)
			SELECT 'user' || i, randomblob(48), ?, hex(randomblob(12)), 'user' || i || '@example.test', 'First ' || i, '2026-01-01 00:00:00', '2026-01-01 00:00:00' FROM n`,
			act.ManagerID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO users_fts(users_fts) VALUES ('rebuild')`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = 'users_fts_deferred'`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
			INSERT INTO radius_sessions(acct_session_id, user_id, username, nas_ip, framed_ip, calling_station_id, start_time, update_time, stop_time,
			  session_time, input_octets, output_octets, terminate_cause)
			SELECT hex(randomblob(8)), 1 + i % 100000, 'user' || (1 + i % 100000), '10.0.0.1', '100.64.' || (i % 250) || '.' || (i % 200), '00:11:22:33:44:55',
			  '2026-01-01 00:00:00', '2026-01-01 01:00:00', '2026-01-01 01:00:00', 3600, i * 1000, i * 5000, 'User-Request' FROM n`)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("built the tenant in %s", time.Since(start).Round(time.Millisecond))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		last := t0
		var phases []time.Duration
		bk, err := Take(ctx, ten, TakeOptions{Kind: KindManual, Progress: func(done, total int64) {
			phases = append(phases, time.Since(last).Round(time.Millisecond))
			last = time.Now()
		}})
		if err != nil {
			b.Fatal(err)
		}
		if bk.Verification.State != "ok" || bk.Manifest.RowCounts["radius_sessions"] != 1000000 || bk.Manifest.RowCounts["users"] != 100000 {
			b.Fatalf("%+v %v", bk.Verification, bk.Manifest.RowCounts["radius_sessions"])
		}
		b.Logf("snapshot, counts, zstd, verify: %v", phases)
		b.ReportMetric(float64(time.Since(t0).Milliseconds()), "ms/backup")
		b.ReportMetric(float64(bk.Size)/1e6, "MB-zstd")
	}
	var size int64
	if err := ten.DB.R.QueryRowContext(ctx, `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&size); err == nil {
		b.ReportMetric(float64(size)/1e6, "MB-tenant")
	}
	xrtest.Scalar(b, ten, `SELECT 1`)
}
