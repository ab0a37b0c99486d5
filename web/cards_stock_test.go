package web_test

import (
	"fmt"
	"testing"

	"xr/internal/webtest"
)

// A reseller handed cards of the house's series sees that series (its own
// stock of it, not the series' totals), moves its cards on by quantity or
// by a range of serials, and reads the stock of its branch; the series
// itself stays the house's, and a sibling sees none of it.
func TestCardStockHeldAndMoved(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.StartJobs(t, k)
	owner := k.Owner("acme")
	r1, tok1 := cdReseller(t, k, "r1")
	_, tok2 := cdReseller(t, k, "r2")
	child := webtest.CreateManager(k, "acme", r1, "r1-shop", "cards-r1")
	id := webtest.CreateSeries(t, k, owner, map[string]any{"type": "refill", "quantity": 10, "face_value": 2, "expiration": webtest.NextYear, "request_id": "st-g1"})
	other := webtest.CreateSeries(t, k, owner, map[string]any{"type": "refill", "quantity": 2, "face_value": 1, "expiration": webtest.NextYear, "request_id": "st-g2"})
	if r := k.Do("POST", "acme", "/api/v1/cards/transfers", owner, map[string]any{"to_manager_id": r1, "batch_id": id, "quantity": 6, "request_id": "st-t1"}); r.Status != 200 {
		t.Fatalf("owner → r1: %d %s", r.Status, r.Body)
	}
	held := func(tok string) (series int64, inStock int64) {
		t.Helper()
		l := k.Do("GET", "acme", "/api/v1/card-batches", tok, nil)
		if l.Status != 200 {
			t.Fatalf("list: %d %s", l.Status, l.Body)
		}
		for _, b := range l.List() {
			inStock += webtest.Num(b.(map[string]any)["in_stock"])
		}
		return webtest.Num(l.Meta()["total"]), inStock
	}
	if n, s := held(tok1); n != 1 || s != 6 {
		t.Fatalf("r1 sees %d series, %d in stock", n, s)
	}
	if n, s := held(owner); n != 2 || s != 12 {
		t.Fatalf("the owner sees %d series, %d in stock", n, s)
	}
	g := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), tok1, nil)
	var shown int64
	for _, row := range g.Data()["breakdown"].([]any) {
		shown += webtest.Num(row.(map[string]any)["count"])
	}
	if g.Status != 200 || webtest.Num(g.Data()["in_stock"]) != 6 || shown != 6 {
		t.Fatalf("r1 reads the series: %d %s", g.Status, g.Body)
	}
	if l := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d/cards", id), tok1, nil); l.Status != 200 || webtest.Num(l.Meta()["total"]) != 6 {
		t.Fatalf("r1's cards of the series: %d %s", l.Status, l.Body)
	}
	// The series itself is not r1's to move, and r2 sees none of it.
	webtest.ExpectErr(t, k.Do("POST", "acme", fmt.Sprintf("/api/v1/card-batches/%d/transfer", id), tok1, map[string]any{"to_manager_id": child, "request_id": "st-s1"}),
		404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), tok2, nil), 404, "ERR_NOT_FOUND", "not_found")
	if n, _ := held(tok2); n != 0 {
		t.Fatalf("r2 sees %d series", n)
	}

	// r1 moves a range of two serials, then three by quantity, to its shop.
	hold := k.Do("GET", "acme", "/api/v1/cards/holdings", tok1, nil)
	if hold.Status != 200 || len(hold.List()) != 1 {
		t.Fatalf("r1 holdings: %d %s", hold.Status, hold.Body)
	}
	first := hold.List()[0].(map[string]any)["first_serial"].(string)
	second := fmt.Sprintf("%d-%06d", id, webtest.Scalar(k, "acme", `SELECT MIN(seq) + 1 FROM cards WHERE batch_id = ? AND owner_manager_id = ?`, id, r1))
	if r := k.Do("POST", "acme", "/api/v1/cards/transfers", tok1, map[string]any{"to_manager_id": child, "first_serial": first, "last_serial": second, "request_id": "st-r1"}); r.Status != 200 || webtest.Num(r.Data()["card_count"]) != 2 {
		t.Fatalf("range: %d %s", r.Status, r.Body)
	}
	if r := k.Do("POST", "acme", "/api/v1/cards/transfers", tok1, map[string]any{"to_manager_id": child, "batch_id": id, "quantity": 3, "request_id": "st-q1"}); r.Status != 200 || webtest.Num(r.Data()["card_count"]) != 3 {
		t.Fatalf("quantity: %d %s", r.Status, r.Body)
	}
	// Refusals, nothing moved.
	ownerSerial := fmt.Sprintf("%d-%06d", id, webtest.Scalar(k, "acme", `SELECT MAX(seq) FROM cards WHERE batch_id = ?`, id))
	for _, c := range []struct {
		name         string
		body         map[string]any
		status       int
		code, reason string
	}{
		{"two series", map[string]any{"first_serial": first, "last_serial": fmt.Sprintf("%d-000002", other)}, 400, "ERR_VALIDATION", "invalid_serial_range"},
		{"not a serial", map[string]any{"first_serial": "abc", "last_serial": first}, 400, "ERR_VALIDATION", "invalid_serial_range"},
		{"backwards", map[string]any{"first_serial": second, "last_serial": first}, 400, "ERR_VALIDATION", "invalid_serial_range"},
		{"not r1's cards", map[string]any{"first_serial": first, "last_serial": ownerSerial}, 409, "ERR_CONFLICT", "cards_not_transferable"},
		{"more than held", map[string]any{"batch_id": id, "quantity": 2}, 409, "ERR_CONFLICT", "insufficient_stock"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.body["to_manager_id"], c.body["request_id"] = child, "st-x-"+c.name
			webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/cards/transfers", tok1, c.body), c.status, c.code, c.reason)
		})
	}
	count := func(m int64) int64 {
		return webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM cards WHERE batch_id = ? AND owner_manager_id = ? AND state = 'unused' AND disposition = 'available'`, id, m)
	}
	if count(r1) != 1 || count(child) != 5 {
		t.Fatalf("after the refusals r1 holds %d, its shop %d", count(r1), count(child))
	}
	// The stock of the branch, as r1 and as the owner see it.
	for _, c := range []struct {
		name string
		tok  string
		want map[int64]int64
	}{{"r1", tok1, map[int64]int64{r1: 1, child: 5}}, {"owner", owner, map[int64]int64{webtest.OwnerID(k, "acme"): 6, r1: 1, child: 5}}} {
		got := map[int64]int64{}
		for _, h := range k.Do("GET", "acme", "/api/v1/cards/holdings", c.tok, nil).List() {
			m := h.(map[string]any)
			got[webtest.Num(m["manager_id"])] += webtest.Num(m["available"])
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: holdings %v, want %v", c.name, got, c.want)
		}
	}
	if l := k.Do("GET", "acme", "/api/v1/cards/holdings", tok2, nil); l.Status != 200 || len(l.List()) != 0 {
		t.Fatalf("r2 holdings: %s", l.Body)
	}
}
