package web_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/app/identity"
	"xr/app/modules"
	"xr/internal/webtest"
	"xr/web"
)

var pfParam = regexp.MustCompile(`\{[^}]+\}`)

// Every row of endpoints.tsv is a row of the route table, and answers
// through real HTTP: never 404 route_not_found or 405; an unbuilt row
// answers 501 not_implemented.
func TestEveryEndpointRegistered(t *testing.T) {
	t.Parallel()
	rows := pfSpecRows(t)
	k := webtest.New(t)
	table := map[string]*web.Route{}
	for _, r := range k.Srv.Routes() {
		table[r.M+" "+r.FullPath()] = r
	}
	fallback := map[*web.Route]bool{}
	for _, f := range k.Srv.Fallbacks() {
		fallback[f] = true
	}
	seen := map[string]bool{}
	for _, row := range rows {
		key := row.Method + " /api/v1" + row.Path
		if seen[key] {
			t.Errorf("endpoints.tsv lists %s twice", key)
		}
		seen[key] = true
		rt := table[key]
		if rt == nil {
			t.Errorf("endpoints.tsv row %s (%s) is not in the route table", key, row.Group)
			continue
		}
		path := pfParam.ReplaceAllString("/api/v1"+row.Path, "1")

		// The request reaches this very row, not a neighbour.
		req := httptest.NewRequest(row.Method, path, nil)
		req.Host = "acme.xr.test"
		if fallback[rt] {
			if k.Srv.FallbackOf(req) != rt {
				t.Errorf("%s: the fallback matcher does not pick its row", key)
			}
		} else if pattern := k.Srv.MuxPattern(req); pattern != rt.Pattern() {
			t.Errorf("%s: %s is served by %q", key, path, pattern)
		}

		var r webtest.Resp
		if row.Method == "CONNECT" {
			// The HTTP client treats CONNECT as a proxy tunnel; serve it directly.
			w := httptest.NewRecorder()
			k.Srv.ServeHTTP(w, req)
			r = webtest.Resp{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
			json.Unmarshal(r.Body, &r.JSON)
		} else {
			r = k.Do(row.Method, "acme", path, "", nil)
		}
		if r.Status == 404 && r.Reason() == "route_not_found" || r.Status == 405 || r.Status == 0 {
			t.Errorf("%s %s: %d %s", row.Method, path, r.Status, r.Body)
			continue
		}
		if rt.H == nil && row.Method != "HEAD" {
			if r.Status != 501 || r.Code() != app.CodeInternal || r.Reason() != "not_implemented" {
				t.Errorf("unbuilt %s: %d %s, want 501 not_implemented", key, r.Status, r.Body)
			}
		}
		if rt.H == nil && row.Method == "HEAD" && r.Status != 501 {
			t.Errorf("unbuilt %s: %d", key, r.Status)
		}
	}
	t.Logf("%d endpoints.tsv rows; %d table rows; %d served by the fallback matcher", len(rows), len(k.Srv.Routes()), len(k.Srv.Fallbacks()))
}

// Structural rules of the table.
func TestRouteTableStructure(t *testing.T) {
	t.Parallel()
	a := pfBareApp(t)
	s := web.New(a)
	seen := map[string]bool{}
	for _, r := range s.Routes() {
		key := r.Pattern()
		if seen[key] {
			t.Errorf("duplicate row %s", key)
		}
		seen[key] = true
		if !r.Root && !strings.HasPrefix(r.P, "/") {
			t.Errorf("%s: path must start with /", key)
		}
		switch r.Access {
		case web.Staff:
			if len(r.Perms) == 0 && !r.AnyStaff {
				t.Errorf("%s: staff route with no permission and no AnyStaff marker", key)
			}
			if len(r.Perms) > 0 && r.AnyStaff {
				t.Errorf("%s: both Perms and AnyStaff", key)
			}
		case web.Public, web.Subscriber:
			if len(r.Perms) > 0 || r.SessionOnly {
				t.Errorf("%s: a %s route carries staff-only settings", key, r.Access)
			}
		}
		for _, p := range r.Perms {
			if !a.KnownPermission(string(p)) {
				t.Errorf("%s: permission %q is not in app.Permissions", key, p)
			}
		}
		for _, b := range r.Buckets {
			if _, ok := a.Buckets()[b]; !ok {
				t.Errorf("%s: bucket %q is not in app.Buckets", key, b)
			}
			if b == app.BucketMutate {
				t.Errorf("%s: t_mutate is implied, not listed", key)
			}
		}
	}
	// The spec's named buckets sit on their rows.
	for key, bucket := range map[string]string{
		"GET /api/v1/users":                                  "user_list",
		"GET /api/v1/users/resolve":                          "user_resolve",
		"GET /api/v1/cards/search":                           "card_search",
		"POST /api/v1/cards/redeem":                          "card_redeem",
		"POST /api/v1/users/{id}/login-as":                   "user_login_as",
		"POST /api/v1/auth/account/password":                 "account_reauth",
		"POST /api/v1/developer/api-tokens/{id}/reveal":      "api_token_reveal",
		"POST /api/v1/auth/login":                            "login",
		"POST /api/v1/auth/refresh":                          "refresh",
		"POST /api/v1/admin/webhooks/endpoints/{id}/test":    "t_egress",
		"POST /api/v1/admin/webhooks/deliveries/{id}/replay": "t_egress",
		"POST /api/v1/exports":                               "t_heavy",
	} {
		var found *web.Route
		for _, r := range s.Routes() {
			if r.Pattern() == key {
				found = r
			}
		}
		if found == nil {
			t.Errorf("%s: no such row", key)
			continue
		}
		has := false
		for _, b := range found.Buckets {
			has = has || b == bucket
		}
		if !has {
			t.Errorf("%s: buckets %v, want %s", key, found.Buckets, bucket)
		}
	}
	// The permission catalogue has no duplicates.
	codes := map[app.Perm]bool{}
	for _, p := range a.Permissions() {
		if codes[p.Code] || !strings.HasPrefix(string(p.Code), "prm_") {
			t.Errorf("permission %q duplicated or misnamed", p.Code)
		}
		codes[p.Code] = true
	}
}

// pfBareApp is an instance without tenants (the table needs no tenant).
func pfBareApp(t testing.TB) *app.App {
	t.Helper()
	a, err := modules.Open(app.Config{DataDir: t.TempDir(), Domain: "xr.test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func TestOpenAPIListsEveryRoute(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	r := k.Do("GET", "", "/openapi.json", "", nil)
	if r.Status != 200 || r.JSON["openapi"] != "3.1.0" {
		t.Fatalf("%d %.200s", r.Status, r.Body)
	}
	paths, _ := r.JSON["paths"].(map[string]any)
	for _, rt := range k.Srv.Routes() {
		item, _ := paths[rt.FullPath()].(map[string]any)
		m := strings.ToLower(rt.M)
		if m == "query" || m == "connect" {
			m = "x-" + m
		}
		op, _ := item[m].(map[string]any)
		if op == nil {
			t.Errorf("%s missing from /openapi.json", rt.Pattern())
			continue
		}
		if op["x-implemented"] != (rt.H != nil) {
			t.Errorf("%s: x-implemented %v", rt.Pattern(), op["x-implemented"])
		}
		if rt.Access == web.Staff && rt.IsMutation() {
			b, _ := op["x-rate-buckets"].([]any)
			if len(b) == 0 || b[0] != "t_mutate" {
				t.Errorf("%s: x-rate-buckets %v lacks the implied t_mutate", rt.Pattern(), b)
			}
		}
	}
}

func TestHealthAndReady(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	for _, host := range []string{"", "acme", "nope"} {
		if r := k.Do("GET", host, "/healthz", "", nil); r.Status != 200 || r.Data()["ok"] != true {
			t.Fatalf("healthz on %q: %d %s", host, r.Status, r.Body)
		}
	}
	r := k.Do("GET", "", "/readyz", "", nil)
	if r.Status != 200 || r.Data()["tenants"] != float64(1) {
		t.Fatalf("readyz: %d %s", r.Status, r.Body)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Fatal("success without X-Request-Id")
	}
}

// The error object of every failure class, through real HTTP.
func TestErrorObjects(t *testing.T) {
	t.Parallel()
	type moneyBody struct {
		Amount app.Money    `json:"amount"`
		Kind   pfEnum       `json:"kind"`
		When   app.Time     `json:"when"`
		Count  int          `json:"count"`
		Tags   []string     `json:"tags"`
		Opt    app.Opt[int] `json:"opt"`
	}
	var decoded moneyBody
	k := newPfKit(t, "", func(s *web.Server) {
		pfMount(s, web.Route{M: "POST", P: "/_pf/money", Access: web.Public, H: func(c *web.Ctx) error {
			var in moneyBody
			if err := c.Decode(&in); err != nil {
				return err
			}
			decoded = in
			return c.OK(in)
		}})
		pfMount(s, web.Route{M: "GET", P: "/_pf/unbuilt", Access: web.Staff, AnyStaff: true})
		pfMount(s, web.Route{M: "GET", P: "/_pf/panic", Access: web.Public, H: func(c *web.Ctx) error {
			panic("db password is hunter2-secret")
		}})
		pfMount(s, web.Route{M: "GET", P: "/_pf/fail", Access: web.Public, H: func(c *web.Ctx) error {
			return fmt.Errorf("dial 10.0.0.5: token=hunter2-secret: %w", errors.New("refused"))
		}})
	})
	token := k.Owner("acme")

	t.Run("401", func(t *testing.T) {
		pfExpect(t, k.Do("GET", "acme", "/api/v1/auth/me", "", nil), 401, app.CodeUnauthorized, "missing_bearer_token")
		pfExpect(t, k.Do("GET", "acme", "/api/v1/auth/me", "", nil, "Authorization", "Basic b3duZXI6cHc="), 401, app.CodeUnauthorized, "missing_bearer_token")
		pfExpect(t, k.Do("GET", "acme", "/api/v1/auth/me", "garbage", nil), 401, app.CodeUnauthorized, "invalid_token")
		parts := strings.Split(token, ".")
		sig := []byte(parts[2])
		sig[0] = map[bool]byte{true: 'B', false: 'A'}[sig[0] == 'A']
		pfExpect(t, k.Do("GET", "acme", "/api/v1/auth/me", parts[0]+"."+parts[1]+"."+string(sig), nil), 401, app.CodeUnauthorized, "invalid_token")
		// Apex host with a valid token of a tenant: fails like a bad credential.
		pfExpect(t, k.Do("GET", "", "/api/v1/auth/me", token, nil), 401, app.CodeUnauthorized, "invalid_token")
		// Expired: a tenant whose sessions last -1 minute hands out dead tokens.
		tt := k.Acquire("acme")
		pfSetting(t, tt, "session_length_minutes", "-1")
		expired := k.Owner("acme")
		pfSetting(t, tt, "session_length_minutes", "720")
		pfExpect(t, k.Do("GET", "acme", "/api/v1/auth/me", expired, nil), 401, app.CodeUnauthorized, "invalid_token")
		// The good token still works.
		if r := k.Do("GET", "acme", "/api/v1/auth/me", token, nil); r.Status != 200 {
			t.Fatalf("valid token: %d %s", r.Status, r.Body)
		}
	})

	t.Run("404 and 405", func(t *testing.T) {
		for _, p := range []string{"/api/v1/nope", "/nope", "/api/v2/auth/me", "/api/v1/auth/me/extra", "/api/v1/"} {
			pfExpect(t, k.Do("GET", "acme", p, token, nil), 404, app.CodeNotFound, "route_not_found")
		}
		pfExpect(t, k.Do("GET", "", "/api/v1/nope", "", nil), 404, app.CodeNotFound, "route_not_found")
		r := k.Do("DELETE", "acme", "/api/v1/auth/login", token, nil)
		pfExpect(t, r, 405, app.CodeValidation, "method_not_allowed")
		if allow := r.Header.Get("Allow"); allow != "POST" {
			t.Errorf("Allow %q", allow)
		}
		r = k.Do("PUT", "acme", "/api/v1/auth/me", token, nil)
		pfExpect(t, r, 405, app.CodeValidation, "method_not_allowed")
		if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") || strings.Contains(allow, "PUT") {
			t.Errorf("Allow %q", allow)
		}
		// A row the mux could not take (served by the fallback matcher)
		// still answers 405 with its method in Allow.
		checked := len(k.Srv.Fallbacks()) == 0
		for _, f := range k.Srv.Fallbacks() {
			path := pfParam.ReplaceAllString(f.FullPath(), "1")
			other := "PATCH"
			if f.M == "PATCH" {
				other = "PUT"
			}
			taken := false
			for _, g := range k.Srv.Fallbacks() {
				taken = taken || (g.M == other && pfParam.ReplaceAllString(g.FullPath(), "1") == path)
			}
			if taken {
				continue
			}
			r := k.Do(other, "acme", path, token, nil)
			pfExpect(t, r, 405, app.CodeValidation, "method_not_allowed")
			if !strings.Contains(r.Header.Get("Allow"), f.M) {
				t.Errorf("%s: Allow %q", f.Pattern(), r.Header.Get("Allow"))
			}
			checked = true
			break
		}
		if !checked {
			t.Error("no fallback row could be probed for 405")
		}
	})

	t.Run("400 decoding", func(t *testing.T) {
		login := "/api/v1/auth/login"
		pfExpect(t, k.Do("POST", "acme", login, "", `{"email": "owner", `), 400, app.CodeValidation, "malformed_json")
		pfExpect(t, k.Do("POST", "acme", login, "", `[1, 2]`), 400, app.CodeValidation, "body_not_object")
		pfExpect(t, k.Do("POST", "acme", login, "", `"owner"`), 400, app.CodeValidation, "body_not_object")
		r := k.Do("POST", "acme", login, "", `{"email": 5, "password": "x"}`)
		pfExpect(t, r, 400, app.CodeValidation, "invalid_type")
		if r.Field() != "email" {
			t.Errorf("invalid_type field %q", r.Field())
		}
		big := `{"email": "owner", "pad": "` + strings.Repeat("a", web.MaxBody) + `"}`
		pfExpect(t, k.Do("POST", "acme", login, "", big), 400, app.CodeValidation, "body_too_large")

		money := "/api/v1/_pf/money"
		for body, want := range map[string][2]string{
			`{"amount": 1.2345}`:          {"too_many_decimals", "amount"},
			`{"amount": 1e-4}`:            {"too_many_decimals", "amount"},
			`{"amount": "12"}`:            {"invalid_type", "amount"},
			`{"kind": "sideways"}`:        {"invalid_enum", "kind"},
			`{"kind": 3}`:                 {"invalid_enum", "kind"},
			`{"when": "2024-01-02"}`:      {"invalid_value", "when"},
			`{"count": "three"}`:          {"invalid_type", "count"},
			`{"count": 1.5}`:              {"invalid_type", "count"},
			`{"tags": "a"}`:               {"invalid_type", "tags"},
			`{"opt": true}`:               {"invalid_type", "opt"},
			`{"amount": 1, "count": "x"}`: {"invalid_type", "count"},
		} {
			r := k.Do("POST", "acme", money, "", body)
			pfExpect(t, r, 400, app.CodeValidation, want[0])
			if r.Field() != want[1] {
				t.Errorf("%s: field %q, want %q", body, r.Field(), want[1])
			}
		}
		// A field the body does not declare is refused, naming it; a
		// request_id passes on every route.
		pfExpect(t, k.Do("POST", "acme", money, "", `{"amount": 1, "unknown": {"x": 1}}`), 400, app.CodeValidation, "unknown_field")
		if r := k.Do("POST", "acme", money, "", `{"amount": 1, "Amount": 2}`); r.Field() != "Amount" {
			t.Fatalf("a key differing in case only is unknown: %s", r.Body)
		}
		if r := k.Do("POST", "acme", money, "", `{"amount": 12.505, "kind": "up", "when": "2024-01-02 03:04:05", "request_id": "r-1"}`); r.Status != 200 ||
			decoded.Amount != 12505 || decoded.Kind != "up" || r.Data()["amount"] != 12.505 {
			t.Fatalf("valid body: %d %s %+v", r.Status, r.Body, decoded)
		}
		// Exactly 1 MiB is accepted; one byte more is not.
		exact := `{"amount": 1, "tags": ["` + strings.Repeat("b", web.MaxBody-len(`{"amount": 1, "tags": [""]}`)) + `"]}`
		if r := k.Do("POST", "acme", money, "", exact); len(exact) != web.MaxBody || r.Status != 200 {
			t.Fatalf("a body of exactly %d bytes: %d %.200s", len(exact), r.Status, r.Body)
		}
		pfExpect(t, k.Do("POST", "acme", money, "", exact+" "), 400, app.CodeValidation, "body_too_large")
		if r := k.Do("POST", "acme", money, "", ""); r.Status != 200 {
			t.Fatalf("empty body is an empty object: %d %s", r.Status, r.Body)
		}
	})

	t.Run("501", func(t *testing.T) {
		pfExpect(t, k.Do("GET", "acme", "/api/v1/_pf/unbuilt", token, nil), 501, app.CodeInternal, "not_implemented")
		pfExpect(t, k.Do("GET", "acme", "/api/v1/_pf/unbuilt", "", nil), 501, app.CodeInternal, "not_implemented")
	})

	t.Run("500 without leaks", func(t *testing.T) {
		for _, p := range []string{"/api/v1/_pf/panic", "/api/v1/_pf/fail"} {
			r := k.Do("GET", "acme", p, "", nil)
			pfExpect(t, r, 500, app.CodeInternal, "internal_error")
			if strings.Contains(string(r.Body), "hunter2") || strings.Contains(string(r.Body), "10.0.0.5") || strings.Contains(string(r.Body), "panic") {
				t.Fatalf("%s leaks its cause: %s", p, r.Body)
			}
		}
		// The server goes on.
		if r := k.Do("GET", "acme", "/api/v1/auth/me", token, nil); r.Status != 200 {
			t.Fatalf("after a panic: %d", r.Status)
		}
	})

	t.Run("request id", func(t *testing.T) {
		r := k.Do("GET", "acme", "/api/v1/auth/me", "", nil, "X-Request-Id", "trace-abc.123")
		pfExpect(t, r, 401, app.CodeUnauthorized, "missing_bearer_token")
		if r.Header.Get("X-Request-Id") != "trace-abc.123" {
			t.Fatalf("client request id not echoed: %q", r.Header.Get("X-Request-Id"))
		}
		for _, bad := range []string{strings.Repeat("x", 65), "has space", `q"uote`} {
			r := k.Do("GET", "acme", "/api/v1/auth/me", "", nil, "X-Request-Id", bad)
			pfErrorShape(t, r)
			if id := r.Header.Get("X-Request-Id"); id == bad || id == "" {
				t.Fatalf("bad request id %q kept as %q", bad, id)
			}
		}
		// Generated ids are unique.
		a := k.Do("GET", "acme", "/api/v1/auth/me", "", nil).Header.Get("X-Request-Id")
		b := k.Do("GET", "acme", "/api/v1/auth/me", "", nil).Header.Get("X-Request-Id")
		if a == b {
			t.Fatalf("request id repeated: %s", a)
		}
	})

	t.Run("language", func(t *testing.T) {
		r := k.Do("GET", "acme", "/api/v1/auth/me", "", nil, "Accept-Language", "ar")
		pfExpect(t, r, 401, app.CodeUnauthorized, "missing_bearer_token")
		ar := web.Catalogues["ar"]["missing_bearer_token"]
		msg := r.JSON["error"].(map[string]any)["message"]
		if ar == "" || msg != ar {
			t.Fatalf("Arabic message: %q, catalogue %q", msg, ar)
		}
		en := k.Do("GET", "acme", "/api/v1/auth/me", "", nil, "Accept-Language", "fr-FR, de;q=0.5")
		if en.JSON["error"].(map[string]any)["message"] != web.Catalogues["en"]["missing_bearer_token"] {
			t.Fatalf("unshipped language: %s", en.Body)
		}
		if r := k.Do("GET", "acme", "/api/v1/auth/me", "", nil, "Accept-Language", "fr;q=0.9, ar-EG;q=0.8"); r.JSON["error"].(map[string]any)["message"] != ar {
			t.Fatalf("ar-EG: %s", r.Body)
		}
		// No header: the tenant's default language.
		tt := k.Acquire("acme")
		pfSetting(t, tt, "default_language", `"ar"`)
		defer pfSetting(t, tt, "default_language", `"en"`)
		if r := k.Do("GET", "acme", "/api/v1/auth/me", "", nil); r.JSON["error"].(map[string]any)["message"] != ar {
			t.Fatalf("tenant default language: %s", r.Body)
		}
		// The code and reason never change with the language.
		pfExpect(t, r, 401, app.CodeUnauthorized, "missing_bearer_token")
	})
}

// pfEnum is an enum field decoded through app.ParseEnum.
type pfEnum string

func (e *pfEnum) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, "up", "down")
	*e = pfEnum(s)
	return err
}

