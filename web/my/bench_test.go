package my_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"xr/internal/webtest"
)

// BenchmarkMyPages is a subscriber's pages under /my/ through the whole
// handler (host, cookie session, portal credential, the app calls, the
// template), server time only, in a tenant of 100,000 subscribers. The
// bar: p50 ≤ 20 ms.
//
//	XR_BENCH_DIR=/tmp/xr-console-bench go test ./web -run '^$' -bench MyPages -benchtime 300x
func BenchmarkMyPages(b *testing.B) {
	k := webtest.BenchKit(b)
	owner := k.Owner("acme")
	name := "mybench" + time.Now().Format("150405.000000")
	name = strings.ReplaceAll(name, ".", "")
	if r := k.Do("POST", "acme", "/api/v1/users", owner, map[string]any{"username": name, "password": "radius-b", "portal_password": "Portal-bench-1",
		"expiration": "2030-01-02"}); r.Status != 201 {
		b.Fatalf("user: %d %s", r.Status, r.Body)
	}
	form := url.Values{"username": {name}, "password": {"Portal-bench-1"}}
	req := httptest.NewRequest("POST", "/my/login", strings.NewReader(form.Encode()))
	req.Host = "acme.xr.test"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	k.Srv.ServeHTTP(w, req)
	var cookie *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == "xr_my" && c.Value != "" {
			cookie = c
		}
	}
	if w.Code != http.StatusSeeOther || cookie == nil {
		b.Fatalf("sign-in: %d %s", w.Code, w.Body)
	}
	for _, c := range []struct{ name, path, want string }{
		{"home", "/my/", `id="my-status"`},
		{"usage", "/my/usage", `id="my-used"`},
		{"money", "/my/money", `id="my-ledger"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			get := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest("GET", c.path, nil)
				req.Host = "acme.xr.test"
				req.AddCookie(cookie)
				w := httptest.NewRecorder()
				k.Srv.ServeHTTP(w, req)
				return w
			}
			if w := get(); w.Code != 200 || !strings.Contains(w.Body.String(), c.want) {
				b.Fatalf("GET %s: %d %.500s", c.path, w.Code, w.Body)
			}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if w := get(); w.Code != 200 {
					b.Fatalf("GET %s: %d", c.path, w.Code)
				}
				durs = append(durs, time.Since(t0))
			}
			b.StopTimer()
			webtest.ReportPercentiles(b, durs, "ms")
		})
	}
}
