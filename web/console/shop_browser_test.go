package console_test

// Browser test of the shop pages (prefix csh).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestConsoleShopInBrowser: staff publish a series at a price from the
// shop page and see it in the storefront preview; a public buyer's sale,
// once paid, is listed with its payment and delivery state; its page
// reveals the buyer's contact after the browser's confirmation and shows
// the audit line naming who looked.
func TestConsoleShopInBrowser(t *testing.T) {
	t.Parallel()
	s, id := webtest.ShopSetup(t, 3)
	b := browsertest.New(t, s.Kit)
	b.SignIn("owner")
	yes := chromedp.Evaluate(`window.confirm = () => true`, nil)

	row := fmt.Sprintf(`#shop-series tr[data-series="%d"]`, id)
	b.Run("shop page", chromedp.Navigate(b.Base+"/online-shop"), chromedp.WaitVisible(row, chromedp.ByQuery))
	if got := b.Text(`#readiness [data-check="payment_provider"]`); !strings.Contains(got, "ok") {
		t.Fatalf("readiness shows %q for the enabled manual method", got)
	}
	b.Axe("shop, unpublished")
	// A refused price is shown beside its field; nothing is stored.
	b.Run("bad price", chromedp.SetValue(fmt.Sprintf("#price-%d", id), "1.2345", chromedp.ByQuery),
		chromedp.Click(fmt.Sprintf("#publish-%d", id), chromedp.ByQuery), chromedp.WaitVisible(fmt.Sprintf("#e-price-%d", id), chromedp.ByQuery))
	if n := s.Scalar(`SELECT COUNT(*) FROM shop_listings`); n != 0 {
		t.Fatalf("refused price stored %d listings", n)
	}
	b.Run("publish", chromedp.SetValue(fmt.Sprintf("#price-%d", id), "2.5", chromedp.ByQuery),
		chromedp.Click(fmt.Sprintf("#publish-%d", id), chromedp.ByQuery),
		chromedp.WaitVisible(row+`[data-published="true"]`, chromedp.ByQuery),
		chromedp.WaitVisible(fmt.Sprintf(`#storefront tr[data-item="%d"]`, id), chromedp.ByQuery))
	if got := b.Text(fmt.Sprintf(`#storefront tr[data-item="%d"]`, id)); !strings.Contains(got, "Shop pass") || !strings.Contains(got, "2.5") {
		t.Fatalf("storefront preview row %q", got)
	}
	if s.Scalar(`SELECT price FROM shop_listings WHERE batch_id = ? AND published = 1`, id) != 2500 {
		t.Fatal("listing not stored at 2.5")
	}
	b.Axe("shop, published")
	b.Shot("shop")

	// A public buyer pays by bank transfer, confirmed by staff.
	p := s.Call("POST", "/shop/purchases", "", map[string]any{"series_id": id, "gateway": "manual", "contact": "walkin@example.com", "request_id": webtest.ShopUUID1})
	if p.Status != 200 {
		t.Fatalf("buy: %d %s", p.Status, p.Body)
	}
	pay := p.Data()["payment"].(map[string]any)
	sale := int64(pay["purpose_ref"].(float64))
	if r := s.Call("POST", fmt.Sprintf("/admin/payments/%d/confirm", int64(pay["id"].(float64))), s.Tok, map[string]any{}); r.Status != 200 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}

	b.Run("sales", chromedp.Navigate(b.Base+"/online-shop/sales"),
		chromedp.WaitVisible(fmt.Sprintf(`#shop-sales tr[data-sale="%d"][data-state="paid"]`, sale), chromedp.ByQuery))
	if got := b.Text("#shop-sales tbody"); !strings.Contains(got, "w***@example.com") || strings.Contains(got, "walkin@") || !strings.Contains(got, "succeeded") {
		t.Fatalf("sales row %q", got)
	}
	b.Axe("shop sales")
	b.Run("open sale", chromedp.Click(fmt.Sprintf("#sale-%d", sale), chromedp.ByQuery), chromedp.WaitVisible("#reveal-btn", chromedp.ByQuery))
	if strings.Contains(b.Text("main"), "walkin@") {
		t.Fatal("contact shown before the reveal")
	}
	b.Run("reveal", yes, chromedp.Click("#reveal-btn", chromedp.ByQuery), chromedp.WaitVisible("#revealed-contact", chromedp.ByQuery))
	if got := b.Text("#revealed-contact"); got != "walkin@example.com" {
		t.Fatalf("revealed %q", got)
	}
	if got := b.Text(`#sale-audit li[data-action="reveal"]`); !strings.Contains(got, "owner") {
		t.Fatalf("audit line %q", got)
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM shop_sale_audit WHERE sale_id = ? AND action = 'reveal' AND manager_id = ?`, sale, s.OwnerID); n != 1 {
		t.Fatalf("%d reveal audit rows", n)
	}
	b.Axe("shop sale, revealed")
	b.Shot("shop-sale")
	b.NoDialog("shop sale")
	s.ShopStockOK(id)
}
