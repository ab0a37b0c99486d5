package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"xr/internal/webtest"
)

// BenchmarkIdentityAuthMe measures requests/s of GET /auth/me through the
// real handler (host resolution, tenant acquire, authentication, the grant
// cache, the licence check, the handler and the access log), with a session
// token and with a scoped API token. Target: ≥ 5,000 req/s on 2 cores.
//
//	go test ./web -run '^$' -bench IdentityAuthMe -cpu 2
func BenchmarkIdentityAuthMe(b *testing.B) {
	k := webtest.New(b)
	session := idSession(k, "acme", "owner")
	api, _ := idAPIToken(k, "acme", session, map[string]any{"scopes": []string{"prm_managers_index", "prm_users_index"}})
	for _, c := range []struct{ name, token string }{{"session", session}, {"api_token", api}} {
		b.Run(c.name, func(b *testing.B) {
			// Warm: the first request opens the file and fills the caches.
			rec := httptest.NewRecorder()
			k.Srv.ServeHTTP(rec, idBenchReq(c.token))
			if rec.Code != 200 {
				b.Fatalf("warm-up: %d %s", rec.Code, rec.Body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				req := idBenchReq(c.token)
				for pb.Next() {
					rec := httptest.NewRecorder()
					k.Srv.ServeHTTP(rec, req)
					if rec.Code != 200 {
						b.Errorf("status %d %s", rec.Code, rec.Body)
						return
					}
				}
			})
			b.StopTimer()
			if s := b.Elapsed().Seconds(); s > 0 {
				b.ReportMetric(float64(b.N)/s, "req/s")
			}
		})
	}
}

func idBenchReq(token string) *http.Request {
	req := httptest.NewRequest("GET", "/api/v1/auth/me", nil)
	req.Host = "acme.xr.test"
	req.RemoteAddr = "192.0.2.10:40000"
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}
