package console_test

// Browser tests of the catalogue pages: plans, NAS devices, prepaid cards
// and the job progress block. Helpers carry the prefix ccg.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// ccgEnter reaches sel with Tab and presses Enter on it.
func ccgEnter(b *browsertest.Browser, sel string, then ...chromedp.Action) {
	b.T.Helper()
	b.TabTo(sel)
	b.Run("enter on "+sel, append([]chromedp.Action{chromedp.KeyEvent(kb.Enter)}, then...)...)
}

// ccgStatus is the HTTP status of the current document.
func ccgStatus(b *browsertest.Browser) int64 {
	b.T.Helper()
	var st int64
	b.Run("status", chromedp.Evaluate(`performance.getEntriesByType("navigation")[0].responseStatus`, &st))
	return st
}

// ccgHTML is the whole document as the browser has it.
func ccgHTML(b *browsertest.Browser) string {
	b.T.Helper()
	var h string
	b.Run("html", chromedp.OuterHTML("html", &h, chromedp.ByQuery))
	return h
}

func ccgScalar(t *testing.T, k *webtest.Kit, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := k.Acquire("acme").DB.R.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// ccgType clears a field and types into it.
func ccgType(sel, text string) chromedp.Action {
	return chromedp.Tasks{chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).value = ""`, sel), nil), chromedp.SendKeys(sel, text, chromedp.ByQuery)}
}

// ccgNoFlash removes the flash shown, so the next one waited for is new.
var ccgNoFlash = chromedp.Evaluate(`document.querySelectorAll(".flash").forEach(e => e.remove())`, nil)

var ccgAccept = chromedp.Evaluate(`window.confirm = () => true`, nil)

// TestConsolePlansInBrowser: a plan is created from the page (with the
// keyboard), stored with the API's units, listed, offered in the
// subscriber create form, then edited down to one manager; a refused price
// stays beside its field and changes nothing.
func TestConsolePlansInBrowser(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	k := s.Kit
	b := browsertest.New(t, k)
	rid, _ := s.Manager(s.OwnerID, "reseller1", webtest.ResellerCodes...)
	b.SignIn("owner")

	b.Run("plans", chromedp.Navigate(b.Base+"/plans"), chromedp.WaitVisible("#plans", chromedp.ByQuery))
	if got := b.Text("nav.side [aria-current=page]"); got != "Plans" {
		t.Fatalf("active menu item %q", got)
	}
	b.Axe("plans")
	ccgEnter(b, `a[href="/plans/new"]`, chromedp.WaitVisible("#f-name", chromedp.ByQuery))
	b.Axe("new plan")
	b.Run("fill", chromedp.SendKeys("#f-name", "Gold 10M", chromedp.ByQuery), chromedp.SendKeys("#f-price", "15.5", chromedp.ByQuery),
		ccgType("#f-duration_days", "31"), chromedp.SendKeys("#f-bytes_limit", "1.5", chromedp.ByQuery),
		chromedp.SendKeys("#f-seconds_limit", "2", chromedp.ByQuery),
		chromedp.SendKeys("#f-rate_down_kbps", "10240", chromedp.ByQuery), chromedp.SendKeys("#f-rate_up_kbps", "2048", chromedp.ByQuery),
		chromedp.SendKeys("#f-fup_rate_down_kbps", "1024", chromedp.ByQuery), chromedp.SendKeys("#f-fup_rate_up_kbps", "512", chromedp.ByQuery),
		ccgType("#f-simultaneous_use", "2"), chromedp.SendKeys("#f-expired_pool", "expired-pool", chromedp.ByQuery))
	// Enter in a field submits the form.
	b.Run("create", chromedp.Focus("#f-expired_pool", chromedp.ByQuery), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	var id, price, days, bytesLimit, secs, down, up, fdown, fup, sim int64
	var pool string
	var enabled, all bool
	err := k.Acquire("acme").DB.R.QueryRow(`SELECT id, price, duration_days, bytes_limit, seconds_limit, rate_down_kbps, rate_up_kbps, fup_rate_down_kbps,
		fup_rate_up_kbps, simultaneous_use, expired_pool, enabled, all_managers FROM profiles WHERE name = 'Gold 10M'`).
		Scan(&id, &price, &days, &bytesLimit, &secs, &down, &up, &fdown, &fup, &sim, &pool, &enabled, &all)
	if err != nil {
		t.Fatalf("plan not stored: %v", err)
	}
	if price != 15500 || days != 31 || bytesLimit != 3<<29 || secs != 7200 || down != 10240 || up != 2048 || fdown != 1024 || fup != 512 ||
		sim != 2 || pool != "expired-pool" || !enabled || !all {
		t.Fatalf("stored plan: price %d days %d bytes %d secs %d rates %d/%d fup %d/%d sim %d pool %q enabled %v all %v",
			price, days, bytesLimit, secs, down, up, fdown, fup, sim, pool, enabled, all)
	}
	// The record shows the plan in the form's units.
	var v string
	b.Run("record values", chromedp.Value("#f-bytes_limit", &v, chromedp.ByQuery))
	if v != "1.5" {
		t.Fatalf("quota shown as %q, want 1.5 (GiB)", v)
	}
	b.Axe("plan record")

	// Listed, and offered when a subscriber is created.
	b.Run("list", chromedp.Navigate(b.Base+"/plans"), chromedp.WaitVisible(fmt.Sprintf(`#plans a[href="/plans/%d"]`, id), chromedp.ByQuery))
	if got := b.Text("#plans tbody"); !strings.Contains(got, "Gold 10M") || !strings.Contains(got, "15.5") || !strings.Contains(got, "1.5 GiB") {
		t.Fatalf("list row: %q", got)
	}
	b.Run("subscriber form", chromedp.Navigate(b.Base+"/users/new"), chromedp.WaitVisible("#f-profile_id", chromedp.ByQuery))
	if got := b.Text("#f-profile_id"); !strings.Contains(got, "Gold 10M") {
		t.Fatalf("subscriber form plans: %q", got)
	}

	// Edit: a new price, and only reseller1 may assign it.
	b.Run("edit", chromedp.Navigate(fmt.Sprintf("%s/plans/%d", b.Base, id)), chromedp.WaitVisible(fmt.Sprintf("#f-m-%d", rid), chromedp.ByQuery),
		ccgType("#f-price", "20"))
	b.TabTo("#f-all_managers")
	b.Run("untick every manager", chromedp.KeyEvent(" "))
	b.TabTo(fmt.Sprintf("#f-m-%d", rid))
	b.Run("tick reseller1", chromedp.KeyEvent(" "))
	ccgEnter(b, `#plan-form button[type=submit]`, chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if p := ccgScalar(t, k, `SELECT price FROM profiles WHERE id = ?`, id); p != 20000 {
		t.Fatalf("price after edit %d", p)
	}
	if a := ccgScalar(t, k, `SELECT all_managers FROM profiles WHERE id = ?`, id); a != 0 {
		t.Fatal("all_managers still set")
	}
	if m := ccgScalar(t, k, `SELECT COUNT(*) FROM profile_managers WHERE profile_id = ? AND manager_id = ?`, id, rid); m != 1 {
		t.Fatal("reseller1 not granted the plan")
	}
	var checked bool
	b.Run("ticked", chromedp.Evaluate(fmt.Sprintf(`document.getElementById("f-m-%d").checked`, rid), &checked))
	if !checked {
		t.Fatal("the record does not show the granted manager")
	}

	// A refused price: the message is beside the field, nothing stored.
	b.Run("bad price", ccgType("#f-price", "1.2345"), chromedp.Submit("#f-price", chromedp.ByQuery), chromedp.WaitVisible("#e-price", chromedp.ByQuery))
	if p := ccgScalar(t, k, `SELECT price FROM profiles WHERE id = ?`, id); p != 20000 {
		t.Fatalf("price changed by a refused edit: %d", p)
	}
	b.NoDialog("plans")

	// reseller1 (prm_profiles_index only) sees the plan granted to it, read
	// only; the create form and the NAS pages answer 403, and the menu
	// does not offer them.
	s.Plan(map[string]any{"name": "Staff only", "all_managers": false})
	b.Run("sign out", chromedp.Submit(`form[action="/logout"]`, chromedp.ByQuery), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
	b.SignIn("reseller1")
	b.Run("reseller plans", chromedp.Navigate(b.Base+"/plans"), chromedp.WaitVisible("#plans", chromedp.ByQuery))
	if got := b.Text("#plans tbody"); !strings.Contains(got, "Gold 10M") || strings.Contains(got, "Staff only") {
		t.Fatalf("reseller's plans: %q", got)
	}
	if got := b.Text("nav.side"); strings.Contains(got, "NAS devices") || !strings.Contains(got, "Plans") {
		t.Fatalf("reseller's menu: %q", got)
	}
	b.Run("read only", chromedp.Navigate(fmt.Sprintf("%s/plans/%d", b.Base, id)), chromedp.WaitVisible("#f-name", chromedp.ByQuery))
	var n int
	b.Run("no submit", chromedp.Evaluate(`document.querySelectorAll("#plan-form button[type=submit]").length + (document.querySelector("#plan-form fieldset").disabled ? 0 : 10)`, &n))
	if n != 0 {
		t.Fatalf("the reseller gets an editable plan form (%d)", n)
	}
	for _, p := range []string{"/plans/new", "/nas"} {
		b.Run(p, chromedp.Navigate(b.Base+p), chromedp.WaitVisible("main h1", chromedp.ByQuery))
		if st := ccgStatus(b); st != 403 {
			t.Fatalf("%s answered %d to the reseller, want 403", p, st)
		}
	}
}

// TestConsoleNASInBrowser: a NAS is added from the page; its record shows
// the RouterOS then the Cisco setup and the health panel, and the secret
// appears nowhere, not even after a refused edit that carried a new one.
// An edit without a secret keeps the stored one; delete removes it.
func TestConsoleNASInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	b := browsertest.New(t, k)
	b.SignIn("owner")
	const secret = "Very-Secret-Shared-9f3a"

	b.Run("nas list", chromedp.Navigate(b.Base+"/nas"), chromedp.WaitVisible("#nas-list", chromedp.ByQuery))
	b.Axe("nas list")
	ccgEnter(b, `a[href="/nas/new"]`, chromedp.WaitVisible("#f-name", chromedp.ByQuery))
	b.Axe("new nas")
	b.Run("fill", chromedp.SendKeys("#f-name", "core-1", chromedp.ByQuery), chromedp.SendKeys("#f-ip", "10.9.8.7", chromedp.ByQuery),
		chromedp.SendKeys("#f-secret", secret, chromedp.ByQuery))
	ccgEnter(b, `#nas-form button[type=submit]`, chromedp.WaitVisible("#setup-script", chromedp.ByQuery))
	id := ccgScalar(t, k, `SELECT id FROM nas WHERE ip = '10.9.8.7'`)
	if got := b.Text("#setup-script"); !strings.Contains(got, "/radius") || !strings.Contains(got, "<NAS-SECRET>") {
		t.Fatalf("RouterOS setup: %q", got)
	}
	if got := b.Text("#health"); !strings.Contains(got, "Last Access-Request") {
		t.Fatalf("health panel: %q", got)
	}
	if h := ccgHTML(b); strings.Contains(h, secret) {
		t.Fatal("the NAS page shows the secret")
	}
	b.Axe("nas")
	b.Shot("nas")

	// Another vendor, from the keyboard: htmx swaps the setup only.
	b.TabTo("#f-vendor")
	b.Run("cisco", chromedp.SetValue("#f-vendor", "cisco", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("f-vendor").dispatchEvent(new Event("change", {bubbles: true}))`, nil),
		chromedp.WaitVisible(`#setup-script`, chromedp.ByQuery))
	b.Run("wait cisco", chromedp.Poll(`document.getElementById("setup-script").textContent.includes("aaa new-model")`, nil))

	// Edit without a secret: the name changes, the sealed secret does not.
	var sealed []byte
	ten := k.Acquire("acme")
	if err := ten.DB.R.QueryRow(`SELECT secret_sealed FROM nas WHERE id = ?`, id).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	b.Run("rename", ccgNoFlash, ccgType("#f-name", "core-one"), chromedp.Submit("#f-name", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	var name string
	var sealed2 []byte
	if err := ten.DB.R.QueryRow(`SELECT name, secret_sealed FROM nas WHERE id = ?`, id).Scan(&name, &sealed2); err != nil {
		t.Fatal(err)
	}
	if name != "core-one" || !bytes.Equal(sealed, sealed2) {
		t.Fatalf("after edit: name %q, secret changed %v", name, !bytes.Equal(sealed, sealed2))
	}
	// A refused edit carrying a new secret: the error is shown, the secret
	// is not echoed, nothing is stored.
	const secret2 = "Another-Secret-77c1"
	b.Run("bad ip", ccgType("#f-ip", "not-an-ip"), chromedp.SendKeys("#f-secret", secret2, chromedp.ByQuery),
		chromedp.Submit("#f-name", chromedp.ByQuery), chromedp.WaitVisible("#e-ip", chromedp.ByQuery))
	if h := ccgHTML(b); strings.Contains(h, secret2) || strings.Contains(h, secret) {
		t.Fatal("a refused edit shows the secret")
	}
	if err := ten.DB.R.QueryRow(`SELECT secret_sealed FROM nas WHERE id = ?`, id).Scan(&sealed2); err != nil || !bytes.Equal(sealed, sealed2) {
		t.Fatalf("a refused edit changed the secret (%v)", err)
	}

	// Delete, with the confirmation accepted.
	b.Run("reload", chromedp.Navigate(fmt.Sprintf("%s/nas/%d", b.Base, id)), chromedp.WaitVisible("#setup-script", chromedp.ByQuery), ccgAccept)
	ccgEnter(b, fmt.Sprintf(`form[action="/nas/%d/delete"] button`, id), chromedp.WaitVisible("#nas-list", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM nas WHERE id = ?`, id); n != 0 {
		t.Fatal("NAS not deleted")
	}
	b.NoDialog("nas")
}

// TestConsoleCardsInBrowser: a series of three refill cards is generated
// from the page and its job's progress reaches done; the series shows its
// stock; its PDF sheet is rendered by the print job and downloaded;
// suspending moves the stock to revoked and releasing brings it back; one
// card is revoked from its row; a
// card found by its code is redeemed onto a subscriber, whose balance
// follows, and a second redemption is refused.
func TestConsoleCardsInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.StartJobs(t, k)
	b := browsertest.New(t, k)
	owner := ccgScalar(t, k, `SELECT id FROM managers WHERE parent_id IS NULL`)
	webtest.CreatePlan(t, k, "Basic")
	uid := webtest.CreateUser(t, k, "buyer", owner)
	b.SignIn("owner")

	b.Run("series list", chromedp.Navigate(b.Base+"/cards"), chromedp.WaitVisible("#series", chromedp.ByQuery))
	b.Axe("card series list")
	ccgEnter(b, `a[href="/cards/new"]`, chromedp.WaitVisible("#f-quantity", chromedp.ByQuery))
	b.Axe("generate series")
	b.Run("fill", chromedp.SendKeys("#f-quantity", "3", chromedp.ByQuery), chromedp.SendKeys("#f-face_value", "10", chromedp.ByQuery),
		chromedp.SetValue("#f-expiration", webtest.NextYear, chromedp.ByQuery), chromedp.SendKeys("#f-name", "Shop A", chromedp.ByQuery), ccgAccept)
	ccgEnter(b, `#card-new button[type=submit]`, chromedp.WaitVisible(`#job-progress[data-job-state="done"]`, chromedp.ByQuery))
	bid := ccgScalar(t, k, `SELECT id FROM card_batches WHERE name = 'Shop A'`)
	var val, max string
	b.Run("bar", chromedp.AttributeValue("#job-bar", "value", &val, nil, chromedp.ByQuery), chromedp.AttributeValue("#job-bar", "max", &max, nil, chromedp.ByQuery))
	if val == "" || val != max {
		t.Fatalf("progress at done: value %q max %q", val, max)
	}
	ccgEnter(b, "#job-next", chromedp.WaitVisible(`#stock tr[data-state="unused"]`, chromedp.ByQuery))
	if got := b.Text(`#stock tr[data-state="unused"] td.num`); got != "3" {
		t.Fatalf("unused stock %q", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM cards WHERE batch_id = ? AND state = 'unused'`, bid); n != 3 {
		t.Fatalf("stored cards %d", n)
	}
	b.Axe("card series")
	b.Shot("card-series")

	// The PDF: the print job runs, then the link downloads the sheet.
	ccgEnter(b, "#pdf-link", chromedp.WaitVisible(`#job-progress[data-job-state="done"]`, chromedp.ByQuery))
	var href string
	var ok bool
	b.Run("download link", chromedp.AttributeValue("#job-next", "href", &href, &ok, chromedp.ByQuery))
	if !ok || href != fmt.Sprintf("/cards/%d/pdf", bid) {
		t.Fatalf("download link %q", href)
	}
	var head string
	b.Run("fetch pdf", chromedp.Evaluate(fmt.Sprintf(`fetch(%q).then(r => r.headers.get("content-type") + " " + r.status + " ").then(h => fetch(%q).then(r => r.arrayBuffer()).then(b => h + String.fromCharCode(...new Uint8Array(b).slice(0, 5))))`, href, href),
		&head, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if head != "application/pdf 200 %PDF-" {
		t.Fatalf("download: %q", head)
	}

	// Suspend: the unused cards are revoked; release: back in stock.
	b.Run("back", chromedp.Navigate(fmt.Sprintf("%s/cards/%d", b.Base, bid)), chromedp.WaitVisible("#suspend", chromedp.ByQuery), ccgAccept)
	ccgEnter(b, "#suspend", chromedp.WaitVisible(`#stock tr[data-state="revoked"]`, chromedp.ByQuery))
	if got := b.Text(`#stock tr[data-state="revoked"] td.num`); got != "3" {
		t.Fatalf("revoked stock %q", got)
	}
	if got := b.Text(".flash.ok"); !strings.Contains(got, "suspended") {
		t.Fatalf("suspend flash %q", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM cards WHERE batch_id = ? AND state = 'revoked'`, bid); n != 3 {
		t.Fatalf("stored revoked %d", n)
	}
	b.Run("accept", ccgAccept)
	ccgEnter(b, "#release", chromedp.WaitVisible(`#stock tr[data-state="unused"]`, chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM cards WHERE batch_id = ? AND state = 'unused'`, bid); n != 3 {
		t.Fatalf("unused after release %d", n)
	}

	// Revoke one card from its row.
	last := ccgScalar(t, k, `SELECT MAX(id) FROM cards WHERE batch_id = ?`, bid)
	b.Run("accept", ccgAccept)
	ccgEnter(b, fmt.Sprintf(`form[action="/cards/card/%d/revoke"] button`, last), chromedp.WaitVisible(`#stock tr[data-state="revoked"]`, chromedp.ByQuery))
	if got := b.Text(`#stock tr[data-state="revoked"] td.num`); got != "1" {
		t.Fatalf("revoked stock after one revoke %q", got)
	}
	if st := ccgScalar(t, k, `SELECT COUNT(*) FROM cards WHERE id = ? AND state = 'revoked'`, last); st != 1 {
		t.Fatal("card not revoked")
	}

	// Find a card by its code, then redeem it onto the subscriber.
	var code string
	if err := k.Acquire("acme").DB.R.QueryRow(`SELECT code FROM cards WHERE batch_id = ? ORDER BY id LIMIT 1`, bid).Scan(&code); err != nil {
		t.Fatal(err)
	}
	b.Run("search", chromedp.Navigate(b.Base+"/cards/search"), chromedp.WaitVisible("#f-keyword", chromedp.ByQuery),
		chromedp.SendKeys("#f-keyword", code, chromedp.ByQuery), chromedp.Submit("#f-keyword", chromedp.ByQuery),
		chromedp.WaitVisible("#lookup dl", chromedp.ByQuery))
	if got := b.Text("#lookup"); !strings.Contains(got, "unused") || !strings.Contains(got, fmt.Sprintf("#%d", bid)) {
		t.Fatalf("lookup: %q", got)
	}
	b.Axe("card search")
	var prefilled string
	b.Run("code prefilled", chromedp.Value("#f-code", &prefilled, chromedp.ByQuery))
	if prefilled != code {
		t.Fatalf("redeem code %q, want %q", prefilled, code)
	}
	b.Run("user", chromedp.SendKeys("#f-user", "buyer", chromedp.ByQuery), ccgAccept)
	ccgEnter(b, `#redeem button[type=submit]`, chromedp.WaitVisible("#balance", chromedp.ByQuery))
	if got := b.Text("#balance"); !strings.HasPrefix(got, "10") {
		t.Fatalf("balance after redeem %q", got)
	}
	if bal := ccgScalar(t, k, `SELECT balance FROM users WHERE id = ?`, uid); bal != 10000 {
		t.Fatalf("stored balance %d", bal)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM cards WHERE code = ? AND state = 'consumed' AND used_by_user_id = ?`, code, uid); n != 1 {
		t.Fatal("card not consumed by the subscriber")
	}
	// Again: refused with the API's reason, nothing more credited.
	b.Run("again", chromedp.Navigate(b.Base+"/cards/search"), chromedp.WaitVisible("#f-code", chromedp.ByQuery),
		chromedp.SendKeys("#f-code", code, chromedp.ByQuery), chromedp.SendKeys("#f-user", "buyer", chromedp.ByQuery), ccgAccept,
		chromedp.Submit("#f-code", chromedp.ByQuery), chromedp.WaitVisible(".flash.bad", chromedp.ByQuery))
	if got := b.Text(".flash.bad"); !strings.Contains(got, "already used") {
		t.Fatalf("second redeem: %q", got)
	}
	if bal := ccgScalar(t, k, `SELECT balance FROM users WHERE id = ?`, uid); bal != 10000 {
		t.Fatalf("balance after a refused redeem %d", bal)
	}
	b.NoDialog("cards")
}
