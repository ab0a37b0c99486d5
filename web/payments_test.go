package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"xr/app/payments"
	"xr/internal/webtest"
)

// Payments (prefix pay): gateways, deposits and purchases through the
// manual provider and through Stripe against a local stand-in for its API,
// with signed webhooks replayed, reordered and forged.

// stripeStandIn answers POST /v1/checkout/sessions like Stripe: one session
// per idempotency key.
type stripeStandIn struct {
	mu       sync.Mutex
	byKey    map[string]string
	created  []map[string]string
	failNext bool
}

func newStripeStandIn(t *testing.T) (*stripeStandIn, *httptest.Server) {
	st := &stripeStandIn{byKey: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/v1/checkout/sessions" || r.Header.Get("Authorization") != "Bearer sk_test_xr" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":{"type":"invalid_request_error","message":"bad key"}}`)
			return
		}
		if err := r.ParseForm(); err != nil {
			w.WriteHeader(400)
			return
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.failNext {
			st.failNext = false
			w.WriteHeader(402)
			fmt.Fprint(w, `{"error":{"type":"card_error","message":"declined"}}`)
			return
		}
		key := r.Header.Get("Idempotency-Key")
		id, ok := st.byKey[key]
		if !ok {
			id = fmt.Sprintf("cs_test_%d", len(st.byKey)+1)
			st.byKey[key] = id
			st.created = append(st.created, map[string]string{"id": id, "ref": r.Form.Get("client_reference_id"),
				"amount": r.Form.Get("line_items[0][price_data][unit_amount]"), "currency": r.Form.Get("line_items[0][price_data][currency]"),
				"success": r.Form.Get("success_url")})
		}
		fmt.Fprintf(w, `{"id":%q,"object":"checkout.session","url":"https://checkout.stripe.test/%s","client_reference_id":%q}`, id, id, r.Form.Get("client_reference_id"))
	}))
	t.Cleanup(srv.Close)
	return st, srv
}

func payWebhook(s *webtest.Acme, body []byte, sig string) webtest.Resp {
	s.T.Helper()
	return s.Do("POST", "acme", "/api/v1/payments/webhooks/stripe", "", json.RawMessage(body), "Stripe-Signature", sig)
}

func TestPaymentsManualDeposit(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	uid := s.User("", map[string]any{"username": "payer", "password": "radius-p", "portal_password": "Portal-pass-1"})
	tok := webtest.PortalLogin(t, s, "payer", "Portal-pass-1")

	// Nothing enabled yet: no gateway, and a deposit is refused.
	for _, pre := range []string{"/portal", "/user"} {
		if r := s.Call("GET", pre+"/payments/gateways", tok, nil); r.Status != 200 || len(r.List()) != 0 {
			t.Fatalf("%s gateways: %d %s", pre, r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "manual", "amount": 10, "request_id": webtest.PaymentUUID1}),
		400, "ERR_VALIDATION", "gateway_unavailable")

	r := s.Call("PUT", "/admin/payments/gateways/manual", s.Tok, map[string]any{"enabled": true, "min_amount": 5, "fee_percent_bp": 250,
		"instructions": "Transfer {total} {currency} to IBAN XX00, reference {reference}"})
	if r.Status != 200 || r.Data()["enabled"] != true {
		t.Fatalf("enable manual: %d %s", r.Status, r.Body)
	}
	g := s.Call("GET", "/user/payments/gateways", tok, nil)
	if g.Status != 200 || len(g.List()) != 1 || g.List()[0].(map[string]any)["code"] != "manual" || g.List()[0].(map[string]any)["min_amount"] != 5.0 {
		t.Fatalf("gateways: %s", g.Body)
	}

	// Initiation needs a UUID key; refusals store nothing.
	webtest.ExpectErr(t, s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "manual", "amount": 10, "request_id": "abc"}),
		400, "ERR_VALIDATION", "request_id_invalid")
	webtest.ExpectErr(t, s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "manual", "amount": 10}), 400, "ERR_VALIDATION", "request_id_required")
	webtest.ExpectErr(t, s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "manual", "amount": 4, "request_id": webtest.PaymentUUID1}),
		400, "ERR_VALIDATION", "amount_below_minimum")
	if n := s.Scalar(`SELECT COUNT(*) FROM payments`); n != 0 {
		t.Fatalf("%d payments stored after refusals", n)
	}

	d := s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "manual", "amount": 10, "request_id": webtest.PaymentUUID1})
	p, _ := d.Data()["payment"].(map[string]any)
	if d.Status != 200 || p["state"] != "pending" || p["amount"] != 10.0 || p["fee"] != 0.25 || p["total"] != 10.25 {
		t.Fatalf("deposit: %d %s", d.Status, d.Body)
	}
	ref := p["reference"].(string)
	if want := "Transfer 10.25 USD to IBAN XX00, reference " + ref; d.Data()["instructions"] != want {
		t.Fatalf("instructions %q, want %q", d.Data()["instructions"], want)
	}
	// A replay answers the same payment; the same key with another body is a conflict.
	if again := s.Call("POST", "/user/deposit", tok, map[string]any{"gateway": "manual", "amount": 10, "request_id": webtest.PaymentUUID1}); again.Data()["payment"].(map[string]any)["reference"] != ref {
		t.Fatalf("replay: %s", again.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "manual", "amount": 11, "request_id": webtest.PaymentUUID1}),
		409, "ERR_CONFLICT", "request_id_conflict")
	if s.Balance(uid) != "0" {
		t.Fatal("credited before confirmation")
	}

	// Staff confirm: credited once, even when confirmed twice; a reseller
	// without the permission is refused before anything.
	id := int64(p["id"].(float64))
	_, noPerm := s.Manager(s.OwnerID, "viewer", "prm_users_index")
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/admin/payments/%d/confirm", id), noPerm, map[string]any{}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/admin/payments/%d/confirm", id), s.Tok, map[string]any{"received_total": 10}), 409, "ERR_CONFLICT", "amount_mismatch")
	for i := 0; i < 2; i++ {
		c := s.Call("POST", fmt.Sprintf("/admin/payments/%d/confirm", id), s.Tok, map[string]any{"received_total": 10.25, "note": "bank statement 12"})
		if c.Status != 200 || c.Data()["state"] != "succeeded" {
			t.Fatalf("confirm %d: %d %s", i, c.Status, c.Body)
		}
	}
	if s.Balance(uid) != "10" || s.Scalar(`SELECT COUNT(*) FROM user_ledger WHERE user_id = ? AND ref_type = 'payment'`, uid) != 1 {
		t.Fatalf("balance %s after confirm", s.Balance(uid))
	}
	if s.Scalar(`SELECT COUNT(*) FROM events WHERE type = 'payment.succeeded'`) != 1 {
		t.Fatal("payment.succeeded not emitted once")
	}
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/admin/payments/%d/reject", id), s.Tok, map[string]any{}), 409, "ERR_CONFLICT", "payment_not_open")

	// The subscriber sees it; staff see it in the report with aggregates.
	if l := s.Call("GET", "/portal/payments/transactions", tok, nil); len(l.List()) != 1 || l.List()[0].(map[string]any)["state"] != "succeeded" {
		t.Fatalf("transactions: %s", l.Body)
	}
	rep := s.Call("GET", "/admin/reports/gateway-txns?filter[status]=succeeded", s.Tok, nil)
	if rep.Status != 200 || len(rep.List()) != 1 || rep.Meta()["aggregates"].(map[string]any)["succeeded_amount"] != 10.0 ||
		rep.Meta()["aggregates"].(map[string]any)["fees"] != 0.25 {
		t.Fatalf("report: %s", rep.Body)
	}

	// A second manual payment left unpaid expires (fake clock) and is then
	// neither confirmable as pending nor credited.
	d2 := s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "manual", "amount": 20, "request_id": webtest.PaymentUUID2})
	id2 := int64(d2.Data()["payment"].(map[string]any)["id"].(float64))
	// The expiry is a job at expires_at: the job runner expires it.
	later := time.Now().Add(73 * time.Hour)
	s.App.SetClock(func() time.Time { return later })
	if _, err := s.App.Jobs.RunDue(webtest.Background, "acme", later); err != nil {
		t.Fatal(err)
	}
	if n, err := payments.ExpireDue(webtest.Background, s.Ten); err != nil || n != 0 {
		t.Fatalf("left for ExpireDue after the job: %d %v", n, err)
	}
	s.App.SetClock(nil)
	if st := s.Call("GET", fmt.Sprintf("/admin/payments/%d", id2), s.Tok, nil); st.Data()["state"] != "expired" || len(st.Data()["events"].([]any)) < 3 {
		t.Fatalf("expired: %s", st.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/admin/payments/%d/confirm", id2), s.Tok, map[string]any{}), 409, "ERR_CONFLICT", "payment_not_open")

	// Switched off: 403 feature_disabled on every payment row.
	s.Exec(`INSERT INTO settings(key, value) VALUES ('portal_feature_payments', 'false')`)
	webtest.ExpectErr(t, s.Call("GET", "/portal/payments/gateways", tok, nil), 403, "ERR_FORBIDDEN", "feature_disabled")
	webtest.ExpectErr(t, s.Call("POST", "/user/deposit", tok, map[string]any{"gateway": "manual", "amount": 10, "request_id": webtest.PaymentUUID3}), 403, "ERR_FORBIDDEN", "feature_disabled")
	if cfg := s.Call("GET", "/portal/config", "", nil); fmt.Sprint(cfg.Data()["features"]) == "" || containsAny(cfg.Data()["features"], "payments") {
		t.Fatalf("config still lists payments: %s", cfg.Body)
	}
}

func containsAny(list any, v string) bool {
	l, _ := list.([]any)
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func TestPaymentsStripe(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	st, srv := newStripeStandIn(t)
	payments.SetProviderAPI(s.App, "stripe", srv.URL)
	uid := s.User("", map[string]any{"username": "cardpayer", "password": "radius-p", "portal_password": "Portal-pass-1"})
	tok := webtest.PortalLogin(t, s, "cardpayer", "Portal-pass-1")

	// Enabling without its secrets is refused; secrets are write-only.
	webtest.ExpectErr(t, s.Call("PUT", "/admin/payments/gateways/stripe", s.Tok, map[string]any{"enabled": true}), 409, "ERR_CONFLICT", "gateway_not_configured")
	const whsec = "whsec_test_secret"
	r := s.Call("PUT", "/admin/payments/gateways/stripe", s.Tok, map[string]any{"enabled": true, "secrets": map[string]any{"api_key": "sk_test_xr", "webhook_secret": whsec}})
	if r.Status != 200 || fmt.Sprint(r.Data()["secrets_set"]) != "[api_key webhook_secret]" || containsAny(r.Data()["secrets_set"], "sk_test_xr") {
		t.Fatalf("configure stripe: %s", r.Body)
	}
	if g := s.Call("GET", "/admin/payments/gateways", s.Tok, nil); len(g.List()) != 2 || jsonHas(string(g.Body), "sk_test_xr") || jsonHas(string(g.Body), whsec) {
		t.Fatalf("secrets answered: %s", g.Body)
	}
	var sealed []byte
	if err := s.Ten.DB.R.QueryRow(`SELECT secrets_sealed FROM payment_gateways WHERE code = 'stripe'`).Scan(&sealed); err != nil || jsonHas(string(sealed), "sk_test_xr") {
		t.Fatalf("secrets not sealed at rest: %v", err)
	}

	d := s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "stripe", "amount": 12.5, "request_id": webtest.PaymentUUID1})
	p, _ := d.Data()["payment"].(map[string]any)
	if d.Status != 200 || p["state"] != "pending" || d.Data()["redirect_url"] != "https://checkout.stripe.test/cs_test_1" || p["provider_ref"] != "cs_test_1" {
		t.Fatalf("stripe deposit: %d %s", d.Status, d.Body)
	}
	ref := p["reference"].(string)
	if c := st.created[0]; c["amount"] != "1250" || c["currency"] != "usd" || c["ref"] != ref || c["success"] == "" {
		t.Fatalf("session asked: %v", c)
	}

	// Forged: refused, nothing credited.
	body, _ := webtest.SignedStripeEvent(whsec, "evt_1", "checkout.session.completed", "cs_test_1", ref, 1250, "usd", "paid")
	_, forged := webtest.SignedStripeEvent("whsec_wrong", "evt_1", "checkout.session.completed", "cs_test_1", ref, 1250, "usd", "paid")
	webtest.ExpectErr(t, payWebhook(s, body, forged), 400, "ERR_VALIDATION", "signature_invalid")
	if s.Balance(uid) != "0" {
		t.Fatal("forged notice credited")
	}
	// Genuine, delivered many times at once, and a second event for the
	// same session: credited exactly once.
	_, sig := webtest.SignedStripeEvent(whsec, "evt_1", "checkout.session.completed", "cs_test_1", ref, 1250, "usd", "paid")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := payWebhook(s, body, sig); r.Status != 200 {
				t.Errorf("webhook: %d %s", r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	body2, sig2 := webtest.SignedStripeEvent(whsec, "evt_2", "checkout.session.async_payment_succeeded", "cs_test_1", ref, 1250, "usd", "paid")
	if r := payWebhook(s, body2, sig2); r.Status != 200 {
		t.Fatalf("second event: %s", r.Body)
	}
	if s.Balance(uid) != "12.5" || s.Scalar(`SELECT COUNT(*) FROM user_ledger WHERE ref_type = 'payment'`) != 1 {
		t.Fatalf("balance %s, want 12.5 once", s.Balance(uid))
	}
	// Out of order: an expiry after the success changes nothing.
	body3, sig3 := webtest.SignedStripeEvent(whsec, "evt_3", "checkout.session.expired", "cs_test_1", ref, 1250, "usd", "unpaid")
	payWebhook(s, body3, sig3)
	if s.Scalar(`SELECT COUNT(*) FROM payments WHERE state = 'succeeded'`) != 1 {
		t.Fatal("expiry after success changed the payment")
	}

	// Amount mismatch: held for review, not credited; staff confirm credits once.
	d2 := s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "stripe", "amount": 30, "request_id": webtest.PaymentUUID2})
	p2 := d2.Data()["payment"].(map[string]any)
	b4, s4 := webtest.SignedStripeEvent(whsec, "evt_4", "checkout.session.completed", p2["provider_ref"].(string), p2["reference"].(string), 2000, "usd", "paid")
	payWebhook(s, b4, s4)
	id2 := int64(p2["id"].(float64))
	if st := s.Call("GET", fmt.Sprintf("/admin/payments/%d", id2), s.Tok, nil); st.Data()["state"] != "review" || st.Data()["reason"] != "amount_mismatch" || st.Data()["received_total"] != 20.0 {
		t.Fatalf("mismatch: %s", st.Body)
	}
	if s.Balance(uid) != "12.5" {
		t.Fatal("mismatch credited")
	}
	// Expired then paid (disorder): held for review.
	d3 := s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "stripe", "amount": 5, "request_id": webtest.PaymentUUID3})
	p3 := d3.Data()["payment"].(map[string]any)
	b5, s5 := webtest.SignedStripeEvent(whsec, "evt_5", "checkout.session.expired", p3["provider_ref"].(string), p3["reference"].(string), 500, "usd", "unpaid")
	b6, s6 := webtest.SignedStripeEvent(whsec, "evt_6", "checkout.session.completed", p3["provider_ref"].(string), p3["reference"].(string), 500, "usd", "paid")
	payWebhook(s, b5, s5)
	payWebhook(s, b6, s6)
	if st := s.Call("GET", fmt.Sprintf("/admin/payments/%d", int64(p3["id"].(float64))), s.Tok, nil); st.Data()["state"] != "review" || st.Data()["reason"] != "paid_after_expired" {
		t.Fatalf("paid after expiry: %s", st.Body)
	}
	if s.Balance(uid) != "12.5" {
		t.Fatal("late payment credited silently")
	}

	// The provider refuses: the payment fails with the provider's reason.
	st.mu.Lock()
	st.failNext = true
	st.mu.Unlock()
	webtest.ExpectErr(t, s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "stripe", "amount": 7, "request_id": "0b9a3f0e-6d1c-4c1e-9f5a-1d2e3f4a5b64"}),
		502, "ERR_UNAVAILABLE", "payment_provider_error")
	if s.Scalar(`SELECT COUNT(*) FROM payments WHERE state = 'failed' AND reason = 'payment_provider_error'`) != 1 ||
		s.Scalar(`SELECT COUNT(*) FROM events WHERE type = 'payment.failed'`) < 1 {
		t.Fatal("refused payment not recorded as failed")
	}
}

func TestPaymentsRenewalPurchase(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	plan := s.Plan(map[string]any{"name": "Online 10", "price": 15, "duration_days": 30})
	uid := s.User("", map[string]any{"username": "renewer", "password": "radius-p", "portal_password": "Portal-pass-1", "profile_id": plan})
	tok := webtest.PortalLogin(t, s, "renewer", "Portal-pass-1")
	s.Call("PUT", "/admin/payments/gateways/manual", s.Tok, map[string]any{"enabled": true})
	webtest.ExpectErr(t, s.Call("POST", "/portal/purchase", tok, map[string]any{"gateway": "manual", "kind": "nope", "request_id": webtest.PaymentUUID1}), 400, "ERR_VALIDATION", "kind_invalid")
	r := s.Call("POST", "/portal/purchase", tok, map[string]any{"gateway": "manual", "kind": "renewal", "request_id": webtest.PaymentUUID1})
	p := r.Data()["payment"].(map[string]any)
	if r.Status != 200 || p["amount"] != 15.0 || p["purpose"] != "renewal" {
		t.Fatalf("purchase: %d %s", r.Status, r.Body)
	}
	before := s.Scalar(`SELECT COUNT(*) FROM user_activations WHERE user_id = ?`, uid)
	if c := s.Call("POST", fmt.Sprintf("/admin/payments/%d/confirm", int64(p["id"].(float64))), s.Tok, map[string]any{}); c.Status != 200 {
		t.Fatalf("confirm: %s", c.Body)
	}
	if s.Scalar(`SELECT COUNT(*) FROM user_activations WHERE user_id = ?`, uid) != before+1 || s.Balance(uid) != "0" {
		t.Fatalf("renewal not applied from the payment: balance %s", s.Balance(uid))
	}
}

func jsonHas(body, s string) bool { return len(s) > 0 && strings.Contains(body, s) }

func TestPaymentsAddonPurchaseAndResume(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	st, srv := newStripeStandIn(t)
	payments.SetProviderAPI(s.App, "stripe", srv.URL)
	plan := s.Plan(map[string]any{"name": "Capped", "price": 10, "duration_days": 30, "bytes_limit": 1000})
	uid := s.User("", map[string]any{"username": "addonbuyer", "password": "radius-p", "portal_password": "Portal-pass-1", "profile_id": plan})
	tok := webtest.PortalLogin(t, s, "addonbuyer", "Portal-pass-1")
	s.Call("POST", fmt.Sprintf("/users/%d/activation", uid), s.Tok, map[string]any{"request_id": "act-1"})
	r := s.Call("POST", "/admin/addons", s.Tok, map[string]any{"name": "Extra 500", "kind": "data", "amount": 500, "price": 2.5})
	if r.Status != 201 {
		t.Fatalf("addon: %s", r.Body)
	}
	addon := int64(r.Data()["id"].(float64))
	s.Call("PUT", "/admin/payments/gateways/stripe", s.Tok, map[string]any{"enabled": true, "secrets": map[string]any{"api_key": "sk_test_xr", "webhook_secret": "whsec_x"}})

	webtest.ExpectErr(t, s.Call("POST", "/portal/purchase", tok, map[string]any{"gateway": "stripe", "kind": "addon", "request_id": webtest.PaymentUUID1}), 400, "ERR_VALIDATION", "addon_id_required")
	p := s.Call("POST", "/portal/purchase", tok, map[string]any{"gateway": "stripe", "kind": "addon", "addon_id": addon, "quantity": 2, "request_id": webtest.PaymentUUID1})
	pay := p.Data()["payment"].(map[string]any)
	if p.Status != 200 || pay["amount"] != 5.0 || pay["quantity"] != 2.0 {
		t.Fatalf("addon purchase: %d %s", p.Status, p.Body)
	}
	limit := s.Scalar(`SELECT bytes_limit FROM users WHERE id = ?`, uid)
	b, sig := webtest.SignedStripeEvent("whsec_x", "evt_a", "checkout.session.completed", pay["provider_ref"].(string), pay["reference"].(string), 500, "usd", "paid")
	if w := payWebhook(s, b, sig); w.Status != 200 {
		t.Fatalf("webhook: %s", w.Body)
	}
	if got := s.Scalar(`SELECT bytes_limit FROM users WHERE id = ?`, uid); got != limit+1000 {
		t.Fatalf("bytes_limit %d, want %d", got, limit+1000)
	}

	// A crash after the payment was recorded but before the provider was
	// asked leaves it initiated: the payer's retry (same request_id) asks
	// the provider then, with the same idempotency key.
	d := s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "stripe", "amount": 3, "request_id": webtest.PaymentUUID2})
	ref := d.Data()["payment"].(map[string]any)["reference"].(string)
	s.Exec(`UPDATE payments SET state = 'initiated', provider_ref = '', redirect_url = '' WHERE reference = ?`, ref)
	again := s.Call("POST", "/portal/deposit", tok, map[string]any{"gateway": "stripe", "amount": 3, "request_id": webtest.PaymentUUID2})
	if ap := again.Data()["payment"].(map[string]any); ap["state"] != "pending" || ap["provider_ref"] != "cs_test_2" || again.Data()["redirect_url"] == "" {
		t.Fatalf("resume: %s", again.Body)
	}
	if len(st.created) != 2 {
		t.Fatalf("provider asked for %d sessions, want 2 (the resume reuses its key)", len(st.created))
	}
}
