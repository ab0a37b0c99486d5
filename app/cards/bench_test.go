package cards

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"xr/app"
	"xr/internal/xrtest"
)

// Benchmarks (never run by go test ./...):
//
//	go test ./app/cards -run '^$' -bench Generate100k -benchtime 1x
//	go test ./app/cards -run '^$' -bench ConcurrentRedeem -benchtime 20x
//	go test ./app/cards -run '^$' -bench SearchByCode1M -benchtime 20000x

// A 100,000-card series, from the request to status ready (the job's work:
// codes from crypto/rand, unique tenant-wide, committed in chunks).
func BenchmarkGenerate100k(b *testing.B) {
	for _, typ := range []CardType{"refill", "prepaid"} {
		b.Run(string(typ), func(b *testing.B) {
			e := newEnv(b)
			plan := e.plan("Day", xrtest.Money("1"), 1, 0, 0)
			for i := 0; i < b.N; i++ {
				res, err := CreateBatch(e.ctx, e.owner, CreateInput{Type: typ, Quantity: 100_000, FaceValue: xrtest.MoneyPtr("5"), Expiration: future,
					RequestID: e.key(), CodeCharset: "numeric", PlanProfileID: plan})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				r, err := Generate(e.ctx, e.ten, res.BatchID, nil)
				if err != nil || r.Status != "ready" {
					b.Fatalf("%+v %v", r, err)
				}
				b.ReportMetric(time.Since(start).Seconds(), "s/series")
			}
		})
	}
}

// One op = 64 goroutines redeeming 64 distinct cards, each request sent
// three times (retries racing the original); every effect applies once.
func BenchmarkConcurrentRedeem(b *testing.B) {
	e := newEnv(b)
	s := e.series(e.owner, CreateInput{Quantity: int64(64 * b.N), FaceValue: xrtest.MoneyPtr("1")})
	codes := e.codes(s.ID)
	users := make([]int64, 64)
	for i := range users {
		users[i] = e.user(fmt.Sprintf("b%02d", i), e.owner.ManagerID)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		var wg sync.WaitGroup
		for i := 0; i < 64; i++ {
			for try := 0; try < 3; try++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					if _, err := Redeem(e.ctx, e.owner, RedeemInput{Code: codes[n*64+i], UserID: users[i], RequestID: fmt.Sprintf("b%d-%d", n, i)}); err != nil {
						b.Error(err)
					}
				}(i)
			}
		}
		wg.Wait()
	}
	b.StopTimer()
	for i, u := range users {
		if e.balance(u) != app.Money(int64(b.N)*1000) {
			b.Fatalf("user %d: %s after %d rounds", i, e.balance(u), b.N)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*64), "µs/redemption")
}

// Card search by code on a tenant holding 1,000,000 cards; reports p50
// and p99 latency of GET /cards/search's app call.
func BenchmarkSearchByCode1M(b *testing.B) {
	e := newEnv(b)
	const total = 1_000_000
	start := time.Now()
	e.exec(`INSERT INTO card_batches(card_mode, quantity, face_value, code_length, code_charset, expiration, status, owner_manager_id, created_by,
		processed, unused, available, created_at, updated_at) VALUES ('refill_balance', ?, 1000, 12, 'numeric', '2099-01-01 00:00:00', 'ready', ?, ?, ?, ?, ?, ?, ?)`,
		total, e.owner.ManagerID, e.owner.ManagerID, total, total, total, app.StampNow(), app.StampNow())
	// x → x·982451653 mod 10^12 is a bijection: unique 12-digit codes.
	e.exec(`WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
		INSERT INTO cards(batch_id, seq, serial, code, owner_manager_id, expires_at, created_at)
		SELECT 1, x, printf('1-%07d', x), printf('%012d', (x * 982451653) % 1000000000000), ?, '2099-01-01 00:00:00', ? FROM n`,
		total, e.owner.ManagerID, app.StampNow())
	b.Logf("seeded %d cards in %s", total, time.Since(start).Round(time.Millisecond))
	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x := rng.Int64N(total) + 1
		code := fmt.Sprintf("%012d", (x*982451653)%1_000_000_000_000)
		t0 := time.Now()
		l, err := Search(e.ctx, e.owner, "code", code)
		lat = append(lat, time.Since(t0))
		if err != nil || l.Serial != fmt.Sprintf("1-%07d", x) {
			b.Fatalf("%s: %+v %v", code, l, err)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(p(0.50), "p50-ms")
	b.ReportMetric(p(0.99), "p99-ms")
}

// The PDF sheet of a prepaid series of 1,000 and 10,000 cards, through the
// render engine with the default card_sheet design (embedded Unicode font,
// a QR code each); the plan's name is Arabic. Reports seconds per sheet,
// pages and size.
//
//	go test ./app/cards -run '^$' -bench RenderPDF -benchtime 1x
func BenchmarkRenderPDF(b *testing.B) {
	for _, n := range []int64{1_000, 10_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			e := newEnv(b)
			plan := e.plan("باقة شهرية", xrtest.Money("1"), 30, 0, 0)
			s := e.series(e.owner, CreateInput{Type: "prepaid", Quantity: n, PlanProfileID: plan})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var w countWriter
				start := time.Now()
				got, pages, err := RenderPDF(e.ctx, e.ten, "ACME", s, &w, nil)
				if err != nil || int64(got) != n {
					b.Fatal(got, err)
				}
				b.ReportMetric(time.Since(start).Seconds(), "s/sheet")
				b.ReportMetric(float64(pages), "pages")
				b.ReportMetric(float64(w)/1e6, "MB")
			}
		})
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
