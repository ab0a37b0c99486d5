package shop

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"xr/app"
	"xr/app/cards"
	"xr/app/identity"
	"xr/app/outbox"
	"xr/app/payments"
	"xr/app/reports"
	"xr/app/subs"
	"xr/internal/xrtest"
)

// env is one instance with tenant "acme", the modules the shop needs, a
// fake clock and the owner's system actor.
type env struct {
	t   *testing.T
	ctx context.Context
	a   *app.App
	ten *app.Tenant
	sys *app.Actor
	mu  sync.Mutex
	now time.Time
	seq int
}

var mods = []app.Module{identity.Module, subs.Module, cards.Module, outbox.Module, payments.Module, reports.Module, Module}

func newEnv(t *testing.T) *env {
	t.Helper()
	a := xrtest.TenantApp(t, "acme", mods...)
	ten := xrtest.Acquire(t, a, "acme")
	e := &env{t: t, ctx: context.Background(), a: a, ten: ten, now: time.Now().UTC().Truncate(time.Second)}
	e.clock(a)
	e.sys = xrtest.System(t, ten)
	e.enableManual(e.sys)
	// The caps on holds are tested on their own (holds_test.go): here a
	// purchase may hold the whole series for a day.
	xrtest.Exec(t, ten, `INSERT INTO settings(key, value) VALUES ('shop_max_cards_per_purchase', '20'), ('shop_max_held_per_client', '200'), ('shop_hold_minutes', '1440')`)
	return e
}

func (e *env) clock(a *app.App) {
	a.SetClock(e.Now)
	outbox.SetClock(a, e.Now)
}

func (e *env) Now() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.now }

func (e *env) advance(d time.Duration) { e.mu.Lock(); e.now = e.now.Add(d); e.mu.Unlock() }

func (e *env) enableManual(act *app.Actor) {
	e.t.Helper()
	on := true
	if _, err := payments.SetGateway(e.ctx, act, "manual", payments.GatewayInput{Enabled: &on}); err != nil {
		e.t.Fatal(err)
	}
}

// series mints a ready series of n cards owned by owner (0 = root) and
// publishes it at price.
func (e *env) series(act *app.Actor, n int64, sellOnline bool) int64 {
	e.t.Helper()
	e.seq++
	res, err := cards.CreateBatch(e.ctx, act, cards.CreateInput{Type: "refill", Quantity: n, FaceValue: xrtest.MoneyPtr("10"),
		Expiration: time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02"), RequestID: fmt.Sprintf("series-%d", e.seq),
		Name: fmt.Sprintf("Day pass %d", e.seq), SellOnline: sellOnline})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := cards.Generate(e.ctx, e.ten, res.BatchID, nil); err != nil {
		e.t.Fatal(err)
	}
	return res.BatchID
}

