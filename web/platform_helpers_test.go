package web_test

// Helpers of the platform tests (prefix pf to stay clear of the helpers
// other areas add to package web).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/internal/webtest"
	"xr/web"
)

// newPfKit is newKit with an optional default tenant and a setup hook that
// may change the route table (stub a handler, mount a test-only row)
// before the server starts serving, so no request races with it.
func newPfKit(t testing.TB, defaultTenant string, setup func(s *web.Server)) *webtest.Kit {
	t.Helper()
	return webtest.NewWith(t, app.Config{DefaultTenant: defaultTenant}, nil, setup)
}

// pfRow finds a row of the table.
func pfRow(t testing.TB, s *web.Server, method, path string) *web.Route {
	t.Helper()
	for _, r := range s.Routes() {
		if r.M == method && r.P == path {
			return r
		}
	}
	t.Fatalf("no route %s %s", method, path)
	return nil
}

// pfStub replaces the handler of a real row, keeping everything the
// middleware derives from it (access, permissions, buckets, licence).
func pfStub(t testing.TB, s *web.Server, method, path string, h web.HandlerFunc) *web.Route {
	t.Helper()
	r := pfRow(t, s, method, path)
	r.H = h
	webtest.SkipContract(r) // its answers are the stub's
	return r
}

// pfMount adds a test-only row under /api/v1.
func pfMount(s *web.Server, rt web.Route) *web.Route {
	r := &rt
	webtest.SkipContract(r) // not an API row
	s.Mount(r)
	return r
}

func pfOK(c *web.Ctx) error { return c.OK(map[string]bool{"ok": true}) }

// pfErrorShape asserts the spec's error object: code, message, request_id
// equal to the X-Request-Id header, details.reason set; nothing else.
func pfErrorShape(t testing.TB, r webtest.Resp) {
	t.Helper()
	if r.Status < 400 {
		t.Fatalf("not an error: %d %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error content type %q", ct)
	}
	if len(r.JSON) != 1 {
		t.Errorf("error body has keys beside error: %s", r.Body)
	}
	e, _ := r.JSON["error"].(map[string]any)
	if e == nil {
		t.Fatalf("no error object: %s", r.Body)
	}
	for k := range e {
		switch k {
		case "code", "message", "request_id", "details":
		default:
			t.Errorf("unexpected error field %q: %s", k, r.Body)
		}
	}
	codes := map[string]bool{app.CodeValidation: true, app.CodeUnauthorized: true, app.CodeForbidden: true, app.CodeNotFound: true,
		app.CodeConflict: true, app.CodeRateLimited: true, app.CodeInternal: true, app.CodeTimeout: true, app.CodeLicenseBlocked: true,
		app.CodeMaintenance: true, app.CodeUnavailable: true}
	if !codes[r.Code()] {
		t.Errorf("code %q is not one of the spec's", r.Code())
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Errorf("empty message: %s", r.Body)
	}
	id, _ := e["request_id"].(string)
	if id == "" || id != r.Header.Get("X-Request-Id") {
		t.Errorf("request_id %q, X-Request-Id %q", id, r.Header.Get("X-Request-Id"))
	}
	if r.Reason() == "" {
		t.Errorf("details.reason missing: %s", r.Body)
	}
}

// pfExpect is expectErr plus the shape check.
func pfExpect(t testing.TB, r webtest.Resp, status int, code, reason string) {
	t.Helper()
	webtest.ExpectErr(t, r, status, code, reason)
	pfErrorShape(t, r)
}

// pfDoHost sends a request with an arbitrary Host header (an IP, another
// domain) and optional extra headers.
func pfDoHost(k *webtest.Kit, method, host, path, token string, body any, headers ...string) webtest.Resp {
	k.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, k.TS.URL+path, rd)
	req.Host = host
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
	out := webtest.Resp{Status: res.StatusCode, Header: res.Header, Body: b}
	json.Unmarshal(b, &out.JSON)
	return out
}

// pfServe sends a request through the handler directly, from remoteAddr
// (the per-IP buckets key on it).
func pfServe(k *webtest.Kit, method, slug, path, remoteAddr string, body string) webtest.Resp {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = slug + ".xr.test"
	req.RemoteAddr = remoteAddr
	w := httptest.NewRecorder()
	k.Srv.ServeHTTP(w, req)
	out := webtest.Resp{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
	json.Unmarshal(out.Body, &out.JSON)
	return out
}

// newPfKitOneWindow is newPfKit whose rate limiter's clock stands still,
// so a bucket test counts inside one fixed window however slowly it runs.
func newPfKitOneWindow(t testing.TB, setup func(s *web.Server)) *webtest.Kit {
	t.Helper()
	minute := time.Now()
	return webtest.NewWith(t, app.Config{}, app.NewMemLimiterOn(func() time.Time { return minute }), setup)
}

type pfSpecRow struct{ Method, Path, Group string }

// pfSpecRows reads ../shared/spec/endpoints.tsv, found by walking up from
// the package directory.
func pfSpecRows(t testing.TB) []pfSpecRow {
	t.Helper()
	// The spec's route list, copied beside the tests so this never skips;
	// TestSpecCopyIsCurrent keeps the copy equal to shared/spec when that
	// folder is beside the checkout.
	path := filepath.Join("testdata", "endpoints.tsv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []pfSpecRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 2 {
			t.Fatalf("endpoints.tsv: bad line %q", line)
		}
		row := pfSpecRow{Method: strings.TrimSpace(cols[0]), Path: strings.TrimSpace(cols[1])}
		if len(cols) > 2 {
			row.Group = cols[2]
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 400 {
		t.Fatalf("endpoints.tsv: only %d rows", len(rows))
	}
	return rows
}
