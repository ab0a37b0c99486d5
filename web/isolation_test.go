package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/webtest"
	"xr/web"
)

// pfNASRoutes mounts a test-only pair of rows that write and read tenant
// data through the actor the middleware resolved from the Host.
func pfNASRoutes(s *web.Server) {
	pfMount(s, web.Route{M: "POST", P: "/_pf/nas", Access: web.Staff, AnyStaff: true, H: func(c *web.Ctx) error {
		var in struct {
			Name string `json:"name"`
			IP   string `json:"ip"`
		}
		if err := c.Decode(&in); err != nil {
			return err
		}
		n, err := aaa.CreateNAS(c.R.Context(), c.Actor, aaa.NASInput{
			Name: app.Opt[string]{Set: true, V: in.Name}, IP: app.Opt[string]{Set: true, V: in.IP},
			Secret: app.Opt[string]{Set: true, V: "a-long-enough-secret-1"}, Type: app.Opt[aaa.NASType]{Set: true, V: "mikrotik"},
			CoAPort: app.Opt[int]{Set: true, V: 3799}})
		if err != nil {
			return err
		}
		return c.Created(map[string]any{"id": n.ID})
	}})
	pfMount(s, web.Route{M: "GET", P: "/_pf/nas", Access: web.Staff, AnyStaff: true, H: func(c *web.Ctx) error {
		list, err := aaa.ListNAS(c.R.Context(), c.Actor)
		if err != nil {
			return err
		}
		names := []string{}
		for _, n := range list {
			names = append(names, fmt.Sprintf("%d:%s", n.ID, n.Name))
		}
		return c.OK(map[string]any{"tenant": c.Actor.Tenant.Slug, "nas": names})
	}})
}

