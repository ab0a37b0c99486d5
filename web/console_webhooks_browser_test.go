package web

// Browser test of the webhook pages. Helpers carry the prefix cwh.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/app/webhooks"
	"xr/internal/xrtest"
)

// cwhCount counts the elements matching sel on the current page.
func (b *browser) cwhCount(sel string) int {
	b.t.Helper()
	var n int
	b.run("count "+sel, chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n))
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
	k := newKit(t)
	k.App.Cfg.AllowPrivateEgress = true // the receiver is on loopback
	whRun(t, k)
	rc := newWHReceiver(t, nil)
	b := newBrowser(t, k)
	tok := k.Owner("acme")
	b.ccgSignIn("owner")

	b.run("list", chromedp.Navigate(b.base+"/webhooks"), chromedp.WaitVisible("#endpoints", chromedp.ByQuery))
	b.axe("webhook endpoints")
	b.ccgEnter("#new-endpoint", chromedp.WaitVisible("#f-name", chromedp.ByQuery))
	b.axe("new webhook endpoint")

	// A refused URL is shown beside its field; nothing is stored.
	b.run("bad url", chromedp.SendKeys("#f-name", "CRM", chromedp.ByQuery), chromedp.SetValue("#f-url", "ftp://example.com/hook", chromedp.ByQuery))
	b.ccgEnter("#save", chromedp.WaitVisible("#e-url", chromedp.ByQuery))
	if got := b.text("#e-url"); !strings.Contains(got, "http") {
		t.Fatalf("url error %q", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_endpoints`); n != 0 {
		t.Fatalf("a refused endpoint was stored: %d", n)
	}
	b.axe("refused webhook form")

	// Create: events from the grouped checkboxes, reached with the keyboard.
	b.run("url", ccgType("#f-url", rc.URL+"/hook"))
	b.ccgTabTo(`#ev-user\.created`)
	b.run("check user.created", chromedp.KeyEvent(" "))
	b.run("check user.deleted", chromedp.Click(`#ev-user\.deleted`, chromedp.ByQuery))
	b.ccgEnter("#save", chromedp.WaitVisible("#secret", chromedp.ByQuery))
	var secret string
	b.run("secret", chromedp.Value("#secret", &secret, chromedp.ByQuery))
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
	b.axe("webhook secret")

	// The endpoint's page never shows the secret again.
	b.ccgEnter("#to-endpoint", chromedp.WaitVisible("#deliveries", chromedp.ByQuery))
	if strings.Contains(b.ccgHTML(), secret) {
		t.Fatal("the endpoint page shows the secret")
	}
	if got := b.text("#endpoint-events"); !strings.Contains(got, "user.created") || !strings.Contains(got, "user.deleted") {
		t.Fatalf("events shown %q", got)
	}

	// An event: a subscriber created through the API reaches the receiver,
	// signed with the secret shown.
	if r := k.Do("POST", "acme", "/api/v1/users", tok, map[string]any{"username": "hooked", "password": "pw-hooked-1"}); r.Status != 201 {
		t.Fatalf("create subscriber: %d %s", r.Status, r.Body)
	}
	xrtest.Eventually(t, "the delivery", func() bool { return rc.count() == 1 })
	h := rc.header(0)
	if h.Get("X-Xr-Event-Type") != "user.created" || h.Get("X-Xr-Signature") != webhooks.Sign(secret, h.Get("X-Xr-Timestamp"), rc.body(0)) {
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
	b.run("deliveries", chromedp.Reload(), chromedp.WaitVisible(row+`[data-state="sent"]`, chromedp.ByQuery))
	if got := b.text(row); !strings.Contains(got, "user.created") || !strings.Contains(got, "HTTP 200") || !strings.Contains(got, "1 / 8") {
		t.Fatalf("delivery row %q", got)
	}
	b.axe("webhook deliveries")
	b.shot("webhook-deliveries")
	// Filter by state (htmx swaps the table), then back to all.
	b.run("filter dead", chromedp.SetValue("#f-state", "dead", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#f-state").dispatchEvent(new Event("change", {bubbles: true}))`, nil),
		chromedp.WaitNotPresent(row, chromedp.ByQuery), cwhSettled)
	if got := b.text("#deliveries tbody"); !strings.Contains(got, "No deliveries") {
		t.Fatalf("dead filter %q", got)
	}
	b.run("filter sent", chromedp.SetValue("#f-state", "sent", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#f-state").dispatchEvent(new Event("change", {bubbles: true}))`, nil),
		chromedp.WaitVisible(row, chromedp.ByQuery))

	// The delivery's record, then replay: the receiver gets it again.
	b.ccgEnter(fmt.Sprintf(`#deliveries a[href="/webhook-deliveries/%d"]`, did), chromedp.WaitVisible("#replay", chromedp.ByQuery))
	if got := b.text("#response-code"); got != "200" {
		t.Fatalf("response code %q", got)
	}
	var eventID string
	if err := json.Unmarshal(rc.body(0), &struct {
		ID *string `json:"id"`
	}{&eventID}); err != nil {
		t.Fatal(err)
	}
	if got := b.text("#event-id"); got != eventID {
		t.Fatalf("event id %q, sent %q", got, eventID)
	}
	b.axe("webhook delivery")
	b.run("accept", ccgAccept, ccgNoFlash)
	b.ccgEnter("#replay", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	xrtest.Eventually(t, "the replay", func() bool { return rc.count() == 2 })
	if string(rc.body(1)) != string(rc.body(0)) || rc.header(1).Get("X-Xr-Delivery-Id") != fmt.Sprint(did) {
		t.Fatalf("replay sent %s", rc.body(1))
	}
	xrtest.Eventually(t, "replay recorded", func() bool {
		return ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_deliveries WHERE id = ? AND state = 'sent' AND attempts = 1`, did) == 1
	})

	// Rotate with a grace period: a new secret, shown once.
	b.run("endpoint", chromedp.Navigate(fmt.Sprintf("%s/webhooks/%d", b.base, id)), chromedp.WaitVisible("#rotate-btn", chromedp.ByQuery), ccgAccept)
	b.ccgEnter("#rotate-btn", chromedp.WaitVisible("#secret", chromedp.ByQuery))
	var secret2 string
	b.run("new secret", chromedp.Value("#secret", &secret2, chromedp.ByQuery))
	if secret2 == secret || !strings.HasPrefix(secret2, webhooks.SecretPrefix) {
		t.Fatalf("rotated secret %q", secret2)
	}
	if got := b.text("#grace"); !strings.Contains(got, "until") {
		t.Fatalf("grace %q", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_endpoints WHERE id = ? AND prev_secret IS NOT NULL AND prev_secret_until > datetime('now', '+23 hours')`, id); n != 1 {
		t.Fatal("previous secret not kept for the grace period")
	}

	// Edit: every event, renamed.
	b.run("edit", chromedp.Navigate(fmt.Sprintf("%s/webhooks/%d/edit", b.base, id)), chromedp.WaitVisible("#f-name", chromedp.ByQuery))
	b.axe("edit webhook endpoint")
	b.run("change", ccgType("#f-name", "CRM 2"), chromedp.Click("#f-all_events", chromedp.ByQuery), ccgNoFlash)
	b.ccgEnter("#save", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_endpoints WHERE id = ? AND name = 'CRM 2' AND all_events = 1`, id); n != 1 {
		t.Fatal("edit not stored")
	}

	// Delete.
	b.run("accept", ccgAccept)
	b.ccgEnter("#delete", chromedp.WaitVisible("#endpoints", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM webhook_endpoints`); n != 0 {
		t.Fatalf("endpoint not deleted: %d", n)
	}
	if b.cwhCount("#endpoints tr[data-endpoint]") != 0 {
		t.Fatal("deleted endpoint still listed")
	}
	b.noDialog("webhooks")
}