func pfSetting(t testing.TB, tt *app.Tenant, key, value string) {
	t.Helper()
	err := tt.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// DecodeJSON case by case, without HTTP.
func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	type inner struct {
		Note string `json:"note"`
	}
	type body struct {
		inner
		Name    string             `json:"name"`
		Amount  app.Money          `json:"amount"`
		Price   app.Opt[app.Money] `json:"price"`
		Expires app.DateOrTime     `json:"expires"`
		IDs     []int64            `json:"ids"`
		Skip    string             `json:"-"`
		hidden  string
	}
	var b body
	err := web.DecodeJSON([]byte(` {"name":"x","amount":3.5,"price":null,"expires":"2024-01-02","ids":[1,2],"note":"n","request_id":"r"} `), &b)
	if err != nil || b.Name != "x" || b.Amount != 3500 || !b.Price.Set || !b.Price.Null || b.IDs[1] != 2 || b.Note != "n" || b.Skip != "" || b.hidden != "" ||
		app.FormatTime(b.Expires.Time.Time) != "2024-01-02 00:00:00" {
		t.Fatalf("%+v %v", b, err)
	}
	for in, want := range map[string][2]string{
		`{`:                   {"malformed_json", ""},
		`{"a":1,}`:            {"malformed_json", ""},
		`null`:                {"", ""}, // null is no fields
		`[]`:                  {"body_not_object", ""},
		`42`:                  {"body_not_object", ""},
		`{"ids":[1,"2"]}`:     {"invalid_type", "ids"},
		`{"ids":[1.5]}`:       {"invalid_type", "ids"},
		`{"amount":0.0001}`:   {"too_many_decimals", "amount"},
		`{"price":2.22222}`:   {"too_many_decimals", "price"},
		`{"expires":"soon"}`:  {"invalid_value", "expires"},
		`{"note":7}`:          {"invalid_type", "note"},
		`{"name":{"x":1}}`:    {"invalid_type", "name"},
		`{"amount":1}{"x":1}`: {"malformed_json", ""},
		// Fields the struct does not declare, however close: 400
		// unknown_field naming them (request_id passes, see above).
		`{"Skip":"no"}`:   {"unknown_field", "Skip"},
		`{"-":"no"}`:      {"unknown_field", "-"},
		`{"hidden":"no"}`: {"unknown_field", "hidden"},
		`{"Name":"x"}`:    {"unknown_field", "Name"},
		`{"extra":[1]}`:   {"unknown_field", "extra"},
		`{"b":1,"a":2}`:   {"unknown_field", "a"},
	} {
		var b body
		err := web.DecodeJSON([]byte(in), &b)
		if want[0] == "" {
			if err != nil {
				t.Errorf("%s: %v", in, err)
			}
			continue
		}
		e := app.AsError(err)
		if e == nil || e.Status != 400 || e.Reason != want[0] || e.Field != want[1] {
			t.Errorf("%s: %v, want %s (%s)", in, err, want[0], want[1])
		}
	}
}

