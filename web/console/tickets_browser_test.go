package console_test

// Browser test of the support ticket pages. Helpers carry the prefix ctk.

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestConsoleTicketsInBrowser: an agent opens a ticket for a subscriber
// from the page (a refused subject shown beside its field, nothing
// stored), sees it in the queue, writes an internal note and a public
// reply from a canned reply, resolves it; the subscriber's portal view has
// the reply and not the note; bulk close from the queue; the settings page
// adds a category.
func TestConsoleTicketsInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	r := k.Do("POST", "acme", "/api/v1/users", tok, map[string]any{"username": "anna", "password": "radius-anna", "email": "anna@isp.example"})
	if r.Status != 201 {
		t.Fatalf("user: %d %s", r.Status, r.Body)
	}
	if r := k.Do("POST", "acme", "/api/v1/tickets/canned-replies", tok, map[string]any{"title": "Restart", "body": "Hello {requester}, please restart the router."}); r.Status != 201 {
		t.Fatalf("canned: %d %s", r.Status, r.Body)
	}
	b := browsertest.New(t, k)
	b.SignIn("owner")

	b.Run("queue", chromedp.Navigate(b.Base+"/tickets"), chromedp.WaitVisible("#tickets-table", chromedp.ByQuery))
	b.Axe("ticket queue (empty)")
	ccgEnter(b, "#new-ticket", chromedp.WaitVisible("#f-subject", chromedp.ByQuery))
	b.Axe("new ticket")

	// A refused ticket (no requester) stays on the form; nothing stored.
	b.Run("fill", chromedp.SetValue("#f-subject", "Router blinks red", chromedp.ByQuery), chromedp.SetValue("#f-body", "Since this morning", chromedp.ByQuery))
	ccgEnter(b, "#save", chromedp.WaitVisible("#e-user", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM tickets`); n != 0 {
		t.Fatalf("a refused ticket was stored: %d", n)
	}
	b.Run("subscriber", ccgType("#f-username", "anna"))
	ccgEnter(b, "#save", chromedp.WaitVisible("#messages", chromedp.ByQuery))
	id := ccgScalar(t, k, `SELECT id FROM tickets WHERE subject = 'Router blinks red'`)
	if !strings.Contains(b.Text("h1"), fmt.Sprintf("T-%06d", id)) {
		t.Fatalf("title %q", b.Text("h1"))
	}
	b.Axe("ticket")

	// An internal note, then a public reply from the canned reply, resolving it.
	b.Run("note", chromedp.SendKeys("#f-body", "Check the line card first", chromedp.ByQuery), chromedp.Click("#f-internal", chromedp.ByQuery),
		ccgNoFlash, chromedp.Click("#send", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	b.Run("reply", chromedp.SetValue("#f-canned", "1", chromedp.ByQuery), chromedp.SetValue("#f-then", "resolve", chromedp.ByQuery),
		ccgNoFlash, chromedp.Click("#send", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if got := b.Text("#ticket-state"); got != "Resolved" {
		t.Fatalf("state shown %q", got)
	}
	conv := b.Text("#messages")
	if !strings.Contains(conv, "Hello anna, please restart the router.") || !strings.Contains(conv, "internal note") {
		t.Fatalf("conversation %q", conv)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM ticket_messages WHERE ticket_id = ? AND internal = 1`, id); n != 1 {
		t.Fatalf("%d internal notes stored", n)
	}
	if st := ccgScalar(t, k, `SELECT state = 'resolved' FROM tickets WHERE id = ?`, id); st != 1 {
		t.Fatal("not resolved in the store")
	}
	// An attachment added through the API downloads from the page.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "modem.png")
	fw.Write(webtest.TinyPNG)
	mw.Close()
	if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/tickets/%d/attach", id), tok, buf.Bytes(), "Content-Type", mw.FormDataContentType()); r.Status != 201 {
		t.Fatalf("attach: %d %s", r.Status, r.Body)
	}
	var status int
	b.Run("download", chromedp.Navigate(fmt.Sprintf("%s/tickets/%d", b.Base, id)), chromedp.WaitVisible("#messages", chromedp.ByQuery),
		chromedp.Evaluate(`fetch(document.querySelector("#files a").getAttribute("href")).then(r => r.headers.get("content-type") === "image/png" ? r.status : 0)`, &status,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if status != 200 {
		t.Fatalf("download from the page: %d", status)
	}

	// The subscriber sees the reply, never the note.
	ptok := k.Do("POST", "acme", "/api/v1/portal/login", "", map[string]any{"username": "anna", "password": "radius-anna"}).Data()["token"].(string)
	pv := k.Do("GET", "acme", fmt.Sprintf("/api/v1/portal/tickets/%d", id), ptok, nil)
	if pv.Status != 200 || strings.Contains(string(pv.Body), "line card") || !strings.Contains(string(pv.Body), "restart the router") {
		t.Fatalf("portal view %d %s", pv.Status, pv.Body)
	}

	// The queue: resolved tickets leave the active list; bulk close from "all states".
	b.Run("queue resolved", chromedp.Navigate(b.Base+"/tickets?state=resolved"), chromedp.WaitVisible(fmt.Sprintf(`tr[data-ticket="%d"]`, id), chromedp.ByQuery))
	b.Run("select", chromedp.Click(fmt.Sprintf("#sel-%d", id), chromedp.ByQuery), ccgNoFlash,
		chromedp.Click("#bulk-close", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if st := ccgScalar(t, k, `SELECT state = 'closed' FROM tickets WHERE id = ?`, id); st != 1 {
		t.Fatal("bulk close not stored")
	}
	b.Axe("ticket queue")

	// Settings: add a category.
	b.Run("settings", chromedp.Navigate(b.Base+"/tickets/settings"), chromedp.WaitVisible("#category-form", chromedp.ByQuery))
	b.Axe("helpdesk settings")
	b.Run("category", chromedp.SendKeys("#f-name", "Outage", chromedp.ByQuery), ccgNoFlash,
		chromedp.Click("#add-category", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if !strings.Contains(b.Text("#categories"), "Outage") || ccgScalar(t, k, `SELECT COUNT(*) FROM ticket_categories WHERE name = 'Outage'`) != 1 {
		t.Fatal("category not added")
	}
	b.NoDialog("tickets")
}
