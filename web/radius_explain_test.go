package web_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"layeh.com/radius"

	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// radiusDiagKit: a real RADIUS server (rywKit), the owner's subscriber
// ulla, a reseller "res" (not tenant-wide) with its subscriber rita, and a
// manager "blind" whose role has neither diagnostic code.
type radiusDiagKit struct {
	*webtest.RadiusKit
	nasID              int64
	resTok, blindTok   string
	resID, ulla, rita  int64
	explainP, authLogP string
}

func newRadiusDiagKit(t *testing.T) *radiusDiagKit {
	k := &radiusDiagKit{RadiusKit: webtest.NewRadiusKit(t), explainP: "/api/v1/admin/radius/explain", authLogP: "/api/v1/admin/radius/auth-log"}
	k.nasID = k.Scalar(`SELECT id FROM nas`).Int64
	webtest.CreateRole(k.Kit, "acme", "diag", "prm_users_index", "prm_report_sessions", "prm_users_create")
	webtest.CreateRole(k.Kit, "acme", "nodiag", "prm_users_create")
	k.resID = webtest.CreateManager(k.Kit, "acme", 0, "res", "diag")
	webtest.CreateManager(k.Kit, "acme", 0, "blind", "nodiag")
	k.resTok, k.blindTok = k.Login("acme", "res", webtest.Password), k.Login("acme", "blind", webtest.Password)
	k.ulla = k.CreateUser("ulla")
	r := k.Do("POST", "acme", "/api/v1/users", k.Tok, map[string]any{"username": "rita", "password": "pw-rita",
		"profile_id": k.Plan, "expiration": "2030-01-02", "parent_id": k.resID})
	if r.Status != 201 {
		t.Fatalf("create rita: %d %s", r.Status, r.Body)
	}
	k.rita = int64(r.Data()["id"].(float64))
	return k
}

func (k *radiusDiagKit) explain(tok string, body map[string]any) webtest.Resp {
	k.T.Helper()
	return k.Do("POST", "acme", k.explainP, tok, body)
}

func checkNames(ex map[string]any) []string {
	var out []string
	for _, c := range ex["checks"].([]any) {
		out = append(out, c.(map[string]any)["name"].(string))
	}
	return out
}

func TestRadiusExplainHTTP(t *testing.T) {
	t.Parallel()
	k := newRadiusDiagKit(t)

	// Authorization comes before validation.
	webtest.ExpectErr(t, k.explain(k.blindTok, map[string]any{}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, k.explain(k.Tok, map[string]any{}), 400, "ERR_VALIDATION", "username_required")
	webtest.ExpectErr(t, k.explain(k.Tok, map[string]any{"username": "ulla"}), 400, "ERR_VALIDATION", "nas_id_required")
	webtest.ExpectErr(t, k.explain(k.Tok, map[string]any{"username": "ulla", "nas_id": 999}), 400, "ERR_VALIDATION", "invalid_nas_id")
	r := k.explain(k.Tok, map[string]any{"username": "ulla", "nas_id": k.nasID, "at": "tomorrow"})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "invalid_value")
	if r.Field() != "at" {
		t.Fatalf("field %q", r.Field())
	}

	r = k.explain(k.Tok, map[string]any{"username": "ulla", "nas_id": k.nasID, "password": "pw-ulla"})
	if r.Status != 200 {
		t.Fatalf("explain: %d %s", r.Status, r.Body)
	}
	ex := r.Data()
	if ex["result"] != "accept" || ex["reason"] != "" || int64(ex["user_id"].(float64)) != k.ulla || ex["nas_type"] != "mikrotik" {
		t.Fatalf("explanation: %s", r.Body)
	}
	want := []string{"exists", "password", "tenant", "enabled", "plan", "expiry", "quota", "fup", "time_quota", "mac_lock", "simultaneous_use", "nas"}
	if got := checkNames(ex); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("checks %v, want %v", got, want)
	}
	attrs := map[string]string{}
	for _, a := range ex["attributes"].([]any) {
		m := a.(map[string]any)
		attrs[m["name"].(string)] = m["value"].(string)
	}
	if attrs["Mikrotik-Rate-Limit"] != "2048k/10240k" || attrs["Session-Timeout"] == "" || attrs["Class"] == "" {
		t.Fatalf("attributes %v", attrs)
	}
	// As if at a later time: expired.
	r = k.explain(k.Tok, map[string]any{"username": "ulla", "nas_id": k.nasID, "at": "2031-01-01 00:00:00"})
	if r.Status != 200 || r.Data()["result"] != "reject" || r.Data()["reason"] != "expired" {
		t.Fatalf("explain at 2031: %d %s", r.Status, r.Body)
	}
	// The explainer has no effect: the login works and nothing was written.
	if c := k.Auth("ulla", "pw-ulla"); c != radius.CodeAccessAccept {
		t.Fatalf("login after explain: %v", c)
	}

	// Scope: the reseller explains its own subscriber; one outside its
	// subtree is explained exactly like a username nobody has.
	r = k.explain(k.resTok, map[string]any{"username": "rita", "nas_id": k.nasID, "password": "wrong"})
	if r.Status != 200 || r.Data()["result"] != "reject" || r.Data()["reason"] != "bad_password" || int64(r.Data()["user_id"].(float64)) != k.rita {
		t.Fatalf("reseller explains rita: %d %s", r.Status, r.Body)
	}
	outside := k.explain(k.resTok, map[string]any{"username": "ulla", "nas_id": k.nasID})
	nobody := k.explain(k.resTok, map[string]any{"username": "nobody", "nas_id": k.nasID})
	if outside.Status != 200 || outside.Data()["reason"] != "unknown_user" || outside.Data()["user_id"] != nil {
		t.Fatalf("reseller explains ulla: %d %s", outside.Status, outside.Body)
	}
	o, n := outside.Data(), nobody.Data()
	delete(o, "username")
	delete(n, "username")
	delete(o, "at")
	delete(n, "at")
	if fmt.Sprint(o) != fmt.Sprint(n) {
		t.Fatalf("out of scope %v\nunknown %v", o, n)
	}
}

