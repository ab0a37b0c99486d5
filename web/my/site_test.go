package my_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"xr/internal/webtest"
	"xr/web"
)

// TestMyCookieIsolation: signing in on /my/ sets its own cookie (xr_my,
// path /my/, HttpOnly, SameSite=Lax) that the staff console does not
// accept; a redirect target outside /my/ is refused; a cross-site form
// post is refused before the sign-in runs.
func TestMyCookieIsolation(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	s.User("", map[string]any{"username": "carol", "password": "radius-c", "portal_password": "Portal-pass-3"})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(body string, hdr ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest("POST", s.TS.URL+"/my/login", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "acme.xr.test"
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := post("username=carol&password=Portal-pass-3&next=https://evil.example/")
	var cookie string
	for _, c := range res.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "xr_my=") {
			cookie = c
		}
	}
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/my/" {
		t.Fatalf("sign-in: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if !strings.Contains(cookie, "Path=/my/") || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Lax") {
		t.Fatalf("cookie %q", cookie)
	}
	// The pages carry the console's strict CSP and framing refusal.
	page, err := noFollow.Do(func() *http.Request {
		r, _ := http.NewRequest("GET", s.TS.URL+"/my/login", nil)
		r.Host = "acme.xr.test"
		return r
	}())
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.Header.Get("Content-Security-Policy") != web.PageCSP || page.Header.Get("X-Frame-Options") != "DENY" || page.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("security headers: %v", page.Header)
	}
	// The staff console does not know this cookie: its home sends to its sign-in.
	req, _ := http.NewRequest("GET", s.TS.URL+"/", nil)
	req.Host = "acme.xr.test"
	req.Header.Set("Cookie", strings.SplitN(cookie, ";", 2)[0])
	staff, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	staff.Body.Close()
	if staff.StatusCode != http.StatusSeeOther || !strings.HasPrefix(staff.Header.Get("Location"), "/login") {
		t.Fatalf("staff console with a subscriber cookie: %d %q", staff.StatusCode, staff.Header.Get("Location"))
	}
	// A cross-site post is refused by the cross-origin protection.
	if x := post("username=carol&password=Portal-pass-3", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"); x.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site sign-in: %d", x.StatusCode)
	}
}

// TestMyHomePageWeight: the home page and every asset it loads weigh at
// most 100 KB as a phone downloads them (gzip).
func TestMyHomePageWeight(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	s.User("", map[string]any{"username": "dave", "password": "radius-d", "portal_password": "Portal-pass-4"})
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(s.TS.URL, "127.0.0.1", "acme.xr.test", 1)
	dial := &net.Dialer{}
	cl := &http.Client{Jar: jar, Transport: &http.Transport{DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, _ := net.SplitHostPort(addr)
			return dial.DialContext(ctx, network, "127.0.0.1:"+port)
		}}}
	res, err := cl.PostForm(base+"/my/login", url.Values{"username": {"dave"}, "password": {"Portal-pass-4"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	get := func(u string) (body []byte, size int) {
		t.Helper()
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		res, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%s: %d %v", u, res.StatusCode, err)
		}
		if res.Header.Get("Content-Encoding") != "gzip" {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(raw)
			zw.Close()
			return raw, buf.Len()
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return plain, len(raw)
	}
	html, total := get(base + "/my/")
	if !bytes.Contains(html, []byte(`id="my-status"`)) {
		t.Fatalf("not the home page: %.300s", html)
	}
	for _, m := range regexp.MustCompile(`(?:href|src)="(/static/[^"]+)"`).FindAllSubmatch(html, -1) {
		_, n := get(base + string(m[1]))
		total += n
	}
	if total > 100<<10 {
		t.Fatalf("home page weighs %d bytes compressed, over 100 KB", total)
	}
	t.Logf("home page with its assets: %d bytes compressed", total)
}
