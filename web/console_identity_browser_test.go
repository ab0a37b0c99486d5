package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/pquerna/otp/totp"

	"xr/app"
)

// Browser tests of the identity pages: managers (tree, record, wallet,
// journal, roles, create), roles, API tokens, two-factor and sessions on
// the account page, the licence page.

// idcLogin signs user in through the sign-in page (no second factor).
func (b *browser) idcLogin(user string) {
	b.t.Helper()
	b.run("sign in "+user, chromedp.Navigate(b.base+"/login"), chromedp.WaitVisible("#f-email", chromedp.ByQuery),
		chromedp.SendKeys("#f-email", user, chromedp.ByQuery), chromedp.SendKeys("#f-password", testPassword, chromedp.ByQuery),
		chromedp.Submit("#f-password", chromedp.ByQuery), chromedp.WaitVisible("nav.side", chromedp.ByQuery))
}

// idcGo opens a page, waits for sel, and lets data-confirm forms submit.
func (b *browser) idcGo(path, sel string) {
	b.t.Helper()
	b.run("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.Evaluate(`window.confirm = () => true`, nil))
}

// idcClearFlash removes the flash of the current page, so a wait for
// the next one cannot be satisfied by it.
func (b *browser) idcClearFlash() {
	b.t.Helper()
	b.run("clear flash", chromedp.Evaluate(`document.querySelectorAll(".flash").forEach(e => e.remove())`, nil))
}

// idcStatus is the HTTP status of the current document.
func (b *browser) idcStatus() int64 {
	b.t.Helper()
	var status int64
	b.run("status", chromedp.Evaluate(`performance.getEntriesByType("navigation")[0].responseStatus`, &status))
	return status
}

// idcTabTo presses Tab until the focused element satisfies the JS
// predicate over el (document.activeElement), failing after 200 presses:
// the control is reachable from the keyboard.
func (b *browser) idcTabTo(what, pred string) {
	b.t.Helper()
	for i := 0; i < 200; i++ {
		var ok bool
		b.run("focus of "+what, chromedp.Evaluate(`(el => !!el && (`+pred+`))(document.activeElement)`, &ok))
		if ok {
			return
		}
		b.run("tab", chromedp.KeyEvent(kb.Tab))
	}
	b.t.Fatalf("%s: not reachable with Tab", what)
}

// TestConsoleIdentityManagersAndRoles: the owner creates a reseller with a
// role from the page, deposits to its wallet and sees the journal row,
// creates a role with two permissions, assigns it, and sees the API's
// refusal to delete a role in use; the tree shows the wallet balances.
func TestConsoleIdentityManagersAndRoles(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	b := newBrowser(t, k)
	ten := k.Acquire("acme")
	resellerRole := k.idRoleID("acme", "reseller")
	b.idcLogin("owner")

	// Create a manager under the owner with the reseller role.
	b.idcGo("/managers/new", "#f-username")
	b.axe("new manager")
	b.run("create manager", chromedp.SendKeys("#f-username", "resel1", chromedp.ByQuery), chromedp.SendKeys("#f-email", "resel1@mail.test", chromedp.ByQuery),
		chromedp.SendKeys("#f-password", testPassword, chromedp.ByQuery), chromedp.Click(fmt.Sprintf("#r-%d", resellerRole), chromedp.ByQuery),
		chromedp.Submit("#f-username", chromedp.ByQuery), chromedp.WaitVisible("#balance", chromedp.ByQuery))
	id := k.idScalar("acme", `SELECT id FROM managers WHERE username = 'resel1'`)
	if n := k.idScalar("acme", `SELECT COUNT(*) FROM manager_roles WHERE manager_id = ? AND role_id = ?`, id, resellerRole); n != 1 {
		t.Fatalf("reseller role not stored: %d", n)
	}
	if p := k.idScalar("acme", `SELECT parent_id FROM managers WHERE id = ?`, id); p != k.idOwnerID("acme") {
		t.Fatalf("parent %d", p)
	}
	if got := b.text("h1"); !strings.Contains(got, "resel1") {
		t.Fatalf("record heading %q", got)
	}

	// A refused amount is shown beside its field; nothing is stored.
	b.run("bad deposit", chromedp.Evaluate(`window.confirm = () => true`, nil), chromedp.SendKeys("#f-amount", "-5", chromedp.ByQuery),
		chromedp.Click("#b-deposit", chromedp.ByQuery), chromedp.WaitVisible("#e-amount", chromedp.ByQuery))
	if bal := k.idScalar("acme", `SELECT balance FROM managers WHERE id = ?`, id); bal != 0 {
		t.Fatalf("refused deposit stored: %d", bal)
	}

	// Deposit: the balance and the journal follow.
	b.idcGo(fmt.Sprintf("/managers/%d", id), "#f-amount")
	b.run("deposit", chromedp.SendKeys("#f-amount", "40", chromedp.ByQuery), chromedp.SendKeys("#f-note", "opening float", chromedp.ByQuery),
		chromedp.Click("#b-deposit", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got := b.text("#balance"); !strings.HasPrefix(got, "40") {
		t.Fatalf("balance after deposit %q", got)
	}
	if got := b.text("#journal-table tbody"); !strings.Contains(got, "deposit") || !strings.Contains(got, "40") || !strings.Contains(got, "opening float") {
		t.Fatalf("journal row missing: %q", got)
	}
	if bal := k.idScalar("acme", `SELECT balance FROM managers WHERE id = ?`, id); bal != 40000 {
		t.Fatalf("stored wallet %d", bal)
	}
	if n := k.idScalar("acme", `SELECT COUNT(*) FROM manager_journal WHERE manager_id = ? AND kind = 'deposit' AND amount = 40000 AND note = 'opening float'`, id); n != 1 {
		t.Fatalf("journal rows %d", n)
	}
	// Top-up on loan, then paying part of it back.
	b.idcClearFlash()
	b.run("topup", chromedp.Evaluate(`window.confirm = () => true`, nil), chromedp.SendKeys("#f-amount", "10", chromedp.ByQuery),
		chromedp.Click("#b-topup", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got := b.text("#debt"); !strings.HasPrefix(got, "10") {
		t.Fatalf("debt after top-up %q", got)
	}
	b.idcClearFlash()
	b.run("pay debt", chromedp.Evaluate(`window.confirm = () => true`, nil), chromedp.SendKeys("#f-amount", "4", chromedp.ByQuery),
		chromedp.Click("#b-paydebt", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got := b.text("#debt"); !strings.HasPrefix(got, "6") {
		t.Fatalf("debt after paying 4 %q", got)
	}
	if bal := k.idScalar("acme", `SELECT balance FROM managers WHERE id = ?`, id); bal != 50000 {
		t.Fatalf("stored wallet after top-up %d", bal)
	}
	b.axe("manager record")
	b.shot("manager")

	// The tree: the owner at the top, the reseller below with its wallet;
	// reached from the keyboard.
	b.idcGo("/managers", "ul.mtree")
	if got := b.text("ul.mtree"); !strings.Contains(got, "owner") || !strings.Contains(got, "resel1") || !strings.Contains(got, "50") {
		t.Fatalf("tree %q", got)
	}
	var nested int
	b.run("nesting", chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll('ul.mtree ul.mtree a[href="/managers/%d"]').length`, id), &nested))
	if nested != 1 {
		t.Fatalf("reseller not nested under the owner")
	}
	b.axe("managers tree")
	b.shot("managers-tree")
	b.idcTabTo("the reseller's link", fmt.Sprintf(`el.getAttribute("href") === "/managers/%d"`, id))
	b.run("enter", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible("#balance", chromedp.ByQuery))

	// A role with two permissions.
	b.idcGo("/roles/new", "#f-name")
	b.run("role form", chromedp.SendKeys("#f-name", "night-shift", chromedp.ByQuery), chromedp.SendKeys("#f-description", "counter at night", chromedp.ByQuery),
		chromedp.Click("#p-prm_users_index", chromedp.ByQuery), chromedp.Click("#p-prm_users_deposit", chromedp.ByQuery))
	b.axe("role editor")
	b.run("top", chromedp.Evaluate(`window.scrollTo(0, 0)`, nil))
	b.shot("role-editor")
	b.run("create role", chromedp.Submit("#f-name", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	night := k.idRoleID("acme", "night-shift")
	var codes string
	if err := ten.DB.R.QueryRow(`SELECT group_concat(code, ',') FROM (SELECT code FROM role_permissions WHERE role_id = ? ORDER BY code)`, night).Scan(&codes); err != nil {
		t.Fatal(err)
	}
	if codes != "prm_users_deposit,prm_users_index" {
		t.Fatalf("role codes %q", codes)
	}
	var checked int
	b.run("checked", chromedp.Evaluate(`document.querySelectorAll('input[name="permissions"]:checked').length`, &checked))
	if checked != 2 {
		t.Fatalf("editor shows %d ticked codes", checked)
	}
	// Edit from the keyboard: tick a third code with Space, save with Enter.
	b.run("focus name", chromedp.Focus("#f-name", chromedp.ByQuery))
	b.idcTabTo("prm_users_update", `el.id === "p-prm_users_update"`)
	b.run("tick", chromedp.KeyEvent(" "))
	b.idcTabTo("save", `el.type === "submit"`)
	b.idcClearFlash()
	b.run("save", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := k.idScalar("acme", `SELECT COUNT(*) FROM role_permissions WHERE role_id = ?`, night); n != 3 {
		t.Fatalf("codes after keyboard edit: %d", n)
	}

	// Assign it to the reseller from the record page.
	b.idcGo(fmt.Sprintf("/managers/%d", id), fmt.Sprintf("#r-%d", night))
	b.run("assign", chromedp.Click(fmt.Sprintf("#r-%d", night), chromedp.ByQuery), chromedp.Submit(fmt.Sprintf("#r-%d", night), chromedp.ByQuery),
		chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := k.idScalar("acme", `SELECT COUNT(*) FROM manager_roles WHERE manager_id = ?`, id); n != 2 {
		t.Fatalf("roles of the reseller: %d", n)
	}

	// Deleting a role in use: the API's refusal on the page, nothing deleted.
	b.idcGo("/roles", "#roles-table")
	b.axe("roles")
	b.run("delete in use", chromedp.Click(fmt.Sprintf(`form[action="/roles/%d/delete"] button`, night), chromedp.ByQuery),
		chromedp.WaitVisible(".flash.bad", chromedp.ByQuery))
	if st := b.idcStatus(); st != 409 {
		t.Fatalf("delete in use answered %d", st)
	}
	if got := b.text(".flash.bad"); got != message("en", "role_in_use", "") {
		t.Fatalf("refusal shown %q", got)
	}
	if n := k.idScalar("acme", `SELECT COUNT(*) FROM roles WHERE id = ?`, night); n != 1 {
		t.Fatal("role in use was deleted")
	}
	// Unused: deleted.
	spare := k.idRole("acme", "spare")
	b.idcGo("/roles", "#roles-table")
	b.run("delete", chromedp.Click(fmt.Sprintf(`form[action="/roles/%d/delete"] button`, spare), chromedp.ByQuery),
		chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := k.idScalar("acme", `SELECT COUNT(*) FROM roles WHERE id = ?`, spare); n != 0 {
		t.Fatal("unused role not deleted")
	}

	// Suspend, then activate.
	b.idcGo(fmt.Sprintf("/managers/%d", id), "#balance")
	b.idcClearFlash()
	b.run("suspend", chromedp.Click(fmt.Sprintf(`form[action="/managers/%d/suspend"] button`, id), chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	var status string
	if err := ten.DB.R.QueryRow(`SELECT status FROM managers WHERE id = ?`, id).Scan(&status); err != nil || status != "suspended" {
		t.Fatalf("status %q %v", status, err)
	}
	b.idcClearFlash()
	b.run("activate", chromedp.Click(fmt.Sprintf(`form[action="/managers/%d/activate"] button`, id), chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if err := ten.DB.R.QueryRow(`SELECT status FROM managers WHERE id = ?`, id).Scan(&status); err != nil || status != "active" {
		t.Fatalf("status %q %v", status, err)
	}
	b.noDialog("identity pages")
}

// TestConsoleIdentityTokensAndTwoFactor: an API token created on the page
// is shown once, works against the API, and stops working when revoked
// from the page; two-factor is turned on from the account page, the
// console's own session is revoked from the sessions list (the browser is
// signed out), and the next sign-in asks for a code.
func TestConsoleIdentityTokensAndTwoFactor(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	b := newBrowser(t, k)
	ten := k.Acquire("acme")
	b.idcLogin("owner")

	b.idcGo("/account/tokens", "#f-name")
	b.axe("api tokens")
	b.run("token form", chromedp.SendKeys("#f-name", "billing sync", chromedp.ByQuery), chromedp.SetValue("#f-expires_at", "2099-01-31", chromedp.ByQuery),
		chromedp.Click("#p-prm_users_index", chromedp.ByQuery), chromedp.Submit("#f-name", chromedp.ByQuery), chromedp.WaitVisible("#new-token", chromedp.ByQuery))
	var plain string
	b.run("token value", chromedp.Value("#new-token", &plain, chromedp.ByQuery))
	if !strings.HasPrefix(plain, "xrt_") {
		t.Fatalf("token shown %q", plain)
	}
	b.axe("token created")
	b.run("copy", chromedp.Click(`button[data-copy="#new-token"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//button[@data-copy="#new-token"][normalize-space()="Copied"]`, chromedp.BySearch))
	var scopes, exp string
	if err := ten.DB.R.QueryRow(`SELECT scopes, expires_at FROM api_tokens WHERE name = 'billing sync'`).Scan(&scopes, &exp); err != nil {
		t.Fatal(err)
	}
	if scopes != `["prm_users_index"]` || !strings.HasPrefix(exp, "2099-01-31") {
		t.Fatalf("stored token scopes %s expiry %s", scopes, exp)
	}
	if r := k.Do("GET", "acme", "/api/v1/auth/me", plain, nil); r.Status != 200 {
		t.Fatalf("the new token against the API: %d %s", r.Status, r.Body)
	}
	// Shown once: the list no longer carries it.
	b.idcGo("/account/tokens", "#tokens-table")
	var html string
	b.run("page html", chromedp.OuterHTML("html", &html, chromedp.ByQuery))
	if strings.Contains(html, plain) {
		t.Fatal("the token is shown again")
	}
	tokID := k.idScalar("acme", `SELECT id FROM api_tokens WHERE name = 'billing sync'`)
	b.run("revoke", chromedp.Click(fmt.Sprintf(`form[action="/account/tokens/%d/revoke"] button`, tokID), chromedp.ByQuery),
		chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := k.idScalar("acme", `SELECT COUNT(*) FROM api_tokens WHERE id = ? AND revoked_at IS NOT NULL`, tokID); n != 1 {
		t.Fatal("token not revoked")
	}
	r := k.Do("GET", "acme", "/api/v1/auth/me", plain, nil)
	if r.Status != 401 {
		t.Fatalf("revoked token answered %d %s", r.Status, r.Body)
	}

	// Two-factor from the account page.
	b.idcGo("/account", "#b-2fa-setup")
	b.axe("account")
	b.run("setup", chromedp.Click("#b-2fa-setup", chromedp.ByQuery), chromedp.WaitVisible("#totp-secret", chromedp.ByQuery))
	var qr string
	var ok bool
	b.run("qr", chromedp.AttributeValue("#totp-qr", "src", &qr, &ok, chromedp.ByQuery))
	if !strings.HasPrefix(qr, "data:image/png;base64,") {
		t.Fatalf("QR src %.40q", qr)
	}
	secret := b.text("#totp-secret")
	b.axe("two-factor setup")
	// A wrong code is refused beside the field; the form stays.
	b.run("wrong code", chromedp.SendKeys("#f-totp-code", "000000", chromedp.ByQuery), chromedp.Submit("#f-totp-code", chromedp.ByQuery),
		chromedp.WaitVisible("#e-code", chromedp.ByQuery))
	code, err := totp.GenerateCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.run("enable", chromedp.SendKeys("#f-totp-code", code, chromedp.ByQuery),
		chromedp.Submit("#f-totp-code", chromedp.ByQuery), chromedp.WaitVisible("#recovery-codes", chromedp.ByQuery))
	var n int
	b.run("codes", chromedp.Evaluate(`document.querySelectorAll("#recovery-codes li").length`, &n))
	if n != 10 {
		t.Fatalf("%d recovery codes shown", n)
	}
	if on := k.idScalar("acme", `SELECT totp_enabled FROM managers WHERE username = 'owner'`); on != 1 {
		t.Fatal("two-factor not stored")
	}
	b.axe("recovery codes")

	// The console's own session is in the list; revoking it signs out.
	b.idcGo("/account", "#b-revoke-self")
	if got := b.text("#sessions-table"); !strings.Contains(got, "this browser") {
		t.Fatalf("sessions list %q", got)
	}
	jti := k.idScalar("acme", `SELECT COUNT(*) FROM auth_sessions WHERE revoked_at IS NULL`)
	b.run("revoke self", chromedp.Click("#b-revoke-self", chromedp.ByQuery), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
	if after := k.idScalar("acme", `SELECT COUNT(*) FROM auth_sessions WHERE revoked_at IS NULL`); after != jti-1 {
		t.Fatalf("live sessions %d → %d", jti, after)
	}
	b.run("signed out", chromedp.Navigate(b.base+"/account"), chromedp.WaitVisible("#f-email", chromedp.ByQuery))

	// Signing in again asks for the code.
	b.run("password", chromedp.SendKeys("#f-email", "owner", chromedp.ByQuery), chromedp.SendKeys("#f-password", testPassword, chromedp.ByQuery),
		chromedp.Submit("#f-password", chromedp.ByQuery), chromedp.WaitVisible("#f-code", chromedp.ByQuery))
	code, err = totp.GenerateCode(secret, time.Now().Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	b.run("code", chromedp.SendKeys("#f-code", code, chromedp.ByQuery), chromedp.Submit("#f-code", chromedp.ByQuery),
		chromedp.WaitVisible("#twofa-state", chromedp.ByQuery))
	if got := b.text("#twofa-state"); got != "on" {
		t.Fatalf("two-factor state %q", got)
	}
	b.noDialog("account pages")
}

// TestConsoleIdentityResellerAndLicence: a reseller without the managers
// permission has no menu item and gets the 403 page at its URL; a role
// manager sees the codes it cannot grant greyed out; the licence page
// stays open when the licence locks the console.
func TestConsoleIdentityResellerAndLicence(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	k := s.kit
	b := newBrowser(t, k)
	s.manager(s.owner, "reseller1", resellerCodes...)
	s.manager(s.owner, "rolemgr", "prm_roles_manage", "prm_users_index")

	b.idcLogin("reseller1")
	if got := b.text("nav.side"); strings.Contains(got, "Managers") || strings.Contains(got, "Roles") {
		t.Fatalf("menu shows items the reseller may not use: %q", got)
	}
	b.idcGo("/managers", "main h1")
	if st := b.idcStatus(); st != 403 {
		t.Fatalf("/managers for a reseller answered %d", st)
	}
	if got := b.text("main"); !strings.Contains(got, message("en", "insufficient_permissions", "")) {
		t.Fatalf("403 page %q", got)
	}
	b.axe("403 page")
	b.idcGo("/license", "#license-status")
	if got := b.text("#license-status"); got != "active" {
		t.Fatalf("licence status %q", got)
	}
	b.axe("licence")
	b.run("logout", chromedp.Submit(`form[action="/logout"]`, chromedp.ByQuery), chromedp.WaitVisible("#f-email", chromedp.ByQuery))

	// Only codes the caller holds can be ticked.
	b.idcLogin("rolemgr")
	b.idcGo("/roles/new", "#f-name")
	var grantable, held bool
	b.run("boxes", chromedp.Evaluate(`!document.getElementById("p-prm_users_index").disabled`, &held),
		chromedp.Evaluate(`!document.getElementById("p-prm_managers_index").disabled`, &grantable))
	if !held || grantable {
		t.Fatalf("grantable boxes: held code enabled %v, foreign code enabled %v", held, grantable)
	}

	// A locked licence: the console refuses, the licence page answers.
	if _, err := k.App.UpdateTenant(idCtx, "acme", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, V: 0}}); err != nil {
		t.Fatal(err)
	}
	b.idcGo("/roles", "main h1")
	if st := b.idcStatus(); st != 403 {
		t.Fatalf("/roles on a locked tenant answered %d", st)
	}
	b.idcGo("/license", "#license-status")
	if st := b.idcStatus(); st != 200 {
		t.Fatalf("/license on a locked tenant answered %d", st)
	}
	if got := b.text("#license-status"); got != "blocked" {
		t.Fatalf("licence status %q", got)
	}
	if got := b.text("#license-reason"); got != "max_users_zero" {
		t.Fatalf("blocked reason %q", got)
	}
	if got := b.text("#license-users"); !strings.HasPrefix(got, "0 / 0") {
		t.Fatalf("users vs cap %q", got)
	}
	b.axe("licence locked")
}
