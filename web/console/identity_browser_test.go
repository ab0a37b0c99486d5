package console_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/pquerna/otp/totp"

	"xr/app"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/web"
)

// Browser tests of the identity pages: managers (tree, record, wallet,
// journal, roles, create), roles, API tokens, two-factor and sessions on
// the account page, the licence page.

// idcLogin signs user in through the sign-in page (no second factor).
func idcLogin(b *browsertest.Browser, user string) {
	b.T.Helper()
	b.Run("sign in "+user, chromedp.Navigate(b.Base+"/login"), chromedp.WaitVisible("#f-email", chromedp.ByQuery),
		chromedp.SendKeys("#f-email", user, chromedp.ByQuery), chromedp.SendKeys("#f-password", webtest.Password, chromedp.ByQuery),
		chromedp.Submit("#f-password", chromedp.ByQuery), chromedp.WaitVisible("nav.side", chromedp.ByQuery))
}

// idcGo opens a page, waits for sel, and lets data-confirm forms submit.
func idcGo(b *browsertest.Browser, path, sel string) {
	b.T.Helper()
	b.Run("open "+path, chromedp.Navigate(b.Base+path), chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.Evaluate(`window.confirm = () => true`, nil))
}

// idcClearFlash removes the flash of the current page, so a wait for
// the next one cannot be satisfied by it.
func idcClearFlash(b *browsertest.Browser) {
	b.T.Helper()
	b.Run("clear flash", chromedp.Evaluate(`document.querySelectorAll(".flash").forEach(e => e.remove())`, nil))
}

// idcStatus is the HTTP status of the current document.
func idcStatus(b *browsertest.Browser) int64 {
	b.T.Helper()
	var status int64
	b.Run("status", chromedp.Evaluate(`performance.getEntriesByType("navigation")[0].responseStatus`, &status))
	return status
}

// idcTabTo presses Tab until the focused element satisfies the JS
// predicate over el (document.activeElement), failing after 200 presses:
// the control is reachable from the keyboard.
func idcTabTo(b *browsertest.Browser, what, pred string) {
	b.T.Helper()
	for i := 0; i < 200; i++ {
		var ok bool
		b.Run("focus of "+what, chromedp.Evaluate(`(el => !!el && (`+pred+`))(document.activeElement)`, &ok))
		if ok {
			return
		}
		b.Run("tab", chromedp.KeyEvent(kb.Tab))
	}
	b.T.Fatalf("%s: not reachable with Tab", what)
}

