package pos

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"xr/app"
	"xr/app/cards"
	"xr/app/identity"
	"xr/app/reports"
	"xr/app/subs"
	"xr/internal/xrtest"
)

type env struct {
	t     testing.TB
	a     *app.App
	ten   *app.Tenant
	owner *app.Actor
	ctx   context.Context
	seq   atomic.Int64
}

func newEnv(t testing.TB) *env {
	t.Helper()
	a := xrtest.TenantApp(t, "acme", identity.Module, subs.Module, cards.Module, Module)
	ten := xrtest.Acquire(t, a, "acme")
	return &env{t: t, a: a, ten: ten, owner: xrtest.System(t, ten), ctx: context.Background()}
}

func (e *env) key() string { return fmt.Sprintf("k-%d", e.seq.Add(1)) }

func (e *env) scalar(q string, args ...any) int64 {
	e.t.Helper()
	return xrtest.Scalar(e.t, e.ten, q, args...)
}

// cashier makes a manager under the owner holding only prm_pos_sell (and
// prm_pos_void when void), with a wallet of balance.
func (e *env) cashier(name string, balance string, void bool) *app.Actor {
	e.t.Helper()
	return e.cashierUnder(0, name, balance, void)
}

func (e *env) cashierUnder(parent int64, name string, balance string, void bool) *app.Actor {
	e.t.Helper()
	in := identity.ManagerInput{Username: app.Opt[string]{Set: true, V: name}, Password: app.Opt[string]{Set: true, V: "Cashier-pass-1"}}
	if parent != 0 {
		in.ParentManagerID = app.Opt[int64]{Set: true, V: parent}
	}
	m, err := identity.CreateManager(e.ctx, e.owner, in)
	if err != nil {
		e.t.Fatal(err)
	}
	if b := xrtest.Money(balance); b != 0 {
		e.wallet(m.ID, b)
	}
	perms := map[app.Perm]bool{PermPosSell: true}
	if void {
		perms[PermPosVoid] = true
	}
	return &app.Actor{Tenant: e.ten, ManagerID: m.ID, Kind: app.CredSession, Perms: perms}
}

func (e *env) wallet(id int64, amount app.Money) {
	e.t.Helper()
	if err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		_, _, err := identity.MoveManagerWallet(e.ctx, tx, identity.WalletMove{ManagerID: id, Amount: amount, Kind: "deposit", NoDebtCheck: true})
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) balance(id int64) app.Money {
	e.t.Helper()
	return app.Money(e.scalar(`SELECT balance FROM managers WHERE id = ?`, id))
}

// series generates a ready refill series of face value 10 owned by owner
// (0 = the tenant owner) and gives each of priced a price of 7 per card.
func (e *env) series(qty int64, owner int64, priced ...int64) int64 {
	e.t.Helper()
	in := cards.CreateInput{Type: "refill", Quantity: qty, FaceValue: xrtest.MoneyPtr("10"), Expiration: "2099-12-31", RequestID: e.key(),
		CodeCharset: "alnum_no_ambig", OwnerManagerID: owner}
	if owner != 0 {
		in.UnitPrice = xrtest.MoneyPtr("7")
	}
	res, err := cards.CreateBatch(e.ctx, e.owner, in)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := cards.Generate(e.ctx, e.ten, res.BatchID, nil); err != nil {
		e.t.Fatal(err)
	}
	for _, m := range priced {
		if _, err := cards.SetPricing(e.ctx, e.owner, res.BatchID, m, cards.PriceInput{UnitPrice: xrtest.MoneyPtr("7")}); err != nil {
			e.t.Fatal(err)
		}
	}
	return res.BatchID
}

func (e *env) stockOK(batchID int64) {
	e.t.Helper()
	if d, err := cards.StockCheck(e.ctx, e.ten.DB.R, batchID); err != nil || d != "" {
		e.t.Fatalf("stock check of series %d: %q %v", batchID, d, err)
	}
}