// A locked tenant (max_users 0, or an expired licence) answers 403
// license_locked on the admin surface; /auth/me and the licence page stay
// open so the owner can see why.
func TestLicenseLocked(t *testing.T) {
	t.Parallel()
	k := newPfKit(t, "", func(s *web.Server) {
		pfStub(t, s, "GET", "/users", pfOK)
		pfStub(t, s, "POST", "/users/bulk-delete", pfOK)
	})
	token := k.Owner("acme")
	if r := k.Do("GET", "acme", "/api/v1/users", token, nil); r.Status != 200 {
		t.Fatalf("unlocked: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	zero := app.Opt[int64]{Set: true, V: 0}
	past := app.Opt[app.Time]{Set: true, V: app.T(time.Now().Add(-time.Minute))}
	for name, u := range map[string]app.TenantUpdate{
		"max_users 0": {MaxUsers: zero, LicenseExpiresAt: app.Opt[app.Time]{Set: true, Null: true}},
		"expired":     {MaxUsers: app.Opt[int64]{Set: true, Null: true}, LicenseExpiresAt: past},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := k.App.UpdateTenant(ctx, "acme", u); err != nil {
				t.Fatal(err)
			}
			pfExpect(t, k.Do("GET", "acme", "/api/v1/users", token, nil), 403, app.CodeLicenseBlocked, "license_locked")
			pfExpect(t, k.Do("POST", "acme", "/api/v1/users/bulk-delete", token, map[string]any{"ids": []int{1}}), 403, app.CodeLicenseBlocked, "license_locked")
			me := k.Do("GET", "acme", "/api/v1/auth/me", token, nil)
			if me.Status != 200 {
				t.Fatalf("/auth/me on a locked tenant: %d %s", me.Status, me.Body)
			}
			ten, _ := me.Data()["tenant"].(map[string]any)
			if ten["license_status"] == "active" || ten["license_status"] == nil {
				t.Fatalf("/auth/me tenant block: %v", ten)
			}
			if r := k.Do("GET", "acme", "/api/v1/admin/license", token, nil); r.Status == 403 || r.Status == 404 {
				t.Fatalf("licence page on a locked tenant: %d %s", r.Status, r.Body)
			}
			// Signing in still works (the owner must reach the licence page).
			if r := k.Do("POST", "acme", "/api/v1/auth/login", "", map[string]any{"email": "owner", "password": webtest.Password}); r.Status != 200 {
				t.Fatalf("login on a locked tenant: %d %s", r.Status, r.Body)
			}
			// Without a credential it is still a 401, not a licence answer.
			pfExpect(t, k.Do("GET", "acme", "/api/v1/users", "", nil), 401, app.CodeUnauthorized, "missing_bearer_token")
		})
	}
	// Unlocked again: the admin surface answers.
	if _, err := k.App.UpdateTenant(ctx, "acme", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, Null: true},
		LicenseExpiresAt: app.Opt[app.Time]{Set: true, Null: true}}); err != nil {
		t.Fatal(err)
	}
	if r := k.Do("GET", "acme", "/api/v1/users", token, nil); r.Status != 200 {
		t.Fatalf("after unlocking: %d %s", r.Status, r.Body)
	}
}

