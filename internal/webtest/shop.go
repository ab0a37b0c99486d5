package webtest

import (
	"testing"

	"xr/app/cards"
)

// ShopUUID1 to 3 are request ids of shop purchases.
const ShopUUID1, ShopUUID2, ShopUUID3 = "5c1d7e3a-2b4f-4d6e-8a9b-0c1d2e3f4a51", "5c1d7e3a-2b4f-4d6e-8a9b-0c1d2e3f4a52", "5c1d7e3a-2b4f-4d6e-8a9b-0c1d2e3f4a53"

// ShopSetup is acme with the manual gateway on and a published series of
// n cards.
func ShopSetup(t *testing.T, n int) (*Acme, int64) {
	t.Helper()
	s := NewAcme(t)
	StartJobs(t, s.Kit)
	if r := s.Call("PUT", "/admin/payments/gateways/manual", s.Tok, map[string]any{"enabled": true}); r.Status != 200 {
		t.Fatalf("enable manual: %d %s", r.Status, r.Body)
	}
	id := CreateSeries(t, s.Kit, s.Tok, map[string]any{"type": "refill", "quantity": n, "face_value": 5, "expiration": NextYear,
		"sell_online": true, "name": "Shop pass", "request_id": "shop-series"})
	return s, id
}

// ShopStockOK fails when a series' stock counters disagree with its cards.
func (s *Acme) ShopStockOK(id int64) {
	s.T.Helper()
	diff, err := cards.StockCheck(Background, s.Ten.DB.R, id)
	if err != nil || diff != "" {
		s.T.Fatalf("series %d counters: %q %v", id, diff, err)
	}
}
