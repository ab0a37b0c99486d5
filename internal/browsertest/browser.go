// Package browsertest drives a real headless Chromium (Debian's package)
// against a test server, for the browser tests of the console and the
// subscriber pages: sign-in, forms, htmx, accessibility (axe-core) and
// screenshots, as a person sees them.
package browsertest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"xr/internal/webtest"
)

// axeJS is axe-core (internal/browsertest/axe, MPL-2.0), injected into a
// page to check its accessibility.
//
//go:embed axe/axe.min.js
var axeJS string

// Browser is a headless Chromium (Debian's package) on the kit's server.
// Hosts *.xr.test resolve to the test server, so the console runs on the
// tenant's own host as in production.
type Browser struct {
	T      *testing.T
	Ctx    context.Context
	Base   string // http://acme.xr.test:PORT
	Shots  string
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

// Start starts a headless Chromium, the one place that does, and returns
// its context; the browser ends with the test. listen, when set, sees the
// events of its first tab.
func Start(tb testing.TB, listen func(ev any)) context.Context {
	exe := chromiumPath(tb)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromiumOptions(exe)...)
	ctx, cancelC := chromedp.NewContext(actx)
	tb.Cleanup(func() { cancelC(); cancelA() })
	if listen != nil {
		chromedp.ListenTarget(ctx, listen)
	}
	// The browser starts on ctx itself: a run on a child context that
	// started it would close it when cancelled.
	if err := chromedp.Run(ctx); err != nil {
		tb.Fatalf("start chromium: %v", err)
	}
	return ctx
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

// New starts a browser for a test on the kit's server.
func New(t *testing.T, k *webtest.Kit) *Browser {
	b := &Browser{T: t, Base: Base(t, k), dialog: make(chan string, 4)}
	b.Shots = os.Getenv("XR_SCREENSHOTS")
	if b.Shots == "" {
		b.Shots = t.TempDir()
	}
	// A script that runs would open a dialog: record it, and dismiss it.
	b.Ctx = Start(t, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.dialog <- d.Message
			go func() { _ = chromedp.Run(b.Ctx, page.HandleJavaScriptDialog(false)) }()
		}
	})
	return b
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

// Shot saves the page at desktop and phone sizes.
func (b *Browser) Shot(name string) {
	b.T.Helper()
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

// Axe runs axe-core on the current page and fails on serious or critical
// violations. DevTools evaluation is not subject to the page's CSP.
func (b *Browser) Axe(page string) {
	b.T.Helper()
	var out string
	b.Run("axe on "+page, chromedp.Evaluate(axeJS, nil),
		chromedp.Evaluate(`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.html)}))))`,
			&out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	var v []map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		b.T.Fatalf("axe result: %v: %s", err, out)
	}
	if len(v) > 0 {
		b.T.Errorf("accessibility of %s: %s", page, out)
	}
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