// Two tenants, both with manager id 1: no credential, id or row crosses.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	k := newPfKit(t, "", pfNASRoutes)
	k.Tenant("beta")
	a := k.Owner("acme")
	b := k.Owner("beta")

	meA := k.Do("GET", "acme", "/api/v1/auth/me", a, nil)
	meB := k.Do("GET", "beta", "/api/v1/auth/me", b, nil)
	mA, _ := meA.Data()["manager"].(map[string]any)
	mB, _ := meB.Data()["manager"].(map[string]any)
	if mA["id"] != float64(1) || mB["id"] != float64(1) {
		t.Fatalf("both owners should be manager 1: %v %v", mA, mB)
	}
	if mA["email"] != "owner@acme.test" || mB["email"] != "owner@beta.test" || mA["tenant_id"] == mB["tenant_id"] {
		t.Fatalf("me: %v / %v", mA, mB)
	}

	// A's token on B's host (same manager id, valid signature): 401.
	pfExpect(t, k.Do("GET", "beta", "/api/v1/auth/me", a, nil), 401, app.CodeUnauthorized, "invalid_token")
	pfExpect(t, k.Do("GET", "acme", "/api/v1/auth/me", b, nil), 401, app.CodeUnauthorized, "invalid_token")
	pfExpect(t, k.Do("POST", "beta", "/api/v1/_pf/nas", a, map[string]any{"name": "x", "ip": "10.9.9.9"}), 401, app.CodeUnauthorized, "invalid_token")

	// Data written in A is invisible in B, under the same ids.
	if r := k.Do("POST", "acme", "/api/v1/_pf/nas", a, map[string]any{"name": "acme-core", "ip": "10.1.0.1"}); r.Status != 201 || r.Data()["id"] != float64(1) {
		t.Fatalf("create in A: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "acme", "/api/v1/_pf/nas", a, nil); fmt.Sprint(r.Data()["nas"]) != "[1:acme-core]" || r.Data()["tenant"] != "acme" {
		t.Fatalf("A lists: %s", r.Body)
	}
	if r := k.Do("GET", "beta", "/api/v1/_pf/nas", b, nil); fmt.Sprint(r.Data()["nas"]) != "[]" || r.Data()["tenant"] != "beta" {
		t.Fatalf("B sees A's data: %s", r.Body)
	}
	if r := k.Do("POST", "beta", "/api/v1/_pf/nas", b, map[string]any{"name": "beta-core", "ip": "10.2.0.1"}); r.Status != 201 || r.Data()["id"] != float64(1) {
		t.Fatalf("create in B: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "acme", "/api/v1/_pf/nas", a, nil); fmt.Sprint(r.Data()["nas"]) != "[1:acme-core]" {
		t.Fatalf("A sees B's data: %s", r.Body)
	}
	// The NAS IP index is instance-wide: B cannot take A's address.
	r := k.Do("POST", "beta", "/api/v1/_pf/nas", b, map[string]any{"name": "dup", "ip": "10.1.0.1"})
	if r.Status != 409 {
		t.Fatalf("duplicate NAS IP across tenants: %d %s", r.Status, r.Body)
	}
	pfErrorShape(t, r)

	// Each tenant is its own file: no SQL on A's file reaches B's rows.
	ta, tb := k.Acquire("acme"), k.Acquire("beta")
	if ta.DB == tb.DB || ta.DB.Path == tb.DB.Path {
		t.Fatal("two tenants share a database")
	}
	var n int
	ta.DB.R.QueryRow(`SELECT COUNT(*) FROM nas WHERE name LIKE 'beta%'`).Scan(&n)
	if n != 0 {
		t.Fatal("B's row in A's file")
	}

	// Login is per host: A's owner password on B's host signs into B, as
	// B's owner (tenant_slug in the body is ignored on a tenant host).
	lr := k.Do("POST", "beta", "/api/v1/auth/login", "", map[string]any{"email": "owner", "password": webtest.Password, "tenant_slug": "acme"})
	if lr.Status != 200 || lr.Data()["tenant_slug"] != "beta" {
		t.Fatalf("tenant_slug honoured on a tenant host: %s", lr.Body)
	}
}

// The apex, an unknown subdomain, a nested name or another domain resolve
// no tenant: every credential fails there like a bad one.
func TestHostsWithoutTenant(t *testing.T) {
	t.Parallel()
	k := newPfKit(t, "", nil)
	tok := k.Owner("acme")
	for _, host := range []string{"xr.test", "XR.TEST:8443", "nope.xr.test", "a.acme.xr.test", "acme.other.test", "127.0.0.1", "[::1]:80", "localhost"} {
		r := pfDoHost(k, "GET", host, "/api/v1/auth/me", tok, nil)
		pfExpect(t, r, 401, app.CodeUnauthorized, "invalid_token")
		pfExpect(t, pfDoHost(k, "GET", host, "/api/v1/auth/me", "xrt_"+strings.Repeat("A", 43), nil), 401, app.CodeUnauthorized, "api_token_invalid")
		pfExpect(t, pfDoHost(k, "GET", host, "/api/v1/auth/me", "", nil), 401, app.CodeUnauthorized, "missing_bearer_token")
	}
	// The tenant's own host, in any case and with a port, resolves it.
	for _, host := range []string{"acme.xr.test", "ACME.Xr.Test:8080", "acme.xr.test."} {
		if r := pfDoHost(k, "GET", host, "/api/v1/auth/me", tok, nil); r.Status != 200 {
			t.Fatalf("%s: %d %s", host, r.Status, r.Body)
		}
	}
	// Login on the apex needs tenant_slug; with it, it signs into that tenant.
	r := pfDoHost(k, "POST", "xr.test", "/api/v1/auth/login", "", map[string]any{"email": "owner", "password": webtest.Password})
	pfExpect(t, r, 401, app.CodeUnauthorized, "invalid_credentials")
	r = pfDoHost(k, "POST", "nope.xr.test", "/api/v1/auth/login", "", map[string]any{"email": "owner", "password": webtest.Password, "tenant_slug": "ghost"})
	pfExpect(t, r, 401, app.CodeUnauthorized, "invalid_credentials")
	r = pfDoHost(k, "POST", "xr.test", "/api/v1/auth/login", "", map[string]any{"email": "owner", "password": webtest.Password, "tenant_slug": "acme"})
	if r.Status != 200 || r.Data()["tenant_slug"] != "acme" {
		t.Fatalf("apex login with tenant_slug: %d %s", r.Status, r.Body)
	}
	// That token is still bound to acme's host.
	apexTok, _ := r.Data()["token"].(string)
	pfExpect(t, pfDoHost(k, "GET", "xr.test", "/api/v1/auth/me", apexTok, nil), 401, app.CodeUnauthorized, "invalid_token")
	if r := k.Do("GET", "acme", "/api/v1/auth/me", apexTok, nil); r.Status != 200 {
		t.Fatalf("apex-issued token on its tenant: %d", r.Status)
	}

	// /auth/context always answers 200 and says what the host is.
	for host, kind := range map[string]string{"acme.xr.test": "tenant", "xr.test": "apex", "nope.xr.test": "unknown", "10.0.0.1": "unknown"} {
		r := pfDoHost(k, "GET", host, "/api/v1/auth/context", "", nil)
		if r.Status != 200 || r.Data()["host_kind"] != kind {
			t.Fatalf("context of %s: %d %s", host, r.Status, r.Body)
		}
		if (kind == "tenant") != (r.Data()["tenant"] != nil) {
			t.Fatalf("context of %s: tenant %v", host, r.Data()["tenant"])
		}
	}
}

// --default-tenant: every host that names no tenant (an IP, the apex, a
// bare name) is that tenant; a host naming a tenant is never redirected.
func TestDefaultTenantForIPHosts(t *testing.T) {
	t.Parallel()
	k := newPfKit(t, "acme", nil)
	k.Tenant("beta")
	acme := k.Owner("acme")
	beta := k.Owner("beta")
	for _, host := range []string{"127.0.0.1", "192.0.2.10:8080", "[::1]:8080", "xr.test", "router"} {
		r := pfDoHost(k, "GET", host, "/api/v1/auth/me", acme, nil)
		if r.Status != 200 {
			t.Fatalf("%s with the default tenant's token: %d %s", host, r.Status, r.Body)
		}
		pfExpect(t, pfDoHost(k, "GET", host, "/api/v1/auth/me", beta, nil), 401, app.CodeUnauthorized, "invalid_token")
	}
	// Named hosts keep their meaning.
	if r := k.Do("GET", "beta", "/api/v1/auth/me", beta, nil); r.Status != 200 {
		t.Fatalf("beta host: %d", r.Status)
	}
	pfExpect(t, k.Do("GET", "beta", "/api/v1/auth/me", acme, nil), 401, app.CodeUnauthorized, "invalid_token")
	pfExpect(t, k.Do("GET", "ghost", "/api/v1/auth/me", acme, nil), 401, app.CodeUnauthorized, "invalid_token")
	// Login by IP lands in the default tenant.
	r := pfDoHost(k, "POST", "127.0.0.1:8080", "/api/v1/auth/login", "", map[string]any{"email": "owner", "password": webtest.Password})
	if r.Status != 200 || r.Data()["tenant_slug"] != "acme" {
		t.Fatalf("login by IP: %d %s", r.Status, r.Body)
	}
	if r := pfDoHost(k, "GET", "10.0.0.1", "/api/v1/auth/context", "", nil); r.Data()["host_kind"] != "tenant" {
		t.Fatalf("context by IP: %s", r.Body)
	}
	// A default tenant that no longer exists sends nothing anywhere.
	if err := k.App.DeleteTenant(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	pfExpect(t, pfDoHost(k, "GET", "127.0.0.1", "/api/v1/auth/me", acme, nil), 401, app.CodeUnauthorized, "invalid_token")
}

// A deleted tenant's host stops resolving at once, even with a token that
// was valid a moment ago.
func TestDeletedTenantHost(t *testing.T) {
	t.Parallel()
	k := newPfKit(t, "", nil)
	k.Tenant("gone")
	tok := k.Owner("gone")
	if r := k.Do("GET", "gone", "/api/v1/auth/me", tok, nil); r.Status != 200 {
		t.Fatal(r.Status)
	}
	if err := k.App.DeleteTenant(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	pfExpect(t, k.Do("GET", "gone", "/api/v1/auth/me", tok, nil), 401, app.CodeUnauthorized, "invalid_token")
	// A new tenant with the same slug does not accept the old token.
	k.Tenant("gone")
	pfExpect(t, k.Do("GET", "gone", "/api/v1/auth/me", tok, nil), 401, app.CodeUnauthorized, "invalid_token")
}