// TestConsoleIdentityManagersAndRoles: the owner creates a reseller with a
// role from the page, deposits to its wallet and sees the journal row,
// creates a role with two permissions, assigns it, and sees the API's
// refusal to delete a role in use; the tree shows the wallet balances.
func TestConsoleIdentityManagersAndRoles(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	b := browsertest.New(t, k)
	ten := k.Acquire("acme")
	resellerRole := webtest.RoleID(k, "acme", "reseller")
	idcLogin(b, "owner")

	// Create a manager under the owner with the reseller role.
	idcGo(b, "/managers/new", "#f-username")
	b.Axe("new manager")
	b.Run("create manager", chromedp.SendKeys("#f-username", "resel1", chromedp.ByQuery), chromedp.SendKeys("#f-email", "resel1@mail.test", chromedp.ByQuery),
		chromedp.SendKeys("#f-password", webtest.Password, chromedp.ByQuery), chromedp.Click(fmt.Sprintf("#r-%d", resellerRole), chromedp.ByQuery),
		chromedp.Submit("#f-username", chromedp.ByQuery), chromedp.WaitVisible("#balance", chromedp.ByQuery))
	id := webtest.Scalar(k, "acme", `SELECT id FROM managers WHERE username = 'resel1'`)
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM manager_roles WHERE manager_id = ? AND role_id = ?`, id, resellerRole); n != 1 {
		t.Fatalf("reseller role not stored: %d", n)
	}
	if p := webtest.Scalar(k, "acme", `SELECT parent_id FROM managers WHERE id = ?`, id); p != webtest.OwnerID(k, "acme") {
		t.Fatalf("parent %d", p)
	}
	if got := b.Text("h1"); !strings.Contains(got, "resel1") {
		t.Fatalf("record heading %q", got)
	}

	// A refused amount is shown beside its field; nothing is stored.
	b.Run("bad deposit", chromedp.Evaluate(`window.confirm = () => true`, nil), chromedp.SendKeys("#f-amount", "-5", chromedp.ByQuery),
		chromedp.Click("#b-deposit", chromedp.ByQuery), chromedp.WaitVisible("#e-amount", chromedp.ByQuery))
	if bal := webtest.Scalar(k, "acme", `SELECT balance FROM managers WHERE id = ?`, id); bal != 0 {
		t.Fatalf("refused deposit stored: %d", bal)
	}

	// Deposit: the balance and the journal follow.
	idcGo(b, fmt.Sprintf("/managers/%d", id), "#f-amount")
	b.Run("deposit", chromedp.SendKeys("#f-amount", "40", chromedp.ByQuery), chromedp.SendKeys("#f-note", "opening float", chromedp.ByQuery),
		chromedp.Click("#b-deposit", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got := b.Text("#balance"); !strings.HasPrefix(got, "40") {
		t.Fatalf("balance after deposit %q", got)
	}
	if got := b.Text("#journal-table tbody"); !strings.Contains(got, "deposit") || !strings.Contains(got, "40") || !strings.Contains(got, "opening float") {
		t.Fatalf("journal row missing: %q", got)
	}
	if bal := webtest.Scalar(k, "acme", `SELECT balance FROM managers WHERE id = ?`, id); bal != 40000 {
		t.Fatalf("stored wallet %d", bal)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM manager_journal WHERE manager_id = ? AND kind = 'deposit' AND amount = 40000 AND note = 'opening float'`, id); n != 1 {
		t.Fatalf("journal rows %d", n)
	}
	// Top-up on loan, then paying part of it back.
	idcClearFlash(b)
	b.Run("topup", chromedp.Evaluate(`window.confirm = () => true`, nil), chromedp.SendKeys("#f-amount", "10", chromedp.ByQuery),
		chromedp.Click("#b-topup", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got := b.Text("#debt"); !strings.HasPrefix(got, "10") {
		t.Fatalf("debt after top-up %q", got)
	}
	idcClearFlash(b)
	b.Run("pay debt", chromedp.Evaluate(`window.confirm = () => true`, nil), chromedp.SendKeys("#f-amount", "4", chromedp.ByQuery),
		chromedp.Click("#b-paydebt", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got := b.Text("#debt"); !strings.HasPrefix(got, "6") {
		t.Fatalf("debt after paying 4 %q", got)
	}
	if bal := webtest.Scalar(k, "acme", `SELECT balance FROM managers WHERE id = ?`, id); bal != 50000 {
		t.Fatalf("stored wallet after top-up %d", bal)
	}
	b.Axe("manager record")
	b.Shot("manager")

	// The tree: the owner at the top, the reseller below with its wallet;
	// reached from the keyboard.
	idcGo(b, "/managers", "ul.mtree")
	if got := b.Text("ul.mtree"); !strings.Contains(got, "owner") || !strings.Contains(got, "resel1") || !strings.Contains(got, "50") {
		t.Fatalf("tree %q", got)
	}
	var nested int
	b.Run("nesting", chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll('ul.mtree ul.mtree a[href="/managers/%d"]').length`, id), &nested))
	if nested != 1 {
		t.Fatalf("reseller not nested under the owner")
	}
	b.Axe("managers tree")
	b.Shot("managers-tree")
	idcTabTo(b, "the reseller's link", fmt.Sprintf(`el.getAttribute("href") === "/managers/%d"`, id))
	b.Run("enter", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible("#balance", chromedp.ByQuery))

	// A role with two permissions.
	idcGo(b, "/roles/new", "#f-name")
	b.Run("role form", chromedp.SendKeys("#f-name", "night-shift", chromedp.ByQuery), chromedp.SendKeys("#f-description", "counter at night", chromedp.ByQuery),
		chromedp.Click("#p-prm_users_index", chromedp.ByQuery), chromedp.Click("#p-prm_users_deposit", chromedp.ByQuery),
		chromedp.Click("#f-tenant_wide", chromedp.ByQuery))
	b.Axe("role editor")
	b.Run("top", chromedp.Evaluate(`window.scrollTo(0, 0)`, nil))
	b.Shot("role-editor")
	b.Run("create role", chromedp.Submit("#f-name", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	night := webtest.RoleID(k, "acme", "night-shift")
	var codes string
	if err := ten.DB.R.QueryRow(`SELECT group_concat(code, ',') FROM (SELECT code FROM role_permissions WHERE role_id = ? ORDER BY code)`, night).Scan(&codes); err != nil {
		t.Fatal(err)
	}
	if codes != "prm_users_deposit,prm_users_index" {
		t.Fatalf("role codes %q", codes)
	}
	if n := webtest.Scalar(k, "acme", `SELECT tenant_wide FROM roles WHERE id = ?`, night); n != 1 {
		t.Fatalf("tenant-wide box not stored: %d", n)
	}
	var checked int
	b.Run("checked", chromedp.Evaluate(`document.querySelectorAll('input[name="permissions"]:checked').length`, &checked))
	if checked != 2 {
		t.Fatalf("editor shows %d ticked codes", checked)
	}
	// Edit from the keyboard: tick a third code with Space, save with Enter.
	b.Run("focus name", chromedp.Focus("#f-name", chromedp.ByQuery))
	idcTabTo(b, "prm_users_update", `el.id === "p-prm_users_update"`)
	b.Run("tick", chromedp.KeyEvent(" "))
	idcTabTo(b, "save", `el.type === "submit"`)
	idcClearFlash(b)
	b.Run("save", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM role_permissions WHERE role_id = ?`, night); n != 3 {
		t.Fatalf("codes after keyboard edit: %d", n)
	}

	// Assign it to the reseller from the record page.
	idcGo(b, fmt.Sprintf("/managers/%d", id), fmt.Sprintf("#r-%d", night))
	b.Run("assign", chromedp.Click(fmt.Sprintf("#r-%d", night), chromedp.ByQuery), chromedp.Submit(fmt.Sprintf("#r-%d", night), chromedp.ByQuery),
		chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM manager_roles WHERE manager_id = ?`, id); n != 2 {
		t.Fatalf("roles of the reseller: %d", n)
	}

	// Deleting a role in use: the API's refusal on the page, nothing deleted.
	idcGo(b, "/roles", "#roles-table")
	b.Axe("roles")
	b.Run("delete in use", chromedp.Click(fmt.Sprintf(`form[action="/roles/%d/delete"] button`, night), chromedp.ByQuery),
		chromedp.WaitVisible(".flash.bad", chromedp.ByQuery))
	if st := idcStatus(b); st != 409 {
		t.Fatalf("delete in use answered %d", st)
	}
	if got := b.Text(".flash.bad"); got != web.Message("en", "role_in_use", "") {
		t.Fatalf("refusal shown %q", got)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM roles WHERE id = ?`, night); n != 1 {
		t.Fatal("role in use was deleted")
	}
	// Unused: deleted.
	spare := webtest.CreateRole(k, "acme", "spare")
	idcGo(b, "/roles", "#roles-table")
	b.Run("delete", chromedp.Click(fmt.Sprintf(`form[action="/roles/%d/delete"] button`, spare), chromedp.ByQuery),
		chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM roles WHERE id = ?`, spare); n != 0 {
		t.Fatal("unused role not deleted")
	}

	// Suspend, then activate.
	idcGo(b, fmt.Sprintf("/managers/%d", id), "#balance")
	idcClearFlash(b)
	b.Run("suspend", chromedp.Click(fmt.Sprintf(`form[action="/managers/%d/suspend"] button`, id), chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	var status string
	if err := ten.DB.R.QueryRow(`SELECT status FROM managers WHERE id = ?`, id).Scan(&status); err != nil || status != "suspended" {
		t.Fatalf("status %q %v", status, err)
	}
	idcClearFlash(b)
	b.Run("activate", chromedp.Click(fmt.Sprintf(`form[action="/managers/%d/activate"] button`, id), chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if err := ten.DB.R.QueryRow(`SELECT status FROM managers WHERE id = ?`, id).Scan(&status); err != nil || status != "active" {
		t.Fatalf("status %q %v", status, err)
	}
	b.NoDialog("identity pages")
}

// TestConsoleIdentityTokensAndTwoFactor: an API token created on the page
// is shown once, works against the API, and stops working when revoked
// from the page; two-factor is turned on from the account page, the
// console's own session is revoked from the sessions list (the browser is
// signed out), and the next sign-in asks for a code.
func TestConsoleIdentityTokensAndTwoFactor(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	b := browsertest.New(t, k)
	ten := k.Acquire("acme")
	idcLogin(b, "owner")

	idcGo(b, "/account/tokens", "#f-name")
	b.Axe("api tokens")
	b.Run("token form", chromedp.SendKeys("#f-name", "billing sync", chromedp.ByQuery), chromedp.SetValue("#f-expires_at", "2099-01-31", chromedp.ByQuery),
		chromedp.Click("#p-prm_users_index", chromedp.ByQuery), chromedp.Submit("#f-name", chromedp.ByQuery), chromedp.WaitVisible("#new-token", chromedp.ByQuery))
	var plain string
	b.Run("token value", chromedp.Value("#new-token", &plain, chromedp.ByQuery))
	if !strings.HasPrefix(plain, "xrt_") {
		t.Fatalf("token shown %q", plain)
	}
	b.Axe("token created")
	b.Run("copy", chromedp.Click(`button[data-copy="#new-token"]`, chromedp.ByQuery),
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
	idcGo(b, "/account/tokens", "#tokens-table")
	var html string
	b.Run("page html", chromedp.OuterHTML("html", &html, chromedp.ByQuery))
	if strings.Contains(html, plain) {
		t.Fatal("the token is shown again")
	}
	tokID := webtest.Scalar(k, "acme", `SELECT id FROM api_tokens WHERE name = 'billing sync'`)
	b.Run("revoke", chromedp.Click(fmt.Sprintf(`form[action="/account/tokens/%d/revoke"] button`, tokID), chromedp.ByQuery),
		chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM api_tokens WHERE id = ? AND revoked_at IS NOT NULL`, tokID); n != 1 {
		t.Fatal("token not revoked")
	}
	r := k.Do("GET", "acme", "/api/v1/auth/me", plain, nil)
	if r.Status != 401 {
		t.Fatalf("revoked token answered %d %s", r.Status, r.Body)
	}

	// Two-factor from the account page.
	idcGo(b, "/account", "#b-2fa-setup")
	b.Axe("account")
	b.Run("setup", chromedp.Click("#b-2fa-setup", chromedp.ByQuery), chromedp.WaitVisible("#totp-secret", chromedp.ByQuery))
	var qr string
	var ok bool
	b.Run("qr", chromedp.AttributeValue("#totp-qr", "src", &qr, &ok, chromedp.ByQuery))
	if !strings.HasPrefix(qr, "data:image/png;base64,") {
		t.Fatalf("QR src %.40q", qr)
	}
	secret := b.Text("#totp-secret")
	b.Axe("two-factor setup")
	// A wrong code is refused beside the field; the form stays.
	b.Run("wrong code", chromedp.SendKeys("#f-totp-code", "000000", chromedp.ByQuery), chromedp.Submit("#f-totp-code", chromedp.ByQuery),
		chromedp.WaitVisible("#e-code", chromedp.ByQuery))
	code, err := totp.GenerateCode(secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.Run("enable", chromedp.SendKeys("#f-totp-code", code, chromedp.ByQuery),
		chromedp.Submit("#f-totp-code", chromedp.ByQuery), chromedp.WaitVisible("#recovery-codes", chromedp.ByQuery))
	var n int
	b.Run("codes", chromedp.Evaluate(`document.querySelectorAll("#recovery-codes li").length`, &n))
	if n != 10 {
		t.Fatalf("%d recovery codes shown", n)
	}
	if on := webtest.Scalar(k, "acme", `SELECT totp_enabled FROM managers WHERE username = 'owner'`); on != 1 {
		t.Fatal("two-factor not stored")
	}
	b.Axe("recovery codes")

	// The console's own session is in the list; revoking it signs out.
	idcGo(b, "/account", "#b-revoke-self")
	if got := b.Text("#sessions-table"); !strings.Contains(got, "this browser") {
		t.Fatalf("sessions list %q", got)
	}
	jti := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM auth_sessions WHERE revoked_at IS NULL`)
	b.Run("revoke self", chromedp.Click("#b-revoke-self", chromedp.ByQuery), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
	if after := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM auth_sessions WHERE revoked_at IS NULL`); after != jti-1 {
		t.Fatalf("live sessions %d → %d", jti, after)
	}
	b.Run("signed out", chromedp.Navigate(b.Base+"/account"), chromedp.WaitVisible("#f-email", chromedp.ByQuery))

	// Signing in again asks for the code.
	b.Run("password", chromedp.SendKeys("#f-email", "owner", chromedp.ByQuery), chromedp.SendKeys("#f-password", webtest.Password, chromedp.ByQuery),
		chromedp.Submit("#f-password", chromedp.ByQuery), chromedp.WaitVisible("#f-code", chromedp.ByQuery))
	code, err = totp.GenerateCode(secret, time.Now().Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	b.Run("code", chromedp.SendKeys("#f-code", code, chromedp.ByQuery), chromedp.Submit("#f-code", chromedp.ByQuery),
		chromedp.WaitVisible("#twofa-state", chromedp.ByQuery))
	if got := b.Text("#twofa-state"); got != "on" {
		t.Fatalf("two-factor state %q", got)
	}
	b.NoDialog("account pages")
}

// TestConsoleIdentityResellerAndLicence: a reseller without the managers
// permission has no menu item and gets the 403 page at its URL; a role
// manager sees the codes it cannot grant greyed out; the licence page
// stays open when the licence locks the console.
func TestConsoleIdentityResellerAndLicence(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	k := s.Kit
	b := browsertest.New(t, k)
	s.Manager(s.OwnerID, "reseller1", webtest.ResellerCodes...)
	s.Manager(s.OwnerID, "rolemgr", "prm_roles_manage", "prm_users_index")

	idcLogin(b, "reseller1")
	if got := b.Text("nav.side"); strings.Contains(got, "Managers") || strings.Contains(got, "Roles") {
		t.Fatalf("menu shows items the reseller may not use: %q", got)
	}
	idcGo(b, "/managers", "main h1")
	if st := idcStatus(b); st != 403 {
		t.Fatalf("/managers for a reseller answered %d", st)
	}
	if got := b.Text("main"); !strings.Contains(got, web.Message("en", "insufficient_permissions", "")) {
		t.Fatalf("403 page %q", got)
	}
	b.Axe("403 page")
	idcGo(b, "/license", "#license-status")
	if got := b.Text("#license-status"); got != "active" {
		t.Fatalf("licence status %q", got)
	}
	b.Axe("licence")
	b.Run("logout", chromedp.Submit(`form[action="/logout"]`, chromedp.ByQuery), chromedp.WaitVisible("#f-email", chromedp.ByQuery))

	// Only codes the caller holds can be ticked.
	idcLogin(b, "rolemgr")
	idcGo(b, "/roles/new", "#f-name")
	var grantable, held, wide bool
	b.Run("boxes", chromedp.Evaluate(`!document.getElementById("p-prm_users_index").disabled`, &held),
		chromedp.Evaluate(`!document.getElementById("p-prm_managers_index").disabled`, &grantable),
		chromedp.Evaluate(`!document.getElementById("f-tenant_wide").disabled`, &wide))
	if !held || grantable || wide {
		t.Fatalf("grantable boxes: held code enabled %v, foreign code enabled %v, tenant-wide enabled %v", held, grantable, wide)
	}

	// A locked licence: the console refuses, the licence page answers.
	if _, err := k.App.UpdateTenant(webtest.Background, "acme", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, V: 0}}); err != nil {
		t.Fatal(err)
	}
	idcGo(b, "/roles", "main h1")
	if st := idcStatus(b); st != 403 {
		t.Fatalf("/roles on a locked tenant answered %d", st)
	}
	idcGo(b, "/license", "#license-status")
	if st := idcStatus(b); st != 200 {
		t.Fatalf("/license on a locked tenant answered %d", st)
	}
	if got := b.Text("#license-status"); got != "blocked" {
		t.Fatalf("licence status %q", got)
	}
	if got := b.Text("#license-reason"); got != "max_users_zero" {
		t.Fatalf("blocked reason %q", got)
	}
	if got := b.Text("#license-users"); !strings.HasPrefix(got, "0 / 0") {
		t.Fatalf("users vs cap %q", got)
	}
	b.Axe("licence locked")
}
