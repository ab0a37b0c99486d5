package aaa_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"
	"xr/internal/xrtest"

	"xr/app"
	"xr/app/aaa"
	"xr/app/modules"
	"xr/db"
)

// The usage-history benchmark tenant: 10,000 subscribers, 5,000 open
// sessions and XR_BENCH_SESSIONS (default 50,000,000) closed sessions over
// the last 170 days, with the hourly and daily rollups accounting would
// have written. XR_BENCH_DIR keeps the seeded data dir between runs (a
// seed interrupted part-way resumes where it stopped); without it the seed
// goes to a temp dir removed at the end.
//
//	XR_BENCH_DIR=/var/tmp/xr-usage go test ./app/aaa -run '^$' -bench UsageReads -benchtime 200x -timeout 0
const (
	benchUsers    = 10_000
	benchOpen     = 5_000
	benchSpanDays = 170
	seedChunk     = 1_000_000
)

type usageBench struct {
	a     *app.App
	ten   *app.Tenant
	owner *app.Actor
	first int64 // id of user00000
}

func benchSessions() int64 {
	if v, err := strconv.ParseInt(os.Getenv("XR_BENCH_SESSIONS"), 10, 64); err == nil && v > 0 {
		return v
	}
	return 50_000_000
}

func openUsageBench(b *testing.B) *usageBench {
	dir := os.Getenv("XR_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	a, err := modules.Open(app.Config{DataDir: dir, Domain: "xr.test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := os.Stat(db.TenantPath(dir, "usage")); err != nil {
		if _, _, err := a.CreateTenant(ctx, app.NewTenant{Slug: "usage", Name: "Usage", AdminUsername: "owner", AdminPassword: "Owner-pass-1"}); err != nil {
			b.Fatal(err)
		}
	}
	ten, release, err := a.Acquire("usage")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { release(); a.Close() })
	ub := &usageBench{a: a, ten: ten}
	var owner int64
	if err := ten.DB.R.QueryRow(`SELECT MIN(id) FROM managers`).Scan(&owner); err != nil {
		b.Fatal(err)
	}
	ub.owner = &app.Actor{Tenant: ten, ManagerID: owner, TenantWide: true, IsAdmin: true, Perms: map[app.Perm]bool{}}
	if err := ub.seed(b, ctx, owner); err != nil {
		b.Fatal(err)
	}
	if err := ten.DB.R.QueryRow(`SELECT id FROM users WHERE username = 'user00000'`).Scan(&ub.first); err != nil {
		b.Fatal(err)
	}
	return ub
}

