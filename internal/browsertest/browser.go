// Package browsertest drives a real headless Chromium (Debian's package)
// against a test server, for the browser tests of the console and the
// subscriber pages: sign-in, forms, htmx, accessibility (axe-core) and
// screenshots, as a person sees them.
package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"xr/internal/webtest"
)

// Browser is a headless Chromium (Debian's package) on the kit's server.
// Hosts *.xr.test resolve to the test server, so the console runs on the
// tenant's own host as in production.
type Browser struct {
	T   *testing.T
	Ctx context.Context
	// Context is the tab's browser context, its own: the browser is
	// shared, so a test that lists targets keeps to this one.
	Context cdp.BrowserContextID
	Base    string // http://acme.xr.test:PORT
	Shots   string // where Shot saves; "" (XR_SCREENSHOTS unset) saves none
	dialog  chan string
	kit     *webtest.Kit
	axed    map[string]bool // page states axe already passed (Axe)
}

// headlessShell is where Debian's chromium-headless-shell package puts the
// browser.
const headlessShell = "/usr/lib/chromium/chromium-headless-shell"

// chromiumPath finds the browser; without one the browser tests skip
// loudly, except in CI (CI=true), where they fail.
func chromiumPath(t testing.TB) string {
	// Debian's chromium-headless-shell is the lighter old headless mode
	// (half the CPU of a test run). Its /usr/bin wrapper does not exec, so
	// stopping it would orphan the browser: the binary itself is started.
	if _, err := os.Stat(headlessShell); err == nil {
		return headlessShell
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium: .ci/run installs Debian's chromium-headless-shell package; the browser tests cannot run")
	}
	t.Skip("*** SKIPPING BROWSER TESTS: no Chromium found (apt-get install chromium-headless-shell) ***")
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

// shared is the test binary's one Chromium: the first browser test
// starts it, Main stops it when the tests are done. Each test works in a
// browser context of its own (Start), so cookies, storage and cache never
// leak between tests; starting a browser per test cost seconds each.
var shared struct {
	once    sync.Once
	ctx     context.Context // the browser's first tab; tabs of tests derive from it
	stop    func()
	err     error
	mainRan bool
}

// Main runs a test binary's tests, then stops the shared Chromium and runs
// after (the package's own cleanup; os.Exit skips deferred calls). A
// package with browser tests calls it from its TestMain:
//
//	func TestMain(m *testing.M) { browsertest.Main(m) }
func Main(m *testing.M, after ...func()) {
	shared.mainRan = true
	code := m.Run()
	if shared.stop != nil {
		shared.stop()
	}
	for _, f := range after {
		f()
	}
	os.Exit(code)
}

// browser is the shared Chromium, started on first use.
func browser(tb testing.TB) context.Context {
	tb.Helper()
	exe := chromiumPath(tb)
	if !shared.mainRan {
		tb.Fatal("browser tests share one Chromium: the package needs func TestMain(m *testing.M) { browsertest.Main(m) }")
	}
	shared.once.Do(func() {
		actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromiumOptions(exe)...)
		ctx, cancelC := chromedp.NewContext(actx)
		shared.ctx, shared.stop = ctx, func() { cancelC(); cancelA() }
		// The browser starts on ctx itself: a run on a child context that
		// started it would close it when cancelled.
		shared.err = chromedp.Run(ctx)
	})
	if shared.err != nil {
		tb.Fatalf("start chromium: %v", shared.err)
	}
	return shared.ctx
}

// Start opens a tab in a fresh browser context (no cookies, storage or
// cache of another test) of the shared Chromium and returns its context;
// the tab and its browser context are closed when the test ends. listen,
// when set, sees the tab's events.
func Start(tb testing.TB, listen func(ev any)) context.Context {
	tb.Helper()
	ctx, _ := openTab(tb, listen)
	return ctx
}

// openTab is Start, also returning the tab's browser context. The tab is
// a window of its own: Chromium opens no tab in a new browser context
// without one ("no browser is open").
func openTab(tb testing.TB, listen func(ev any)) (context.Context, cdp.BrowserContextID) {
	tb.Helper()
	root := browser(tb)
	onBrowser := cdp.WithExecutor(root, chromedp.FromContext(root).Browser)
	bc, err := target.CreateBrowserContext().WithDisposeOnDetach(true).Do(onBrowser)
	if err != nil {
		tb.Fatalf("new browser context: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = target.DisposeBrowserContext(bc).Do(cdp.WithExecutor(ctx, chromedp.FromContext(root).Browser))
	})
	id, err := target.CreateTarget("about:blank").WithBrowserContextID(bc).WithNewWindow(true).
		WithWidth(1280).WithHeight(800).Do(onBrowser)
	if err != nil {
		tb.Fatalf("open a tab: %v", err)
	}
	ctx, cancel := chromedp.NewContext(root, chromedp.WithTargetID(id))
	tb.Cleanup(cancel) // closes the tab, before its browser context goes
	if listen != nil {
		chromedp.ListenTarget(ctx, listen)
	}
	if err := chromedp.Run(ctx); err != nil {
		tb.Fatalf("attach to the tab: %v", err)
	}
	return ctx, bc
}

