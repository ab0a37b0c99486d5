package console_test

// Browser test of the public card shop a buyer uses on a phone (prefix css).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestShopStoreInBrowser: a buyer picks a card on the storefront at phone
// width, pays by bank transfer, and once staff confirm the payment the
// return page shows the card's code; both pages pass axe.
func TestShopStoreInBrowser(t *testing.T) {
	t.Parallel()
	s, id := webtest.ShopSetup(t, 2)
	if r := s.Call("POST", fmt.Sprintf("/admin/shop/batches/%d/publish", id), s.Tok, map[string]any{"price": 4}); r.Status != 200 {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	b := browsertest.New(t, s.Kit)
	b.Run("phone", chromedp.EmulateViewport(320, 640))
	b.Run("storefront", chromedp.Navigate(b.Base+"/shop"), chromedp.WaitVisible(fmt.Sprintf("#buy-%d", id), chromedp.ByQuery))
	b.Axe("shop storefront")
	b.Run("buy", chromedp.SendKeys(fmt.Sprintf("#f-contact-%d", id), "buyer@example.com", chromedp.ByQuery),
		chromedp.Click(fmt.Sprintf("#buy-%d", id), chromedp.ByQuery), chromedp.WaitVisible("#receipt-reference", chromedp.ByQuery))
	b.Axe("shop purchase")
	var ret string
	b.Run("return link", chromedp.Evaluate(`(document.querySelector('a[href^="/shop/return/"]')||{}).getAttribute ? document.querySelector('a[href^="/shop/return/"]').getAttribute('href') : ''`, &ret))
	pid := s.Scalar(`SELECT id FROM payments WHERE purpose = 'shop_card'`)
	if r := s.Call("POST", fmt.Sprintf("/admin/payments/%d/confirm", pid), s.Tok, map[string]any{}); r.Status != 200 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	if ret == "" {
		t.Fatal("no return link on the purchase page")
	}
	b.Run("return page", chromedp.Navigate(b.Base+ret), chromedp.WaitVisible("#receipt-codes", chromedp.ByQuery))
	var code string
	if err := s.Ten.DB.R.QueryRow(`SELECT c.code FROM shop_sale_cards sc JOIN cards c ON c.id = sc.card_id`).Scan(&code); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.Text("#receipt-codes"), code) {
		t.Fatalf("codes shown %q, want %q", b.Text("#receipt-codes"), code)
	}
	b.Axe("shop return with the code")
	s.ShopStockOK(id)
}
