package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// navLinks reports the menu's links that a person can see and reach:
// rendered, and inside the viewport's width (not off a sideways strip).
const navLinks = `(() => {
  const w = document.documentElement.clientWidth;
  return [...document.querySelectorAll("nav.side a")].filter(a => {
    const r = a.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= w;
  }).map(a => a.textContent.trim());
})()`

// TestConsoleMenuByJob: the owner's menu is grouped in the sections'
// order with every page; at 390 px it folds behind one "Menu" button that
// opens onto every entry, in English and in Arabic; a reseller sees only
// the sections its permissions reach.
func TestConsoleMenuByJob(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	b := browsertest.New(t, s.Kit)
	s.Manager(s.OwnerID, "reseller1", webtest.ResellerCodes...)
	b.SignIn("owner")

	var sections, all []string
	b.Run("desktop", chromedp.EmulateViewport(1366, 800), chromedp.Navigate(b.Base+"/plans"), chromedp.WaitVisible("#plans", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll("nav.side .sec")].map(s => s.textContent.trim())`, &sections),
		chromedp.Evaluate(navLinks, &all))
	want := []string{"Home", "Subscribers", "Network", "Sales", "Support", "Reports", "Administration"}
	if strings.Join(sections, ",") != strings.Join(want, ",") {
		t.Fatalf("owner's sections %q, want %q", sections, want)
	}
	var rows int
	b.Run("menu rows", chromedp.Evaluate(`document.querySelectorAll("nav.side a").length`, &rows))
	if len(all) != rows || rows < 30 {
		t.Fatalf("desktop shows %d of %d menu links: %q", len(all), rows, all)
	}
	if got := b.Text("nav.side [aria-current=page]"); got != "Plans" {
		t.Fatalf("current page in the menu: %q", got)
	}
	b.Axe("menu desktop")

	for _, lang := range []string{"en", "ar"} {
		if lang == "ar" {
			b.Run("arabic", chromedp.Submit(`form[action="/language"]`, chromedp.ByQuery), chromedp.WaitVisible(`html[dir="rtl"]`, chromedp.ByQuery))
		}
		var folded, open []string
		b.Run(lang+" phone", chromedp.EmulateViewport(390, 844), chromedp.Navigate(b.Base+"/plans"), chromedp.WaitVisible("nav.side summary", chromedp.ByQuery),
			chromedp.Evaluate(navLinks, &folded))
		if len(folded) != 0 {
			t.Fatalf("%s: phone menu not folded: %q", lang, folded)
		}
		b.Run(lang+" open menu", chromedp.Click("nav.side summary", chromedp.ByQuery), chromedp.WaitVisible(`nav.side a[href="/license"]`, chromedp.ByQuery),
			chromedp.Evaluate(navLinks, &open))
		if len(open) != rows {
			t.Fatalf("%s: open phone menu reaches %d of %d entries: %q", lang, len(open), rows, open)
		}
		b.Axe("menu phone " + lang)
		b.Shot("menu-phone-" + lang)
	}
	b.Run("english", chromedp.Submit(`form[action="/language"]`, chromedp.ByQuery), chromedp.WaitVisible(`html[dir="ltr"]`, chromedp.ByQuery),
		chromedp.EmulateViewport(1280, 800))

	b.Run("sign out", chromedp.Submit(`form[action="/logout"]`, chromedp.ByQuery), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
	b.SignIn("reseller1")
	b.Run("reseller", chromedp.Navigate(b.Base+"/"), chromedp.WaitVisible("nav.side", chromedp.ByQuery), chromedp.Evaluate(`[...document.querySelectorAll("nav.side .sec")].map(s => s.textContent.trim())`, &sections))
	if strings.Contains(strings.Join(sections, ","), "Network") || len(sections) == 0 {
		t.Fatalf("reseller's sections %q", sections)
	}
	if got := b.Text("nav.side"); strings.Contains(got, "Roles") || strings.Contains(got, "Factory reset") {
		t.Fatalf("reseller's menu offers administration it cannot use: %q", got)
	}
}