// A plain permission denial: 403 ERR_FORBIDDEN insufficient_permissions;
// API tokens on a session-only row: api_token_forbidden.
func TestPermissionDenied(t *testing.T) {
	t.Parallel()
	k := newPfKit(t, "", func(s *web.Server) {
		pfStub(t, s, "POST", "/users/bulk-delete", pfOK)
		pfStub(t, s, "GET", "/users", pfOK)
	})
	tt := k.Acquire("acme")
	sys := k.System("acme")
	var support int64
	tt.DB.R.QueryRow(`SELECT id FROM roles WHERE name = 'support'`).Scan(&support)
	if _, err := identity.CreateManager(context.Background(), sys, identity.ManagerInput{
		Username: app.Opt[string]{Set: true, V: "helper"}, Password: app.Opt[string]{Set: true, V: webtest.Password},
		RoleIDs: app.Opt[[]int64]{Set: true, V: []int64{support}}}); err != nil {
		t.Fatal(err)
	}
	tok := k.Login("acme", "helper", webtest.Password)
	pfExpect(t, k.Do("POST", "acme", "/api/v1/users/bulk-delete", tok, map[string]any{"ids": []int{1}}), 403, app.CodeForbidden, "insufficient_permissions")
	if r := k.Do("GET", "acme", "/api/v1/users", tok, nil); r.Status != 200 {
		t.Fatalf("support may list users: %d %s", r.Status, r.Body)
	}
	if r := k.Do("POST", "acme", "/api/v1/users/bulk-delete", k.Owner("acme"), map[string]any{"ids": []int{1}}); r.Status != 200 {
		t.Fatalf("owner: %d %s", r.Status, r.Body)
	}
}

