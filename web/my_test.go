package web

import (
	"net/http"
	"strings"
	"testing"
)

// TestMyCookieIsolation: signing in on /my/ sets its own cookie (xr_my,
// path /my/, HttpOnly, SameSite=Lax) that the staff console does not
// accept; a redirect target outside /my/ is refused; a cross-site form
// post is refused before the sign-in runs.
func TestMyCookieIsolation(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	s.user("", map[string]any{"username": "carol", "password": "radius-c", "portal_password": "Portal-pass-3"})
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
