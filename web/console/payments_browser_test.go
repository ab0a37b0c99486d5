package console_test

// Browser test of the payment pages (prefix cpy).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/app/payments"
	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestConsolePaymentsInBrowser: staff enable the manual method with a fee
// and instructions (a bad percent is refused beside nothing stored); a
// subscriber's bank-transfer deposit then shows in the list as pending;
// its page confirms it after the browser's confirmation, the subscriber is
// credited once and the log shows the staff decision.
func TestConsolePaymentsInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	s := &webtest.Acme{Kit: k, Tok: k.Owner("acme"), Ten: k.Acquire("acme")}
	b := browsertest.New(t, k)
	b.SignIn("owner")
	yes := chromedp.Evaluate(`window.confirm = () => true`, nil)

	b.Run("gateways", chromedp.Navigate(b.Base+"/payment-gateways"), chromedp.WaitVisible("#gateway-manual", chromedp.ByQuery))
	b.Axe("payment gateways")
	b.Run("bad percent", chromedp.Click("#f-manual-enabled", chromedp.ByQuery),
		chromedp.SetValue("#f-manual-pct", "2.555", chromedp.ByQuery), chromedp.Click("#save-manual", chromedp.ByQuery),
		chromedp.WaitVisible(".error", chromedp.ByQuery))
	if n := s.Scalar(`SELECT COUNT(*) FROM payment_gateways`); n != 0 {
		t.Fatalf("refused form stored %d gateways", n)
	}
	b.Run("save manual", chromedp.Navigate(b.Base+"/payment-gateways"), chromedp.WaitVisible("#gateway-manual", chromedp.ByQuery),
		chromedp.Click("#f-manual-enabled", chromedp.ByQuery),
		chromedp.SetValue("#f-manual-pct", "2.5", chromedp.ByQuery),
		chromedp.SetValue("#f-manual-instr", "IBAN XX00, reference {reference}", chromedp.ByQuery),
		chromedp.Click("#save-manual", chromedp.ByQuery),
		chromedp.WaitVisible(`#gateway-manual [data-enabled="true"]`, chromedp.ByQuery))
	if s.Scalar(`SELECT fee_percent_bp FROM payment_gateways WHERE code = 'manual' AND enabled = 1`) != 250 {
		t.Fatal("manual gateway not stored with 250 basis points")
	}

	uid := s.User("", map[string]any{"username": "transfer", "password": "radius-t"})
	ch, err := payments.Start(webtest.Background, s.Ten, payments.StartInput{Gateway: "manual", RequestID: webtest.PaymentUUID1, Amount: app.Money(20000),
		Purpose: payments.PurposeDeposit, UserID: uid, PayerKey: fmt.Sprintf("u:%d", uid)})
	if err != nil {
		t.Fatal(err)
	}
	id := ch.Payment.ID
	b.Run("list pending", chromedp.Navigate(b.Base+"/payments?state=pending"),
		chromedp.WaitVisible(fmt.Sprintf(`tr[data-payment="%d"][data-state="pending"]`, id), chromedp.ByQuery))
	b.Axe("payments list")
	b.Run("open", chromedp.Click(fmt.Sprintf(`tr[data-payment="%d"] a`, id), chromedp.ByQuery), chromedp.WaitVisible("#confirm-btn", chromedp.ByQuery))
	if got := b.Text("#payment-total"); !strings.HasPrefix(got, "20.5 ") {
		t.Fatalf("total shown %q, want 20.5 (20 + 2.5 %%)", got)
	}
	b.Axe("payment, pending")
	b.Run("confirm", yes, chromedp.SetValue("#f-note", "statement line 7", chromedp.ByQuery), chromedp.Click("#confirm-btn", chromedp.ByQuery),
		chromedp.WaitVisible(`#payment-state[data-state="succeeded"]`, chromedp.ByQuery))
	if !strings.Contains(b.Text("#payment-log"), "statement line 7") {
		t.Fatalf("log: %q", b.Text("#payment-log"))
	}
	if s.Balance(uid) != "20" || s.Scalar(`SELECT COUNT(*) FROM user_ledger WHERE user_id = ? AND ref_type = 'payment'`, uid) != 1 {
		t.Fatalf("balance %s after confirming in the console", s.Balance(uid))
	}
	b.Axe("payment, succeeded")
}
