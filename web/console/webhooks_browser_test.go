package console_test

// Browser test of the webhook pages. Helpers carry the prefix cwh.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/app/webhooks"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// cwhCount counts the elements matching sel on the current page.
func cwhCount(b *browsertest.Browser, sel string) int {
	b.T.Helper()
	var n int
	b.Run("count "+sel, chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n))
	return n
}

// cwhSettled waits until htmx has finished a swap (it drops a request
// triggered while the previous one still holds the element).
var cwhSettled = chromedp.WaitNotPresent(".htmx-request, .htmx-swapping, .htmx-settling", chromedp.ByQuery)

// TestConsoleWebhooksInBrowser: an endpoint is created from the page (with
// the keyboard) against a local receiver, its signing secret shown once;
// a subscriber created through the API reaches the receiver signed with
// that secret; the delivery is listed (filter by state), its record shows
// the response as stored, and replay sends it again. Then rotation (a new
// secret shown once, the old one kept for the grace period), edit, a
// refused URL beside its field, and delete.
func TestConsoleWebhooksInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	k.App.Cfg.AllowPrivateEgress = true // the receiver is on loopback
	webtest.DeliverWebhooks(t, k)
	rc := webtest.NewWebhookReceiver(t, nil)
	b := browsertest.New(t, k)
	tok := k.Owner("acme")
	b.SignIn("owner")

	b.Run("list", chromedp.Navigate(b.Base+"/webhooks"), chromedp.WaitVisible("#endpoints", chromedp.ByQuery))
	b.Axe("webhook endpoints")
	ccgEnter(b, "#new-endpoint", chromedp.WaitVisible("#f-name", chromedp.ByQuery))
	b.Axe("new webhook endpoint")

	// A refused URL is shown beside its field; nothing is stored.
	b.Run("bad url", chromedp.SendKeys("#f-name", "CRM", chromedp.ByQuery), chromedp.SetValue("#f-url", "ftp://example.com/hook", chromedp.ByQuery))
	ccgEnter(b, "#save", chromedp.WaitVisible("#e-url", chromedp.ByQuery))
	if got := b.Text("#e-url"); !strings.Contains(got, "http") {
		t.Fatalf("url error %q", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_endpoints`); n != 0 {
		t.Fatalf("a refused endpoint was stored: %d", n)
	}
	b.Axe("refused webhook form")

	// Create: events from the grouped checkboxes, reached with the keyboard.
	b.Run("url", ccgType("#f-url", rc.URL+"/hook"))
	b.TabTo(`#ev-user\.created`)
	b.Run("check user.created", chromedp.KeyEvent(" "))
	b.Run("check user.deleted", chromedp.Click(`#ev-user\.deleted`, chromedp.ByQuery))
	ccgEnter(b, "#save", chromedp.WaitVisible("#secret", chromedp.ByQuery))
	var secret string
	b.Run("secret", chromedp.Value("#secret", &secret, chromedp.ByQuery))
	if !strings.HasPrefix(secret, webhooks.SecretPrefix) {
		t.Fatalf("secret shown %q", secret)
	}
	var id int64
	var name, url, events string
	var all, enabled bool
	if err := k.Acquire("acme").DB.R.QueryRow(`SELECT id, name, url, events, all_events, enabled FROM webhook_endpoints`).
		Scan(&id, &name, &url, &events, &all, &enabled); err != nil {
		t.Fatal(err)
	}
	if name != "CRM" || url != rc.URL+"/hook" || events != `["user.created","user.deleted"]` || all || !enabled {
		t.Fatalf("stored %q %q %s all=%v enabled=%v", name, url, events, all, enabled)
	}
	b.Axe("webhook secret")

	// The endpoint's page never shows the secret again.
	ccgEnter(b, "#to-endpoint", chromedp.WaitVisible("#deliveries", chromedp.ByQuery))
	if strings.Contains(ccgHTML(b), secret) {
		t.Fatal("the endpoint page shows the secret")
	}
	if got := b.Text("#endpoint-events"); !strings.Contains(got, "user.created") || !strings.Contains(got, "user.deleted") {
		t.Fatalf("events shown %q", got)
	}

	// An event: a subscriber created through the API reaches the receiver,
	// signed with the secret shown.
	if r := k.Do("POST", "acme", "/api/v1/users", tok, map[string]any{"username": "hooked", "password": "pw-hooked-1"}); r.Status != 201 {
		t.Fatalf("create subscriber: %d %s", r.Status, r.Body)
	}
	xrtest.Eventually(t, "the delivery", func() bool { return rc.Count() == 1 })
	h := rc.Header(0)
	if h.Get("X-Xr-Event-Type") != "user.created" || h.Get("X-Xr-Signature") != webhooks.Sign(secret, h.Get("X-Xr-Timestamp"), rc.Body(0)) {
		t.Fatalf("delivery headers %v", h)
	}
	var did int64
	if err := k.Acquire("acme").DB.R.QueryRow(`SELECT id FROM webhook_deliveries WHERE endpoint_id = ?`, id).Scan(&did); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "delivery recorded as sent", func() bool {
		return ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_deliveries WHERE id = ? AND state = 'sent'`, did) == 1
	})

	// The deliveries list: the row with its state, attempts, last status.
	row := fmt.Sprintf(`#deliveries tr[data-delivery="%d"]`, did)
	b.Run("deliveries", chromedp.Reload(), chromedp.WaitVisible(row+`[data-state="sent"]`, chromedp.ByQuery))
	if got := b.Text(row); !strings.Contains(got, "user.created") || !strings.Contains(got, "HTTP 200") || !strings.Contains(got, "1 / 8") {
		t.Fatalf("delivery row %q", got)
	}
	b.Axe("webhook deliveries")
	b.Shot("webhook-deliveries")
	// Filter by state (htmx swaps the table), then back to all.
	b.Run("filter dead", chromedp.SetValue("#f-state", "dead", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#f-state").dispatchEvent(new Event("change", {bubbles: true}))`, nil),
		chromedp.WaitNotPresent(row, chromedp.ByQuery), cwhSettled)
	if got := b.Text("#deliveries tbody"); !strings.Contains(got, "No deliveries") {
		t.Fatalf("dead filter %q", got)
	}
	b.Run("filter sent", chromedp.SetValue("#f-state", "sent", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#f-state").dispatchEvent(new Event("change", {bubbles: true}))`, nil),
		chromedp.WaitVisible(row, chromedp.ByQuery))

	// The delivery's record, then replay: the receiver gets it again.
	ccgEnter(b, fmt.Sprintf(`#deliveries a[href="/webhook-deliveries/%d"]`, did), chromedp.WaitVisible("#replay", chromedp.ByQuery))
	if got := b.Text("#response-code"); got != "200" {
		t.Fatalf("response code %q", got)
	}
	var eventID string
	if err := json.Unmarshal(rc.Body(0), &struct {
		ID *string `json:"id"`
	}{&eventID}); err != nil {
		t.Fatal(err)
	}
	if got := b.Text("#event-id"); got != eventID {
		t.Fatalf("event id %q, sent %q", got, eventID)
	}
	b.Axe("webhook delivery")
	b.Run("accept", ccgAccept, ccgNoFlash)
	ccgEnter(b, "#replay", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	xrtest.Eventually(t, "the replay", func() bool { return rc.Count() == 2 })
	if string(rc.Body(1)) != string(rc.Body(0)) || rc.Header(1).Get("X-Xr-Delivery-Id") != fmt.Sprint(did) {
		t.Fatalf("replay sent %s", rc.Body(1))
	}
	xrtest.Eventually(t, "replay recorded", func() bool {
		return ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_deliveries WHERE id = ? AND state = 'sent' AND attempts = 1`, did) == 1
	})

	// Rotate with a grace period: a new secret, shown once.
	b.Run("endpoint", chromedp.Navigate(fmt.Sprintf("%s/webhooks/%d", b.Base, id)), chromedp.WaitVisible("#rotate-btn", chromedp.ByQuery), ccgAccept)
	ccgEnter(b, "#rotate-btn", chromedp.WaitVisible("#secret", chromedp.ByQuery))
	var secret2 string
	b.Run("new secret", chromedp.Value("#secret", &secret2, chromedp.ByQuery))
	if secret2 == secret || !strings.HasPrefix(secret2, webhooks.SecretPrefix) {
		t.Fatalf("rotated secret %q", secret2)
	}
	if got := b.Text("#grace"); !strings.Contains(got, "until") {
		t.Fatalf("grace %q", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_endpoints WHERE id = ? AND prev_secret IS NOT NULL AND prev_secret_until > datetime('now', '+23 hours')`, id); n != 1 {
		t.Fatal("previous secret not kept for the grace period")
	}

	// Edit: every event, renamed.
	b.Run("edit", chromedp.Navigate(fmt.Sprintf("%s/webhooks/%d/edit", b.Base, id)), chromedp.WaitVisible("#f-name", chromedp.ByQuery))
	b.Axe("edit webhook endpoint")
	b.Run("change", ccgType("#f-name", "CRM 2"), chromedp.Click("#f-all_events", chromedp.ByQuery), ccgNoFlash)
	ccgEnter(b, "#save", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_endpoints WHERE id = ? AND name = 'CRM 2' AND all_events = 1`, id); n != 1 {
		t.Fatal("edit not stored")
	}

	// Delete.
	b.Run("accept", ccgAccept)
	ccgEnter(b, "#delete", chromedp.WaitVisible("#endpoints", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_endpoints`); n != 0 {
		t.Fatalf("endpoint not deleted: %d", n)
	}
	if cwhCount(b, "#endpoints tr[data-endpoint]") != 0 {
		t.Fatal("deleted endpoint still listed")
	}
	b.NoDialog("webhooks")
}
