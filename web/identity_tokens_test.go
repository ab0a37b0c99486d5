package web_test

import (
	"bytes"
	"database/sql"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/internal/webtest"
	"xr/internal/xrtest"
	"xr/web"
)

var idTokenRe = regexp.MustCompile(`^xrt_[A-Za-z0-9_-]{43}$`)

func TestIdentityAPITokenCreateListReveal(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")

	r := k.Do("POST", "acme", "/api/v1/developer/api-tokens", tok, map[string]any{"name": "billing", "scopes": []string{"prm_users_index", "prm_managers_index", "prm_users_index"}})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	plain, _ := r.Data()["token"].(string)
	if !idTokenRe.MatchString(plain) {
		t.Fatalf("token %q is not xrt_ + 43 base64url", plain)
	}
	id := int64(r.Data()["id"].(float64))
	if !reflect.DeepEqual(webtest.Strings(r.Data()["scopes"]), []string{"prm_managers_index", "prm_users_index"}) || r.Data()["full_access"] != false ||
		r.Data()["status"] != "active" || r.Data()["name"] != "billing" {
		t.Fatalf("created %s", r.Body)
	}
	// Stored hashed and sealed, never in the clear.
	t2 := k.Acquire("acme")
	var stored int
	t2.DB.R.QueryRow(`SELECT COUNT(*) FROM api_tokens WHERE CAST(token_hash AS TEXT) = ? OR CAST(token_sealed AS TEXT) = ? OR hint = ?`, plain, plain, plain).Scan(&stored)
	if stored != 0 {
		t.Fatal("token stored in the clear")
	}

	// The list never shows it.
	r = k.Do("GET", "acme", "/api/v1/developer/api-tokens", tok, nil)
	if r.Status != 200 || len(r.List()) != 1 || bytes.Contains(r.Body, []byte(plain)) || bytes.Contains(r.Body, []byte(plain[4:])) {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	if _, ok := r.List()[0].(map[string]any)["token"]; ok {
		t.Fatalf("list row has token: %s", r.Body)
	}
	// Reveal does.
	r = k.Do("POST", "acme", idP("/developer/api-tokens/%d/reveal", id), tok, nil)
	if r.Status != 200 || r.Data()["token"] != plain {
		t.Fatalf("reveal: %d %s", r.Status, r.Body)
	}
	// Reveal and the other token routes are session-only.
	for _, p := range []string{"/developer/api-tokens/%d/reveal", "/developer/api-tokens/%d/disable", "/developer/api-tokens/%d/revoke"} {
		webtest.ExpectErr(t, k.Do("POST", "acme", idP(p, id), plain, nil), 403, "ERR_FORBIDDEN", "api_token_forbidden")
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/developer/api-tokens", plain, nil), 403, "ERR_FORBIDDEN", "api_token_forbidden")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/developer/api-tokens", plain, map[string]any{"name": "x"}), 403, "ERR_FORBIDDEN", "api_token_forbidden")

	// Another manager cannot see, reveal or revoke it.
	webtest.CreateManager(k, "acme", 0, "staff1", "support")
	s := idSession(k, "acme", "staff1")
	if r := k.Do("GET", "acme", "/api/v1/developer/api-tokens", s, nil); len(r.List()) != 0 {
		t.Fatalf("staff1 sees owner's token: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/developer/api-tokens/%d/reveal", id), s, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/developer/api-tokens/%d/revoke", id), s, nil), 404, "ERR_NOT_FOUND", "not_found")

	// Creation refusals.
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": ""}, "name"},
		{map[string]any{"name": "x", "scopes": []string{"prm_nope"}}, "scopes"},
		{map[string]any{"name": "x", "expires_at": "2001-01-01"}, "expires_at"},
		{map[string]any{"name": "x", "expires_at": "yesterday"}, "expires_at"},
	} {
		r := k.Do("POST", "acme", "/api/v1/developer/api-tokens", tok, c.body)
		if r.Status != 400 || r.Field() != c.field {
			t.Fatalf("create %v: %d %s", c.body, r.Status, r.Body)
		}
	}
	if r := k.Do("GET", "acme", "/api/v1/developer/api-tokens", tok, nil); len(r.List()) != 1 {
		t.Fatalf("refused creates stored something: %s", r.Body)
	}
	// A revoked token is not revealed.
	k.Do("POST", "acme", idP("/developer/api-tokens/%d/revoke", id), tok, nil)
	if r := k.Do("POST", "acme", idP("/developer/api-tokens/%d/reveal", id), tok, nil); r.Status != 409 || bytes.Contains(r.Body, []byte(plain)) {
		t.Fatalf("reveal of a revoked token: %d %s", r.Status, r.Body)
	}
}