func (e *env) publish(id int64, price string) {
	e.t.Helper()
	if _, err := Publish(e.ctx, e.sys, id, PublishInput{Price: xrtest.MoneyPtr(price)}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) uuid(i int) string { return fmt.Sprintf("0b9a3f0e-6d1c-4c1e-9f5a-%012d", i) }

func (e *env) buy(series int64, q int, contact string, i int) (*Purchase, error) {
	return Buy(e.ctx, e.ten, BuyInput{SeriesID: series, Quantity: q, Gateway: "manual", Contact: contact, RequestID: e.uuid(i), Origin: "https://acme.xr.test",
		ClientIP: fmt.Sprintf("198.51.100.%d", i%250)})
}

func (e *env) stockOK(id int64) {
	e.t.Helper()
	diff, err := cards.StockCheck(e.ctx, e.ten.DB.R, id)
	if err != nil {
		e.t.Fatal(err)
	}
	if diff != "" {
		e.t.Fatalf("series %d counters: %s", id, diff)
	}
	if n := xrtest.Scalar(e.t, e.ten, `SELECT COUNT(*) FROM card_batches WHERE id = ? AND (available < 0 OR held < 0)`, id); n != 0 {
		e.t.Fatalf("series %d: negative stock", id)
	}
}

func (e *env) counters(id int64) (available, held, soldOnline int64) {
	e.t.Helper()
	if err := e.ten.DB.R.QueryRow(`SELECT available, held, sold_online FROM card_batches WHERE id = ?`, id).Scan(&available, &held, &soldOnline); err != nil {
		e.t.Fatal(err)
	}
	return
}

func (e *env) confirm(paymentID int64) {
	e.t.Helper()
	if _, err := payments.Confirm(e.ctx, e.sys, paymentID, payments.DecisionInput{}); err != nil {
		e.t.Fatal(err)
	}
}

func TestShopPublishRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	off := e.series(e.sys, 3, false)
	on := e.series(e.sys, 3, true)
	pub := func(act *app.Actor, id int64, price string) error {
		in := PublishInput{}
		if price != "" {
			in.Price = xrtest.MoneyPtr(price)
		}
		_, err := Publish(e.ctx, act, id, in)
		return err
	}
	xrtest.WantError(t, pub(e.sys, off, "2"), 409, "ERR_CONFLICT", "card_batch_not_sell_online")
	xrtest.WantError(t, pub(e.sys, on, ""), 400, "ERR_VALIDATION", "price_required")
	xrtest.WantError(t, pub(e.sys, on, "0"), 400, "ERR_VALIDATION", "price_must_be_positive")
	xrtest.WantError(t, pub(e.sys, 9999, "2"), 404, "ERR_NOT_FOUND", "not_found")
	l, err := Publish(e.ctx, e.sys, on, PublishInput{Price: xrtest.MoneyPtr("2.5")})
	if err != nil || !l.Published || l.Price != xrtest.Money("2.5") {
		t.Fatalf("publish: %+v %v", l, err)
	}
	sf, err := StaffStorefront(e.ctx, e.sys)
	if err != nil || len(sf.Items) != 1 || sf.Items[0].SeriesID != on || sf.Items[0].Available != 3 || len(sf.Gateways) != 1 {
		t.Fatalf("storefront: %+v %v", sf, err)
	}
	// Suspended: off the storefront, and publishing is refused.
	if _, err := cards.SuspendBatch(e.ctx, e.sys, on); err != nil {
		t.Fatal(err)
	}
	if sf, _ := PublicStorefront(e.ctx, e.ten); len(sf.Items) != 0 {
		t.Fatalf("suspended series still offered: %+v", sf.Items)
	}
	xrtest.WantError(t, pub(e.sys, on, ""), 409, "ERR_CONFLICT", "card_batch_suspended")
	if _, err := cards.ReleaseBatch(e.ctx, e.sys, on); err != nil {
		t.Fatal(err)
	}
	// Unpublish keeps the price; publishing again without one reuses it.
	if l, err := Unpublish(e.ctx, e.sys, on); err != nil || l.Published {
		t.Fatalf("unpublish: %+v %v", l, err)
	}
	if sf, _ := PublicStorefront(e.ctx, e.ten); len(sf.Items) != 0 {
		t.Fatal("unpublished series still offered")
	}
	r, err := BulkPublish(e.ctx, e.sys, BulkPublishInput{IDs: []int64{on, off}})
	if err != nil || len(r.Updated) != 1 || len(r.Failed) != 1 {
		t.Fatalf("bulk: %+v %v", r, err)
	}
	if p := xrtest.Scalar(t, e.ten, `SELECT price FROM shop_listings WHERE batch_id = ? AND published = 1`, on); p != int64(xrtest.Money("2.5")) {
		t.Fatalf("price after bulk %d", p)
	}

	// Readiness: a gateway and stock, but no channel to deliver codes.
	rd, err := GetReadiness(e.ctx, e.sys)
	if err != nil || rd.Ready || len(rd.Missing) != 1 || rd.Missing[0] != "delivery_channel" {
		t.Fatalf("readiness: %+v %v", rd, err)
	}
	// A reseller sees nothing of the root's series: 404.
	rid := newManager(t, e, "north")
	xrtest.WantError(t, pub(xrtest.Reseller(e.ten, rid), on, ""), 404, "ERR_NOT_FOUND", "not_found")
	// Without the permission: 403 before anything.
	noPerm := &app.Actor{Tenant: e.ten, ManagerID: rid, Kind: app.CredSession, Perms: map[app.Perm]bool{PermShopIndex: true}}
	xrtest.WantError(t, pub(noPerm, 9999, ""), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	e.stockOK(on)
}

func newManager(t *testing.T, e *env, name string) int64 {
	t.Helper()
	m, err := identity.CreateManager(e.ctx, e.sys, identity.ManagerInput{Username: app.Opt[string]{Set: true, V: name},
		Password: app.Opt[string]{Set: true, V: "Reseller-pass-1"}})
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func TestShopBuyConfirmDeliver(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.series(e.sys, 5, true)
	e.publish(id, "3")

	_, err := Buy(e.ctx, e.ten, BuyInput{SeriesID: id, Gateway: "manual", Contact: "buyer@example.com", RequestID: "not-a-uuid"})
	xrtest.WantError(t, err, 400, "ERR_VALIDATION", "request_id_invalid")
	_, err = e.buy(id, 1, "nobody", 1)
	xrtest.WantError(t, err, 400, "ERR_VALIDATION", "contact_invalid")
	_, err = e.buy(id, 6, "buyer@example.com", 1)
	xrtest.WantError(t, err, 409, "ERR_CONFLICT", "insufficient_stock")
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM shop_sales`); n != 0 {
		t.Fatalf("%d sales after refusals", n)
	}

	p, err := e.buy(id, 2, " Buyer@Example.com ", 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Payment.State != payments.StatePending || p.Payment.Amount != xrtest.Money("6") || !strings.HasPrefix(p.ReturnURL, "https://acme.xr.test/shop/return/") {
		t.Fatalf("purchase: %+v", p)
	}
	// A retry answers the same payment and holds nothing more.
	again, err := e.buy(id, 2, "buyer@example.com", 1)
	if err != nil || again.Payment.ID != p.Payment.ID || again.ReturnURL != p.ReturnURL {
		t.Fatalf("replay: %+v %v", again, err)
	}
	if av, held, _ := e.counters(id); av != 3 || held != 2 {
		t.Fatalf("reserved: available %d held %d", av, held)
	}
	e.stockOK(id)
	token := p.ReturnURL[strings.LastIndexByte(p.ReturnURL, '/')+1:]
	rc, err := GetReceipt(e.ctx, e.ten, token)
	if err != nil || rc.State != "reserved" || len(rc.Codes) != 0 || rc.Contact != "b***@example.com" {
		t.Fatalf("receipt before payment: %+v %v", rc, err)
	}
	// The contact is sealed at rest.
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM shop_sales WHERE instr(CAST(contact_sealed AS TEXT), 'example.com') > 0`); n != 0 {
		t.Fatal("contact stored in clear")
	}

	e.confirm(p.Payment.ID)
	e.confirm(p.Payment.ID) // a repeat changes nothing
	if av, held, sold := e.counters(id); av != 3 || held != 0 || sold != 2 {
		t.Fatalf("after payment: available %d held %d sold_online %d", av, held, sold)
	}
	e.stockOK(id)
	rc, err = GetReceipt(e.ctx, e.ten, token)
	if err != nil || rc.State != "paid" || rc.PaymentState != "succeeded" || len(rc.Codes) != 2 || rc.DeliveryState != "queued" {
		t.Fatalf("receipt: %+v %v", rc, err)
	}
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM outbox_messages WHERE channel = 'email' AND recipient = 'buyer@example.com'
		AND instr(body, ?) > 0 AND instr(body, ?) > 0`, rc.Codes[0], rc.Codes[1]); n != 1 {
		t.Fatalf("%d delivery messages with both codes", n)
	}
	if _, err := GetReceipt(e.ctx, e.ten, strings.Repeat("0", 32)); err == nil {
		t.Fatal("an unknown token answered")
	}
}

func TestShopSubscriberPurchaseGoesToInbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.series(e.sys, 2, true)
	e.publish(id, "1")
	var uid int64
	err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		u, err := subs.CreateUser(e.ctx, tx, e.ten, subs.NewUser{Username: "payer", Password: "pw-payer-1", ParentID: e.sys.ManagerID})
		if u != nil {
			uid = u.ID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	co, err := payments.Start(e.ctx, e.ten, payments.StartInput{Gateway: "manual", RequestID: e.uuid(7), Purpose: payments.PurposeShopCard,
		Subject: id, Quantity: 1, UserID: uid, PayerKey: fmt.Sprintf("u:%d", uid)})
	if err != nil {
		t.Fatal(err)
	}
	e.confirm(co.Payment.ID)
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM outbox_messages WHERE channel = 'inbox' AND user_id = ?`, uid); n != 1 {
		t.Fatalf("%d inbox messages", n)
	}
	if _, _, sold := e.counters(id); sold != 1 {
		t.Fatalf("sold_online %d", sold)
	}
	e.stockOK(id)
}

