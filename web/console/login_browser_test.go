package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"xr/app"
	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestConsoleInBrowser walks the main path of a cashier's day in a real
// browser: sign-in with two factors, a subscriber created and paid, the
// ledger row seen, a hostile name shown as text, Arabic right to left,
// and a reseller kept out of another reseller's subscriber.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	b := browsertest.New(t, k)
	tok := k.Owner("acme")
	secret, _ := webtest.Enable2FA(k, "acme", tok)

	// Sign in: password, then the next step's code.
	b.Run("login page", chromedp.Navigate(b.Base+"/users"), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
	b.Axe("login")
	b.Shot("login")
	b.Run("password", chromedp.SendKeys("#f-email", "owner", chromedp.ByQuery), chromedp.SendKeys("#f-password", webtest.Password, chromedp.ByQuery),
		chromedp.Submit("#f-password", chromedp.ByQuery), chromedp.WaitVisible("#f-code", chromedp.ByQuery))
	code, err := totp.GenerateCode(secret, time.Now().Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	b.Run("totp", chromedp.SendKeys("#f-code", code, chromedp.ByQuery), chromedp.Submit("#f-code", chromedp.ByQuery),
		chromedp.WaitVisible("#f-q", chromedp.ByQuery))
	var loc string
	b.Run("location", chromedp.Location(&loc))
	if !strings.HasSuffix(loc, "/users") {
		t.Fatalf("after sign-in at %s, want the page asked for", loc)
	}
	// The console session is an API session: listed with the others.
	if r := k.Do("GET", "acme", "/api/v1/auth/account/sessions", tok, nil); r.Status != 200 || len(r.List()) < 2 {
		t.Fatalf("console session not among the API sessions: %d %s", r.Status, r.Body)
	}

	// Create a subscriber through the form.
	b.Run("new form", chromedp.Navigate(b.Base+"/users/new"), chromedp.WaitVisible("#f-username", chromedp.ByQuery))
	b.Axe("new subscriber")
	b.Run("create", chromedp.SendKeys("#f-username", "walkin", chromedp.ByQuery), chromedp.SendKeys("#f-password", "pw-walkin", chromedp.ByQuery),
		chromedp.SendKeys("#f-firstname", "<script>alert(1)</script>", chromedp.ByQuery),
		chromedp.Submit("#f-username", chromedp.ByQuery), chromedp.WaitVisible("#balance", chromedp.ByQuery))
	if got := b.Text("h1"); !strings.Contains(got, "walkin") {
		t.Fatalf("record page heading %q", got)
	}
	var id int64
	if err := k.Acquire("acme").DB.R.QueryRow(`SELECT id FROM users WHERE username = 'walkin'`).Scan(&id); err != nil {
		t.Fatalf("subscriber not stored: %v", err)
	}
	// The hostile first name is text, and no script ran.
	if got := b.Text("dl.kv"); !strings.Contains(got, "<script>alert(1)</script>") {
		t.Fatalf("name not shown as text: %q", got)
	}
	b.NoDialog("record page")

	// Deposit: the confirmation is accepted, the balance and the ledger follow.
	b.Run("deposit", chromedp.SendKeys("#f-amount", "25.5", chromedp.ByQuery), chromedp.SendKeys("#f-note", "cash", chromedp.ByQuery),
		chromedp.Evaluate(`window.confirm = () => true; document.querySelectorAll(".flash").forEach(f => f.remove())`, nil),
		chromedp.Submit("#f-amount", chromedp.ByQuery),
		chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got := b.Text("#balance"); !strings.HasPrefix(got, "25.5") {
		t.Fatalf("balance after deposit %q", got)
	}
	if got := b.Text("#ledger tbody"); !strings.Contains(got, "25.5") || !strings.Contains(got, "cash") {
		t.Fatalf("ledger row missing: %q", got)
	}
	var bal int64
	k.Acquire("acme").DB.R.QueryRow(`SELECT balance FROM users WHERE id = ?`, id).Scan(&bal)
	if bal != 25500 {
		t.Fatalf("stored balance %d", bal)
	}
	b.Axe("subscriber record")
	b.Shot("subscriber")

	// A refused amount is shown beside its field and nothing is stored.
	b.Run("bad deposit", chromedp.SendKeys("#f-amount", "1.2345", chromedp.ByQuery), chromedp.Submit("#f-amount", chromedp.ByQuery),
		chromedp.WaitVisible("#e-amount", chromedp.ByQuery))
	k.Acquire("acme").DB.R.QueryRow(`SELECT balance FROM users WHERE id = ?`, id).Scan(&bal)
	if bal != 25500 {
		t.Fatalf("balance changed by a refused deposit: %d", bal)
	}

	// The list finds it by search as you type (htmx swaps the results).
	b.Run("list", chromedp.Navigate(b.Base+"/users"), chromedp.WaitVisible("#f-q", chromedp.ByQuery),
		chromedp.SendKeys("#f-q", "walk", chromedp.ByQuery), chromedp.WaitVisible(`#results a[href="/users/`+fmt.Sprint(id)+`"]`, chromedp.ByQuery))
	b.Axe("subscribers")
	b.Shot("subscribers")
	b.NoDialog("list")

	// Arabic: right to left, from the same page.
	b.Run("arabic", chromedp.Submit(`form[action="/language"]`, chromedp.ByQuery), chromedp.WaitVisible(`html[dir="rtl"]`, chromedp.ByQuery))
	b.Shot("subscribers-ar")
	b.Run("english", chromedp.Submit(`form[action="/language"]`, chromedp.ByQuery), chromedp.WaitVisible(`html[dir="ltr"]`, chromedp.ByQuery))

	// Sign out: the API session ends with it.
	b.Run("logout", chromedp.Submit(`form[action="/logout"]`, chromedp.ByQuery), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
	b.Run("after logout", chromedp.Navigate(b.Base+"/users"), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
}

// TestConsoleResellerScope: a reseller's browser gets the not-found page
// for another reseller's subscriber, like the API's 404.
func TestConsoleResellerScope(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	k := s.Kit
	b := browsertest.New(t, k)
	r1, _ := s.Manager(s.OwnerID, "reseller1", webtest.ResellerCodes...)
	_, tok2 := s.Manager(s.OwnerID, "reseller2", webtest.ResellerCodes...)
	_ = r1
	other := s.User(tok2, map[string]any{"username": "theirs"})

	b.Run("login", chromedp.Navigate(b.Base+"/login"), chromedp.WaitVisible("#f-email", chromedp.ByQuery),
		chromedp.SendKeys("#f-email", "reseller1", chromedp.ByQuery), chromedp.SendKeys("#f-password", webtest.Password, chromedp.ByQuery),
		chromedp.Submit("#f-password", chromedp.ByQuery), chromedp.WaitVisible("nav.side", chromedp.ByQuery))
	var status int64
	b.Run("other's record", chromedp.Navigate(fmt.Sprintf("%s/users/%d", b.Base, other)), chromedp.WaitVisible("main h1", chromedp.ByQuery),
		chromedp.Evaluate(`performance.getEntriesByType("navigation")[0].responseStatus`, &status))
	if status != 404 {
		t.Fatalf("another reseller's subscriber answered %d, want 404", status)
	}
	if got := b.Text("main"); strings.Contains(got, "theirs") {
		t.Fatalf("the page shows the other reseller's subscriber: %q", got)
	}
	// The menu shows only what the role may use.
	if got := b.Text("nav.side"); strings.Contains(got, "Managers") || strings.Contains(got, "Webhooks") {
		t.Fatalf("menu shows items the reseller may not use: %q", got)
	}
}

// A plain HTTP client sees the console's security headers on every page.
func TestConsoleSecurityHeaders(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	for _, p := range []string{"/login", "/users", "/static/nope"} {
		r := k.Do("GET", "acme", p, "", nil)
		if p == "/static/nope" {
			if r.Status != 404 {
				t.Fatalf("%s: %d", p, r.Status)
			}
			continue
		}
		csp := r.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Fatalf("%s: CSP %q", p, csp)
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: no nosniff", p)
		}
	}
	// Signed out, a page sends the browser to the sign-in page.
	if r := k.Do("GET", "acme", "/users", "", nil); r.Status != 303 && r.Status != 200 {
		t.Fatalf("/users signed out: %d", r.Status)
	}
	// A cross-origin form post is refused before anything runs.
	r := k.Do("POST", "acme", "/login", "email=owner&password=x", nil, "Content-Type", "application/x-www-form-urlencoded",
		"Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site")
	if r.Status != 403 {
		t.Fatalf("cross-origin post: %d", r.Status)
	}
}

// The console's session cookie is HttpOnly and SameSite=Lax always, and
// Secure only with --secure-cookies (xr itself serves plain HTTP).
func TestConsoleCookieFlags(t *testing.T) {
	t.Parallel()
	for _, secure := range []bool{false, true} {
		k := webtest.NewWith(t, app.Config{SecureCookies: secure}, nil, nil)
		req, err := http.NewRequest("POST", k.TS.URL+"/login", strings.NewReader("email=owner&password="+webtest.Password))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "acme.xr.test"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		r := webtest.Resp{Status: res.StatusCode, Header: res.Header}
		var cookie string
		for _, c := range r.Header.Values("Set-Cookie") {
			if strings.HasPrefix(c, "xr_console=") {
				cookie = c
			}
		}
		if cookie == "" {
			t.Fatalf("secure=%v: no session cookie (status %d %s)", secure, r.Status, r.Body)
		}
		if !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Lax") || strings.Contains(cookie, "Secure") != secure {
			t.Fatalf("secure=%v: cookie %q", secure, cookie)
		}
	}
}