func TestIdentityAPITokenRevealBucket(t *testing.T) {
	t.Parallel()
	k := newIDKit(t, false, newIDStickyLimiter())
	tok := idSession(k, "acme", "owner")
	_, id := idAPIToken(k, "acme", tok, map[string]any{"scopes": []string{}})
	for i := 0; i < 10; i++ {
		if r := k.Do("POST", "acme", idP("/developer/api-tokens/%d/reveal", id), tok, nil); r.Status != 200 {
			t.Fatalf("reveal %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/developer/api-tokens/%d/reveal", id), tok, nil), 429, "ERR_RATE_LIMITED", "rate_limited")
}

func TestIdentityAPITokenScopeIntersection(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := idSession(k, "acme", "owner")

	// Scoped token of an administrator owner: restricted all the same.
	scoped, _ := idAPIToken(k, "acme", owner, map[string]any{"scopes": []string{"prm_managers_index"}})
	me := idMe(k, "acme", scoped)
	if me["is_admin"] != false || idContains(webtest.Strings(me["roles"]), "administrator") ||
		!reflect.DeepEqual(webtest.Strings(me["permissions"]), []string{"prm_managers_index"}) {
		t.Fatalf("scoped me: %v", me)
	}
	if int64(me["manager"].(map[string]any)["id"].(float64)) != webtest.OwnerID(k, "acme") {
		t.Fatalf("scoped me manager: %v", me["manager"])
	}
	if r := k.Do("GET", "acme", "/api/v1/managers", scoped, nil); r.Status != 200 {
		t.Fatalf("scoped GET /managers: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/managers", scoped, map[string]any{"username": "x1", "password": webtest.Password}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/roles", scoped, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	// A plain denial carries code and message, and nothing but the reason.
	r := k.Do("GET", "acme", "/api/v1/roles", scoped, nil)
	if d := r.JSON["error"].(map[string]any)["details"].(map[string]any); len(d) != 1 {
		t.Fatalf("denial details %v", d)
	}

	// Empty scope: authenticates, may do nothing.
	empty, _ := idAPIToken(k, "acme", owner, map[string]any{"scopes": []string{}})
	r = k.Do("GET", "acme", "/api/v1/auth/me", empty, nil)
	if r.Status != 200 || !bytes.Contains(r.Body, []byte(`"permissions":[]`)) || r.Data()["is_admin"] != false {
		t.Fatalf("empty scope me: %d %s", r.Status, r.Body)
	}
	for _, gated := range k.Srv.Routes() {
		if gated.Access != web.Staff || len(gated.Perms) == 0 || gated.SessionOnly || gated.H == nil || gated.Root {
			continue
		}
		p := idFillPath(gated.FullPath())
		var body any
		if gated.IsMutation() {
			body = map[string]any{}
		}
		r := k.Do(gated.M, "acme", p, empty, body)
		if r.Status != 403 || r.Code() != "ERR_FORBIDDEN" || r.Reason() != "insufficient_permissions" {
			t.Fatalf("empty scope %s %s: %d %s", gated.M, p, r.Status, r.Body)
		}
	}
	// The same with no scopes field at all.
	none, _ := idAPIToken(k, "acme", owner, map[string]any{})
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/managers", none, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")

	// Full access is a separate flag: everything the owner has.
	full, _ := idAPIToken(k, "acme", owner, map[string]any{"full_access": true})
	me = idMe(k, "acme", full)
	if !reflect.DeepEqual(webtest.Strings(me["permissions"]), k.App.AllPermissionCodes()) {
		t.Fatalf("full access permissions %v", me["permissions"])
	}
	if r := k.Do("POST", "acme", "/api/v1/managers", full, map[string]any{"username": "x1", "password": webtest.Password}); r.Status != 201 {
		t.Fatalf("full access create: %d %s", r.Status, r.Body)
	}

	// A token never exceeds its owner: a support manager's token scoped to
	// codes it lacks gets only the overlap, even with full access.
	webtest.CreateManager(k, "acme", 0, "staff1", "support")
	s := idSession(k, "acme", "staff1")
	st, _ := idAPIToken(k, "acme", s, map[string]any{"scopes": []string{"prm_users_index", "prm_roles_manage", "prm_managers_delete"}})
	if got := webtest.Strings(idMe(k, "acme", st)["permissions"]); !reflect.DeepEqual(got, []string{"prm_users_index"}) {
		t.Fatalf("support token permissions %v", got)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/roles", st, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	sfull, _ := idAPIToken(k, "acme", s, map[string]any{"full_access": true})
	mine := webtest.Strings(idMe(k, "acme", s)["permissions"])
	if got := webtest.Strings(idMe(k, "acme", sfull)["permissions"]); !reflect.DeepEqual(got, mine) {
		t.Fatalf("support full token %v, owner has %v", got, mine)
	}
	if me := idMe(k, "acme", st); !reflect.DeepEqual(webtest.Strings(me["roles"]), []string{"support"}) {
		t.Fatalf("non-reserved role names stay: %v", me["roles"])
	}
}

// idFillPath puts a harmless value into every {param} of a pattern.
func idFillPath(p string) string {
	return regexp.MustCompile(`\{[^}]+\}`).ReplaceAllStringFunc(p, func(s string) string {
		if s == "{jti}" {
			return "x"
		}
		return "1"
	})
}

func TestIdentityAPITokenNarrowsAfterRoleEdit(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := idSession(k, "acme", "owner")
	role := webtest.CreateRole(k, "acme", "desk", "prm_managers_index", "prm_users_index", "prm_roles_manage")
	webtest.CreateManager(k, "acme", 0, "desk1", "desk")
	s := idSession(k, "acme", "desk1")
	tok, id := idAPIToken(k, "acme", s, map[string]any{"scopes": []string{"prm_managers_index", "prm_users_index"}})

	if r := k.Do("GET", "acme", "/api/v1/managers", tok, nil); r.Status != 200 {
		t.Fatalf("before edit: %d %s", r.Status, r.Body)
	}
	// Prime every cache, then narrow the role.
	idMe(k, "acme", tok)
	r := k.Do("PATCH", "acme", idP("/roles/%d", role), owner, map[string]any{"permissions": []string{"prm_users_index", "prm_roles_manage"}})
	if r.Status != 200 {
		t.Fatalf("patch role: %d %s", r.Status, r.Body)
	}
	// The very next request sees it: silently, without touching the stored scope.
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/managers", tok, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	if got := webtest.Strings(idMe(k, "acme", tok)["permissions"]); !reflect.DeepEqual(got, []string{"prm_users_index"}) {
		t.Fatalf("after edit: %v", got)
	}
	r = k.Do("GET", "acme", "/api/v1/developer/api-tokens", s, nil)
	row := r.List()[0].(map[string]any)
	if int64(row["id"].(float64)) != id || !reflect.DeepEqual(webtest.Strings(row["scopes"]), []string{"prm_managers_index", "prm_users_index"}) || row["status"] != "active" {
		t.Fatalf("stored scope changed: %s", r.Body)
	}
	// And the holder's session narrows too.
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/managers", s, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")

	// Putting the code back widens again (up to the scope, never beyond).
	k.Do("PATCH", "acme", idP("/roles/%d", role), owner, map[string]any{"permissions": []string{"prm_users_index", "prm_roles_manage", "prm_managers_index", "prm_managers_create"}})
	if got := webtest.Strings(idMe(k, "acme", tok)["permissions"]); !reflect.DeepEqual(got, []string{"prm_managers_index", "prm_users_index"}) {
		t.Fatalf("after restoring: %v", got)
	}
	// Taking the role away (PUT roles) also applies at once.
	if r := k.Do("PUT", "acme", idP("/managers/%d/roles", webtest.Scalar(k, "acme", `SELECT id FROM managers WHERE username='desk1'`)), owner, map[string]any{"role_ids": []int64{}}); r.Status != 200 {
		t.Fatalf("put roles: %d %s", r.Status, r.Body)
	}
	r = k.Do("GET", "acme", "/api/v1/auth/me", tok, nil)
	if r.Status != 200 || !bytes.Contains(r.Body, []byte(`"permissions":[]`)) {
		t.Fatalf("after losing the role: %s", r.Body)
	}
}

