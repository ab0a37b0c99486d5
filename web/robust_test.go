package web_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/webtest"
	"xr/web"
)

// Bad input never reaches a 500: every built route, called as the tenant
// owner with malformed, empty and wrongly-typed bodies and with ids that do
// not exist or do not parse, answers a 4xx with a reason (or a designed
// 502/503 for devices and services that are absent in a test).
func TestNoRouteAnswers500ToBadInput(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := k.Owner("acme")
	k.App.Limiter = webtest.AllowAll{} // reach every handler, not the 429 of a spent bucket
	statuses := map[int]int{}
	defer func() { t.Logf("statuses: %v", statuses) }()
	bodies := []string{`{`, `[]`, `{}`, `"x"`, `{"ids": "nope", "amount": "many", "request_id": 5, "name": {}, "email": [], "page": -1}`}
	for _, rt := range k.Srv.Routes() {
		if rt.H == nil || rt.Root || rt.Access == web.Subscriber || strings.HasSuffix(rt.P, "/stream") || rt.P == "/auth/logout" {
			continue
		}
		for _, id := range []string{"999999", "abc", "-1"} {
			path := "/api/v1" + web.PathParam.ReplaceAllString(rt.P, id)
			reqBodies := bodies
			if rt.M == "GET" || rt.M == "HEAD" {
				reqBodies = []string{""}
				path += "?page=-5&page_size=100000&sort=nonsense&order=sideways&filter[created_from]=garbage"
			}
			for _, b := range reqBodies {
				var body any
				if b != "" {
					body = b
				}
				r := k.Do(rt.M, "acme", path, owner, body)
				if r.Status == 401 && r.Reason() == "session_revoked" {
					// A route that ends sessions (password change, revoke-others):
					// sign in again and go on.
					owner = k.Owner("acme")
					r = k.Do(rt.M, "acme", path, owner, body)
				}
				statuses[r.Status]++
				if r.Status >= 500 && !(r.Status == 501 || r.Status == 502 || r.Status == 503) {
					t.Errorf("%s %s body %q: %d %s", rt.M, path, b, r.Status, r.Body)
				}
				// A HEAD answer has no body to carry a reason (the device
				// gateway's HEAD is its 405 with Allow: GET).
				if r.Status >= 400 && r.Reason() == "" && rt.M != "HEAD" {
					t.Errorf("%s %s body %q: %d without details.reason: %s", rt.M, path, b, r.Status, r.Body)
				}
				if r.Status == 503 && r.Code() == app.CodeInternal {
					t.Errorf("%s %s: 503 with ERR_INTERNAL", rt.M, path)
				}
			}
		}
	}
}

// FuzzDecodeJSON: whatever the bytes, decoding a request body either fills
// the struct or answers a 400 with a reason; it never panics.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"amount": 1.5, "request_id": "a"}`, `{"amount": 1e400}`, `{"amount": -0.0001}`, `{"when": "2024-01-02 03:04:05"}`,
		`{"kind": "a"}`, `{"ids": [1, 2, 3]}`, `{"opt": null}`, `[`, `{"a":`, "\x00", `{"amount": "1"}`, `{"amount": 99999999999999999999}`} {
		f.Add([]byte(s))
	}
	type body struct {
		Amount    app.Money          `json:"amount"`
		RequestID string             `json:"request_id"`
		When      app.DateOrTime     `json:"when"`
		IDs       []int64            `json:"ids"`
		Opt       app.Opt[app.Money] `json:"opt"`
		Name      app.Opt[string]    `json:"name"`
		Meta      map[string]any     `json:"meta"`
		At        app.Time           `json:"at"`
		Kind      aaa.NASType        `json:"kind"`
		Raw       json.RawMessage    `json:"raw"`
		Port      app.Opt[int]       `json:"port"`
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b body
		err := web.DecodeJSON(data, &b)
		if err == nil {
			return
		}
		e := app.AsError(err)
		if e == nil || e.Status != 400 || e.Reason == "" {
			t.Fatalf("decode %q: %v", data, err)
		}
		if e.Field != "" && reflect.TypeOf(b).Kind() != reflect.Struct {
			t.Fatal("unreachable")
		}
	})
}

// A read past its time budget is interrupted and answers 503 ERR_TIMEOUT.
func TestReadBudgetAnswersTimeout(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := k.Owner("acme")
	k.Srv.ReadBudget = time.Nanosecond
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/managers", owner, nil), 503, app.CodeTimeout, "timeout")
	k.Srv.ReadBudget = web.DefaultReadBudget
	if r := k.Do("GET", "acme", "/api/v1/managers", owner, nil); r.Status != 200 {
		t.Fatalf("with the normal budget: %d", r.Status)
	}
}
