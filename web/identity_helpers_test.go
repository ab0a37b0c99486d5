package web_test

// Helpers of the identity tests (prefix id/ID to stay clear of the helpers
// other areas add to package web).

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"xr/app"
	"xr/app/identity"
	"xr/internal/webtest"
)

// newIDKit is newKit with signup allowed or not and a limiter of the
// test's choosing (nil = a fresh in-process limiter). The limiter is set
// before the server starts, so no request can race with it.
func newIDKit(t testing.TB, allowSignup bool, lim app.Limiter) *webtest.Kit {
	t.Helper()
	return webtest.NewWith(t, app.Config{AllowSignup: allowSignup}, lim, nil)
}

// idStickyLimiter counts hits per key without ever resetting: a bucket test
// cannot straddle a minute boundary with it.
type idStickyLimiter struct {
	mu sync.Mutex
	n  map[string]int
}

func newIDStickyLimiter() *idStickyLimiter { return &idStickyLimiter{n: map[string]int{}} }

func (l *idStickyLimiter) Allow(key string, limit int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[key] >= limit {
		return false
	}
	l.n[key]++
	return true
}

// idLogin signs in through the app (not HTTP, so the per-IP login bucket
// stays for the tests that are about login).
func idLogin(k *webtest.Kit, slug, user, password string) *identity.LoginResult {
	k.T.Helper()
	res, err := identity.Login(webtest.Background, k.App, k.Acquire(slug), identity.LoginRequest{Email: user, Password: password, IP: "192.0.2.1"})
	if err != nil {
		k.T.Fatalf("login %s@%s: %v", user, slug, err)
	}
	return res
}

// idSession is a session token of user (password testPassword).
func idSession(k *webtest.Kit, slug, user string) string {
	k.T.Helper()
	return idLogin(k, slug, user, webtest.Password).Token
}

// idExec runs one statement in a write transaction of the tenant.
func idExec(k *webtest.Kit, slug, q string, args ...any) {
	k.T.Helper()
	t := k.Acquire(slug)
	err := t.Write(webtest.Background, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(webtest.Background, q, args...)
		return err
	})
	if err != nil {
		k.T.Fatalf("%s: %v", q, err)
	}
}

// idAPIToken creates an API token through HTTP with a session token and
// returns the plaintext and its id.
func idAPIToken(k *webtest.Kit, slug, session string, body map[string]any) (string, int64) {
	k.T.Helper()
	if body["name"] == nil {
		body["name"] = "t"
	}
	r := k.Do("POST", slug, "/api/v1/developer/api-tokens", session, body)
	if r.Status != 200 {
		k.T.Fatalf("create api token: %d %s", r.Status, r.Body)
	}
	return r.Data()["token"].(string), int64(r.Data()["id"].(float64))
}

// idMe is GET /auth/me's data, failing unless 200.
func idMe(k *webtest.Kit, slug, token string) map[string]any {
	k.T.Helper()
	r := k.Do("GET", slug, "/api/v1/auth/me", token, nil)
	if r.Status != 200 {
		k.T.Fatalf("/auth/me: %d %s", r.Status, r.Body)
	}
	return r.Data()
}

// idForge signs arbitrary claims with the instance key, the way session
// tokens are signed.
func idForge(k *webtest.Kit, claims map[string]any) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	b, _ := json.Marshal(claims)
	s := h + "." + base64.RawURLEncoding.EncodeToString(b)
	return s + "." + base64.RawURLEncoding.EncodeToString(k.App.Keys.MAC([]byte(s)))
}

// idClaims decodes a session token's claims (no verification).
func idClaims(t testing.TB, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a session token: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// idJTI is a session token's jti.
func idJTI(t testing.TB, token string) string { return idClaims(t, token)["jti"].(string) }

// idWithoutRequestID is the body with error.request_id's value cut out of
// the raw bytes: two answers equal under it are byte-identical except for
// the request id.
func idWithoutRequestID(t testing.TB, r webtest.Resp) []byte {
	t.Helper()
	e, _ := r.JSON["error"].(map[string]any)
	id, _ := e["request_id"].(string)
	if id == "" {
		t.Fatalf("no error.request_id in %s", r.Body)
	}
	return bytes.Replace(r.Body, []byte(`"request_id":"`+id+`"`), []byte(`"request_id":""`), 1)
}

// idSameError asserts two error answers are byte-identical except request_id.
func idSameError(t testing.TB, a, b webtest.Resp) {
	t.Helper()
	if a.Status != b.Status || !bytes.Equal(idWithoutRequestID(t, a), idWithoutRequestID(t, b)) {
		t.Fatalf("answers differ:\n%d %s\n%d %s", a.Status, a.Body, b.Status, b.Body)
	}
}

// idKeys is the sorted key set of a JSON object.
func idKeys(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// idWantKeys asserts a JSON object has exactly the keys want.
func idWantKeys(t testing.TB, what string, v any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := idKeys(v); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s keys = %v, want %v", what, got, want)
	}
}

// idIDs collects the "id" of every row of a JSON array.
func idIDs(rows []any) []int64 {
	out := []int64{}
	for _, r := range rows {
		m, _ := r.(map[string]any)
		f, _ := m["id"].(float64)
		out = append(out, int64(f))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func idContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// idDo is Do without testing.TB, safe to call from other goroutines.
func idDo(k *webtest.Kit, method, slug, path, token string, body any) (webtest.Resp, error) {
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, k.TS.URL+path, rd)
	if err != nil {
		return webtest.Resp{}, err
	}
	req.Host = "xr.test"
	if slug != "" {
		req.Host = slug + ".xr.test"
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return webtest.Resp{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return webtest.Resp{}, err
	}
	out := webtest.Resp{Status: res.StatusCode, Header: res.Header, Body: b}
	if err := json.Unmarshal(b, &out.JSON); err != nil {
		return out, fmt.Errorf("decode %s: %w", b, err)
	}
	return out, nil
}

// idP formats a path.
func idP(format string, args ...any) string { return "/api/v1" + fmt.Sprintf(format, args...) }
