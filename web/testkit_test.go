package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"xr/app"
	"xr/app/modules"
	"xr/internal/xrtest"
)

// kit is one instance behind a real HTTP server on loopback.
type kit struct {
	t   testing.TB
	App *app.App
	Srv *Server
	TS  *httptest.Server
}

const testPassword = xrtest.Password

// newKit opens an instance in a temp dir with tenant "acme" (owner "owner").
func newKit(t testing.TB) *kit {
	t.Helper()
	return newKitWith(t, app.Config{}, nil, nil)
}

// newKitWith is newKit with cfg (xrtest.Open fills DataDir, Domain and
// Logger), a limiter (nil = a fresh in-process one, so buckets never leak
// between tests) and a hook that may change the server before it starts
// serving, so no request races with either.
func newKitWith(t testing.TB, cfg app.Config, lim app.Limiter, setup func(*Server)) *kit {
	t.Helper()
	a := xrtest.Open(t, cfg, modules.All()...)
	t.Cleanup(a.Close)
	if lim == nil {
		lim = app.NewMemLimiter()
	}
	a.Limiter = lim
	k := &kit{t: t, App: a, Srv: New(a)}
	if setup != nil {
		setup(k.Srv)
	}
	k.TS = httptest.NewServer(k.Srv)
	t.Cleanup(k.TS.Close)
	k.Tenant("acme")
	return k
}

// Tenant creates a tenant whose owner is "owner" / testPassword.
func (k *kit) Tenant(slug string) *app.TenantInfo {
	k.t.Helper()
	return xrtest.Tenant(k.t, k.App, slug)
}

// Acquire opens a tenant for direct app calls in a test.
func (k *kit) Acquire(slug string) *app.Tenant { k.t.Helper(); return xrtest.Acquire(k.t, k.App, slug) }

// System is the tenant's system actor (owner, every code).
func (k *kit) System(slug string) *app.Actor {
	k.t.Helper()
	return xrtest.System(k.t, k.Acquire(slug))
}

// Login signs in on a tenant host and returns the session token.
func (k *kit) Login(slug, user, password string) string {
	k.t.Helper()
	r := k.Do("POST", slug, "/api/v1/auth/login", "", map[string]any{"email": user, "password": password})
	if r.Status != 200 {
		k.t.Fatalf("login %s@%s: %d %s", user, slug, r.Status, r.Body)
	}
	return r.Data()["token"].(string)
}

// Owner logs the owner of slug in.
func (k *kit) Owner(slug string) string { return k.Login(slug, "owner", testPassword) }

// resp is a decoded response.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

// Data is the "data" object.
func (r resp) Data() map[string]any { m, _ := r.JSON["data"].(map[string]any); return m }

// List is the "data" array.
func (r resp) List() []any { l, _ := r.JSON["data"].([]any); return l }

// Meta is the "meta" object.
func (r resp) Meta() map[string]any { m, _ := r.JSON["meta"].(map[string]any); return m }

// Code is error.code.
func (r resp) Code() string {
	e, _ := r.JSON["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// Reason is error.details.reason.
func (r resp) Reason() string {
	e, _ := r.JSON["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	s, _ := d["reason"].(string)
	return s
}

// Field is error.details.field.
func (r resp) Field() string {
	e, _ := r.JSON["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	s, _ := d["field"].(string)
	return s
}

// Do sends a request to host <slug>.xr.test ("" = apex) with an optional
// bearer token and JSON body (a string or []byte is sent as is).
func (k *kit) Do(method, slug, path, token string, body any, headers ...string) resp {
	k.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, k.TS.URL+path, rd)
	req.Host = "xr.test"
	if slug != "" {
		req.Host = slug + ".xr.test"
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		k.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	k.checkContract(req, res.StatusCode, res.Header, b) // web/contract_test.go
	out := resp{Status: res.StatusCode, Header: res.Header, Body: b}
	json.Unmarshal(b, &out.JSON)
	return out
}

// expectErr asserts an error response's status, code and reason.
func expectErr(t testing.TB, r resp, status int, code, reason string) {
	t.Helper()
	if r.Status != status || r.Code() != code || r.Reason() != reason {
		t.Fatalf("want %d %s/%s, got %d %s", status, code, reason, r.Status, r.Body)
	}
}

// runJobsBackground runs the app's job runner until the test ends; the
// context it returns ends with it.
func runJobsBackground(t testing.TB, a *app.App) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Jobs.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ctx
}