// A list route built on app.ParseList and Page: meta echoes the clamped
// values; an unparseable known filter is a 400 naming it.
func TestListThroughHTTP(t *testing.T) {
	t.Parallel()
	spec := app.ListSpec{Sorts: map[string]string{"id": "id"}, DefaultSort: "id", Filters: map[string]app.FilterKind{"parent_id": app.FilterInt}}
	k := newPfKit(t, "", func(s *web.Server) {
		pfMount(s, web.Route{M: "GET", P: "/_pf/list", Access: web.Staff, AnyStaff: true, List: true, H: func(c *web.Ctx) error {
			q, err := app.ParseList(c.Query(), spec)
			if err != nil {
				return err
			}
			total := 2_000_000
			rows := make([]int, 0, q.PageSize)
			for i := 0; i < q.PageSize && q.Offset()+i < total; i++ {
				rows = append(rows, q.Offset()+i+1)
			}
			return web.Page(c, app.Page[int]{Rows: rows, Meta: q.MetaFor(total)})
		}})
		pfMount(s, web.Route{M: "GET", P: "/_pf/empty", Access: web.Staff, AnyStaff: true, H: func(c *web.Ctx) error {
			return web.Page(c, app.Page[string]{Meta: app.OnePage(0)})
		}})
	})
	token := k.Owner("acme")
	r := k.Do("GET", "acme", "/api/v1/_pf/list?page=999999999&page_size=50&filter[nope]=x", token, nil)
	m := r.Meta()
	if r.Status != 200 || m["page"] != float64(20000) || m["page_size"] != float64(50) || m["total"] != float64(2_000_000) || m["has_next"] != false {
		t.Fatalf("clamped page: %d %v", r.Status, m)
	}
	if l := r.List(); len(l) != 50 || l[49] != float64(1_000_000) {
		t.Fatalf("deepest page rows: %d", len(l))
	}
	r = k.Do("GET", "acme", "/api/v1/_pf/list?page=5001&page_size=1000", token, nil)
	if m := r.Meta(); m["page"] != float64(5000) || m["page_size"] != float64(200) {
		t.Fatalf("page_size 200 cap: %v", m)
	}
	r = k.Do("GET", "acme", "/api/v1/_pf/list?filter[parent_id]=abc", token, nil)
	pfExpect(t, r, 400, app.CodeValidation, "invalid_filter")
	if r.Field() != "filter[parent_id]" {
		t.Fatalf("field %q", r.Field())
	}
	r = k.Do("GET", "acme", "/api/v1/_pf/empty", token, nil)
	if r.Status != 200 || string(r.Body) != `{"data":[],"meta":{"page":1,"page_size":0,"total":0,"has_next":false}}`+"\n" {
		t.Fatalf("empty list: %s", r.Body)
	}
}

