package web

// Browser test of the design studio pages. Helpers carry the prefix cst.

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// cstImageLoaded waits until the image sel has been loaded and decoded.
func cstImageLoaded(sel string) chromedp.Action {
	return chromedp.Poll(`(() => { const i = document.querySelector(`+"`"+sel+"`"+`); return !!i && i.complete && i.naturalWidth > 0; })()`,
		nil, chromedp.WithPollingTimeout(20*time.Second))
}

// cstSetDoc rewrites the design document textarea through a JavaScript
// replace of from by to (DevTools evaluation, not the page's scripts).
func cstSetDoc(from, to string) chromedp.Action {
	return chromedp.Evaluate(`(() => { const t = document.querySelector("#f-doc"); t.value = t.value.split(`+"`"+from+"`"+`).join(`+"`"+to+"`"+`); })()`, nil)
}

// TestConsoleStudioInBrowser: the owner creates a design, sees its
// thumbnail, is told which element holds an unknown variable, saves it,
// publishes it, finds it in the store gallery, stars, comments (shown as
// text) and reviews it, then imports a copy into its designs.
func TestConsoleStudioInBrowser(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	b := newBrowser(t, k)
	b.ccgSignIn("owner")

	b.run("designs", chromedp.Navigate(b.base+"/studio"), chromedp.WaitVisible("#new-design", chromedp.ByQuery))
	b.axe("studio designs")
	b.run("create", chromedp.SendKeys("#f-name", "Blue cards", chromedp.ByQuery), chromedp.Submit("#f-name", chromedp.ByQuery),
		chromedp.WaitVisible("#design-form", chromedp.ByQuery), cstImageLoaded("#design-thumbnail"))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM designs WHERE name = 'Blue cards' AND version = 1 AND kind = 'card_sheet'`); n != 1 {
		t.Fatal("design not stored")
	}
	if got := b.text("#variables"); !strings.Contains(got, "{code}") {
		t.Fatalf("catalogue shown as %q", got)
	}
	b.axe("studio design")
	b.shot("studio-design")

	// An unknown variable: refused beside the document, naming the element.
	b.run("bad variable", cstSetDoc("{code}", "{pin_code}"), chromedp.Submit("#f-name", chromedp.ByQuery), chromedp.WaitVisible("#e-doc", chromedp.ByQuery))
	if got := b.text("#e-doc"); !strings.Contains(got, "elements[") || !strings.Contains(got, "{pin_code}") {
		t.Fatalf("refusal shown as %q", got)
	}
	if n := ccgScalar(t, k, `SELECT version FROM designs WHERE name = 'Blue cards'`); n != 1 {
		t.Fatal("a refused document was stored")
	}
	b.run("save", cstSetDoc("{pin_code}", "{code}"), markStale(), chromedp.Submit("#f-name", chromedp.ByQuery),
		chromedp.WaitVisible(freshOK, chromedp.ByQuery), cstImageLoaded("#design-thumbnail"))
	if n := ccgScalar(t, k, `SELECT version FROM designs WHERE name = 'Blue cards'`); n != 2 {
		t.Fatalf("version after save: %d", n)
	}

	// Publish, then find it in the gallery.
	b.run("publish", chromedp.SendKeys("#f-publisher", "Studio Nine", chromedp.ByQuery), chromedp.Submit("#f-publisher", chromedp.ByQuery),
		chromedp.WaitVisible("#item-thumbnail", chromedp.ByQuery), cstImageLoaded("#item-thumbnail"))
	if got := b.text("#publisher"); got != "Studio Nine" {
		t.Fatalf("publisher shown as %q", got)
	}
	b.run("gallery", chromedp.Navigate(b.base+"/studio/store?q=blue"), chromedp.WaitVisible("#store-items", chromedp.ByQuery),
		cstImageLoaded("#store-items img"))
	if got := b.text("#store-items"); !strings.Contains(got, "Blue cards") || !strings.Contains(got, "Studio Nine") || strings.Contains(got, "ACME") {
		t.Fatalf("gallery shows %q", got)
	}
	b.axe("design store")
	b.shot("studio-store")

	b.run("open item", chromedp.Click("#store-items a", chromedp.ByQuery), chromedp.WaitVisible("#star-button", chromedp.ByQuery))
	b.run("star", markStale(), chromedp.Click("#star-button", chromedp.ByQuery), chromedp.WaitVisible("body:not([data-stale]) #star-count", chromedp.ByQuery))
	if got := b.text("#star-count"); got != "★ 1" {
		t.Fatalf("stars shown as %q", got)
	}
	b.run("comment", chromedp.SendKeys("#f-comment-text", "<b>nice</b>", chromedp.ByQuery), markStale(), chromedp.Submit("#f-comment-text", chromedp.ByQuery),
		chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	if got := b.text("#comments"); !strings.Contains(got, "<b>nice</b>") {
		t.Fatalf("comment shown as %q (not as text)", got)
	}
	b.run("review", chromedp.SetValue("#f-stars", "4", chromedp.ByQuery), chromedp.SendKeys("#f-review-text", "Clean layout", chromedp.ByQuery),
		markStale(), chromedp.Submit("#f-review-text", chromedp.ByQuery), chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	if got := b.text("#reviews"); !strings.Contains(got, "4/5") || !strings.Contains(got, "Clean layout") {
		t.Fatalf("reviews shown as %q", got)
	}
	b.noDialog("store item")
	b.axe("store item")
	b.shot("studio-store-item")

	b.run("import", chromedp.Click("#import-button", chromedp.ByQuery), chromedp.WaitVisible("#design-form", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM designs WHERE name = 'Blue cards'`); n != 2 {
		t.Fatalf("%d designs named Blue cards after import", n)
	}
}
