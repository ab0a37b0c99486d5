package web_test

import (
	"context"
	"strings"
	"testing"

	"xr/app"
	"xr/app/identity"
	"xr/internal/webtest"
	"xr/web"
)

func pfRateLimited(t testing.TB, r webtest.Resp) {
	t.Helper()
	pfExpect(t, r, 429, app.CodeRateLimited, "rate_limited")
	for h := range r.Header {
		l := strings.ToLower(h)
		if l == "retry-after" || strings.Contains(l, "ratelimit") || strings.Contains(l, "rate-limit") {
			t.Fatalf("429 carries %s", h)
		}
	}
}

// A small-tier tenant's t_mutate bucket is 75 a minute (300 × 25 %): the
// 76th mutation is 429, GETs cost nothing, a heavy write counts in both
// t_mutate and t_heavy (8 on small), and another tenant is untouched.
func TestTenantBucketsScaledByTier(t *testing.T) {
	t.Parallel()
	k := newPfKitOneWindow(t, func(s *web.Server) {
		pfMount(s, web.Route{M: "POST", P: "/_pf/mutate", Access: web.Staff, AnyStaff: true, H: pfOK})
		pfMount(s, web.Route{M: "DELETE", P: "/_pf/mutate", Access: web.Staff, AnyStaff: true, H: pfOK})
		pfMount(s, web.Route{M: "POST", P: "/_pf/heavy", Access: web.Staff, AnyStaff: true, Buckets: []string{app.BucketHeavy}, H: pfOK})
		pfMount(s, web.Route{M: "GET", P: "/_pf/read", Access: web.Staff, AnyStaff: true, H: pfOK})
	})
	k.Tenant("big")
	ctx := context.Background()
	small := int64(100) // ≤ 100 licensed subscribers: tier small
	if _, err := k.App.UpdateTenant(ctx, "acme", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, V: small}}); err != nil {
		t.Fatal(err)
	}
	if ti, _ := k.App.TenantBySlug("acme"); ti.Tier() != "small" {
		t.Fatalf("tier %s", ti.Tier())
	}
	tok := k.Owner("acme")
	big := k.Owner("big") // uncapped: tier xl, 600 a minute

	for i := 1; i <= 8; i++ {
		if r := k.Do("POST", "acme", "/api/v1/_pf/heavy", tok, nil); r.Status != 200 {
			t.Fatalf("heavy write %d: %d %s", i, r.Status, r.Body)
		}
	}
	pfRateLimited(t, k.Do("POST", "acme", "/api/v1/_pf/heavy", tok, nil)) // the 9th heavy write
	// 8 heavy writes (and the refused 9th) were counted in t_mutate too.
	used := 9
	for i := used + 1; i <= 75; i++ {
		m := "POST"
		if i%2 == 0 {
			m = "DELETE"
		}
		if r := k.Do(m, "acme", "/api/v1/_pf/mutate", tok, nil); r.Status != 200 {
			t.Fatalf("mutation %d of 75: %d %s", i, r.Status, r.Body)
		}
		// GETs in between cost nothing.
		if r := k.Do("GET", "acme", "/api/v1/_pf/read", tok, nil); r.Status != 200 {
			t.Fatalf("GET after mutation %d: %d", i, r.Status)
		}
	}
	pfRateLimited(t, k.Do("POST", "acme", "/api/v1/_pf/mutate", tok, nil))
	pfRateLimited(t, k.Do("DELETE", "acme", "/api/v1/_pf/mutate", tok, nil))
	// Reads go on after the budget is spent.
	for i := 0; i < 100; i++ {
		if r := k.Do("GET", "acme", "/api/v1/_pf/read", tok, nil); r.Status != 200 {
			t.Fatalf("GET %d after the mutate budget: %d", i, r.Status)
		}
	}
	if r := k.Do("GET", "acme", "/api/v1/auth/me", tok, nil); r.Status != 200 {
		t.Fatalf("/auth/me: %d", r.Status)
	}
	// The bucket is per tenant, not per manager: a second session of the
	// same tenant is refused too.
	pfRateLimited(t, k.Do("POST", "acme", "/api/v1/_pf/mutate", k.Owner("acme"), nil))
	// Another tenant has its own, bigger bucket.
	for i := 0; i < 100; i++ {
		if r := k.Do("POST", "big", "/api/v1/_pf/mutate", big, nil); r.Status != 200 {
			t.Fatalf("tenant big, mutation %d: %d %s", i, r.Status, r.Body)
		}
	}
}

