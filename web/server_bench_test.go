package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"xr/app"
	"xr/app/identity"
	"xr/app/modules"
	"xr/internal/webtest"
)

// BenchmarkAuthMe is GET /api/v1/auth/me with a session token through the
// whole handler (host, credential, licence, buckets, handler, envelope).
func BenchmarkAuthMe(b *testing.B) {
	k := webtest.New(b)
	tok := k.Owner("acme")
	req := httptest.NewRequest("GET", "/api/v1/auth/me", nil)
	req.Host = "acme.xr.test"
	req.Header.Set("Authorization", "Bearer "+tok)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		k.Srv.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkAuthMeParallel is the same from GOMAXPROCS goroutines.
func BenchmarkAuthMeParallel(b *testing.B) {
	k := webtest.New(b)
	tok := k.Owner("acme")
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		req := httptest.NewRequest("GET", "/api/v1/auth/me", nil)
		req.Host = "acme.xr.test"
		req.Header.Set("Authorization", "Bearer "+tok)
		for pb.Next() {
			w := httptest.NewRecorder()
			k.Srv.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Errorf("%d %s", w.Code, w.Body)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkColdStart20Tenants measures what `xr serve` does before it can
// answer with 20 tenants on disk: app.Open (registry, keys) and web.New
// (route table, mux), plus a first authenticated request on one tenant.
func BenchmarkColdStart20Tenants(b *testing.B) {
	dir := b.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	setup, err := modules.Open(app.Config{DataDir: dir, Domain: "xr.test", Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		slug := fmt.Sprintf("t%02d", i)
		if _, _, err := setup.CreateTenant(context.Background(), app.NewTenant{Slug: slug, Name: slug, AdminUsername: "owner",
			AdminEmail: "owner@" + slug + ".test", AdminPassword: webtest.Password}); err != nil {
			b.Fatal(err)
		}
	}
	tt, release, _ := setup.Acquire("t07")
	res, err := identity.Login(context.Background(), setup, tt, identity.LoginRequest{Email: "owner", Password: webtest.Password})
	release()
	setup.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var open, first time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		a, err := modules.Open(app.Config{DataDir: dir, Domain: "xr.test", Logger: log})
		if err != nil {
			b.Fatal(err)
		}
		s := webtest.Server(a)
		t1 := time.Now()
		req := httptest.NewRequest("GET", "/api/v1/auth/me", nil)
		req.Host = "t07.xr.test"
		req.Header.Set("Authorization", "Bearer "+res.Token)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		t2 := time.Now()
		if w.Code != 200 || len(a.TenantSlugs()) != 20 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
		open += t1.Sub(t0)
		first += t2.Sub(t1)
		b.StopTimer()
		a.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(open.Microseconds())/float64(b.N)/1000, "ms/open+new")
	b.ReportMetric(float64(first.Microseconds())/float64(b.N)/1000, "ms/first-request")
}