func TestShopReservationExpiryReturnsStock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.series(e.sys, 4, true)
	e.publish(id, "2")
	p, err := e.buy(id, 3, "+12025550123", 1)
	if err != nil {
		t.Fatal(err)
	}
	if av, held, _ := e.counters(id); av != 1 || held != 3 {
		t.Fatalf("reserved: available %d held %d", av, held)
	}
	// Another buyer cannot have the reserved cards.
	_, err = e.buy(id, 2, "other@example.com", 2)
	xrtest.WantError(t, err, 409, "ERR_CONFLICT", "insufficient_stock")

	// Before its time nothing expires; after it, the cards return.
	if n, err := payments.ExpireDue(e.ctx, e.ten); err != nil || n != 0 {
		t.Fatalf("expired early: %d %v", n, err)
	}
	e.advance(p.Payment.ExpiresAt.Sub(e.Now()) + time.Second)
	if n, err := payments.ExpireDue(e.ctx, e.ten); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	if av, held, sold := e.counters(id); av != 4 || held != 0 || sold != 0 {
		t.Fatalf("after expiry: available %d held %d sold %d", av, held, sold)
	}
	e.stockOK(id)
	if st := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM shop_sales WHERE state = 'released'`); st != 1 {
		t.Fatal("sale not released")
	}
	// The returned cards sell again.
	if _, err := e.buy(id, 4, "other@example.com", 3); err != nil {
		t.Fatal(err)
	}
	e.stockOK(id)
}

func TestShopConcurrentBuyersOfTheLastCards(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const stock, buyers = 5, 24
	id := e.series(e.sys, stock, true)
	e.publish(id, "1")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var won []int64
	refused := 0
	for i := 0; i < buyers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			p, err := e.buy(id, 1, fmt.Sprintf("b%d@example.com", i), 100+i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if e := app.AsError(err); e == nil || e.Reason != "insufficient_stock" {
					t.Errorf("buyer %d: %v", i, err)
				}
				refused++
				return
			}
			won = append(won, p.Payment.ID)
		}(i)
	}
	wg.Wait()
	if len(won) != stock || refused != buyers-stock {
		t.Fatalf("%d purchases, %d refused", len(won), refused)
	}
	e.stockOK(id)
	for _, pid := range won {
		e.confirm(pid)
	}
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(DISTINCT card_id) FROM shop_sale_cards WHERE released = 0`); n != stock {
		t.Fatalf("%d distinct cards sold, want %d", n, stock)
	}
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM shop_sale_cards`); n != stock {
		t.Fatalf("%d sale cards", n)
	}
	if av, held, sold := e.counters(id); av != 0 || held != 0 || sold != stock {
		t.Fatalf("available %d held %d sold %d", av, held, sold)
	}
	e.stockOK(id)
}

// TestShopCrashBetweenPaymentAndDelivery: the delivery is an outbox message
// written in the transaction of the success, so an App that stops right
// after (before the outbox ran) delivers once when reopened.
func TestShopCrashBetweenPaymentAndDelivery(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	got := map[string]int{}
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Query().Get("to")]++
		mu.Unlock()
	}))
	t.Cleanup(gw.Close)
	dir := t.TempDir()
	cfg := app.Config{DataDir: dir, AllowPrivateEgress: true}

	a1 := xrtest.Open(t, cfg, mods...)
	xrtest.Tenant(t, a1, "acme")
	ten, rel, err := a1.Acquire("acme")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := &env{t: t, ctx: ctx, a: a1, ten: ten, now: time.Now().UTC().Truncate(time.Second)}
	e.clock(a1)
	e.sys = xrtest.System(t, ten)
	e.enableManual(e.sys)
	if _, err := outbox.SetSMSGateway(ctx, e.sys, outbox.SMSGatewayInput{URL: gw.URL + "/send?to={to}&text={text}", Method: "GET"}); err != nil {
		t.Fatal(err)
	}
	id := e.series(e.sys, 2, true)
	e.publish(id, "1")
	p, err := e.buy(id, 1, "+12025550199", 1)
	if err != nil {
		t.Fatal(err)
	}
	e.confirm(p.Payment.ID)
	// The process stops here: nothing was sent.
	rel()
	a1.Close()
	if len(got) != 0 {
		t.Fatalf("sent before the restart: %v", got)
	}

	a2 := xrtest.Open(t, cfg, mods...)
	t.Cleanup(a2.Close)
	ten2 := xrtest.Acquire(t, a2, "acme")
	for i := 0; i < 2; i++ {
		if _, _, err := outbox.Drain(ctx, ten2); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	n := got["+12025550199"]
	mu.Unlock()
	if n != 1 {
		t.Fatalf("delivered %d times", n)
	}
	if st := xrtest.Scalar(t, ten2, `SELECT COUNT(*) FROM shop_sales s JOIN outbox_messages o ON o.id = s.message_id WHERE o.state = 'sent'`); st != 1 {
		t.Fatal("delivery not recorded as sent")
	}
	diff, err := cards.StockCheck(ctx, ten2.DB.R, id)
	if err != nil || diff != "" {
		t.Fatalf("stock: %q %v", diff, err)
	}
}

func TestShopSalesResendRevealScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	north := newManager(t, e, "north")
	rootSeries := e.series(e.sys, 3, true)
	e.publish(rootSeries, "1")
	northSeries := e.series(e.sys, 3, true)
	xrtest.Exec(t, e.ten, `UPDATE card_batches SET owner_manager_id = ? WHERE id = ?`, north, northSeries)
	xrtest.Exec(t, e.ten, `UPDATE cards SET owner_manager_id = ? WHERE batch_id = ?`, north, northSeries)
	e.publish(northSeries, "1")
	p1, err := e.buy(rootSeries, 1, "root.buyer@example.com", 1)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := e.buy(northSeries, 1, "north.buyer@example.com", 2)
	if err != nil {
		t.Fatal(err)
	}
	rootSale, northSale := p1.Payment.PurposeRef, p2.Payment.PurposeRef

	// Resend before payment: nothing to send.
	_, err = Resend(e.ctx, e.sys, rootSale)
	xrtest.WantError(t, err, 409, "ERR_CONFLICT", "sale_not_paid")
	e.confirm(p1.Payment.ID)
	e.confirm(p2.Payment.ID)

	// A reseller with prm_shop_sales sees its subtree only.
	na := &app.Actor{Tenant: e.ten, ManagerID: north, Kind: app.CredSession, Perms: map[app.Perm]bool{PermShopSales: true}}
	lq, _ := app.ParseList(nil, SaleSpec())
	pg, err := ListSales(e.ctx, na, lq)
	if err != nil || len(pg.Rows) != 1 || pg.Rows[0].ID != northSale || pg.Rows[0].Contact != "n***@example.com" || pg.Rows[0].PaymentState != "succeeded" {
		t.Fatalf("north list: %+v %v", pg.Rows, err)
	}
	_, err = GetSale(e.ctx, na, rootSale)
	xrtest.WantError(t, err, 404, "ERR_NOT_FOUND", "not_found")
	_, err = Resend(e.ctx, na, rootSale)
	xrtest.WantError(t, err, 404, "ERR_NOT_FOUND", "not_found")
	// Reveal needs its own permission: 403 before anything.
	_, err = Reveal(e.ctx, na, northSale)
	xrtest.WantError(t, err, 403, "ERR_FORBIDDEN", "insufficient_permissions")
	na.Perms[PermShopBuyerContact] = true
	_, err = Reveal(e.ctx, na, rootSale)
	xrtest.WantError(t, err, 404, "ERR_NOT_FOUND", "not_found")
	c, err := Reveal(e.ctx, na, northSale)
	if err != nil || c.Contact != "north.buyer@example.com" || c.Channel != "email" {
		t.Fatalf("reveal: %+v %v", c, err)
	}
	d, err := Resend(e.ctx, na, northSale)
	if err != nil || d.Resends != 1 || len(d.Deliveries) != 2 || len(d.Audit) != 2 || d.Audit[0].Action != "reveal" || d.Audit[0].Manager != "north" ||
		d.Audit[1].Action != "resend" || d.Deliveries[1].To != "n***@example.com" {
		t.Fatalf("detail after resend: %+v %v", d, err)
	}
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM outbox_messages WHERE recipient = 'north.buyer@example.com'`); n != 2 {
		t.Fatalf("%d messages to the buyer", n)
	}
	// prm_shop_sales_all sees every sale.
	all := &app.Actor{Tenant: e.ten, ManagerID: north, Kind: app.CredSession, Perms: map[app.Perm]bool{PermShopSalesAll: true}}
	if pg, err := ListSales(e.ctx, all, lq); err != nil || len(pg.Rows) != 2 {
		t.Fatalf("all: %d %v", len(pg.Rows), err)
	}
	e.stockOK(rootSeries)
	e.stockOK(northSeries)
}
