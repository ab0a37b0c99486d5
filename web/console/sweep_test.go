package console_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"xr/app"
	"xr/internal/webtest"
)

// TestConsolePagesRefuseBadInput sends every console page row, signed in as
// the owner, odd path values, odd query strings and junk forms: each answer
// is a refusal, a not-found or a page, never a server error (500).
func TestConsolePagesRefuseBadInput(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{}, unlimited{}, nil)
	// Records with id 1 so the handlers go past the lookup: a plan, a
	// subscriber, a NAS, a webhook endpoint.
	tok := k.Owner("acme")
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/admin/profiles", map[string]any{"name": "Home", "price": 10, "duration_days": 30}},
		{"/api/v1/users", map[string]any{"username": "sweep", "password": "pw", "profile_id": 1}},
		{"/api/v1/admin/nas", map[string]any{"name": "n", "ip": "192.0.2.1", "secret": "sweep-secret-123"}},
	} {
		if r := k.Do("POST", "acme", c.path, tok, c.body); r.Status >= 300 {
			t.Fatalf("%s: %d %s", c.path, r.Status, r.Body)
		}
	}
	statuses := map[int]int{}
	defer func() { t.Logf("statuses: %v", statuses) }()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, k.TS.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "acme.xr.test"
		if body != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		// Jar cookies are keyed by the URL's host (loopback), which is
		// what the server set them for.
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := do("POST", "/login", "email=owner&password="+url.QueryEscape(webtest.Password)); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", res.StatusCode)
	}
	if res := do("GET", "/users", ""); res.StatusCode != http.StatusOK {
		t.Fatalf("signed-in /users: %d", res.StatusCode)
	}
	wild := regexp.MustCompile(`\{[a-z_$]+\}`)
	bodies := []string{"", "amount=abc&note=%ff&request_id=x&page=-1&profile_id=zz&expiration=nope&ids=a,b&lang=xx",
		"amount=99999999999999999999&quantity=-5&face_value=1e99&username=%3Cscript%3E&email=@&vendor=zz&state=%00"}
	for _, rt := range k.Srv.PageRoutes() {
		switch rt.P {
		case "/logout", "/account/password", "/account/sessions/{jti}/revoke":
			continue // they end or change the session the sweep runs in
		}
		for _, val := range []string{"1", "999999", "abc", "-1"} {
			path := strings.ReplaceAll(wild.ReplaceAllString(rt.P, val), "{$}", "")
			for _, q := range []string{"", "?page=-3&q=%ff&status=zz&filter[x]=y&from=bad&to=2020-13-45"} {
				for _, b := range bodies {
					if rt.M == "GET" && b != "" {
						continue
					}
					res := do(rt.M, path+q, b)
					statuses[res.StatusCode]++
					// 502/503 are honest answers of disconnects with no
					// RADIUS service or NAS here; 500 is a server fault.
					if res.StatusCode == http.StatusInternalServerError || res.StatusCode > 503 {
						t.Errorf("%s %s%s body %q: %d", rt.M, path, q, b, res.StatusCode)
					}
				}
			}
		}
	}
}

// unlimited lets every request through (the sweep sends far more than a
// minute's buckets).
type unlimited struct{}

func (unlimited) Allow(string, int) bool { return true }