func TestIdentityAPITokenFailureReasons(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := idSession(k, "acme", "owner")
	staff := webtest.CreateManager(k, "acme", 0, "staff1", "support")
	s := idSession(k, "acme", "staff1")
	ok := func(tok string) {
		t.Helper()
		if r := k.Do("GET", "acme", "/api/v1/users", tok, nil); r.Status == 401 || r.Status == 403 {
			t.Fatalf("token refused: %d %s", r.Status, r.Body)
		}
		idMe(k, "acme", tok)
	}

	// Unknown but well-formed.
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", "xrt_"+strings.Repeat("Q", 43), nil), 401, "ERR_UNAUTHORIZED", "api_token_invalid")
	// A token of another tenant is unknown here.
	k.Tenant("beta")
	btok, _ := idAPIToken(k, "beta", idSession(k, "beta", "owner"), map[string]any{"full_access": true})
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", btok, nil), 401, "ERR_UNAUTHORIZED", "api_token_invalid")
	webtest.ExpectErr(t, k.Do("GET", "", "/api/v1/auth/me", btok, nil), 401, "ERR_UNAUTHORIZED", "api_token_invalid")
	// Identically to a guess.
	idSameError(t, k.Do("GET", "acme", "/api/v1/auth/me", btok, nil), k.Do("GET", "acme", "/api/v1/auth/me", "xrt_"+strings.Repeat("Q", 43), nil))

	// Revoked: permanent.
	tok, id := idAPIToken(k, "acme", s, map[string]any{"full_access": true})
	ok(tok)
	if r := k.Do("POST", "acme", idP("/developer/api-tokens/%d/revoke", id), s, nil); r.Status != 200 || r.Data()["status"] != "revoked" {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "api_token_revoked")
	if r := k.Do("POST", "acme", idP("/developer/api-tokens/%d/enable", id), s, nil); r.Status != 409 {
		t.Fatalf("enable a revoked token: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "api_token_revoked")

	// Disabled: reversible.
	tok, id = idAPIToken(k, "acme", s, map[string]any{"full_access": true})
	if r := k.Do("POST", "acme", idP("/developer/api-tokens/%d/disable", id), s, nil); r.Status != 200 || r.Data()["status"] != "disabled" {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "api_token_disabled")
	if r := k.Do("POST", "acme", idP("/developer/api-tokens/%d/enable", id), s, nil); r.Status != 200 || r.Data()["status"] != "active" {
		t.Fatalf("enable: %d %s", r.Status, r.Body)
	}
	ok(tok)

	// Expired: a past expiry is refused at create, so age the row.
	tok, id = idAPIToken(k, "acme", s, map[string]any{"full_access": true, "expires_at": "2999-01-01 00:00:00"})
	ok(tok)
	idExec(k, "acme", `UPDATE api_tokens SET expires_at = ? WHERE id = ?`, app.FormatTime(time.Now().UTC().Add(-1e9)), id)
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "api_token_expired")
	r := k.Do("GET", "acme", "/api/v1/developer/api-tokens", s, nil)
	for _, row := range r.List() {
		if m := row.(map[string]any); int64(m["id"].(float64)) == id && m["status"] != "expired" {
			t.Fatalf("expired token listed as %v", m["status"])
		}
	}

	// Owner suspended: every token of it stops; activation restores.
	tok, _ = idAPIToken(k, "acme", s, map[string]any{"scopes": []string{"prm_users_index"}})
	ok(tok)
	if r := k.Do("POST", "acme", idP("/managers/%d/suspend", staff), owner, nil); r.Status != 200 {
		t.Fatalf("suspend: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "api_token_owner_inactive")
	if r := k.Do("POST", "acme", idP("/managers/%d/activate", staff), owner, nil); r.Status != 200 {
		t.Fatalf("activate: %d %s", r.Status, r.Body)
	}
	ok(tok)

	// Owner deleted (tokens cascade with it): the token is unknown.
	webtest.CreateManager(k, "acme", 0, "temp1")
	tt, _ := idAPIToken(k, "acme", idSession(k, "acme", "temp1"), map[string]any{"full_access": true})
	if r := k.Do("DELETE", "acme", idP("/managers/%d", webtest.Scalar(k, "acme", `SELECT id FROM managers WHERE username='temp1'`)), owner, nil); r.Status != 200 {
		t.Fatalf("delete temp1: %d %s", r.Status, r.Body)
	}
	r = k.Do("GET", "acme", "/api/v1/auth/me", tt, nil)
	if r.Status != 401 || (r.Reason() != "api_token_invalid" && r.Reason() != "api_token_owner_inactive") {
		t.Fatalf("token of a deleted owner: %d %s", r.Status, r.Body)
	}
}

func TestIdentitySessionOnlyRoutesRefuseTokens(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := idSession(k, "acme", "owner")
	full, _ := idAPIToken(k, "acme", owner, map[string]any{"full_access": true})

	// The spec's session-only surfaces are marked so in the table.
	marked := map[string]bool{}
	for _, r := range k.Srv.Routes() {
		if r.SessionOnly {
			marked[r.M+" "+r.P] = true
		}
	}
	for _, want := range []string{
		"GET /auth/account", "PATCH /auth/account", "POST /auth/account/2fa/disable", "POST /auth/account/2fa/enable",
		"POST /auth/account/2fa/recovery-codes", "POST /auth/account/2fa/setup", "POST /auth/account/avatar", "GET /auth/account/limits",
		"POST /auth/account/password", "GET /auth/account/sessions", "POST /auth/account/sessions/revoke-others",
		"DELETE /auth/account/sessions/{jti}", "POST /auth/impersonation/exit", "POST /auth/logout", "DELETE /auth/push-tokens",
		"POST /auth/push-tokens", "POST /managers/{id}/2fa/reset", "POST /managers/{id}/login-as",
		"GET /developer/api-tokens", "POST /developer/api-tokens", "POST /developer/api-tokens/{id}/reveal",
		"POST /developer/api-tokens/{id}/revoke", "POST /developer/api-tokens/{id}/disable", "POST /developer/api-tokens/{id}/enable",
	} {
		if !marked[want] {
			t.Errorf("%s is not session-only", want)
		}
	}
	// /auth/me and POST /users/{id}/login-as take tokens.
	if marked["GET /auth/me"] || marked["POST /users/{id}/login-as"] {
		t.Error("a token route is marked session-only")
	}

	// Behaviour: every session-only row refuses a full-access token.
	n := 0
	for _, r := range k.Srv.Routes() {
		if !r.SessionOnly || r.H == nil {
			continue
		}
		n++
		var body any
		if r.IsMutation() {
			body = map[string]any{}
		}
		p := idFillPath(r.FullPath())
		webtest.ExpectErr(t, k.Do(r.M, "acme", p, full, body), 403, "ERR_FORBIDDEN", "api_token_forbidden")
	}
	if n < 20 {
		t.Fatalf("only %d session-only rows", n)
	}
	// Nothing the refusals touched: the owner is still signed in and 2FA is off.
	if me := idMe(k, "acme", owner); me["manager"].(map[string]any)["two_factor_enabled"] != false {
		t.Fatal("a refused call changed the account")
	}
	// A token is accepted on an ordinary staff route with the same codes.
	staff := webtest.CreateManager(k, "acme", 0, "staff1")
	if r := k.Do("GET", "acme", "/api/v1/managers/"+strconv.FormatInt(staff, 10), full, nil); r.Status != 200 {
		t.Fatalf("full token on GET /managers/{id}: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/login-as", staff), full, nil), 403, "ERR_FORBIDDEN", "api_token_forbidden")
}

// TestIdentityGrantCacheIsPerInstance: two instances in one process (or a
// tenant re-created under the same slug) never share a manager's cached
// authority.
func TestIdentityGrantCacheIsPerInstance(t *testing.T) {
	t.Parallel()
	k1 := webtest.New(t)
	k2 := webtest.New(t)
	id1 := webtest.CreateManager(k1, "acme", 0, "m1", "reseller")
	id2 := webtest.CreateManager(k2, "acme", 0, "m1", "cashier")
	if id1 != id2 {
		t.Skipf("ids differ (%d, %d): nothing to confuse", id1, id2)
	}
	s1, s2 := idSession(k1, "acme", "m1"), idSession(k2, "acme", "m1")
	for i := 0; i < 2; i++ {
		me1 := idMe(k1, "acme", s1)
		me2 := idMe(k2, "acme", s2)
		if !reflect.DeepEqual(webtest.Strings(me1["roles"]), []string{"reseller"}) || !reflect.DeepEqual(webtest.Strings(me2["roles"]), []string{"cashier"}) {
			t.Fatalf("instances share a cached grant: roles %v and %v", me1["roles"], me2["roles"])
		}
	}
	// In k2 m1 cannot list managers (cashier), in k1 it can (reseller).
	webtest.ExpectErr(t, k2.Do("GET", "acme", "/api/v1/managers", s2, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	if r := k1.Do("GET", "acme", "/api/v1/managers", s1, nil); r.Status != 200 {
		t.Fatalf("reseller list: %d %s", r.Status, r.Body)
	}
}

// Using a token records when it was last used (asynchronously, at most
// once a minute), without making authentication a write.
func TestIdentityTokenLastUsed(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := k.Owner("acme")
	r := k.Do("POST", "acme", "/api/v1/developer/api-tokens", owner, map[string]any{"name": "ci", "full_access": true})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	tok, id := r.Data()["token"].(string), r.Data()["id"].(float64)
	if r.Data()["last_used_at"] != nil {
		t.Fatal("a new token has a last use")
	}
	if r := k.Do("GET", "acme", "/api/v1/auth/me", tok, nil); r.Status != 200 {
		t.Fatalf("me: %d", r.Status)
	}
	xrtest.Eventually(t, "last_used_at written", func() bool {
		var last sql.NullString
		k.Acquire("acme").DB.R.QueryRow(`SELECT last_used_at FROM api_tokens WHERE id = ?`, int64(id)).Scan(&last)
		return last.Valid
	})
}
