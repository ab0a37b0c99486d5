package web_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/web"
)

// Every built operation carries a summary written for people (the row's
// Summary), so the reference, llms.txt and the operation pages say what
// it does.
func TestEveryBuiltOperationHasASummary(t *testing.T) {
	t.Parallel()
	s := &web.Server{}
	var missing []string
	for _, r := range s.Table() {
		if r.H != nil && r.Summary == "" {
			missing = append(missing, r.Pattern())
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d built rows without a Summary (add one to the row):\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// The document: 201 creates, integer path ids, nullable fields, required
// lists and the reasons per status, as the handlers answer them.
func TestOpenAPITellsTheTruth(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	r := k.Do("GET", "", "/openapi.json", "", nil)
	if r.Status != 200 {
		t.Fatalf("openapi: %d", r.Status)
	}
	paths := r.JSON["paths"].(map[string]any)
	op := func(p, m string) map[string]any { return paths[p].(map[string]any)[m].(map[string]any) }
	create := op("/api/v1/users", "post")
	resps := create["responses"].(map[string]any)
	if _, ok := resps["201"]; !ok {
		t.Fatalf("POST /users: no 201: %v", slices.Sorted(maps.Keys(resps)))
	}
	if _, ok := resps["200"]; ok {
		t.Fatal("POST /users documents a 200 it never answers")
	}
	if create["summary"] == "" || create["summary"] == nil {
		t.Fatal("POST /users: no summary")
	}
	dep := op("/api/v1/users/{id}/deposit", "post")
	p0 := dep["parameters"].([]any)[0].(map[string]any)
	if p0["name"] != "id" || p0["schema"].(map[string]any)["type"] != "integer" {
		t.Fatalf("path id: %v", p0)
	}
	schemas := r.JSON["components"].(map[string]any)["schemas"].(map[string]any)
	created := schemas["SubsCreated"].(map[string]any)
	props := created["properties"].(map[string]any)
	ty := mustJSON(t, props["profile_id"])
	if !strings.Contains(string(ty), `"null"`) {
		t.Fatalf("profile_id of a created subscriber is nullable, documented %s", ty)
	}
	if req, _ := created["required"].([]any); len(req) == 0 {
		t.Fatal("SubsCreated has no required list")
	}
	// An error of a documented status names its reasons.
	login := op("/api/v1/auth/login", "post")["responses"].(map[string]any)
	if _, ok := login["429"]; !ok {
		t.Fatalf("login: no 429 documented: %v", slices.Sorted(maps.Keys(login)))
	}
}

// The reference and its Markdown twins are served from the route table.
func TestDocsServed(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	r := k.Do("GET", "", "/docs", "", nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	csp := r.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-eval") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("/docs CSP %q", csp)
	}
	if !strings.Contains(string(r.Body), `<script src="/docs/redoc.standalone.js">`) || strings.Contains(string(r.Body), "http") {
		t.Fatalf("/docs loads something else than its own script: %s", r.Body)
	}
	js := k.Do("GET", "", "/docs/redoc.standalone.js", "", nil)
	if js.Status != 200 || len(js.Body) < 100000 || !strings.HasPrefix(js.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("renderer: %d %d bytes %s", js.Status, len(js.Body), js.Header.Get("Content-Type"))
	}

	idx := k.Do("GET", "", "/llms.txt", "", nil)
	if idx.Status != 200 || !strings.HasPrefix(string(idx.Body), "# xr API\n\n> ") {
		t.Fatalf("/llms.txt: %d %.200s", idx.Status, idx.Body)
	}
	line := "- [POST /api/v1/users](/docs/ops/post_api_v1_users.md): Create a subscriber (identity only: no money, quota or activation)\n"
	if !strings.Contains(string(idx.Body), line) {
		t.Fatalf("/llms.txt has no line %q", line)
	}
	pg := k.Do("GET", "", "/docs/ops/post_api_v1_users.md", "", nil)
	body := string(pg.Body)
	for _, want := range []string{"# POST /api/v1/users\n", "### 201", "| username |", "prm_users_create", "unknown_field"} {
		if !strings.Contains(body, want) {
			t.Errorf("operation page lacks %q:\n%s", want, body)
		}
	}
	if pg.Status != 200 || !strings.HasPrefix(pg.Header.Get("Content-Type"), "text/markdown") {
		t.Fatalf("operation page: %d %s", pg.Status, pg.Header.Get("Content-Type"))
	}
	webtest.ExpectErr(t, k.Do("GET", "", "/docs/ops/post_api_v1_nothing.md", "", nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, k.Do("GET", "", "/docs/ops/post_api_v1_users", "", nil), 404, "ERR_NOT_FOUND", "not_found")

	full := k.Do("GET", "", "/llms-full.txt", "", nil)
	for _, r := range k.Srv.Routes() {
		head := "# " + r.M + " " + r.FullPath() + "\n"
		if r.M == "QUERY" || r.M == "CONNECT" {
			continue
		}
		if !strings.Contains(string(full.Body), head) {
			t.Errorf("/llms-full.txt lacks %q", head)
		}
	}
	sk := k.Do("GET", "", "/skill.md", "", nil)
	if sk.Status != 200 || !strings.HasPrefix(string(sk.Body), "---\nname: xr-api\ndescription: ") || !strings.Contains(string(sk.Body), "POST /api/v1/users/{id}/activation") {
		t.Fatalf("/skill.md: %d %.300s", sk.Status, sk.Body)
	}
}

// The reference renders in a real browser under its CSP, from the
// embedded renderer only: the operations' summaries are on the page and
// no CSP violation or script error is reported.
func TestDocsInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	b := browsertest.New(t, k)
	var problems []string
	chromedp.ListenTarget(b.Ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				problems = append(problems, "console error: "+strings.Join(parts, " "))
			}
		}
	})
	// The renderer lays out the whole reference (a few hundred operations),
	// which takes a loaded 2-core machine tens of seconds: one page load,
	// and a budget that only stops a hung renderer.
	ctx, cancel := context.WithTimeout(b.Ctx, 150*time.Second)
	defer cancel()
	var title string
	if err := chromedp.Run(ctx,
		// A deep link by operationId (what /llms.txt's pages name).
		chromedp.Navigate(b.Base+"/docs#tag/users/operation/post_api_v1_users"),
		chromedp.WaitVisible(`//h2[contains(text(), "Create a subscriber (identity only")]`, chromedp.BySearch),
		chromedp.WaitReady(`//h2[contains(text(), "Enabled add-ons")]`, chromedp.BySearch),
		chromedp.Title(&title),
	); err != nil {
		b.Shot("docs")
		t.Fatalf("the reference did not render the operations: %v (problems: %v)", err, problems)
	}
	if len(problems) > 0 {
		t.Fatalf("the reference reported problems: %v", problems)
	}
	if title != "xr API reference" {
		t.Fatalf("title %q", title)
	}
	b.Shot("docs")
	// No b.axe here: the page is the vendored renderer's DOM, not ours,
	// and axe over its thousands of nodes outlasts the test budget.
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