// authLogRows waits until the auth log holds n decisions.
func (k *radiusDiagKit) authLogRows(n int) {
	k.T.Helper()
	xrtest.Eventually(k.T, fmt.Sprintf("%d rows in the auth log", n), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := k.Svc.FlushAuthLog(ctx)
		cancel()
		if err != nil {
			k.T.Fatal(err)
		}
		return k.Scalar(`SELECT COUNT(*) FROM auth_log`).Int64 >= int64(n)
	})
}

func TestRadiusAuthLogHTTP(t *testing.T) {
	t.Parallel()
	k := newRadiusDiagKit(t)
	k.Auth("ulla", "pw-ulla")
	k.Auth("ulla", "bad")
	k.Auth("rita", "pw-rita")
	k.Auth("ghost", "x")
	k.authLogRows(4)

	list := func(tok string, q url.Values) webtest.Resp {
		t.Helper()
		return k.Do("GET", "acme", k.authLogP+"?"+q.Encode(), tok, nil)
	}
	webtest.ExpectErr(t, list(k.blindTok, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")

	r := list(k.Tok, nil)
	if r.Status != 200 || len(r.List()) != 4 || r.Meta()["total"].(float64) != 4 {
		t.Fatalf("owner: %d %s", r.Status, r.Body)
	}
	// Decisions are queued right after their answers, by several workers:
	// rows of the same second need not be in the order sent.
	var newest map[string]any
	for _, row := range r.List() {
		if m := row.(map[string]any); m["username"] == "ghost" {
			newest = m
		}
	}
	if newest == nil || newest["result"] != "reject" || newest["reason"] != "unknown_user" || newest["user_id"] != nil ||
		int64(newest["nas_id"].(float64)) != k.nasID || newest["nas_name"] != "lo" || newest["at"] == nil {
		t.Fatalf("ghost's row %v", newest)
	}
	for _, c := range []struct {
		filter, value string
		want          int
	}{
		{"username", "ULLA", 2},
		{"result", "reject", 2},
		{"result", "accept", 2},
		{"reason", "bad_password", 1},
		{"reason", "unknown_user", 1},
		{"nas_id", fmt.Sprint(k.nasID), 4},
		{"nas_id", "999", 0},
		{"user_id", fmt.Sprint(k.rita), 1},
		{"from", "2000-01-01", 4},
		{"to", "2000-01-01", 0},
		{"from", time.Now().UTC().Add(time.Hour).Format("2006-01-02 15:04:05"), 0},
	} {
		r := list(k.Tok, url.Values{"filter[" + c.filter + "]": {c.value}})
		if r.Status != 200 || len(r.List()) != c.want {
			t.Fatalf("filter[%s]=%s: %d, %d rows, want %d: %s", c.filter, c.value, r.Status, len(r.List()), c.want, r.Body)
		}
	}
	webtest.ExpectErr(t, list(k.Tok, url.Values{"filter[result]": {"maybe"}}), 400, "ERR_VALIDATION", "invalid_filter")
	webtest.ExpectErr(t, list(k.Tok, url.Values{"filter[nas_id]": {"x"}}), 400, "ERR_VALIDATION", "invalid_filter")
	webtest.ExpectErr(t, list(k.Tok, url.Values{"filter[from]": {"yesterday"}}), 400, "ERR_VALIDATION", "invalid_filter")

	// The reseller sees the decisions about its subtree's subscribers only,
	// never those about unknown usernames.
	r = list(k.resTok, nil)
	if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["username"] != "rita" {
		t.Fatalf("reseller: %d %s", r.Status, r.Body)
	}
	if r := list(k.resTok, url.Values{"filter[username]": {"ulla"}}); r.Status != 200 || len(r.List()) != 0 {
		t.Fatalf("reseller filtering for ulla: %d %s", r.Status, r.Body)
	}
}
