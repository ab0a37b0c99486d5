package my_test

// Browser test of the plan pages under /my/ (prefix cmp).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestMyPlansInBrowser: a subscriber sees the plans its plan may change
// to, opens the quote of a change now, confirms it, and is charged
// exactly the quote's total; a plan it may not afford shows the shortfall
// and a top-up instead of a confirm button.
func TestMyPlansInBrowser(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	basic := s.Plan(map[string]any{"name": "Basic", "price": 10, "duration_days": 30})
	plus := s.Plan(map[string]any{"name": "Plus", "price": 20, "duration_days": 30})
	gold := s.Plan(map[string]any{"name": "Gold", "price": 500, "duration_days": 30})
	if r := s.Call("PUT", fmt.Sprintf("/admin/profiles/%d/self-service", basic), s.Tok, map[string]any{"change_targets": []int64{plus, gold},
		"extension": map[string]any{"days": 0, "price": 0, "max_per_month": 0}, "boosts": []any{}}); r.Status != 200 {
		t.Fatalf("policy: %s", r.Body)
	}
	uid := s.User("", map[string]any{"username": "mover", "password": "radius-m", "portal_password": "Portal-pass-6", "profile_id": basic})
	s.Call("POST", fmt.Sprintf("/users/%d/activation", uid), s.Tok, map[string]any{"request_id": "cmp-act"})
	s.Call("POST", fmt.Sprintf("/users/%d/deposit", uid), s.Tok, map[string]any{"amount": 40, "request_id": "cmp-dep"})
	s.Exec(`UPDATE users SET debt_limit = 0 WHERE id = ?`, uid) // no credit: the balance is the limit
	before := s.Scalar(`SELECT balance FROM users WHERE id = ?`, uid)

	b := browsertest.New(t, s.Kit)
	b.Run("phone", chromedp.EmulateViewport(320, 640))
	b.Run("sign in", chromedp.Navigate(b.Base+"/my/login"), chromedp.WaitVisible("#my-login", chromedp.ByQuery),
		chromedp.SendKeys("#f-username", "mover", chromedp.ByQuery), chromedp.SendKeys("#f-password", "Portal-pass-6", chromedp.ByQuery),
		chromedp.Click("#my-login-btn", chromedp.ByQuery), chromedp.WaitVisible("#my-status", chromedp.ByQuery))
	b.Run("plans", chromedp.Navigate(b.Base+"/my/plans"), chromedp.WaitVisible("#pl-list", chromedp.ByQuery))
	b.Axe("my plans")
	// Gold is beyond the balance: the quote shows the shortfall, no confirm.
	b.Run("gold quote", chromedp.Click(fmt.Sprintf("#pl-now-%d", gold), chromedp.ByQuery), chromedp.WaitVisible(`#quote a[href="/my/pay"]`, chromedp.ByQuery))
	var confirms int
	b.Run("no confirm", chromedp.Evaluate(`document.querySelectorAll('#quote-confirm-btn').length`, &confirms))
	if confirms != 0 {
		t.Fatal("an unaffordable change offers a confirm button")
	}
	b.Run("back", chromedp.Navigate(b.Base+"/my/plans"), chromedp.WaitVisible("#pl-list", chromedp.ByQuery))
	b.Run("quote", chromedp.Click(fmt.Sprintf("#pl-now-%d", plus), chromedp.ByQuery), chromedp.WaitVisible("#quote-confirm-btn", chromedp.ByQuery))
	b.Axe("my quote")
	total := b.Text("#quote-total")
	b.Run("confirm", chromedp.Click("#quote-confirm-btn", chromedp.ByQuery), chromedp.WaitVisible("#my-status", chromedp.ByQuery))
	if got := s.Scalar(`SELECT profile_id FROM users WHERE id = ?`, uid); got != plus {
		t.Fatalf("plan after the change: %d, want %d", got, plus)
	}
	charged := before - s.Scalar(`SELECT balance FROM users WHERE id = ?`, uid)
	if want := strings.Fields(total)[0]; fmt.Sprint(float64(charged)/1000) != want {
		t.Fatalf("charged %d thousandths, the quote said %q", charged, total)
	}

	b.Run("speed", chromedp.Navigate(b.Base+"/my/speed"), chromedp.WaitVisible("#sp-options", chromedp.ByQuery))
	b.Axe("my speed")

	// An add-on is bought online: the payment page takes over.
	ad := s.Call("POST", "/admin/addons", s.Tok, map[string]any{"name": "Extra week", "kind": "days", "amount": 7, "price": 3})
	if ad.Status != 201 {
		t.Fatalf("addon: %s", ad.Body)
	}
	addon := int64(ad.Data()["id"].(float64))
	s.Call("PUT", "/admin/payments/gateways/manual", s.Tok, map[string]any{"enabled": true, "instructions": "Pay at the shop, reference {reference}"})
	b.Run("add-ons", chromedp.Navigate(b.Base+"/my/plans"), chromedp.WaitVisible(fmt.Sprintf("#ad-buy-%d", addon), chromedp.ByQuery))
	b.Axe("my plans with add-ons")
	b.Run("buy add-on", chromedp.Click(fmt.Sprintf("#ad-buy-%d", addon), chromedp.ByQuery),
		chromedp.WaitVisible(`#payment-state[data-state="pending"] #payment-instructions`, chromedp.ByQuery))
	if n := s.Scalar(`SELECT COUNT(*) FROM payments WHERE user_id = ? AND purpose = 'addon' AND purpose_ref = ? AND amount = 3000`, uid, addon); n != 1 {
		t.Fatal("add-on payment not recorded")
	}
}
