package webtest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"testing"
	"time"

	"xr/app"
	"xr/app/modules"
)

var benchFirstNames = []string{"Amal", "Bilal", "Chen", "Dana", "Eli", "Farah", "Goran", "Hana", "Ivan", "Jana", "Karim", "Lina", "Mona",
	"Nabil", "Omar", "Petra", "Qasim", "Rana", "Sami", "Tala"}

var benchLastNames = []string{"Haddad", "Khoury", "Nasser", "Saleh", "Mansour", "Aziz", "Farouk", "Rahman", "Yousef", "Zein", "Bakr",
	"Darwish", "Hamdan", "Issa", "Jaber", "Kanaan"}

// benchManager inserts a manager under parent with its closure rows.
func benchManager(ctx context.Context, tx *sql.Tx, parent int64, username string) (int64, error) {
	now := app.StampNow()
	r, err := tx.ExecContext(ctx, `INSERT INTO managers(parent_id, username, password_hash, created_at, updated_at) VALUES (?,?,?,?,?)`,
		parent, username, "x", now, now)
	if err != nil {
		return 0, err
	}
	id, err := r.LastInsertId()
	if err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO manager_tree(ancestor_id, descendant_id, depth)
		SELECT ancestor_id, ?, depth + 1 FROM manager_tree WHERE descendant_id = ? UNION ALL SELECT ?, ?, 0`, id, parent, id, id)
	return id, err
}

// seedConsoleBench inserts n subscribers by plain SQL, as app/subs's
// seedBig does (the triggers keep users_count; the search index is built
// once at the end).
func seedConsoleBench(ctx context.Context, t *app.Tenant, owner int64, n int) error {
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var parents [][]int64 // per reseller: its subtree's managers
		for i := 0; i < 10; i++ {
			r, err := benchManager(ctx, tx, owner, fmt.Sprintf("res%02d", i))
			if err != nil {
				return err
			}
			sub := []int64{r}
			for j := 0; j < 3; j++ {
				s, err := benchManager(ctx, tx, r, fmt.Sprintf("res%02d-%d", i, j))
				if err != nil {
					return err
				}
				sub = append(sub, s)
				for k := 0; k < 3; k++ {
					a, err := benchManager(ctx, tx, s, fmt.Sprintf("res%02d-%d-%d", i, j, k))
					if err != nil {
						return err
					}
					sub = append(sub, a)
				}
			}
			parents = append(parents, sub)
		}
		now := app.StampNow()
		for p := 0; p < 5; p++ {
			if _, err := tx.ExecContext(ctx, `INSERT INTO profiles(name, price, duration_days, bytes_limit, created_at, updated_at) VALUES (?,?,30,?,?,?)`,
				fmt.Sprintf("plan %d", p), (p+1)*5000, int64(p%2)*(50<<30), now, now); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('users_fts_deferred', '1')`); err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, `INSERT INTO users(username, password_sealed, parent_id, profile_id, enabled, expiration, balance,
			bytes_limit, used_bytes, email, firstname, lastname, phone, contract_id, national_id, static_ip, lookup_token, created_at, updated_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		sealed := t.App.Keys.Seal([]byte("pass"))
		base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		now0 := time.Now().UTC()
		for i := 0; i < n; i++ {
			sub := parents[i%10]
			parent := sub[(i/10)%len(sub)]
			exp := now0.Add(time.Duration((i*7919)%(120*24)-(30*24)) * time.Hour) // ~25% expired
			ip := ""
			if i%4 == 0 {
				ip = fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)
			}
			created := app.FormatTime(base.Add(time.Duration(i) * 5 * time.Minute))
			if _, err := st.ExecContext(ctx, fmt.Sprintf("user%06d", i), sealed, parent, 1+i%5, i%13 != 0, app.FormatTime(exp), (i%200)*1000-50000,
				int64(i%2)*(50<<30), int64(i%7)*(1<<30), fmt.Sprintf("user%06d@mail%d.example", i, i%50), benchFirstNames[i%len(benchFirstNames)],
				benchLastNames[(i/3)%len(benchLastNames)], fmt.Sprintf("+1555%07d", i), fmt.Sprintf("C-%06d", i), fmt.Sprintf("N%09d", i*37), ip,
				fmt.Sprintf("tok%08d", i), created, created); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO users_fts(rowid, username, email, firstname, lastname, phone, contract_id, national_id, static_ip)
			SELECT id, username, email, firstname, lastname, phone, contract_id, national_id, static_ip FROM users`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = 'users_fts_deferred'`); err != nil {
			return err
		}
		// A few live sessions for the online filter.
		for i := 0; i < n; i += 97 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO radius_sessions(acct_session_id, user_id, username, start_time) VALUES (?,?,?,?)`,
				fmt.Sprintf("s%d", i), i+1, fmt.Sprintf("user%06d", i), now); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		_, err = t.DB.W.ExecContext(ctx, `ANALYZE`)
	}
	return err
}

// BenchKit opens the 100,000-subscriber instance (seeding it when
// the directory does not hold it yet) behind a loopback server, with no
// rate limits (a benchmark spends a minute's bucket in a second).
func BenchKit(b *testing.B) *Kit {
	b.Helper()
	dir := os.Getenv("XR_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	a, err := modules.Open(app.Config{DataDir: dir, Domain: "xr.test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	a.Limiter = AllowAll{}
	b.Cleanup(a.Close) // after the server's cleanup: cleanups run last first
	k := serve(b, a, nil)
	if _, ok := a.TenantBySlug("acme"); ok {
		return k
	}
	k.Tenant("acme")
	ten := k.Acquire("acme")
	start := time.Now()
	if err := seedConsoleBench(context.Background(), ten, k.System("acme").ManagerID, 100_000); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded 100,000 subscribers in %s (in %s)", time.Since(start).Round(time.Millisecond), dir)
	return k
}

// Ms is d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ReportPercentiles reports p50 and p99 of durations in milliseconds.
func ReportPercentiles(b *testing.B, durs []time.Duration, unit string) {
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	b.ReportMetric(Ms(durs[len(durs)/2]), "p50-"+unit)
	b.ReportMetric(Ms(durs[min(len(durs)-1, len(durs)*99/100)]), "p99-"+unit)
}

// AllowAll is a limiter that allows everything (benchmarks, sweeps).
type AllowAll struct{}

func (AllowAll) Allow(string, int) bool { return true }
