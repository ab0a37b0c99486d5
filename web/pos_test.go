package web_test

import (
	"fmt"
	"testing"

	"xr/app/cards"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// TestPOSTillAPI walks the till over HTTP: shift, products, a sale with a
// replay, its receipt, a void, closing and the report.
func TestPOSTillAPI(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	sys := k.System("acme")
	ten := k.Acquire("acme")
	res, err := cards.CreateBatch(t.Context(), sys, cards.CreateInput{Type: "refill", Quantity: 2, FaceValue: xrtest.MoneyPtr("10"),
		Expiration: "2099-12-31", RequestID: "gen-1", Name: "Tens"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cards.Generate(t.Context(), ten, res.BatchID, nil); err != nil {
		t.Fatal(err)
	}
	const api = "/api/v1"
	sale := map[string]any{"request_id": "till-1", "lines": []any{map[string]any{"kind": "card", "batch_id": res.BatchID, "quantity": 3}}}
	webtest.ExpectErr(t, k.Do("POST", "acme", api+"/pos/sales", tok, sale), 409, "ERR_CONFLICT", "shift_not_open")
	webtest.ExpectErr(t, k.Do("GET", "acme", api+"/pos/shifts/current", tok, nil), 404, "ERR_NOT_FOUND", "shift_not_open")
	r := k.Do("POST", "acme", api+"/pos/shifts", tok, map[string]any{"opening_float": 20})
	if r.Status != 201 || r.Data()["status"] != "open" {
		t.Fatalf("open: %d %s", r.Status, r.Body)
	}
	shift := int64(r.Data()["id"].(float64))
	webtest.ExpectErr(t, k.Do("POST", "acme", api+"/pos/shifts", tok, map[string]any{}), 409, "ERR_CONFLICT", "shift_already_open")
	r = k.Do("GET", "acme", api+"/pos/products", tok, nil)
	if r.Status != 200 || len(r.Data()["cards"].([]any)) != 1 {
		t.Fatalf("products: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", api+"/pos/sales", tok, map[string]any{"lines": sale["lines"]}), 400, "ERR_VALIDATION", "request_id_required")
	bad := k.Do("POST", "acme", api+"/pos/sales", tok, map[string]any{"request_id": "x", "lines": []any{map[string]any{"kind": "pizza"}}})
	if bad.Status != 400 || bad.Reason() != "invalid_enum" {
		t.Fatalf("bad kind: %d %s", bad.Status, bad.Body)
	}
	r = k.Do("POST", "acme", api+"/pos/sales", tok, sale)
	if r.Status != 201 || r.Data()["replay"] != false || r.Data()["total"] != 30.0 {
		t.Fatalf("sale: %d %s", r.Status, r.Body)
	}
	id := int64(r.Data()["id"].(float64))
	again := k.Do("POST", "acme", api+"/pos/sales", tok, sale)
	if again.Status != 200 || again.Data()["replay"] != true || int64(again.Data()["id"].(float64)) != id {
		t.Fatalf("replay: %d %s", again.Status, again.Body)
	}
	if xrtest.Scalar(t, ten, `SELECT quantity FROM card_batches WHERE id = ?`, res.BatchID) != 3 ||
		xrtest.Scalar(t, ten, `SELECT sold_counter FROM card_batches WHERE id = ?`, res.BatchID) != 3 {
		t.Fatal("series counters after the sale")
	}
	pj := k.Do("GET", "acme", fmt.Sprintf("%s/pos/sales/%d/print-job", api, id), tok, nil)
	lines := pj.Data()["sale"].(map[string]any)["lines"].([]any)
	codes := lines[0].(map[string]any)["cards"].([]any)
	if pj.Status != 200 || len(codes) != 3 || len(pj.Data()["layouts"].([]any)) != 2 {
		t.Fatalf("print job: %d %s", pj.Status, pj.Body)
	}
	if r := k.Do("POST", "acme", fmt.Sprintf("%s/pos/sales/%d/printed", api, id), tok, nil); r.Status != 200 || r.Data()["print_count"] != 1.0 {
		t.Fatalf("printed: %d %s", r.Status, r.Body)
	}
	if r := k.Do("POST", "acme", fmt.Sprintf("%s/pos/sales/%d/void", api, id), tok, map[string]any{}); r.Status != 200 || r.Data()["status"] != "voided" {
		t.Fatalf("void: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", api+"/pos/sales/999/void", tok, map[string]any{}), 404, "ERR_NOT_FOUND", "not_found")
	if r := k.Do("GET", "acme", api+"/pos/sales?filter[status]=voided", tok, nil); r.Status != 200 || len(r.List()) != 1 {
		t.Fatalf("sales: %d %s", r.Status, r.Body)
	}
	r = k.Do("POST", "acme", fmt.Sprintf("%s/pos/shifts/%d/close", api, shift), tok, map[string]any{"counted_cash": 20})
	if r.Status != 200 || r.Data()["expected_cash"] != 20.0 || r.Data()["difference"] != 0.0 {
		t.Fatalf("close: %d %s", r.Status, r.Body)
	}
	r = k.Do("GET", "acme", fmt.Sprintf("%s/pos/shifts/%d/report", api, shift), tok, nil)
	if r.Status != 200 || r.Data()["voids"] != 1.0 || r.Data()["sales"] != 0.0 || r.Data()["counted_cash"] != 20.0 {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "acme", api+"/pos/shifts", tok, nil); r.Status != 200 || len(r.List()) != 1 {
		t.Fatalf("shifts: %d %s", r.Status, r.Body)
	}
	if d, err := cards.StockCheck(t.Context(), ten.DB.R, res.BatchID); err != nil || d != "" {
		t.Fatalf("stock: %q %v", d, err)
	}
}