// A pinned tier wins over the derived one and applies at once.
func TestTierChangeAppliesToBuckets(t *testing.T) {
	t.Parallel()
	k := newPfKitOneWindow(t, func(s *web.Server) {
		pfMount(s, web.Route{M: "POST", P: "/_pf/egress", Access: web.Staff, AnyStaff: true, Buckets: []string{app.BucketEgress}, H: pfOK})
	})
	tok := k.Owner("acme")
	tier := "max"
	if _, err := k.App.UpdateTenant(context.Background(), "acme", app.TenantUpdate{Tier: &tier, MaxUsers: app.Opt[int64]{Set: true, V: 10}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ { // t_egress: 5 × 400 %
		if r := k.Do("POST", "acme", "/api/v1/_pf/egress", tok, nil); r.Status != 200 {
			t.Fatalf("egress %d of 20: %d %s", i, r.Status, r.Body)
		}
	}
	pfRateLimited(t, k.Do("POST", "acme", "/api/v1/_pf/egress", tok, nil))
}

// Per-operator buckets are keyed on the manager and flat (not scaled by
// the tenant's tier): user_list is 240 a minute for each manager.
func TestOperatorBucketPerManager(t *testing.T) {
	t.Parallel()
	k := newPfKitOneWindow(t, func(s *web.Server) {
		pfStub(t, s, "GET", "/users", pfOK)
	})
	ctx := context.Background()
	if _, err := k.App.UpdateTenant(ctx, "acme", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, V: 50}}); err != nil {
		t.Fatal(err)
	}
	tt := k.Acquire("acme")
	var support int64
	tt.DB.R.QueryRow(`SELECT id FROM roles WHERE name = 'support'`).Scan(&support)
	if _, err := identity.CreateManager(ctx, k.System("acme"), identity.ManagerInput{
		Username: app.Opt[string]{Set: true, V: "second"}, Password: app.Opt[string]{Set: true, V: webtest.Password},
		RoleIDs: app.Opt[[]int64]{Set: true, V: []int64{support}}}); err != nil {
		t.Fatal(err)
	}
	owner := k.Owner("acme")
	second := k.Login("acme", "second", webtest.Password)

	for i := 1; i <= 240; i++ {
		if r := k.Do("GET", "acme", "/api/v1/users", owner, nil); r.Status != 200 {
			t.Fatalf("owner list %d of 240: %d %s", i, r.Status, r.Body)
		}
	}
	pfRateLimited(t, k.Do("GET", "acme", "/api/v1/users", owner, nil))
	// Another session of the same manager shares the bucket.
	pfRateLimited(t, k.Do("GET", "acme", "/api/v1/users", k.Owner("acme"), nil))
	// Another manager has a full bucket of its own.
	for i := 1; i <= 240; i++ {
		if r := k.Do("GET", "acme", "/api/v1/users", second, nil); r.Status != 200 {
			t.Fatalf("second manager list %d: %d %s", i, r.Status, r.Body)
		}
	}
	pfRateLimited(t, k.Do("GET", "acme", "/api/v1/users", second, nil))
	// Other routes are not touched by user_list.
	if r := k.Do("GET", "acme", "/api/v1/auth/me", owner, nil); r.Status != 200 {
		t.Fatalf("/auth/me: %d", r.Status)
	}
}

// The public login bucket: 20 a minute per source IP, whatever the tenant
// or the outcome; another IP has its own.
func TestLoginBucketPerIP(t *testing.T) {
	t.Parallel()
	k := newPfKitOneWindow(t, nil)
	k.Tenant("beta")
	for i := 1; i <= 20; i++ {
		slug := "acme"
		if i%2 == 0 {
			slug = "beta"
		}
		// A refused login (no password: 400 before any hashing) still counts.
		if r := k.Do("POST", slug, "/api/v1/auth/login", "", map[string]any{"email": "owner"}); r.Status != 400 {
			t.Fatalf("login %d: %d %s", i, r.Status, r.Body)
		}
	}
	pfRateLimited(t, k.Do("POST", "acme", "/api/v1/auth/login", "", map[string]any{"email": "owner", "password": webtest.Password}))
	pfRateLimited(t, k.Do("POST", "", "/api/v1/auth/login", "", map[string]any{"email": "owner", "password": webtest.Password, "tenant_slug": "acme"}))
	// Another source address is a different bucket.
	body := `{"email":"owner","password":"` + webtest.Password + `"}`
	if r := pfServe(k, "POST", "acme", "/api/v1/auth/login", "192.0.2.7:40000", body); r.Status != 200 {
		t.Fatalf("login from another IP: %d %s", r.Status, r.Body)
	}
	// The refresh bucket is separate from login.
	if r := k.Do("POST", "acme", "/api/v1/auth/refresh", "", map[string]any{"refresh_token": "1.nope"}); r.Status == 429 {
		t.Fatal("refresh shares the login bucket")
	}
}

// A public row without a named bucket gets its own per-IP bucket of 20.
func TestPublicDefaultBucket(t *testing.T) {
	t.Parallel()
	k := newPfKitOneWindow(t, func(s *web.Server) {
		pfMount(s, web.Route{M: "GET", P: "/_pf/public-a", Access: web.Public, H: pfOK})
		pfMount(s, web.Route{M: "GET", P: "/_pf/public-b", Access: web.Public, H: pfOK})
	})
	for i := 1; i <= 20; i++ {
		if r := k.Do("GET", "acme", "/api/v1/_pf/public-a", "", nil); r.Status != 200 {
			t.Fatalf("public %d: %d", i, r.Status)
		}
	}
	pfRateLimited(t, k.Do("GET", "acme", "/api/v1/_pf/public-a", "", nil))
	if r := k.Do("GET", "acme", "/api/v1/_pf/public-b", "", nil); r.Status != 200 {
		t.Fatalf("another public row shares the bucket: %d", r.Status)
	}
	if r := pfServe(k, "GET", "acme", "/api/v1/_pf/public-a", "198.51.100.1:1234", ""); r.Status != 200 {
		t.Fatalf("another IP: %d", r.Status)
	}
}