// seed fills the tenant by INSERT ... SELECT from recursive CTEs, a
// million rows per transaction (the WAL stays small; a run that was
// stopped resumes at the last committed chunk).
func (ub *usageBench) seed(b *testing.B, ctx context.Context, owner int64) error {
	t := ub.ten
	var done string
	if t.DB.R.QueryRow(`SELECT value FROM meta WHERE key = 'bench_usage_seeded'`).Scan(&done); done != "" {
		return nil
	}
	started := time.Now()
	// A large page cache for the writer: index inserts stay in memory.
	if _, err := t.DB.W.ExecContext(ctx, `PRAGMA cache_size = -2000000`); err != nil {
		return err
	}
	var nUsers int64
	t.DB.R.QueryRow(`SELECT COUNT(*) FROM users`).Scan(&nUsers)
	if nUsers == 0 {
		if _, err := aaa.CreateNAS(ctx, xrtest.System(b, t), aaa.NASInput{Name: app.Opt[string]{Set: true, V: "lo"}, IP: app.Opt[string]{Set: true, V: "127.0.0.1"},
			Secret: app.Opt[string]{Set: true, V: secret}}); err != nil {
			return err
		}
		sealed := ub.a.Keys.Seal([]byte("pass"))
		exp := app.FormatTime(time.Now().Add(720 * time.Hour))
		now := app.StampNow()
		err := t.Write(ctx, func(tx *sql.Tx) error {
			var plan int64
			if err := tx.QueryRowContext(ctx, `INSERT INTO profiles(name, price, duration_days, bytes_limit, simultaneous_use, created_at, updated_at)
				VALUES ('FUP', 10000, 30, 0, 2, ?, ?) RETURNING id`, now, now).Scan(&plan); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ?)
				INSERT INTO users(username, password_sealed, parent_id, profile_id, enabled, expiration, lookup_token, created_at, updated_at)
				SELECT printf('user%05d', i), ?, ?, ?, 1, ?, printf('tok%08d', i), ?, ? FROM c`, benchUsers-1, sealed, owner, plan, exp, now, now)
			return err
		})
		if err != nil {
			return err
		}
	}
	var nas, u0 int64
	if err := t.DB.R.QueryRow(`SELECT MIN(id) FROM nas`).Scan(&nas); err != nil {
		return err
	}
	if err := t.DB.R.QueryRow(`SELECT id FROM users WHERE username = 'user00000'`).Scan(&u0); err != nil {
		return err
	}
	// The seed's clock: now, fixed at the first run.
	var t0 int64
	if err := t.DB.R.QueryRow(`SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'bench_usage_t0'`).Scan(&t0); err != nil {
		t0 = time.Now().Unix() / 3600 * 3600
		if _, err := t.DB.W.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('bench_usage_t0', ?)`, strconv.FormatInt(t0, 10)); err != nil {
			return err
		}
	}
	total := benchSessions()
	span := int64(benchSpanDays * 86400)
	begin := t0 - span
	var have int64
	t.DB.R.QueryRow(`SELECT COUNT(*) FROM radius_sessions WHERE id <= ?`, total).Scan(&have)
	// Closed sessions: id i+1 for i in [0, total); user i % users; evenly
	// spread over the span, each 1 to 41 minutes long.
	for lo := have; lo < total; lo += seedChunk {
		hi := min(lo+seedChunk, total) - 1
		err := t.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `WITH RECURSIVE c(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM c WHERE i < ?),
				g(i, st, dur) AS (SELECT i, ? + i * ? / ?, 60 + (i * 7919) % 2400 FROM c)
				INSERT INTO radius_sessions(id, acct_session_id, user_id, username, nas_id, nas_ip, framed_ip, calling_station_id, start_time,
					update_time, stop_time, session_time, input_octets, output_octets, input_packets, output_packets, terminate_cause, kind,
					profile_name, close_reason, charged_bytes, charged_seconds)
				SELECT i + 1, printf('h%010d', i), ? + i % ?, printf('user%05d', i % ?), ?, '127.0.0.1',
					printf('10.%d.%d.%d', (i / 65536) % 256, (i / 256) % 256, i % 256),
					printf('02:00:00:%02x:%02x:%02x', (i % ?) / 65536 % 256, (i % ?) / 256 % 256, (i % ?) % 256),
					datetime(st, 'unixepoch'), datetime(st + dur, 'unixepoch'), datetime(st + dur, 'unixepoch'), dur,
					(i * 104729) % 500000000, (i * 1299709) % 50000000, (i * 7) % 100000, (i * 3) % 100000,
					CASE i % 5 WHEN 0 THEN 'User-Request' WHEN 1 THEN 'Idle-Timeout' WHEN 2 THEN 'Session-Timeout' WHEN 3 THEN 'Lost-Carrier' ELSE 'Admin-Reset' END,
					'subscriber', 'FUP', 'nas', (i * 104729) % 500000000 + (i * 1299709) % 50000000, dur
				FROM g`, lo, hi, begin, span, total, u0, benchUsers, benchUsers, nas, benchUsers, benchUsers, benchUsers)
			return err
		})
		if err != nil {
			return err
		}
		if (hi+1)%(10*seedChunk) == 0 || hi+1 == total {
			b.Logf("seeded %d closed sessions (%s)", hi+1, time.Since(started).Round(time.Second))
		}
	}
	var open int64
	t.DB.R.QueryRow(`SELECT COUNT(*) FROM radius_sessions WHERE stop_time IS NULL`).Scan(&open)
	if open == 0 {
		err := t.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ?)
				INSERT INTO radius_sessions(acct_session_id, user_id, username, nas_id, nas_ip, framed_ip, calling_station_id, start_time, update_time,
					session_time, input_octets, output_octets, kind, profile_name)
				SELECT printf('o%06d', i), ? + i, printf('user%05d', i), ?, '127.0.0.1', printf('10.200.%d.%d', i / 256, i % 256),
					printf('02:01:00:00:%02x:%02x', i / 256, i % 256), datetime(? - 60 * (i % 60), 'unixepoch'), datetime(?, 'unixepoch'),
					60 * (i % 60), i * 1000, i * 100, 'subscriber', 'FUP' FROM c`, benchOpen-1, u0, nas, t0, t0)
			return err
		})
		if err != nil {
			return err
		}
	}
	// Rollups: every hour of the span for every subscriber (a session
	// starts about every 49 minutes for each), and the days they sum to.
	var rolled int64
	t.DB.R.QueryRow(`SELECT COALESCE(MAX(user_id), 0) FROM usage_rollups WHERE grain = 'h'`).Scan(&rolled)
	hours := span / 3600
	for u := max(rolled-u0+1, 0); u < benchUsers; u += 250 {
		hiU := min(u+250, benchUsers) - 1
		err := t.Write(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `WITH RECURSIVE us(j) AS (SELECT ? UNION ALL SELECT j + 1 FROM us WHERE j < ?),
				hs(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM hs WHERE k < ?)
				INSERT INTO usage_rollups(user_id, grain, bucket, input_octets, output_octets, seconds, sessions)
				SELECT ? + j, 'h', ? + k * 3600, ((j + 1) * (k + 7) * 104729) % 500000000, ((j + 3) * (k + 1) * 1299709) % 50000000,
					(j * 31 + k * 17) % 3600, 1 + (j + k) % 2 FROM us, hs`, u, hiU, hours-1, u0, begin); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO usage_rollups(user_id, grain, bucket, input_octets, output_octets, seconds, sessions)
				SELECT user_id, 'd', bucket / 86400 * 86400, SUM(input_octets), SUM(output_octets), SUM(seconds), SUM(sessions)
				FROM usage_rollups WHERE grain = 'h' AND user_id BETWEEN ? AND ? GROUP BY user_id, bucket / 86400`, u0+u, u0+hiU)
			return err
		})
		if err != nil {
			return err
		}
	}
	if _, err := t.DB.W.ExecContext(ctx, `ANALYZE`); err != nil {
		return err
	}
	if _, err := t.DB.W.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('bench_usage_seeded', ?)`, app.StampNow()); err != nil {
		return err
	}
	b.Logf("seeded %d closed + %d open sessions and their rollups in %s", total, benchOpen, time.Since(started).Round(time.Second))
	return nil
}

// measure runs fn b.N times and reports its p50 and p99.
func measure(b *testing.B, fn func() error) {
	if err := fn(); err != nil { // warm
		b.Fatal(err)
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(durs[len(durs)/2]), "p50-ms")
	b.ReportMetric(ms(durs[min(len(durs)-1, len(durs)*99/100)]), "p99-ms")
}

// BenchmarkUsageReads measures the reads of the usage history against the
// seeded tenant: the live-session list, a subscriber's usage by hour, day
// and month, and a subscriber's closed sessions (first page, and a page
// reached by cursor deep in the history).
//
//	XR_BENCH_DIR=/var/tmp/xr-usage go test ./app/aaa -run '^$' -bench UsageReads -benchtime 200x -timeout 0
func BenchmarkUsageReads(b *testing.B) {
	ub := openUsageBench(b)
	ctx := context.Background()
	uid := ub.first + 4242
	list := func(spec app.ListSpec, v url.Values) app.ListQuery {
		lq, err := app.ParseList(v, spec)
		if err != nil {
			b.Fatal(err)
		}
		return lq
	}
	b.Run("admin_sessions", func(b *testing.B) {
		lq := list(aaa.SessionListSpec, url.Values{})
		measure(b, func() error {
			p, err := aaa.ListSessions(ctx, ub.owner, lq)
			if err == nil && p.Meta.Total != benchOpen {
				err = fmt.Errorf("total %d", p.Meta.Total)
			}
			return err
		})
	})
	now := time.Now().UTC()
	for _, c := range []struct {
		name string
		v    url.Values
	}{
		{"usage_hour_24h", url.Values{"granularity": {"hour"}}},
		{"usage_hour_30d", url.Values{"granularity": {"hour"}, "from": {now.AddDate(0, 0, -30).Format(time.DateOnly)}}},
		{"usage_day_30d", url.Values{"granularity": {"day"}}},
		{"usage_day_180d", url.Values{"granularity": {"day"}, "from": {now.AddDate(0, 0, -180).Format(time.DateOnly)}}},
		{"usage_month_12m", url.Values{"granularity": {"month"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			lq := list(aaa.UsageSpec, c.v)
			measure(b, func() error {
				p, err := aaa.UserUsage(ctx, ub.owner, uid, lq)
				if err == nil && p.Meta.Aggregates.(map[string]any)["total_bytes"].(int64) == 0 {
					err = fmt.Errorf("no usage")
				}
				return err
			})
		})
	}
	b.Run("user_sessions_first", func(b *testing.B) {
		lq := list(aaa.UserSessionSpec, url.Values{})
		measure(b, func() error {
			p, err := aaa.ListUserSessions(ctx, ub.owner, uid, lq)
			if err == nil && (len(p.Rows) != min(app.DefaultPageSize, p.Meta.Total) || p.Meta.HasNext != (p.Meta.NextCursor != "")) {
				err = fmt.Errorf("rows %d", len(p.Rows))
			}
			return err
		})
	})
	b.Run("user_sessions_cursor_deep", func(b *testing.B) {
		// Walk 60 pages down, then measure reading the page after.
		lq := list(aaa.UserSessionSpec, url.Values{})
		var cursor string
		for range 60 {
			p, err := aaa.ListUserSessions(ctx, ub.owner, uid, lq)
			if err != nil {
				b.Fatal(err)
			}
			cursor = p.Meta.NextCursor
			lq = list(aaa.UserSessionSpec, url.Values{"cursor": {cursor}})
		}
		measure(b, func() error {
			_, err := aaa.ListUserSessions(ctx, ub.owner, uid, lq)
			return err
		})
	})
}

// BenchmarkUsageArchive runs the session archive once against the seeded
// tenant with a retention of XR_BENCH_ARCHIVE_DAYS (it is skipped without
// it): it really moves the oldest sessions out of the bench database.
//
//	XR_BENCH_DIR=/var/tmp/xr-usage XR_BENCH_ARCHIVE_DAYS=169 go test ./app/aaa -run '^$' -bench UsageArchive -benchtime 1x -timeout 0
func BenchmarkUsageArchive(b *testing.B) {
	days := os.Getenv("XR_BENCH_ARCHIVE_DAYS")
	if days == "" {
		b.Skip("XR_BENCH_ARCHIVE_DAYS not set")
	}
	ub := openUsageBench(b)
	ctx := context.Background()
	if err := ub.ten.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
			app.SessionRetentionSetting, days)
		return err
	}); err != nil {
		b.Fatal(err)
	}
	var archived int64
	b.ResetTimer()
	for b.Loop() {
		res, err := aaa.ArchiveSessions(ctx, ub.ten, time.Now().UTC())
		if err != nil {
			b.Fatal(err)
		}
		archived += res.Archived
	}
	b.ReportMetric(float64(archived), "archived")
	b.ReportMetric(float64(archived)/b.Elapsed().Seconds(), "rows/s")
}