// Base is the URL of tenant acme's host on the kit's server
// (http://acme.xr.test:PORT).
func Base(tb testing.TB, k *webtest.Kit) string {
	u, err := url.Parse(k.TS.URL)
	if err != nil {
		tb.Fatal(err)
	}
	return "http://acme.xr.test:" + u.Port()
}

// New opens a browser tab for a test on the kit's server.
func New(t *testing.T, k *webtest.Kit) *Browser {
	b := &Browser{T: t, Base: Base(t, k), dialog: make(chan string, 4), kit: k, axed: map[string]bool{}}
	b.Shots = os.Getenv("XR_SCREENSHOTS")
	// A script that runs would open a dialog: record it, and dismiss it.
	b.Ctx, b.Context = openTab(t, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.dialog <- d.Message
			go func() { _ = chromedp.Run(b.Ctx, page.HandleJavaScriptDialog(false)) }()
		}
	})
	return b
}

// SignIn signs the tab in to tenant acme's console as user (password
// webtest.Password): it signs in over HTTP, posting what the sign-in form
// posts, and gives the tab the session's cookie, which saves loading the
// sign-in page and the dashboard. For tests of something other than
// signing in: the sign-in form has tests of its own (login_browser_test.go,
// identity_browser_test.go). The tab stays where it is; the test opens its
// page.
func (b *Browser) SignIn(user string) {
	b.T.Helper()
	c := b.kit.ConsoleSession("acme", user, webtest.Password)
	same := map[http.SameSite]network.CookieSameSite{http.SameSiteLaxMode: network.CookieSameSiteLax, http.SameSiteStrictMode: network.CookieSameSiteStrict, http.SameSiteNoneMode: network.CookieSameSiteNone}[c.SameSite]
	set := network.SetCookie(c.Name, c.Value).WithURL(b.Base + "/").WithHTTPOnly(c.HttpOnly).WithSecure(c.Secure)
	if c.Path != "" {
		set = set.WithPath(c.Path)
	}
	if same != "" {
		set = set.WithSameSite(same)
	}
	b.Run("session cookie of "+user, set)
}

// Run runs actions with a 30 s budget; on failure the test stops with the
// page's location and body.
func (b *Browser) Run(what string, actions ...chromedp.Action) {
	b.T.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var loc, html string
		_ = chromedp.Run(b.Ctx, chromedp.Location(&loc), chromedp.OuterHTML("body", &html, chromedp.ByQuery))
		b.T.Fatalf("%s: %v\nat %s\n%s", what, err, loc, html)
	}
}

// Text is the text of the first element matching sel.
func (b *Browser) Text(sel string) string {
	b.T.Helper()
	var s string
	b.Run("text of "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

// Shot saves the page at desktop and phone sizes into the directory
// XR_SCREENSHOTS names (files <test>-<name>.png, <test>-<name>-phone.png),
// to look at; without it, nothing (a screenshot asserts nothing and costs
// two renders).
func (b *Browser) Shot(name string) {
	b.T.Helper()
	if b.Shots == "" {
		return
	}
	if err := os.MkdirAll(b.Shots, 0o755); err != nil {
		b.T.Fatal(err)
	}
	name = strings.NewReplacer("/", "-", " ", "_").Replace(b.T.Name()) + "-" + name
	for _, size := range []struct {
		suffix string
		w, h   int64
	}{{"", 1280, 800}, {"-phone", 390, 844}} {
		var png []byte
		b.Run("screenshot "+name, chromedp.EmulateViewport(size.w, size.h), chromedp.CaptureScreenshot(&png))
		if err := os.WriteFile(filepath.Join(b.Shots, name+size.suffix+".png"), png, 0o644); err != nil {
			b.T.Fatal(err)
		}
	}
	b.Run("restore viewport", chromedp.EmulateViewport(1280, 800))
}

// NoDialog fails the test when a script opened a dialog (an injected
// script ran).
func (b *Browser) NoDialog(where string) {
	b.T.Helper()
	select {
	case m := <-b.dialog:
		b.T.Fatalf("%s: a script ran and opened a dialog %q", where, m)
	default:
	}
}

// TabTo presses Tab from the top of the page until the element sel has
// the focus (it is reachable from the keyboard), failing after 80 presses.
func (b *Browser) TabTo(sel string) {
	b.T.Helper()
	b.Run("blur", chromedp.Evaluate(`document.activeElement && document.activeElement.blur(); window.getSelection().removeAllRanges()`, nil))
	for i := 0; i < 80; i++ {
		var ok bool
		b.Run("focus of "+sel, chromedp.Evaluate(fmt.Sprintf(`!!document.activeElement && document.activeElement.matches(%q)`, sel), &ok))
		if ok {
			return
		}
		b.Run("tab", chromedp.KeyEvent(kb.Tab))
	}
	b.T.Fatalf("%s: not reachable with Tab", sel)
}
