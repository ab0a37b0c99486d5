package my_test

// Browser test of the subscriber pages under /my/ (prefix cmy).

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"layeh.com/radius/rfc2866"

	"xr/app/payments"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// cmyCheckout is a stand-in for Stripe: its API creates Checkout Sessions
// whose URL is its own page; that page plays the payer: it has the
// provider send xr the signed "paid" notice, then sends the browser back
// to the session's success URL — what Stripe does.
func cmyCheckout(t *testing.T, xrURL, whsec string) *httptest.Server {
	var mu sync.Mutex
	sessions := map[string]map[string]string{}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/checkout/sessions":
			if err := r.ParseForm(); err != nil {
				w.WriteHeader(400)
				return
			}
			id := fmt.Sprintf("cs_my_%d", len(sessions)+1)
			sessions[id] = map[string]string{"ref": r.Form.Get("client_reference_id"), "success": r.Form.Get("success_url"),
				"amount": r.Form.Get("line_items[0][price_data][unit_amount]"), "currency": r.Form.Get("line_items[0][price_data][currency]")}
			fmt.Fprintf(w, `{"id":%q,"object":"checkout.session","url":%q}`, id, srv.URL+"/pay/"+id)
		case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/pay/"):
			id := strings.TrimPrefix(r.URL.Path, "/pay/")
			cs := sessions[id]
			var cents int64
			fmt.Sscan(cs["amount"], &cents)
			body, sig := webtest.SignedStripeEvent(whsec, "evt_"+id, "checkout.session.completed", id, cs["ref"], cents, cs["currency"], "paid")
			req, _ := http.NewRequest("POST", xrURL+"/api/v1/payments/webhooks/stripe", strings.NewReader(string(body)))
			req.Host = "acme.xr.test"
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Stripe-Signature", sig)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("notice to xr: %v %v", err, resp)
			}
			if resp != nil {
				resp.Body.Close()
			}
			http.Redirect(w, r, cs["success"], http.StatusSeeOther)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestMyPagesInBrowser: a subscriber signs in on /my/, sees its plan in