func (e *env) user(name string, parent int64, plan int64) int64 {
	e.t.Helper()
	var id int64
	err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		c, err := subs.CreateUser(e.ctx, tx, e.ten, subs.NewUser{Username: name, Password: "pw-" + name + "-1", ParentID: parent, ProfileID: plan})
		if c != nil {
			id = c.ID
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *env) plan(name, price string) int64 {
	e.t.Helper()
	p, err := subs.CreateProfile(e.ctx, e.owner, subs.ProfileInput{Name: app.Opt[string]{Set: true, V: name},
		Price: app.Opt[app.Money]{Set: true, V: xrtest.Money(price)}, DurationDays: app.Opt[int64]{Set: true, V: 30}})
	if err != nil {
		e.t.Fatal(err)
	}
	return p.ID
}

func (e *env) open(act *app.Actor, float string) *Shift {
	e.t.Helper()
	s, err := OpenShift(e.ctx, act, OpenShiftInput{OpeningFloat: xrtest.Money(float)})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func cardLine(batch, qty int64, source CardSource) LineInput {
	return LineInput{Kind: KindCard, BatchID: batch, Quantity: qty, Source: source}
}

func TestShiftsAndReport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.cashier("till1", "100", false)
	b := e.series(5, 0, c.ManagerID)
	// No shift: the sale is refused and stores nothing.
	_, err := Sell(e.ctx, c, SaleInput{RequestID: e.key(), Lines: []LineInput{cardLine(b, 1, "")}})
	xrtest.WantReason(t, err, 409, "shift_not_open")
	_, err = CurrentShift(e.ctx, c)
	xrtest.WantReason(t, err, 404, "shift_not_open")
	s := e.open(c, "50")
	_, err = OpenShift(e.ctx, c, OpenShiftInput{})
	xrtest.WantReason(t, err, 409, "shift_already_open")
	_, err = OpenShift(e.ctx, c, OpenShiftInput{OpeningFloat: xrtest.Money("-1")})
	xrtest.WantReason(t, err, 400, "amount_must_not_be_negative")
	cur, err := CurrentShift(e.ctx, c)
	if err != nil || cur.ID != s.ID || cur.OpeningFloat != xrtest.Money("50") || cur.Status != "open" {
		t.Fatalf("current: %+v %v", cur, err)
	}
	// Two cash sales (2 cards, 1 card) and one by card payment.
	for _, q := range []int64{2, 1} {
		if _, err := Sell(e.ctx, c, SaleInput{RequestID: e.key(), Lines: []LineInput{cardLine(b, q, "")}}); err != nil {
			t.Fatal(err)
		}
	}
	byCard, err := Sell(e.ctx, c, SaleInput{RequestID: e.key(), PaymentMethod: "card", Lines: []LineInput{cardLine(b, 1, "")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Void(e.ctx, c, byCard.ID, VoidInput{}); err != nil {
		t.Fatal(err)
	}
	// Another cashier neither sees nor closes this shift.
	other := e.cashier("till2", "0", false)
	_, err = CloseShift(e.ctx, other, s.ID, CloseShiftInput{CountedCash: xrtest.MoneyPtr("1")})
	xrtest.WantReason(t, err, 404, "not_found")
	_, err = CloseShift(e.ctx, c, s.ID, CloseShiftInput{})
	xrtest.WantReason(t, err, 400, "counted_cash_required")
	closed, err := CloseShift(e.ctx, c, s.ID, CloseShiftInput{CountedCash: xrtest.MoneyPtr("78.5")})
	if err != nil {
		t.Fatal(err)
	}
	// Expected: float 50 + 3 cards × 10 in cash = 80; counted 78.5.
	if closed.Status != "closed" || *closed.ExpectedCash != xrtest.Money("80") || *closed.CountedCash != xrtest.Money("78.5") || *closed.Difference != xrtest.Money("-1.5") {
		t.Fatalf("closed: %+v", closed)
	}
	_, err = CloseShift(e.ctx, c, s.ID, CloseShiftInput{CountedCash: xrtest.MoneyPtr("1")})
	xrtest.WantReason(t, err, 409, "shift_closed")
	r, err := Report(e.ctx, c, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sales != 2 || r.Voids != 1 || r.Total != xrtest.Money("30") || r.VoidedAmount != xrtest.Money("10") || r.ExpectedCash != xrtest.Money("80") ||
		*r.CountedCash != xrtest.Money("78.5") || len(r.Products) != 1 || r.Products[0].Quantity != 3 || r.Products[0].Amount != xrtest.Money("30") ||
		len(r.Methods) != 1 || r.Methods[0].Method != "cash" || r.Methods[0].Sales != 2 {
		t.Fatalf("report: %+v", r)
	}
	// The shift is gone: selling needs a new one.
	_, err = Sell(e.ctx, c, SaleInput{RequestID: e.key(), Lines: []LineInput{cardLine(b, 1, "")}})
	xrtest.WantReason(t, err, 409, "shift_not_open")
	list, err := ListShifts(e.ctx, c, app.ListQuery{Page: 1, PageSize: 10, SortExpr: "s.id"})
	if err != nil || len(list.Rows) != 1 {
		t.Fatalf("shifts: %+v %v", list, err)
	}
	e.stockOK(b)
}

func TestSellStockMintRenewTopup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.cashier("till", "100", false)
	// A series owned by the cashier (it paid 3 × 7 at generation) and one
	// of the owner's it was allotted at 7.
	own := e.series(3, c.ManagerID)
	allotted := e.series(2, 0, c.ManagerID)
	afterGen := e.balance(c.ManagerID)
	if afterGen != xrtest.Money("79") {
		t.Fatalf("wallet after generation: %s", afterGen)
	}
	plan := e.plan("Month", "20")
	u := e.user("alice", c.ManagerID, plan)
	e.open(c, "0")
	p, err := ListProducts(e.ctx, c)
	if err != nil || len(p.Cards) != 2 || p.Cards[0].BatchID != own || p.Cards[0].Available != 3 || !p.Cards[0].Mintable ||
		p.Cards[1].BatchID != allotted || p.Cards[1].Available != 0 || p.Cards[1].UnitPrice != xrtest.Money("7") || len(p.Renewals) != 1 {
		t.Fatalf("products: %+v %v", p, err)
	}
	s, err := Sell(e.ctx, c, SaleInput{RequestID: e.key(), Lines: []LineInput{
		cardLine(own, 4, ""), // 3 from stock, 1 minted at 7
		cardLine(allotted, 2, "mint"),
		{Kind: KindRenewal, Username: "alice"},
		{Kind: KindTopup, UserID: u, Amount: xrtest.Money("5")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Customer pays 40 + 20 + 20 + 5; the wallet pays 7 + 14 + 20 + 5.
	if s.Total != xrtest.Money("85") || s.Cost != xrtest.Money("46") || len(s.Lines) != 4 || len(s.Lines[0].Cards) != 4 || s.Lines[0].Minted != 1 ||
		len(s.Lines[1].Cards) != 2 || s.Replay {
		t.Fatalf("sale: %+v", s)
	}
	if got := e.balance(c.ManagerID); got != xrtest.Money("33") {
		t.Fatalf("wallet %s, want 33", got)
	}
	if e.scalar(`SELECT quantity FROM card_batches WHERE id = ?`, own) != 4 || e.scalar(`SELECT sold_counter FROM card_batches WHERE id = ?`, own) != 4 ||
		e.scalar(`SELECT quantity FROM card_batches WHERE id = ?`, allotted) != 4 || e.scalar(`SELECT sold_counter FROM card_batches WHERE id = ?`, allotted) != 2 {
		t.Fatal("series counters")
	}
	if n := e.scalar(`SELECT COUNT(*) FROM cards WHERE disposition = 'sold_counter' AND state = 'unused'`); n != 6 {
		t.Fatalf("sold cards %d", n)
	}
	if e.scalar(`SELECT balance FROM users WHERE id = ?`, u) != int64(xrtest.Money("5")) || e.scalar(`SELECT COUNT(*) FROM user_activations WHERE user_id = ?`, u) != 1 {
		t.Fatal("subscriber effects")
	}
	e.stockOK(own)
	e.stockOK(allotted)
	// A receipt with the codes, in both layouts.
	pj, err := GetPrintJob(e.ctx, c, s.ID)
	if err != nil || len(pj.Layouts) != 2 || pj.Layouts[0].CharsPerLine != 32 || len(pj.Sale.Lines[0].Cards[0].Code) == 0 {
		t.Fatalf("print job: %+v %v", pj, err)
	}
	for _, l := range pj.Layouts {
		for _, line := range l.Lines {
			if len([]rune(line)) > l.CharsPerLine {
				t.Fatalf("%s line too wide: %q", l.Name, line)
			}
		}
	}
	pr, err := Printed(e.ctx, c, s.ID)
	if err != nil || pr.PrintCount != 1 || pr.PrintedAt.IsZero() {
		t.Fatalf("printed: %+v %v", pr, err)
	}
	// Void: cards revoked, renewal reverted, top-up taken back, wallet refunded.
	v, err := Void(e.ctx, c, s.ID, VoidInput{})
	if err != nil || v.Status != "voided" || v.Replay {
		t.Fatalf("void: %+v %v", v, err)
	}
	if got := e.balance(c.ManagerID); got != afterGen {
		t.Fatalf("wallet after void %s, want %s", got, afterGen)
	}
	if e.scalar(`SELECT COUNT(*) FROM cards WHERE state = 'revoked' AND revoked_reason = 'sale_void'`) != 6 ||
		e.scalar(`SELECT sold_counter FROM card_batches WHERE id = ?`, own) != 0 || e.scalar(`SELECT balance FROM users WHERE id = ?`, u) != 0 ||
		e.scalar(`SELECT COUNT(*) FROM user_activations WHERE user_id = ? AND refunded_at IS NOT NULL`, u) != 1 {
		t.Fatal("void effects")
	}
	again, err := Void(e.ctx, c, s.ID, VoidInput{})
	if err != nil || !again.Replay || again.Status != "voided" || e.balance(c.ManagerID) != afterGen {
		t.Fatalf("void replay: %+v %v", again, err)
	}
	e.stockOK(own)
	e.stockOK(allotted)
}

func TestReplayAndRefusedSale(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.cashier("till", "10", false)
	b := e.series(1, 0, c.ManagerID)
	e.open(c, "0")
	in := SaleInput{RequestID: "sale-1", Lines: []LineInput{cardLine(b, 1, "")}}
	first, err := Sell(e.ctx, c, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Sell(e.ctx, c, in)
	if err != nil || !again.Replay || again.ID != first.ID || again.Lines[0].Cards[0].Code != first.Lines[0].Cards[0].Code {
		t.Fatalf("replay: %+v %v", again, err)
	}
	in.Lines[0].Quantity = 2
	_, err = Sell(e.ctx, c, in)
	xrtest.WantReason(t, err, 409, "request_id_conflict")
	// The wallet (3 left) cannot pay a minted card at 7: nothing is stored.
	before := [4]int64{e.scalar(`SELECT COUNT(*) FROM pos_sales`), e.scalar(`SELECT COUNT(*) FROM cards`), e.scalar(`SELECT quantity FROM card_batches WHERE id = ?`, b),
		e.scalar(`SELECT COUNT(*) FROM idempotency`)}
	_, err = Sell(e.ctx, c, SaleInput{RequestID: "sale-2", Lines: []LineInput{cardLine(b, 1, "")}})
	xrtest.WantReason(t, err, 409, "insufficient_balance")
	after := [4]int64{e.scalar(`SELECT COUNT(*) FROM pos_sales`), e.scalar(`SELECT COUNT(*) FROM cards`), e.scalar(`SELECT quantity FROM card_batches WHERE id = ?`, b),
		e.scalar(`SELECT COUNT(*) FROM idempotency`)}
	if before != after || e.balance(c.ManagerID) != xrtest.Money("3") {
		t.Fatalf("refused sale stored something: %v → %v", before, after)
	}
	for _, bad := range []struct {
		in     SaleInput
		status int
		reason string
	}{
		{SaleInput{Lines: []LineInput{cardLine(b, 1, "")}}, 400, "request_id_required"},
		{SaleInput{RequestID: e.key()}, 400, "lines_required"},
		{SaleInput{RequestID: e.key(), Lines: []LineInput{cardLine(b, 101, "")}}, 400, "out_of_range"},
		{SaleInput{RequestID: e.key(), Lines: []LineInput{cardLine(999, 1, "")}}, 400, "card_batch_not_found"},
		{SaleInput{RequestID: e.key(), Lines: []LineInput{cardLine(b, 1, "stock")}}, 409, "insufficient_stock"},
		{SaleInput{RequestID: e.key(), Lines: []LineInput{{Kind: KindTopup, Username: "nobody", Amount: 1}}}, 400, "user_not_found"},
	} {
		_, err := Sell(e.ctx, c, bad.in)
		xrtest.WantReason(t, err, bad.status, bad.reason)
	}
	if e.scalar(`SELECT COUNT(*) FROM pos_sales`) != 1 {
		t.Fatal("refused sales stored")
	}
	e.stockOK(b)
}

func TestVoidWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	e.a.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	boss := e.cashier("boss", "0", true)
	c := e.cashierUnder(boss.ManagerID, "till", "100", false)
	b := e.series(10, 0, c.ManagerID)
	u := e.user("bob", c.ManagerID, 0)
	e.open(c, "0")
	sell := func(lines ...LineInput) *Sale {
		t.Helper()
		s, err := Sell(e.ctx, c, SaleInput{RequestID: e.key(), Lines: lines})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	inside := sell(cardLine(b, 1, ""))
	advance(299 * time.Second) // the default window is 300 s
	if v, err := Void(e.ctx, c, inside.ID, VoidInput{}); err != nil || v.Status != "voided" {
		t.Fatalf("inside the window: %+v %v", v, err)
	}
	outside := sell(cardLine(b, 1, ""))
	advance(301 * time.Second)
	_, err := Void(e.ctx, c, outside.ID, VoidInput{})
	xrtest.WantReason(t, err, 409, "void_window_passed")
	// Another cashier does not see the sale; the manager voids at any time.
	other := e.cashier("till2", "0", false)
	_, err = Void(e.ctx, other, outside.ID, VoidInput{})
	xrtest.WantReason(t, err, 404, "not_found")
	if v, err := Void(e.ctx, boss, outside.ID, VoidInput{}); err != nil || v.Status != "voided" || *v.VoidedBy != boss.ManagerID {
		t.Fatalf("manager void: %+v %v", v, err)
	}
	// A redeemed card refuses the void, which changes nothing.
	used := sell(cardLine(b, 1, ""))
	if _, err := cards.RedeemOTC(e.ctx, e.owner, cards.OTCInput{Code: used.Lines[0].Cards[0].Code, UserID: u, RequestID: e.key()}); err != nil {
		t.Fatal(err)
	}
	bal := e.balance(c.ManagerID)
	_, err = Void(e.ctx, boss, used.ID, VoidInput{})
	xrtest.WantReason(t, err, 409, "card_already_redeemed")
	if e.balance(c.ManagerID) != bal || e.scalar(`SELECT status = 'completed' FROM pos_sales WHERE id = ?`, used.ID) != 1 {
		t.Fatal("refused void changed something")
	}
	// A spent top-up refuses the void.
	top := sell(LineInput{Kind: KindTopup, UserID: u, Amount: xrtest.Money("4")})
	if err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		_, _, err := subs.MoveBalance(e.ctx, tx, subs.Movement{UserID: u, Amount: -xrtest.Money("12"), Kind: "withdraw"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, err = Void(e.ctx, c, top.ID, VoidInput{})
	xrtest.WantReason(t, err, 409, "insufficient_balance")
	e.stockOK(b)
}

func TestConcurrentCashiers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const cashiers, salesEach = 64, 3
	acts := make([]*app.Actor, cashiers)
	ids := make([]int64, cashiers)
	for i := range acts {
		acts[i] = e.cashier(fmt.Sprintf("c%02d", i), "100", false)
		ids[i] = acts[i].ManagerID
	}
	b := e.series(20, 0, ids...)
	for _, a := range acts {
		e.open(a, "0")
	}
	var wg sync.WaitGroup
	errs := make(chan error, cashiers*salesEach*2)
	for i, a := range acts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range salesEach {
				in := SaleInput{RequestID: fmt.Sprintf("c%d-s%d", i, j), Lines: []LineInput{cardLine(b, 2, "")}}
				// Each sale is sent twice (a retry after a lost answer): the
				// second answers the first.
				first, err := Sell(e.ctx, a, in)
				if err != nil {
					errs <- err
					continue
				}
				again, err := Sell(e.ctx, a, in)
				if err != nil || !again.Replay || again.ID != first.ID {
					errs <- fmt.Errorf("retry of %s: %+v %v", in.RequestID, again, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	const sold = cashiers * salesEach * 2
	if q := e.scalar(`SELECT quantity FROM card_batches WHERE id = ?`, b); q != 20+sold {
		t.Fatalf("quantity %d, want %d", q, 20+sold)
	}
	if n := e.scalar(`SELECT sold_counter FROM card_batches WHERE id = ?`, b); n != sold {
		t.Fatalf("sold_counter %d, want %d", n, sold)
	}
	if n := e.scalar(`SELECT COUNT(DISTINCT code) FROM cards WHERE batch_id = ? AND disposition = 'sold_counter'`, b); n != sold {
		t.Fatalf("distinct sold codes %d, want %d", n, sold)
	}
	if n := e.scalar(`SELECT COUNT(*) FROM (SELECT card_id FROM pos_sale_cards GROUP BY card_id HAVING COUNT(*) > 1)`); n != 0 {
		t.Fatalf("%d cards sold twice", n)
	}
	for _, id := range ids {
		if got := e.balance(id); got != xrtest.Money("58") { // 100 - 3 sales × 2 cards × 7
			t.Fatalf("wallet of %d: %s", id, got)
		}
	}
	if n := e.scalar(`SELECT COUNT(*) FROM pos_sales`); n != cashiers*salesEach {
		t.Fatalf("sales %d", n)
	}
	e.stockOK(b)
}

// BenchmarkTillSale measures durable till sales: one card minted into a
// ready series per sale, the cashier's wallet charged, each commit synced.
func BenchmarkTillSale(b *testing.B) {
	e := newEnv(b)
	c := e.cashier("bench", "1000000000", false)
	batch := e.series(1, 0, c.ManagerID)
	e.open(c, "0")
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := Sell(e.ctx, c, SaleInput{RequestID: fmt.Sprintf("b-%d", i), Lines: []LineInput{cardLine(batch, 1, "")}}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sales/s")
}

// TestStuckSaleAndReports: a till hold whose sale never completed becomes
// stuck when the shift closes (stuck_sale counts it, staff list it), and
// till sales feed the profits and money-transfer reports.
func TestStuckSaleAndReports(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	boss := e.cashier("boss", "0", true)
	c := e.cashierUnder(boss.ManagerID, "till", "100", false)
	b := e.series(3, c.ManagerID)
	s := e.open(c, "0")
	sale, err := Sell(e.ctx, c, SaleInput{RequestID: e.key(), Lines: []LineInput{cardLine(b, 1, "mint")}})
	if err != nil {
		t.Fatal(err)
	}
	// A sale that held a card and never completed (its completion never ran).
	var held []int64
	if err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		var err error
		held, err = cards.HoldForSale(e.ctx, tx, b, c.ManagerID, 1, c.ManagerID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := CloseShift(e.ctx, c, s.ID, CloseShiftInput{CountedCash: xrtest.MoneyPtr("10")}); err != nil {
		t.Fatal(err)
	}
	if e.scalar(`SELECT stuck_sale FROM card_batches WHERE id = ?`, b) != 1 || e.scalar(`SELECT held FROM card_batches WHERE id = ?`, b) != 0 {
		t.Fatal("stuck_sale not counted")
	}
	e.stockOK(b)
	list, err := StuckCards(e.ctx, boss)
	if err != nil || len(list) != 1 || list[0].ID != held[0] || list[0].HeldBy == nil || *list[0].HeldBy != c.ManagerID {
		t.Fatalf("stuck cards: %+v %v", list, err)
	}
	// Reports: the card sale is revenue of the cashier (face 10, wallet 7).
	p, err := reports.Profits(e.ctx, e.owner, app.ListQuery{Page: 1, PageSize: 10, SortExpr: "g.day"})
	if err != nil || len(p.Rows) != 1 || p.Rows[0].ManagerID != c.ManagerID || p.Rows[0].CardSales != 1 || p.Rows[0].CardRevenue != xrtest.Money("10") ||
		p.Rows[0].ResellerCost != xrtest.Money("7") || p.Rows[0].Net != xrtest.Money("3") {
		t.Fatalf("profits: %+v %v", p, err)
	}
	mt, err := reports.MoneyTransfer(e.ctx, e.owner, app.ListQuery{Page: 1, PageSize: 10, SortExpr: "j.created_at", Filters: map[string]any{"kind": "pos_sale"}})
	if err != nil || len(mt.Rows) != 1 || mt.Rows[0].Amount != -xrtest.Money("7") || mt.Rows[0].Direction != "out" {
		t.Fatalf("money transfer: %+v %v", mt, err)
	}
	if _, err := Void(e.ctx, boss, sale.ID, VoidInput{}); err != nil {
		t.Fatal(err)
	}
	p, err = reports.Profits(e.ctx, e.owner, app.ListQuery{Page: 1, PageSize: 10, SortExpr: "g.day"})
	if err != nil || len(p.Rows) != 0 {
		t.Fatalf("profits after the void: %+v %v", p, err)
	}
}

// TestVoidAddon: voiding a sale with an add-on takes the add-on's data
// back and refunds the cashier's wallet exactly; once the data is used,
// the void is refused and nothing moves.
func TestVoidAddon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.cashier("till", "100", false)
	plan := e.plan("Capped", "20")
	u := e.user("bob", c.ManagerID, plan)
	e.open(c, "0")
	if err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE users SET bytes_limit = 1000 WHERE id = ?`, u)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	a, err := subs.CreateAddon(e.ctx, e.owner, subs.AddonInput{Name: app.Opt[string]{Set: true, V: "Extra"}, Kind: app.Opt[subs.AddonKind]{Set: true, V: "data"},
		Amount: app.Opt[int64]{Set: true, V: 500}, Price: app.Opt[app.Money]{Set: true, V: xrtest.Money("4")}})
	if err != nil {
		t.Fatal(err)
	}
	sell := func() *Sale {
		t.Helper()
		s, err := Sell(e.ctx, c, SaleInput{RequestID: e.key(), Lines: []LineInput{{Kind: KindAddon, UserID: u, AddonID: a.ID, Quantity: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := e.balance(c.ManagerID)
	s := sell()
	if e.scalar(`SELECT bytes_limit FROM users WHERE id = ?`, u) != 2000 || e.balance(c.ManagerID) != before-xrtest.Money("8") {
		t.Fatalf("after the sale: limit %d, wallet %s", e.scalar(`SELECT bytes_limit FROM users WHERE id = ?`, u), e.balance(c.ManagerID))
	}
	if _, err := Void(e.ctx, c, s.ID, VoidInput{}); err != nil {
		t.Fatal(err)
	}
	if e.scalar(`SELECT bytes_limit FROM users WHERE id = ?`, u) != 1000 || e.balance(c.ManagerID) != before ||
		e.scalar(`SELECT COUNT(*) FROM user_addons WHERE user_id = ? AND refunded_at IS NOT NULL`, u) != 1 {
		t.Fatalf("after the void: limit %d, wallet %s", e.scalar(`SELECT bytes_limit FROM users WHERE id = ?`, u), e.balance(c.ManagerID))
	}
	// Sold again and used: the void is refused and nothing moves.
	s2 := sell()
	if err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE users SET used_bytes = 1800 WHERE id = ?`, u)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	wallet := e.balance(c.ManagerID)
	if _, err := Void(e.ctx, c, s2.ID, VoidInput{}); app.AsError(err) == nil || app.AsError(err).Reason != "addon_used" {
		t.Fatalf("void of a used add-on: %v", err)
	}
	if e.scalar(`SELECT bytes_limit FROM users WHERE id = ?`, u) != 2000 || e.balance(c.ManagerID) != wallet {
		t.Fatal("a refused void moved something")
	}
}