// A record outside the caller's subtree answers exactly like a missing one:
// the same bytes but for the request id.
func TestOutOfScopeIsByteIdenticalToNotFound(t *testing.T) {
	t.Parallel()
	k := newPfKit(t, "", func(s *web.Server) {
		pfMount(s, web.Route{M: "GET", P: "/_pf/missing/{id}", Access: web.Staff, AnyStaff: true, H: func(c *web.Ctx) error {
			if _, err := c.ID("id"); err != nil {
				return err
			}
			return app.ErrNotFound()
		}})
		pfMount(s, web.Route{M: "GET", P: "/_pf/hidden/{id}", Access: web.Staff, AnyStaff: true, H: func(c *web.Ctx) error { return app.ErrOutOfScope() }})
	})
	tok := k.Owner("acme")
	strip := func(r webtest.Resp) string {
		return strings.Replace(string(r.Body), r.Header.Get("X-Request-Id"), "", 1)
	}
	missing := k.Do("GET", "acme", "/api/v1/_pf/missing/7", tok, nil)
	hidden := k.Do("GET", "acme", "/api/v1/_pf/hidden/7", tok, nil)
	pfExpect(t, missing, 404, app.CodeNotFound, "not_found")
	if strip(missing) != strip(hidden) || missing.Status != hidden.Status {
		t.Fatalf("out of scope differs from not found:\n%s\n%s", missing.Body, hidden.Body)
	}
	// A non-integer id is the same record 404, not a 400.
	for _, id := range []string{"abc", "0", "-1", "1.5", "99999999999999999999"} {
		if r := k.Do("GET", "acme", "/api/v1/_pf/missing/"+id, tok, nil); strip(r) != strip(missing) {
			t.Fatalf("id %q: %s", id, r.Body)
		}
	}
}
