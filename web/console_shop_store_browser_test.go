package web

// Browser test of the public card shop a buyer uses on a phone (prefix css).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestShopStoreInBrowser: a buyer picks a card on the storefront at phone
// width, pays by bank transfer, and once staff confirm the payment the
// return page shows the card's code; both pages pass axe.
func TestShopStoreInBrowser(t *testing.T) {
	t.Parallel()
	s, id := shSetup(t, 2)
	if r := s.do("POST", fmt.Sprintf("/admin/shop/batches/%d/publish", id), s.tok, map[string]any{"price": 4}); r.Status != 200 {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	b := newBrowser(t, s.kit)
	b.run("phone", chromedp.EmulateViewport(320, 640))
	b.run("storefront", chromedp.Navigate(b.base+"/shop"), chromedp.WaitVisible(fmt.Sprintf("#buy-%d", id), chromedp.ByQuery))
	b.axe("shop storefront")
	b.run("buy", chromedp.SendKeys(fmt.Sprintf("#f-contact-%d", id), "buyer@example.com", chromedp.ByQuery),
		chromedp.Click(fmt.Sprintf("#buy-%d", id), chromedp.ByQuery), chromedp.WaitVisible("#receipt-reference", chromedp.ByQuery))
	b.axe("shop purchase")
	var ret string
	b.run("return link", chromedp.Evaluate(`(document.querySelector('a[href^="/shop/return/"]')||{}).getAttribute ? document.querySelector('a[href^="/shop/return/"]').getAttribute('href') : ''`, &ret))
	pid := s.scalar(`SELECT id FROM payments WHERE purpose = 'shop_card'`)
	if r := s.do("POST", fmt.Sprintf("/admin/payments/%d/confirm", pid), s.tok, map[string]any{}); r.Status != 200 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	if ret == "" {
		t.Fatal("no return link on the purchase page")
	}
	b.run("return page", chromedp.Navigate(b.base+ret), chromedp.WaitVisible("#receipt-codes", chromedp.ByQuery))
	var code string
	if err := s.ten.DB.R.QueryRow(`SELECT c.code FROM shop_sale_cards sc JOIN cards c ON c.id = sc.card_id`).Scan(&code); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.text("#receipt-codes"), code) {
		t.Fatalf("codes shown %q, want %q", b.text("#receipt-codes"), code)
	}
	b.axe("shop return with the code")
	s.shStockOK(id)
}
