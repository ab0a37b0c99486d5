package shop

import (
	"fmt"
	"testing"
	"time"

	"xr/app"
	"xr/app/payments"
	"xr/internal/xrtest"
)

// defaults puts the caps on holds back to their declared defaults (attach
// raises them for the other tests).
func (e *env) defaults() {
	e.t.Helper()
	xrtest.Exec(e.t, e.ten, `DELETE FROM settings WHERE key IN ('shop_max_cards_per_purchase', 'shop_max_held_per_client', 'shop_hold_minutes')`)
}

func (e *env) buyFrom(ip string, series int64, q, i int) (*Purchase, error) {
	return Buy(e.ctx, e.ten, BuyInput{SeriesID: series, Quantity: q, Gateway: "manual", Contact: fmt.Sprintf("b%d@example.com", i),
		RequestID: e.uuid(i), Origin: "https://acme.xr.test", ClientIP: ip})
}

// The probe's hoarding: anonymous purchases with the manual gateway held
// up to 20 cards for three days each, and two emptied a 40-card series.
// Now an unpaid purchase holds at most 5 cards for 15 minutes (its payment
// expires then and the cards return), and one address's unpaid purchases
// hold at most 10 together: each refusal holds nothing.
func TestShopHoldsCannotHoardStock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.defaults()
	id := e.series(e.sys, 40, true)
	e.publish(id, "1")

	_, err := e.buyFrom("203.0.113.5", id, 20, 1)
	ae := xrtest.WantError(t, err, 400, app.CodeValidation, "out_of_range")
	if ae.Details["max"] != int64(5) {
		t.Fatalf("%+v", ae)
	}
	p, err := e.buyFrom("203.0.113.5", id, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Payment.ExpiresAt.Sub(e.Now()); got != 15*time.Minute {
		t.Fatalf("the payment stays open %s, not the 15 minutes of the hold", got)
	}
	if _, err := e.buyFrom("203.0.113.5", id, 5, 3); err != nil {
		t.Fatal(err)
	}
	_, err = e.buyFrom("203.0.113.5", id, 1, 4)
	ae = xrtest.WantError(t, err, 409, app.CodeConflict, "shop_hold_limit")
	if ae.Details["max"] != int64(10) || ae.Details["held"] != int64(10) {
		t.Fatalf("%+v", ae)
	}
	if av, held, _ := e.counters(id); av != 30 || held != 10 {
		t.Fatalf("available %d held %d", av, held)
	}
	// Another address buys; the stock was not emptied.
	if _, err := e.buyFrom("198.51.100.9", id, 5, 5); err != nil {
		t.Fatal(err)
	}
	// 15 minutes on, the holds expire and the cards return.
	e.advance(15*time.Minute + time.Second)
	if n, err := payments.ExpireDue(e.ctx, e.ten); err != nil || n != 3 {
		t.Fatalf("expired %d %v", n, err)
	}
	if av, held, _ := e.counters(id); av != 40 || held != 0 {
		t.Fatalf("after the holds: available %d held %d", av, held)
	}
	e.stockOK(id)
	if _, err := e.buyFrom("203.0.113.5", id, 5, 6); err != nil {
		t.Fatalf("the address holds nothing now: %v", err)
	}
}

// The shop_hold bucket counts cards, not requests: an address that holds
// 20 cards within a minute is refused a 21st (429), whatever the request
// count.
func TestShopHoldBucketCountsCards(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.series(e.sys, 40, true)
	e.publish(id, "1")
	if _, err := e.buyFrom("203.0.113.7", id, 20, 1); err != nil {
		t.Fatal(err)
	}
	_, err := e.buyFrom("203.0.113.7", id, 1, 2)
	xrtest.WantError(t, err, 429, app.CodeRateLimited, "rate_limited")
	if av, held, _ := e.counters(id); av != 20 || held != 20 {
		t.Fatalf("available %d held %d", av, held)
	}
	if _, err := e.buyFrom("203.0.113.8", id, 1, 3); err != nil {
		t.Fatal(err)
	}
}
