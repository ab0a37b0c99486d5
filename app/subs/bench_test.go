package subs

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"xr/app"
	"xr/internal/xrtest"
)

// The 100,000-subscriber benchmark tenant: the owner, 10 resellers, each
// with 3 sub-resellers, each with 3 agents (130 managers, 3 levels below
// the owner); every reseller's subtree holds 10,000 subscribers. It is
// seeded once per process (only when a benchmark asks for it) into a temp
// dir removed by TestMain.

var (
	bigOnce sync.Once
	bigDir  string
	bigErr  error
	bigL1   []int64 // the 10 first-level resellers
)

func TestMain(m *testing.M) {
	code := m.Run()
	if bigDir != "" && os.Getenv("XR_BENCH_DIR") == "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

var firstNames = []string{"Amal", "Bilal", "Chen", "Dana", "Eli", "Farah", "Goran", "Hana", "Ivan", "Jana", "Karim", "Lina", "Mona",
	"Nabil", "Omar", "Petra", "Qasim", "Rana", "Sami", "Tala"}
var lastNames = []string{"Haddad", "Khoury", "Nasser", "Saleh", "Mansour", "Aziz", "Farouk", "Rahman", "Yousef", "Zein", "Bakr",
	"Darwish", "Hamdan", "Issa", "Jaber", "Kanaan"}

// seedBig inserts n subscribers under a 3-level tree by plain SQL (the
// triggers keep users_count and the search index as the app would).
func seedBig(ctx context.Context, t *app.Tenant, owner int64, n int) ([]int64, error) {
	var l1 []int64
	var parents [][]int64 // per L1: its subtree's managers
	err := t.Write(ctx, func(tx *sql.Tx) error {
		for i := 0; i < 10; i++ {
			var r int64
			if err := insertManagerSQL(ctx, tx, owner, fmt.Sprintf("res%02d", i), &r); err != nil {
				return err
			}
			l1 = append(l1, r)
			sub := []int64{r}
			for j := 0; j < 3; j++ {
				var s int64
				if err := insertManagerSQL(ctx, tx, r, fmt.Sprintf("res%02d-%d", i, j), &s); err != nil {
					return err
				}
				sub = append(sub, s)
				for k := 0; k < 3; k++ {
					var a int64
					if err := insertManagerSQL(ctx, tx, s, fmt.Sprintf("res%02d-%d-%d", i, j, k), &a); err != nil {
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
			l := i % 10
			sub := parents[l]
			parent := sub[(i/10)%len(sub)]
			exp := now0.Add(time.Duration((i*7919)%(120*24)-(30*24)) * time.Hour) // ~25% expired
			ip := ""
			if i%4 == 0 {
				ip = fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)
			}
			created := app.FormatTime(base.Add(time.Duration(i) * 5 * time.Minute))
			if _, err := st.ExecContext(ctx, fmt.Sprintf("user%06d", i), sealed, parent, 1+i%5, i%13 != 0, app.FormatTime(exp), (i%200)*1000-50000,
				int64(i%2)*(50<<30), int64(i%7)*(1<<30), fmt.Sprintf("user%06d@mail%d.example", i, i%50), firstNames[i%len(firstNames)],
				lastNames[(i/3)%len(lastNames)], fmt.Sprintf("+1555%07d", i), fmt.Sprintf("C-%06d", i), fmt.Sprintf("N%09d", i*37), ip,
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
	return l1, err
}

func bigEnv(b *testing.B) *env {
	bigOnce.Do(func() {
		// XR_BENCH_DIR keeps the seeded tenant between runs (it is reused
		// when it already holds it).
		if bigDir = os.Getenv("XR_BENCH_DIR"); bigDir != "" {
			if _, err := os.Stat(bigDir + "/tenants/acme.db"); err == nil {
				e := newEnvIn(b, bigDir, nil)
				bigL1 = nil
				rows, err := e.ten.DB.R.Query(`SELECT id FROM managers WHERE username LIKE 'res__' ORDER BY id`)
				if err != nil {
					bigErr = err
					return
				}
				defer rows.Close()
				for rows.Next() {
					var id int64
					rows.Scan(&id)
					bigL1 = append(bigL1, id)
				}
				return
			}
			os.MkdirAll(bigDir, 0o700)
		} else if bigDir, bigErr = os.MkdirTemp("", "xr-bench-"); bigErr != nil {
			return
		}
		e := newEnvIn(b, bigDir, nil)
		start := time.Now()
		bigL1, bigErr = seedBig(e.ctx, e.ten, e.owner.ManagerID, 100_000)
		b.Logf("seeded 100,000 subscribers in %s", time.Since(start).Round(time.Millisecond))
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return newEnvIn(b, bigDir, nil)
}

// benchList runs ListUsers with query v as actor and reports p50/p99.
func benchList(b *testing.B, act *app.Actor, v url.Values, wantTotal func(int) bool) {
	lq, err := app.ParseList(v, UserListSpec())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	p, err := ListUsers(ctx, act, lq)
	if err != nil {
		b.Fatal(err)
	}
	if !wantTotal(p.Meta.Total) {
		b.Fatalf("total %d", p.Meta.Total)
	}
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := ListUsers(ctx, act, lq); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(durs[len(durs)/2]), "p50-ms")
	b.ReportMetric(ms(durs[min(len(durs)-1, len(durs)*99/100)]), "p99-ms")
	b.ReportMetric(float64(p.Meta.Total), "total")
}

// BenchmarkListUsers: go test ./app/subs -run '^$' -bench ListUsers -benchtime 200x
func BenchmarkListUsers(b *testing.B) {
	e := bigEnv(b)
	any := func(n int) bool { return n > 0 }
	b.Run("default", func(b *testing.B) {
		benchList(b, e.owner, url.Values{}, func(n int) bool { return n == 100_000 })
	})
	b.Run("filter_enabled", func(b *testing.B) {
		benchList(b, e.owner, url.Values{"filter[enabled]": {"true"}}, any)
	})
	b.Run("q_two_filters", func(b *testing.B) {
		benchList(b, e.owner, url.Values{"q": {"555001"}, "filter[enabled]": {"true"}, "filter[expired]": {"false"}}, any)
	})
	b.Run("q_common_two_filters", func(b *testing.B) {
		benchList(b, e.owner, url.Values{"q": {"hana"}, "filter[enabled]": {"true"}, "filter[profile_id]": {"3"}}, any)
	})
	b.Run("scoped_reseller", func(b *testing.B) {
		benchList(b, xrtest.Reseller(e.ten, bigL1[3]), url.Values{}, func(n int) bool { return n == 10_000 })
	})
	b.Run("scoped_reseller_q_filter", func(b *testing.B) {
		benchList(b, xrtest.Reseller(e.ten, bigL1[3]), url.Values{"q": {"mail3"}, "filter[expired]": {"true"}}, any)
	})
}

// TestExplainHotQueries checks the plans of the list's hot queries (the
// exact SQL ListUsers runs): counts and page ids read the covering index
// (never the users table rows), the search goes through the trigram index,
// the default page is walked in id order without a sort.
func TestExplainHotQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.manager(e.owner.ManagerID, "r")
	for i := 0; i < 50; i++ {
		e.user(fmt.Sprintf("u%03d", i), res, func(n *NewUser) { n.Email = fmt.Sprintf("u%d@x.example", i) })
	}
	now := time.Now().UTC()
	plan := func(act *app.Actor, v url.Values, count bool) string {
		t.Helper()
		lq, err := app.ParseList(v, UserListSpec())
		if err != nil {
			t.Fatal(err)
		}
		f, err := buildUserFilter(e.ctx, e.ten.DB.R, act, lq, now)
		if err != nil {
			t.Fatal(err)
		}
		q := pageSQL(f, lq)
		if count {
			q = countSQL(f)
		}
		rows, err := e.ten.DB.R.Query(`EXPLAIN QUERY PLAN `+q, f.args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			rows.Scan(&id, &parent, &notused, &detail)
			out = append(out, detail)
		}
		return strings.Join(out, "\n")
	}
	fullScan := func(p string) bool {
		for _, l := range strings.Split(p, "\n") {
			if l == "SCAN u" {
				return true
			}
		}
		return false
	}
	scoped := xrtest.Reseller(e.ten, res)
	for name, c := range map[string]struct {
		act   *app.Actor
		v     url.Values
		count bool
		want  string
	}{
		"scoped count":               {scoped, url.Values{}, true, "COVERING INDEX users_live_cover"},
		"scoped filtered count":      {scoped, url.Values{"filter[enabled]": {"1"}, "filter[expired]": {"0"}}, true, "COVERING INDEX users_live_cover"},
		"scoped page":                {scoped, url.Values{}, false, "users_live_cover"},
		"tenant filtered count":      {e.owner, url.Values{"filter[enabled]": {"true"}}, true, "COVERING INDEX users_live_"},
		"tenant expiring count":      {e.owner, url.Values{"filter[expiring_within_days]": {"7"}}, true, "COVERING INDEX users_live_"},
		"tenant profile count":       {e.owner, url.Values{"filter[profile_id]": {"1"}}, true, "COVERING INDEX users_profile"},
		"q search page":              {e.owner, url.Values{"q": {"x.example"}, "filter[enabled]": {"1"}}, false, "VIRTUAL TABLE INDEX 0:M"},
		"q search filters by index":  {e.owner, url.Values{"q": {"x.example"}, "filter[enabled]": {"1"}}, false, "COVERING INDEX users_live_ids (id=?)"},
		"numeric q filters by index": {e.owner, url.Values{"q": {"123"}, "filter[expired]": {"1"}}, false, "COVERING INDEX users_live_ids (id=?)"},
		"q search scoped page":       {scoped, url.Values{"q": {"x.example"}}, false, "VIRTUAL TABLE INDEX 0:M"},
		"online page":                {e.owner, url.Values{"filter[online]": {"true"}}, false, "radius_sessions_live_user"},
		"username_exact page":        {e.owner, url.Values{"filter[username_exact]": {"U001"}}, false, "INDEX"},
		"created_from tenant count":  {e.owner, url.Values{"filter[created_from]": {"2020-01-01 00:00:00"}}, true, "COVERING INDEX users_live_"},
	} {
		p := plan(c.act, c.v, c.count)
		if !strings.Contains(p, c.want) || (c.count && fullScan(p)) {
			t.Errorf("%s: want %q in plan:\n%s", name, c.want, p)
		}
	}
	if p := plan(e.owner, url.Values{}, false); strings.Contains(p, "TEMP B-TREE") || !strings.Contains(p, "SCAN u") {
		t.Errorf("default page should walk ids in order:\n%s", p)
	}
}
