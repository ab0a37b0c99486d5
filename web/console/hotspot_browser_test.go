package console_test

// Browser tests of the hotspot pages. Helpers carry the prefix chs.

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"xr/app/hotspot"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// TestConsoleHotspotInBrowser: the owner creates a page set from the
// voucher-first template, writes a login block with a script in it (saved
// sanitized), sees the block's text in the sandboxed preview without any
// script running, and downloads the zip.
func TestConsoleHotspotInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	b := browsertest.New(t, k)
	b.SignIn("owner")
	b.Run("list", chromedp.Navigate(b.Base+"/hotspot"), chromedp.WaitVisible("#hotspot-new", chromedp.ByQuery))
	b.Axe("hotspot list")
	b.Run("create", chromedp.SendKeys("#f-name", "Lobby", chromedp.ByQuery), chromedp.SetValue("#f-template", "voucher-first", chromedp.ByQuery),
		markStale(), chromedp.Click("#hotspot-create", chromedp.ByQuery), chromedp.WaitVisible(freshOK, chromedp.ByQuery), chromedp.WaitVisible("#hotspot-form", chromedp.ByQuery))
	id := ccgScalar(t, k, `SELECT id FROM hotspot_pages WHERE name = 'Lobby' AND template = 'voucher-first'`)

	b.Run("edit block", ccgType("#f-block_login", `<p>Welcome guests</p><script>alert("xss")</script><img src=x onerror=alert(2)>`),
		ccgType("#f-color_primary", "#aa3300"),
		markStale(), chromedp.Click("#hotspot-save", chromedp.ByQuery), chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	var stored string
	if err := k.Acquire("acme").DB.R.QueryRow(`SELECT blocks FROM hotspot_pages WHERE id = ?`, id).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored, "Welcome guests") || strings.Contains(stored, "script") || strings.Contains(stored, "onerror") {
		t.Fatalf("stored block %s", stored)
	}
	if got := b.Text("#f-block_login"); strings.Contains(got, "script") {
		t.Fatalf("the form shows the unsanitized block %q", got)
	}
	var sandbox, src string
	var ok bool
	b.Run("preview frame", chromedp.AttributeValue("#hotspot-preview", "sandbox", &sandbox, &ok, chromedp.ByQuery),
		chromedp.AttributeValue("#hotspot-preview", "src", &src, nil, chromedp.ByQuery))
	if !ok || sandbox != "" || src != fmt.Sprintf("/hotspot/%d/preview?page=login", id) {
		t.Fatalf("preview frame sandbox=%q (%v) src=%q", sandbox, ok, src)
	}
	b.Axe("hotspot edit")
	b.Shot("hotspot-edit")
	// The frame is allowed by the page's CSP: the preview is loaded at its
	// URL (a frame the CSP refused would hold an error page instead), as a
	// frame of the page's tree (the headless shell) or, where Chromium
	// isolates the sandboxed frame in a process of its own, as a frame
	// target of this test's browser context.
	var framed []string
	xrtest.Eventually(t, "the preview frame", func() bool {
		var tree *page.FrameTree
		if err := chromedp.Run(b.Ctx, chromedp.ActionFunc(func(ctx context.Context) (err error) {
			tree, err = page.GetFrameTree().Do(ctx)
			return err
		})); err != nil {
			t.Fatal(err)
		}
		framed = framed[:0]
		for _, child := range tree.ChildFrames {
			framed = append(framed, child.Frame.URL)
		}
		infos, err := chromedp.Targets(b.Ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range infos { // the browser is shared: only this test's context counts
			if in.Type == "iframe" && in.BrowserContextID == b.Context {
				framed = append(framed, in.URL)
			}
		}
		return slices.Contains(framed, b.Base+src)
	})

	// What the frame shows: the block's text, no script run.
	b.Run("preview", chromedp.Navigate(b.Base+src), chromedp.WaitVisible("main.card", chromedp.ByQuery))
	if got := b.Text("main.card"); !strings.Contains(got, "Welcome guests") || !strings.Contains(got, "Card code") {
		t.Fatalf("preview shows %q", got)
	}
	b.NoDialog("preview")
	b.Shot("hotspot-preview")

	// The download answers a zip.
	var res string
	b.Run("download", chromedp.Navigate(b.Base+"/hotspot"), chromedp.WaitVisible(fmt.Sprintf("#download-%d", id), chromedp.ByQuery),
		chromedp.Evaluate(fmt.Sprintf(`fetch("/hotspot/%d/download").then(r => r.arrayBuffer().then(b => r.status + " " + r.headers.get("content-type") + " " + String.fromCharCode(...new Uint8Array(b).slice(0, 2))))`, id),
			&res, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if res != "200 application/zip PK" {
		t.Fatalf("download answered %q", res)
	}
}

// TestHotspotMD5InBrowser: md5.js, loaded by Chromium, hashes a string
// with characters above 0x7F as bytes (Latin-1), as RouterOS's octal
// chap-id and chap-challenge need; and the voucher-first login page of a
// downloaded set posts username = code and password =
// MD5(chap-id + code + chap-challenge) to $(link-login-only).
func TestHotspotMD5InBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	act := k.System("acme")
	p, err := hotspot.CreatePage(webtest.Background, act, hotspot.PageInput{Name: "Lobby", Template: "voucher-first"})
	if err != nil {
		t.Fatal(err)
	}
	arc, err := hotspot.Download(webtest.Background, act, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(arc.Data), int64(len(arc.Data)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(f.Name, "hotspot/")], err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	// A stand-in router: serves the set with chap-id \234 and a binary
	// challenge, and records the login post.
	chapID, challenge := `\234`, `\377\001\200\045\033\376\101\300\012\177\200\201\347\351\000\377`
	vars := map[string]string{"link-login-only": "/do-login", "link-orig": "http://example.com/", "chap-id": chapID, "chap-challenge": challenge}
	var mu sync.Mutex
	posted := url.Values{}
	router := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(hotspot.FillVars(string(files["login.html"]), vars)))
		case "/do-login":
			if err := r.ParseForm(); err == nil {
				mu.Lock()
				posted = r.PostForm
				mu.Unlock()
			}
			w.Write([]byte("<!DOCTYPE html><title>ok</title><p id=done>ok</p>"))
		default:
			body, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			if strings.HasSuffix(r.URL.Path, ".js") {
				w.Header().Set("Content-Type", "text/javascript")
			} else if strings.HasSuffix(r.URL.Path, ".css") {
				w.Header().Set("Content-Type", "text/css")
			}
			w.Write(body)
		}
	}))
	t.Cleanup(router.Close)

	b := browsertest.New(t, k)
	b.Run("login page", chromedp.Navigate(router.URL+"/login"), chromedp.WaitVisible("#code", chromedp.ByQuery))
	b.Axe("hotspot login page")
	// hexMD5 of a string with chars > 0x7F against Go's MD5 of the same bytes.
	raw := []byte{0x5c, 'p', 0xe9, 0xff, 0x80, 0x00, 0x7f, 0xa0}
	var js string
	b.Run("hexMD5", chromedp.Evaluate(`hexMD5("\x5cp\xe9\xff\x80\x00\x7f\xa0")`, &js))
	sum := md5.Sum(raw)
	if js != hex.EncodeToString(sum[:]) {
		t.Fatalf("hexMD5 = %s, Go's MD5 of the bytes = %x", js, sum)
	}
	// The CHAP login.
	b.Run("log in", chromedp.SendKeys("#code", "CARD-7731", chromedp.ByQuery), chromedp.Click(`form[name="login"] button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible("#done", chromedp.ByQuery))
	mu.Lock()
	got := posted
	mu.Unlock()
	octal := func(s string) []byte {
		var out []byte
		for _, p := range strings.Split(s, `\`)[1:] {
			var n int
			fmt.Sscanf(p, "%o", &n)
			out = append(out, byte(n))
		}
		return out
	}
	want := md5.Sum(append(append(octal(chapID), "CARD-7731"...), octal(challenge)...))
	if got.Get("username") != "CARD-7731" || got.Get("password") != hex.EncodeToString(want[:]) || got.Get("dst") != "http://example.com/" {
		t.Fatalf("posted %v, want password %x", got, want)
	}
	b.NoDialog("login")
}
