// Package webtest is the kit of the web tests (the API, the console and
// the subscriber pages): one instance with tenant "acme" behind a real
// HTTP server on loopback, a client that speaks to its hosts, and the
// contract check every answer goes through (contract.go). Only tests
// import it.
package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"xr/app"
	"xr/app/modules"
	"xr/internal/xrtest"
	"xr/web"
	"xr/web/console"
	"xr/web/my"
)

// Kit is one instance behind a real HTTP server on loopback.
type Kit struct {
	T   testing.TB
	App *app.App
	Srv *web.Server
	TS  *httptest.Server
}

// Password is the password of every account the kit creates.
const Password = xrtest.Password

// New opens an instance in a temp dir with tenant "acme" (owner "owner").
func New(t testing.TB) *Kit {
	t.Helper()
	return NewWith(t, app.Config{}, nil, nil)
}

// NewWith is New with cfg (xrtest.Open fills DataDir, Domain and
// Logger), a limiter (nil = a fresh in-process one, so buckets never leak
// between tests) and a hook that may change the server before it starts
// serving, so no request races with either.
func NewWith(t testing.TB, cfg app.Config, lim app.Limiter, setup func(*web.Server)) *Kit {
	t.Helper()
	// The one place a web test's instance and tenant are built: a copy of
	// the test binary's seeded instance (xrtest.Seeded).
	a := xrtest.Seeded(t, cfg, "acme", modules.All()...)
	t.Cleanup(a.Close)
	if lim == nil {
		lim = app.NewMemLimiter()
	}
	a.Limiter = lim
	return serve(t, a, setup)
}

// Server is the server xr serve runs (cli/serve.go): the API, the staff
// console and the subscriber pages.
func Server(a *app.App) *web.Server { return web.New(a, console.Pages, my.Pages) }

// serve puts the instance's server on loopback, after setup (when set)
// has changed it.
func serve(t testing.TB, a *app.App, setup func(*web.Server)) *Kit {
	k := &Kit{T: t, App: a, Srv: Server(a)}
	if setup != nil {
		setup(k.Srv)
	}
	k.TS = httptest.NewServer(k.Srv)
	t.Cleanup(k.TS.Close)
	return k
}

// Tenant creates a tenant whose owner is "owner" / Password.
func (k *Kit) Tenant(slug string) *app.TenantInfo {
	k.T.Helper()
	return xrtest.Tenant(k.T, k.App, slug)
}

// Acquire opens a tenant for direct app calls in a test.
func (k *Kit) Acquire(slug string) *app.Tenant { k.T.Helper(); return xrtest.Acquire(k.T, k.App, slug) }

// System is the tenant's system actor (owner, every code).
func (k *Kit) System(slug string) *app.Actor {
	k.T.Helper()
	return xrtest.System(k.T, k.Acquire(slug))
}

// Login signs in on a tenant host and returns the session token.
func (k *Kit) Login(slug, user, password string) string {
	k.T.Helper()
	r := k.Do("POST", slug, "/api/v1/auth/login", "", map[string]any{"email": user, "password": password})
	if r.Status != 200 {
		k.T.Fatalf("login %s@%s: %d %s", user, slug, r.Status, r.Body)
	}
	return r.Data()["token"].(string)
}

// ConsoleCookie signs in to the console of slug over plain HTTP and
// returns the session's Cookie header, for page requests without a browser.
func (k *Kit) ConsoleCookie(slug, user, password string) string {
	k.T.Helper()
	c := k.ConsoleSession(slug, user, password)
	return c.Name + "=" + c.Value
}

// ConsoleSession signs in to the console of slug over plain HTTP, posting
// what the sign-in form posts, and returns the session's cookie.
func (k *Kit) ConsoleSession(slug, user, password string) *http.Cookie {
	k.T.Helper()
	req, _ := http.NewRequest("POST", k.TS.URL+"/login", strings.NewReader(url.Values{"email": {user}, "password": {password}}.Encode()))
	req.Host = slug + ".xr.test"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		k.T.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) == 0 {
		k.T.Fatalf("console sign-in as %s@%s: %d", user, slug, res.StatusCode)
	}
	return res.Cookies()[0]
}

// Owner logs the owner of slug in.
func (k *Kit) Owner(slug string) string { return k.Login(slug, "owner", Password) }

// Resp is a decoded response.
type Resp struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

// Data is the "data" object.
func (r Resp) Data() map[string]any { m, _ := r.JSON["data"].(map[string]any); return m }

// List is the "data" array.
func (r Resp) List() []any { l, _ := r.JSON["data"].([]any); return l }

// Meta is the "meta" object.
func (r Resp) Meta() map[string]any { m, _ := r.JSON["meta"].(map[string]any); return m }

// Code is error.code.
func (r Resp) Code() string {
	e, _ := r.JSON["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// Reason is error.details.reason.
func (r Resp) Reason() string {
	e, _ := r.JSON["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	s, _ := d["reason"].(string)
	return s
}

// Field is error.details.field.
func (r Resp) Field() string {
	e, _ := r.JSON["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	s, _ := d["field"].(string)
	return s
}

// Do sends a request to host <slug>.xr.test ("" = apex) with an optional
// bearer token and JSON body (a string or []byte is sent as is).
func (k *Kit) Do(method, slug, path, token string, body any, headers ...string) Resp {
	k.T.Helper()
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
		k.T.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	k.CheckContract(req, res.StatusCode, res.Header, b) // contract.go
	out := Resp{Status: res.StatusCode, Header: res.Header, Body: b}
	_ = json.Unmarshal(b, &out.JSON) // not every answer is JSON
	return out
}

// ExpectErr asserts an error response's status, code and reason.
func ExpectErr(t testing.TB, r Resp, status int, code, reason string) {
	t.Helper()
	if r.Status != status || r.Code() != code || r.Reason() != reason {
		t.Fatalf("want %d %s/%s, got %d %s", status, code, reason, r.Status, r.Body)
	}
}

// RunJobsBackground runs the app's job runner until the test ends; the
// context it returns ends with it.
func RunJobsBackground(t testing.TB, a *app.App) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Jobs.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ctx
}
