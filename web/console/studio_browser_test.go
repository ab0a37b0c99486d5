package console_test

// Browser test of the design studio pages. Helpers carry the prefix cst.

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
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
	k := webtest.New(t)
	b := browsertest.New(t, k)
	b.SignIn("owner")

	b.Run("designs", chromedp.Navigate(b.Base+"/studio"), chromedp.WaitVisible("#new-design", chromedp.ByQuery))
	b.Axe("studio designs")
	b.Run("create", chromedp.SendKeys("#f-name", "Blue cards", chromedp.ByQuery), chromedp.Submit("#f-name", chromedp.ByQuery),
		chromedp.WaitVisible("#design-form", chromedp.ByQuery), cstImageLoaded("#design-thumbnail"))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM designs WHERE name = 'Blue cards' AND version = 1 AND kind = 'card_sheet'`); n != 1 {
		t.Fatal("design not stored")
	}
	if got := b.Text("#variables"); !strings.Contains(got, "{code}") {
		t.Fatalf("catalogue shown as %q", got)
	}
	b.Axe("studio design")
	b.Shot("studio-design")

	// An unknown variable: refused beside the document, naming the element.
	b.Run("bad variable", cstSetDoc("{code}", "{pin_code}"), chromedp.Submit("#f-name", chromedp.ByQuery), chromedp.WaitVisible("#e-doc", chromedp.ByQuery))
	if got := b.Text("#e-doc"); !strings.Contains(got, "elements[") || !strings.Contains(got, "{pin_code}") {
		t.Fatalf("refusal shown as %q", got)
	}
	if n := ccgScalar(t, k, `SELECT version FROM designs WHERE name = 'Blue cards'`); n != 1 {
		t.Fatal("a refused document was stored")
	}
	b.Run("save", cstSetDoc("{pin_code}", "{code}"), markStale(), chromedp.Submit("#f-name", chromedp.ByQuery),
		chromedp.WaitVisible(freshOK, chromedp.ByQuery), cstImageLoaded("#design-thumbnail"))
	if n := ccgScalar(t, k, `SELECT version FROM designs WHERE name = 'Blue cards'`); n != 2 {
		t.Fatalf("version after save: %d", n)
	}

	// Publish, then find it in the gallery.
	b.Run("publish", chromedp.SendKeys("#f-publisher", "Studio Nine", chromedp.ByQuery), chromedp.Submit("#f-publisher", chromedp.ByQuery),
		chromedp.WaitVisible("#item-thumbnail", chromedp.ByQuery), cstImageLoaded("#item-thumbnail"))
	if got := b.Text("#publisher"); got != "Studio Nine" {
		t.Fatalf("publisher shown as %q", got)
	}
	b.Run("gallery", chromedp.Navigate(b.Base+"/studio/store?q=blue"), chromedp.WaitVisible("#store-items", chromedp.ByQuery),
		cstImageLoaded("#store-items img"))
	if got := b.Text("#store-items"); !strings.Contains(got, "Blue cards") || !strings.Contains(got, "Studio Nine") || strings.Contains(got, "ACME") {
		t.Fatalf("gallery shows %q", got)
	}
	b.Axe("design store")
	b.Shot("studio-store")

	b.Run("open item", chromedp.Click("#store-items a", chromedp.ByQuery), chromedp.WaitVisible("#star-button", chromedp.ByQuery))
	b.Run("star", markStale(), chromedp.Click("#star-button", chromedp.ByQuery), chromedp.WaitVisible("body:not([data-stale]) #star-count", chromedp.ByQuery))
	if got := b.Text("#star-count"); got != "★ 1" {
		t.Fatalf("stars shown as %q", got)
	}
	b.Run("comment", chromedp.SendKeys("#f-comment-text", "<b>nice</b>", chromedp.ByQuery), markStale(), chromedp.Submit("#f-comment-text", chromedp.ByQuery),
		chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	if got := b.Text("#comments"); !strings.Contains(got, "<b>nice</b>") {
		t.Fatalf("comment shown as %q (not as text)", got)
	}
	b.Run("review", chromedp.SetValue("#f-stars", "4", chromedp.ByQuery), chromedp.SendKeys("#f-review-text", "Clean layout", chromedp.ByQuery),
		markStale(), chromedp.Submit("#f-review-text", chromedp.ByQuery), chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	if got := b.Text("#reviews"); !strings.Contains(got, "4/5") || !strings.Contains(got, "Clean layout") {
		t.Fatalf("reviews shown as %q", got)
	}
	b.NoDialog("store item")
	b.Axe("store item")
	b.Shot("studio-store-item")

	b.Run("import", chromedp.Click("#import-button", chromedp.ByQuery), chromedp.WaitVisible("#design-form", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM designs WHERE name = 'Blue cards'`); n != 2 {
		t.Fatalf("%d designs named Blue cards after import", n)
	}
}
