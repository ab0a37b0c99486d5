package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"xr/app"
)

// browser is a headless Chromium (Debian's package) on the kit's server.
// Hosts *.xr.test resolve to the test server, so the console runs on the
// tenant's own host as in production.
type browser struct {
	t      *testing.T
	ctx    context.Context
	base   string // http://acme.xr.test:PORT
	port   string
	shots  string
	dialog chan string
}

// chromiumPath finds the browser; without one the browser tests skip
// loudly, except in CI (CI=true), where they fail.
func chromiumPath(t testing.TB) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium: .ci/run installs Debian's chromium package; the browser tests cannot run")
	}
	t.Skip("*** SKIPPING BROWSER TESTS: no Chromium found (apt-get install chromium) ***")
	return ""
}

// chromiumOptions start a headless Chromium that reaches *.xr.test on
// loopback and nothing else (this machine's network is closed).
func chromiumOptions(exe string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("host-resolver-rules", "MAP *.xr.test 127.0.0.1"),
		chromedp.WindowSize(1280, 800),
	)
}

func newBrowser(t *testing.T, k *kit) *browser {
	exe := chromiumPath(t)
	u, err := url.Parse(k.TS.URL)
	if err != nil {
		t.Fatal(err)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromiumOptions(exe)...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	b := &browser{t: t, ctx: ctx, port: u.Port(), dialog: make(chan string, 4)}
	b.base = "http://acme.xr.test:" + b.port
	b.shots = os.Getenv("XR_SCREENSHOTS")
	if b.shots == "" {
		b.shots = t.TempDir()
	}
	// A script that runs would open a dialog: record it, and dismiss it.
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.dialog <- d.Message
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var loc, html string
		_ = chromedp.Run(b.ctx, chromedp.Location(&loc), chromedp.OuterHTML("body", &html, chromedp.ByQuery))
		b.t.Fatalf("%s: %v\nat %s\n%s", what, err, loc, html)
	}
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	var s string
	b.run("text of "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

// shot saves the page at desktop and phone sizes.
func (b *browser) shot(name string) {
	b.t.Helper()
	for _, size := range []struct {
		suffix string
		w, h   int64
	}{{"", 1280, 800}, {"-phone", 390, 844}} {
		var png []byte
		b.run("screenshot "+name, chromedp.EmulateViewport(size.w, size.h), chromedp.CaptureScreenshot(&png))
		if err := os.WriteFile(filepath.Join(b.shots, name+size.suffix+".png"), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.run("restore viewport", chromedp.EmulateViewport(1280, 800))
}

// axe runs axe-core on the current page and fails on serious or critical
// violations. DevTools evaluation is not subject to the page's CSP.
func (b *browser) axe(page string) {
	b.t.Helper()
	src, err := os.ReadFile("testdata/axe/axe.min.js")
	if err != nil {
		b.t.Fatal(err)
	}
	var out string
	b.run("axe on "+page, chromedp.Evaluate(string(src), nil),
		chromedp.Evaluate(`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.html)}))))`,
			&out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	var v []map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		b.t.Fatalf("axe result: %v: %s", err, out)
	}
	if len(v) > 0 {
		b.t.Errorf("accessibility of %s: %s", page, out)
	}
}

func (b *browser) noDialog(where string) {
	b.t.Helper()
	select {
	case m := <-b.dialog:
		b.t.Fatalf("%s: a script ran and opened a dialog %q", where, m)
	default:
	}
}

// TestConsoleInBrowser walks the main path of a cashier's day in a real
// browser: sign-in with two factors, a subscriber created and paid, the
// ledger row seen, a hostile name shown as text, Arabic right to left,
// and a reseller kept out of another reseller's subscriber.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	b := newBrowser(t, k)
	tok := k.Owner("acme")
	secret, _ := k.idEnable2FA("acme", tok)

	// Sign in: password, then the next step's code.
	b.run("login page", chromedp.Navigate(b.base+"/users"), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
	b.axe("login")
	b.shot("login")
	b.run("password", chromedp.SendKeys("#f-email", "owner", chromedp.ByQuery), chromedp.SendKeys("#f-password", testPassword, chromedp.ByQuery),
		chromedp.Submit("#f-password", chromedp.ByQuery), chromedp.WaitVisible("#f-code", chromedp.ByQuery))
	code, err := totp.GenerateCode(secret, time.Now().Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	b.run("totp", chromedp.SendKeys("#f-code", code, chromedp.ByQuery), chromedp.Submit("#f-code", chromedp.ByQuery),
		chromedp.WaitVisible("#f-q", chromedp.ByQuery))
	var loc string
	b.run("location", chromedp.Location(&loc))
	if !strings.HasSuffix(loc, "/users") {
		t.Fatalf("after sign-in at %s, want the page asked for", loc)
	}
	// The console session is an API session: listed with the others.
	if r := k.Do("GET", "acme", "/api/v1/auth/account/sessions", tok, nil); r.Status != 200 || len(r.List()) < 2 {
		t.Fatalf("console session not among the API sessions: %d %s", r.Status, r.Body)
	}

	// Create a subscriber through the form.
	b.run("new form", chromedp.Navigate(b.base+"/users/new"), chromedp.WaitVisible("#f-username", chromedp.ByQuery))
	b.axe("new subscriber")
	b.run("create", chromedp.SendKeys("#f-username", "walkin", chromedp.ByQuery), chromedp.SendKeys("#f-password", "pw-walkin", chromedp.ByQuery),
		chromedp.SendKeys("#f-firstname", "<script>alert(1)</script>", chromedp.ByQuery),
		chromedp.Submit("#f-username", chromedp.ByQuery), chromedp.WaitVisible("#balance", chromedp.ByQuery))
	if got := b.text("h1"); !strings.Contains(got, "walkin") {
		t.Fatalf("record page heading %q", got)
	}
	var id int64
	if err := k.Acquire("acme").DB.R.QueryRow(`SELECT id FROM users WHERE username = 'walkin'`).Scan(&id); err != nil {
		t.Fatalf("subscriber not stored: %v", err)
	}
	// The hostile first name is text, and no script ran.
	if got := b.text("dl.kv"); !strings.Contains(got, "<script>alert(1)</script>") {
		t.Fatalf("name not shown as text: %q", got)
	}
	b.noDialog("record page")

	// Deposit: the confirmation is accepted, the balance and the ledger follow.
	b.run("deposit", chromedp.SendKeys("#f-amount", "25.5", chromedp.ByQuery), chromedp.SendKeys("#f-note", "cash", chromedp.ByQuery),
		chromedp.Evaluate(`window.confirm = () => true; document.querySelectorAll(".flash").forEach(f => f.remove())`, nil),
		chromedp.Submit("#f-amount", chromedp.ByQuery),
		chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got := b.text("#balance"); !strings.HasPrefix(got, "25.5") {
		t.Fatalf("balance after deposit %q", got)
	}
	if got := b.text("#ledger tbody"); !strings.Contains(got, "25.5") || !strings.Contains(got, "cash") {
		t.Fatalf("ledger row missing: %q", got)
	}
	var bal int64
	k.Acquire("acme").DB.R.QueryRow(`SELECT balance FROM users WHERE id = ?`, id).Scan(&bal)
	if bal != 25500 {
		t.Fatalf("stored balance %d", bal)
	}
	b.axe("subscriber record")
	b.shot("subscriber")

	// A refused amount is shown beside its field and nothing is stored.
	b.run("bad deposit", chromedp.SendKeys("#f-amount", "1.2345", chromedp.ByQuery), chromedp.Submit("#f-amount", chromedp.ByQuery),
		chromedp.WaitVisible("#e-amount", chromedp.ByQuery))
	k.Acquire("acme").DB.R.QueryRow(`SELECT balance FROM users WHERE id = ?`, id).Scan(&bal)
	if bal != 25500 {
		t.Fatalf("balance changed by a refused deposit: %d", bal)
	}

	// The list finds it by search as you type (htmx swaps the results).
	b.run("list", chromedp.Navigate(b.base+"/users"), chromedp.WaitVisible("#f-q", chromedp.ByQuery),
		chromedp.SendKeys("#f-q", "walk", chromedp.ByQuery), chromedp.WaitVisible(`#results a[href="/users/`+fmt.Sprint(id)+`"]`, chromedp.ByQuery))
	b.axe("subscribers")
	b.shot("subscribers")
	b.noDialog("list")

	// Arabic: right to left, from the same page.
	b.run("arabic", chromedp.Submit(`form[action="/language"]`, chromedp.ByQuery), chromedp.WaitVisible(`html[dir="rtl"]`, chromedp.ByQuery))
	b.shot("subscribers-ar")
	b.run("english", chromedp.Submit(`form[action="/language"]`, chromedp.ByQuery), chromedp.WaitVisible(`html[dir="ltr"]`, chromedp.ByQuery))

	// Sign out: the API session ends with it.
	b.run("logout", chromedp.Submit(`form[action="/logout"]`, chromedp.ByQuery), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
	b.run("after logout", chromedp.Navigate(b.base+"/users"), chromedp.WaitVisible("#f-email", chromedp.ByQuery))
}

// TestConsoleResellerScope: a reseller's browser gets the not-found page
// for another reseller's subscriber, like the API's 404.
func TestConsoleResellerScope(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	k := s.kit
	b := newBrowser(t, k)
	r1, _ := s.manager(s.owner, "reseller1", resellerCodes...)
	_, tok2 := s.manager(s.owner, "reseller2", resellerCodes...)
	_ = r1
	other := s.user(tok2, map[string]any{"username": "theirs"})

	b.run("login", chromedp.Navigate(b.base+"/login"), chromedp.WaitVisible("#f-email", chromedp.ByQuery),
		chromedp.SendKeys("#f-email", "reseller1", chromedp.ByQuery), chromedp.SendKeys("#f-password", testPassword, chromedp.ByQuery),
		chromedp.Submit("#f-password", chromedp.ByQuery), chromedp.WaitVisible("nav.side", chromedp.ByQuery))
	var status int64
	b.run("other's record", chromedp.Navigate(fmt.Sprintf("%s/users/%d", b.base, other)), chromedp.WaitVisible("main h1", chromedp.ByQuery),
		chromedp.Evaluate(`performance.getEntriesByType("navigation")[0].responseStatus`, &status))
	if status != 404 {
		t.Fatalf("another reseller's subscriber answered %d, want 404", status)
	}
	if got := b.text("main"); strings.Contains(got, "theirs") {
		t.Fatalf("the page shows the other reseller's subscriber: %q", got)
	}
	// The menu shows only what the role may use.
	if got := b.text("nav.side"); strings.Contains(got, "Managers") || strings.Contains(got, "Webhooks") {
		t.Fatalf("menu shows items the reseller may not use: %q", got)
	}
}

// A plain HTTP client sees the console's security headers on every page.
func TestConsoleSecurityHeaders(t *testing.T) {
	t.Parallel()
	k := newKit(t)
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
		k := newKitWith(t, app.Config{SecureCookies: secure}, nil, nil)
		req, err := http.NewRequest("POST", k.TS.URL+"/login", strings.NewReader("email=owner&password="+testPassword))
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
		r := resp{Status: res.StatusCode, Header: res.Header}
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