// words and the data left; after RADIUS accounting from the NAS its usage
// shows; it redeems a refill card and sees the balance; it tops up through
// the stand-in payment provider, comes back to the payment page which
// shows it paid, and the wallet is credited once; another subscriber's
// payment is a 404; every page passes axe and fits a phone.
func TestMyPagesInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	webtest.StartJobs(t, k.Kit)
	ten := k.Acquire("acme")
	r := k.Do("POST", "acme", "/api/v1/users", k.Tok, map[string]any{"username": "alice", "password": "pw-alice", "portal_password": "Portal-pass-1",
		"profile_id": k.Plan, "expiration": "2030-01-02"})
	if r.Status != 201 {
		t.Fatalf("user: %s", r.Body)
	}
	alice := int64(r.Data()["id"].(float64))
	k.Do("POST", "acme", "/api/v1/users", k.Tok, map[string]any{"username": "bob", "password": "pw-bob", "portal_password": "Portal-pass-2"})
	if err := ten.Write(webtest.Background, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE users SET bytes_limit = 10000000000 WHERE id = ?`, alice)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const whsec = "whsec_my"
	co := cmyCheckout(t, k.TS.URL, whsec)
	payments.SetProviderAPI(k.App, "stripe", co.URL)
	if r := k.Do("PUT", "acme", "/api/v1/admin/payments/gateways/stripe", k.Tok, map[string]any{"enabled": true,
		"secrets": map[string]any{"api_key": "sk_test_my", "webhook_secret": whsec}}); r.Status != 200 {
		t.Fatalf("gateway: %s", r.Body)
	}

	b := browsertest.New(t, k.Kit)
	phone := chromedp.EmulateViewport(320, 640)
	b.Run("phone", phone)
	// Screenshots at desktop and phone sizes, then back to the narrowest phone.
	shot := func(name string) { b.Shot(name); b.Run("phone", phone) }
	b.Run("home redirects to sign-in", chromedp.Navigate(b.Base+"/my/"), chromedp.WaitVisible("#my-login", chromedp.ByQuery))
	b.Axe("my sign-in")
	b.TabTo("#my-login-btn") // the form is reachable from the keyboard
	b.Run("wrong password", chromedp.SendKeys("#f-username", "alice", chromedp.ByQuery), chromedp.SendKeys("#f-password", "nope", chromedp.ByQuery),
		chromedp.Click("#my-login-btn", chromedp.ByQuery), chromedp.WaitVisible(".flash.bad", chromedp.ByQuery))
	b.Run("sign in", chromedp.SetValue("#f-password", "Portal-pass-1", chromedp.ByQuery), chromedp.Click("#my-login-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#my-status", chromedp.ByQuery))
	if got := b.Text("#my-status"); !strings.Contains(got, "Active until") || !strings.Contains(got, "2030") {
		t.Fatalf("status %q", got)
	}
	if got := b.Text("#my-data-left"); got != "9.3 GiB" {
		t.Fatalf("data left %q", got)
	}
	b.Axe("my home")
	shot("my-home")

	// Accounting from the NAS: 3 MB used.
	k.Acct(rfc2866.AcctStatusType_Value_Start, "alice", "s-1", 0, 0)
	k.Acct(rfc2866.AcctStatusType_Value_InterimUpdate, "alice", "s-1", 3<<20, 600)
	xrtest.Eventually(t, "usage recorded", func() bool { return k.Scalar(`SELECT used_bytes FROM users WHERE id = ?`, alice).Int64 >= 3<<20 })
	b.Run("usage", chromedp.Navigate(b.Base+"/my/usage"), chromedp.WaitVisible("#my-used", chromedp.ByQuery))
	if got := b.Text("#my-used"); got != "3.0 MiB" {
		t.Fatalf("used %q", got)
	}
	if !strings.Contains(b.Text("#my-sessions"), "online") {
		t.Fatalf("live session not listed: %q", b.Text("#my-sessions"))
	}
	if b.Text("#my-months") == "" {
		t.Fatal("no monthly history")
	}
	b.Axe("my usage")
	shot("my-usage")

	// Redeem a refill card: the balance changes.
	series := webtest.CreateSeries(t, k.Kit, k.Tok, map[string]any{"type": "refill", "quantity": 1, "face_value": 7, "expiration": webtest.NextYear, "request_id": "my-gen-1"})
	code := webtest.SeriesCodes(t, k.Kit, k.Tok, series)[0]
	b.Run("redeem", chromedp.Navigate(b.Base+"/my/redeem"), chromedp.WaitVisible("#my-redeem", chromedp.ByQuery))
	b.Axe("my redeem")
	b.Run("bad code", chromedp.SendKeys("#f-code", "NOT-A-CODE", chromedp.ByQuery), chromedp.Click("#my-redeem-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#e-code", chromedp.ByQuery))
	b.Run("good code", chromedp.SetValue("#f-code", code, chromedp.ByQuery), chromedp.Click("#my-redeem-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#my-balance", chromedp.ByQuery))
	if got := b.Text("#my-balance"); !strings.HasPrefix(got, "7 ") {
		t.Fatalf("balance after the card %q", got)
	}

	// Top up 12.5 through the provider and come back to a paid payment.
	b.Run("pay", chromedp.Navigate(b.Base+"/my/pay"), chromedp.WaitVisible("#my-pay", chromedp.ByQuery))
	b.Axe("my pay")
	b.Run("top up", chromedp.SendKeys("#f-amount", "12.5", chromedp.ByQuery), chromedp.Click("#my-pay-btn", chromedp.ByQuery),
		chromedp.WaitVisible(`#payment-state[data-state="pending"] #payment-continue`, chromedp.ByQuery))
	b.Axe("my payment pending")
	b.Run("at the provider and back", chromedp.Click("#payment-continue", chromedp.ByQuery),
		chromedp.WaitVisible(`#payment-state[data-state="succeeded"]`, chromedp.ByQuery))
	b.Axe("my payment paid")
	shot("my-payment")
	if k.Scalar(`SELECT balance FROM users WHERE id = ?`, alice).Int64 != 19500 ||
		k.Scalar(`SELECT COUNT(*) FROM user_ledger WHERE user_id = ? AND ref_type = 'payment'`, alice).Int64 != 1 {
		t.Fatalf("wallet after top-up: %v", k.Scalar(`SELECT balance FROM users WHERE id = ?`, alice))
	}
	b.Run("money", chromedp.Navigate(b.Base+"/my/money"), chromedp.WaitVisible(`#my-payments tr[data-state="succeeded"]`, chromedp.ByQuery))
	b.Axe("my money")
	b.Run("renew quote", chromedp.Navigate(b.Base+"/my/renew"), chromedp.WaitVisible("#renew-price", chromedp.ByQuery))
	b.Axe("my renew")
	// A staff deposit issues an invoice: printable from the money page.
	if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/users/%d/deposit", alice), k.Tok, map[string]any{"amount": 2, "request_id": "cmy-dep", "issue_invoice": true}); r.Status != 200 {
		t.Fatalf("deposit: %s", r.Body)
	}
	b.Run("invoice", chromedp.Navigate(b.Base+"/my/money"), chromedp.WaitVisible("#my-invoices a", chromedp.ByQuery),
		chromedp.Click("#my-invoices a", chromedp.ByQuery), chromedp.WaitVisible("#invoice-amount", chromedp.ByQuery))
	b.Axe("my invoice")

	// Bob's payment is not Alice's to see.
	var bobRef string
	bobTok := k.Do("POST", "acme", "/api/v1/portal/login", "", map[string]any{"username": "bob", "password": "Portal-pass-2"}).Data()["token"].(string)
	k.Do("PUT", "acme", "/api/v1/admin/payments/gateways/manual", k.Tok, map[string]any{"enabled": true})
	if d := k.Do("POST", "acme", "/api/v1/portal/deposit", bobTok, map[string]any{"gateway": "manual", "amount": 5, "request_id": webtest.PaymentUUID3}); d.Status == 200 {
		bobRef = d.Data()["payment"].(map[string]any)["reference"].(string)
	} else {
		t.Fatalf("bob deposit: %s", d.Body)
	}
	var status int64
	b.Run("other's payment", chromedp.Navigate(b.Base+"/my/payments/"+bobRef), chromedp.WaitVisible("main", chromedp.ByQuery),
		chromedp.Evaluate(`performance.getEntriesByType('navigation')[0].responseStatus`, &status))
	if status != 404 || strings.Contains(b.Text("main"), bobRef) {
		t.Fatalf("another subscriber's payment answered %d", status)
	}
	// Support: a new request from the phone, the staff reply shows in the thread.
	b.Run("new ticket", chromedp.Navigate(b.Base+"/my/tickets/new"), chromedp.WaitVisible("#my-ticket-form", chromedp.ByQuery))
	b.Axe("my new ticket")
	b.Run("send ticket", chromedp.SendKeys("#f-subject", "No internet since noon", chromedp.ByQuery),
		chromedp.SendKeys("#f-body", "The light on the router is red.", chromedp.ByQuery), chromedp.Click("#my-ticket-submit", chromedp.ByQuery),
		chromedp.WaitVisible("#my-thread", chromedp.ByQuery))
	tid := k.Scalar(`SELECT id FROM tickets WHERE subject = 'No internet since noon' AND requester_user_id = ?`, alice).Int64
	if tid == 0 {
		t.Fatal("ticket not stored for alice")
	}
	if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/tickets/%d/messages", tid), k.Tok, map[string]any{"body": "We reset your port; try again."}); r.Status != 201 {
		t.Fatalf("staff reply: %s", r.Body)
	}
	b.Run("thread", chromedp.Navigate(fmt.Sprintf("%s/my/tickets/%d", b.Base, tid)), chromedp.WaitVisible(`#my-thread [data-author="staff"]`, chromedp.ByQuery))
	if got := b.Text(`#my-thread [data-author="staff"] .body`); got != "We reset your port; try again." {
		t.Fatalf("staff reply shown %q", got)
	}
	b.Axe("my ticket thread")
	b.Run("tickets", chromedp.Navigate(b.Base+"/my/tickets"), chromedp.WaitVisible(fmt.Sprintf(`#my-tickets [data-ticket="%d"]`, tid), chromedp.ByQuery))
	b.Axe("my tickets")
	b.Run("back to the thread", chromedp.Navigate(fmt.Sprintf("%s/my/tickets/%d", b.Base, tid)), chromedp.WaitVisible("#my-reply", chromedp.ByQuery))
	shot("my-ticket")
	b.Run("reply", chromedp.SendKeys("#f-reply", "Works now, thanks.", chromedp.ByQuery), chromedp.Click("#my-reply-btn", chromedp.ByQuery),
		chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := k.Scalar(`SELECT COUNT(*) FROM ticket_messages WHERE ticket_id = ? AND body = 'Works now, thanks.'`, tid).Int64; n != 1 {
		t.Fatalf("reply stored %d times", n)
	}

	b.Run("sign out", chromedp.Navigate(b.Base+"/my/"), chromedp.WaitVisible("#my-logout", chromedp.ByQuery), chromedp.Click("#my-logout", chromedp.ByQuery),
		chromedp.WaitVisible("#my-login", chromedp.ByQuery))
}
