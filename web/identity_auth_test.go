package web_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"mime/multipart"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"xr/app"
	"xr/app/identity"
	"xr/internal/webtest"
)

func idLoginBody(user, pw string, extra ...any) map[string]any {
	b := map[string]any{"email": user, "password": pw}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i].(string)] = extra[i+1]
	}
	return b
}

func TestIdentityLoginByUsernameAndEmail(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := webtest.OwnerID(k, "acme")
	for _, who := range []string{"owner", "owner@acme.test", "OWNER"} {
		before := time.Now().Unix()
		r := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody(who, webtest.Password))
		if r.Status != 200 {
			t.Fatalf("login as %q: %d %s", who, r.Status, r.Body)
		}
		d := r.Data()
		idWantKeys(t, "login data", d, "token", "user_id", "tenant_id", "tenant_slug", "roles", "expires_at")
		if int64(d["user_id"].(float64)) != owner || d["tenant_slug"] != "acme" || d["tenant_id"].(float64) <= 0 {
			t.Fatalf("login data: %v", d)
		}
		if !reflect.DeepEqual(webtest.Strings(d["roles"]), []string{"administrator"}) {
			t.Fatalf("roles %v", d["roles"])
		}
		// expires_at is unix seconds, the tenant's session length ahead (720 min by default).
		exp := int64(d["expires_at"].(float64))
		if exp < before+720*60-5 || exp > time.Now().Unix()+720*60+5 {
			t.Fatalf("expires_at %d not ~12h ahead of %d", exp, before)
		}
		if !identity.IsSessionTokenShape(d["token"].(string)) {
			t.Fatalf("token %q is not dot-separated", d["token"])
		}
		idMe(k, "acme", d["token"].(string))
	}
}

func TestIdentitySessionLengthFromSetting(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	idExec(k, "acme", `UPDATE settings SET value = '5' WHERE key = 'session_length_minutes'`)
	before := time.Now().Unix()
	res := idLogin(k, "acme", "owner", webtest.Password)
	if res.ExpiresAt < before+5*60-2 || res.ExpiresAt > time.Now().Unix()+5*60+2 {
		t.Fatalf("expires_at %d, want ~now+300", res.ExpiresAt)
	}
	if c := idClaims(t, res.Token); int64(c["exp"].(float64)) != res.ExpiresAt {
		t.Fatalf("token exp %v != expires_at %d", c["exp"], res.ExpiresAt)
	}
}

func TestIdentityLoginFailureReasons(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	staff := webtest.CreateManager(k, "acme", 0, "staff1", "support")

	unknown := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("nobody", webtest.Password))
	webtest.ExpectErr(t, unknown, 401, "ERR_UNAUTHORIZED", "invalid_credentials")
	wrong := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", "Wrong-pass-1"))
	webtest.ExpectErr(t, wrong, 401, "ERR_UNAUTHORIZED", "invalid_credentials")
	// An unknown user and a wrong password both cost a password check and
	// answer one identical error (code, reason, message): a login never
	// tells which accounts exist.
	if a, b := idErrorSansRequestID(t, unknown), idErrorSansRequestID(t, wrong); unknown.Status != wrong.Status || a != b {
		t.Fatalf("unknown %d %s vs wrong %d %s", unknown.Status, a, wrong.Status, b)
	}
	// An unknown tenant on the apex answers the same.
	apex := k.Do("POST", "", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "tenant_slug", "zzz"))
	if a := idErrorSansRequestID(t, apex); apex.Status != wrong.Status || a != idErrorSansRequestID(t, wrong) {
		t.Fatalf("unknown tenant %d %s", apex.Status, a)
	}

	// Suspended: the right password is needed to learn it.
	if err := identity.SetManagerStatus(webtest.Background, k.System("acme"), staff, "suspended"); err != nil {
		t.Fatal(err)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("staff1", webtest.Password)), 401, "ERR_UNAUTHORIZED", "account_suspended")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("staff1", "Wrong-pass-1")), 401, "ERR_UNAUTHORIZED", "invalid_credentials")
	if err := identity.SetManagerStatus(webtest.Background, k.System("acme"), staff, "active"); err != nil {
		t.Fatal(err)
	}
	if r := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("staff1", webtest.Password)); r.Status != 200 {
		t.Fatalf("reactivated login: %d %s", r.Status, r.Body)
	}

	// Missing fields are a 400 naming the field.
	r := k.Do("POST", "acme", "/api/v1/auth/login", "", map[string]any{"email": "owner"})
	if r.Status != 400 || r.Field() != "password" {
		t.Fatalf("missing password: %d %s", r.Status, r.Body)
	}
}

func TestIdentityLoginTenantSlug(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	k.Tenant("beta")
	webtest.CreateManager(k, "beta", 0, "onlyb")

	// Apex host: tenant_slug chooses the tenant.
	r := k.Do("POST", "", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "tenant_slug", "acme"))
	if r.Status != 200 || r.Data()["tenant_slug"] != "acme" {
		t.Fatalf("apex + tenant_slug acme: %d %s", r.Status, r.Body)
	}
	tok := r.Data()["token"].(string)
	// The token is acme's: it works on acme's host, and on no other.
	idMe(k, "acme", tok)
	webtest.ExpectErr(t, k.Do("GET", "beta", "/api/v1/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
	webtest.ExpectErr(t, k.Do("GET", "", "/api/v1/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")

	r = k.Do("POST", "", "/api/v1/auth/login", "", idLoginBody("onlyb", webtest.Password, "tenant_slug", "beta"))
	if r.Status != 200 || r.Data()["tenant_slug"] != "beta" {
		t.Fatalf("apex + tenant_slug beta: %d %s", r.Status, r.Body)
	}
	// An unknown host names no tenant either: tenant_slug is honoured.
	r = k.Do("POST", "nope", "/api/v1/auth/login", "", idLoginBody("onlyb", webtest.Password, "tenant_slug", "beta"))
	if r.Status != 200 || r.Data()["tenant_slug"] != "beta" {
		t.Fatalf("unknown host + tenant_slug beta: %d %s", r.Status, r.Body)
	}
	// Apex without tenant_slug, or with an unknown one: no such account.
	webtest.ExpectErr(t, k.Do("POST", "", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password)), 401, "ERR_UNAUTHORIZED", "invalid_credentials")
	webtest.ExpectErr(t, k.Do("POST", "", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "tenant_slug", "zzz")), 401, "ERR_UNAUTHORIZED", "invalid_credentials")

	// On a tenant host a different tenant_slug is ignored.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("onlyb", webtest.Password, "tenant_slug", "beta")), 401, "ERR_UNAUTHORIZED", "invalid_credentials")
	r = k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "tenant_slug", "beta"))
	if r.Status != 200 || r.Data()["tenant_slug"] != "acme" {
		t.Fatalf("acme host + tenant_slug beta: %d %s", r.Status, r.Body)
	}
}

func TestIdentityLoginBucketPerIP(t *testing.T) {
	t.Parallel()
	k := newIDKit(t, false, newIDStickyLimiter())
	for i := 0; i < 20; i++ {
		r := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("nobody", "x"))
		if r.Status != 401 {
			t.Fatalf("attempt %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password)), 429, "ERR_RATE_LIMITED", "rate_limited")
}

func TestIdentityRefreshRotation(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	// Without refresh: no refresh fields at all.
	r := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password))
	if _, ok := r.Data()["refresh_token"]; ok || strings.Contains(string(r.Body), "refresh") {
		t.Fatalf("login without refresh returned refresh fields: %s", r.Body)
	}

	r = k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "refresh", true))
	if r.Status != 200 {
		t.Fatalf("login refresh: %d %s", r.Status, r.Body)
	}
	rt1, _ := r.Data()["refresh_token"].(string)
	if rt1 == "" || r.Data()["refresh_expires_at"] == nil {
		t.Fatalf("no refresh token: %s", r.Body)
	}
	tok1 := r.Data()["token"].(string)

	r = k.Do("POST", "acme", "/api/v1/auth/refresh", "", map[string]any{"refresh_token": rt1})
	if r.Status != 200 {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	tok2 := r.Data()["token"].(string)
	rt2, _ := r.Data()["refresh_token"].(string)
	if tok2 == "" || rt2 == "" || rt2 == rt1 || tok2 == tok1 {
		t.Fatalf("refresh answer: %s", r.Body)
	}
	if r.Data()["tenant_slug"] != "acme" || int64(r.Data()["user_id"].(float64)) != webtest.OwnerID(k, "acme") {
		t.Fatalf("refresh answer: %s", r.Body)
	}
	idMe(k, "acme", tok2)
	// Usable once.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/refresh", "", map[string]any{"refresh_token": rt1}), 401, "ERR_UNAUTHORIZED", "invalid_refresh_token")
	// The rotated one works.
	r = k.Do("POST", "acme", "/api/v1/auth/refresh", "", map[string]any{"refresh_token": rt2})
	if r.Status != 200 {
		t.Fatalf("second rotation: %d %s", r.Status, r.Body)
	}
	// The refresh token is not a bearer credential.
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", rt2, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
}

func TestIdentityRefreshUnknownAndExpiredIdentical(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	res, err := identity.Login(webtest.Background, k.App, k.Acquire("acme"), identity.LoginRequest{Email: "owner", Password: webtest.Password, Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	idExec(k, "acme", `UPDATE auth_sessions SET refresh_expires_at = '2000-01-01 00:00:00' WHERE jti = ?`, idJTI(t, res.Token))
	expired := k.Do("POST", "acme", "/api/v1/auth/refresh", "", map[string]any{"refresh_token": res.RefreshToken})
	webtest.ExpectErr(t, expired, 401, "ERR_UNAUTHORIZED", "invalid_refresh_token")

	tid := strings.SplitN(res.RefreshToken, ".", 2)[0]
	for _, guess := range []string{tid + "." + strings.Repeat("A", 43), "garbage", "999." + strings.Repeat("B", 43)} {
		unknown := k.Do("POST", "acme", "/api/v1/auth/refresh", "", map[string]any{"refresh_token": guess})
		idSameError(t, expired, unknown)
	}
	// The empty token is a malformed request, not a credential failure.
	if r := k.Do("POST", "acme", "/api/v1/auth/refresh", "", map[string]any{}); r.Status != 400 {
		t.Fatalf("empty refresh token: %d %s", r.Status, r.Body)
	}
}

func TestIdentityRefreshOfRevokedSession(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	for _, how := range []string{"logout", "delete", "revoke-others", "password"} {
		res, err := identity.Login(webtest.Background, k.App, k.Acquire("acme"), identity.LoginRequest{Email: "owner", Password: webtest.Password, Refresh: true})
		if err != nil {
			t.Fatal(err)
		}
		other := idSession(k, "acme", "owner")
		var r webtest.Resp
		switch how {
		case "logout":
			r = k.Do("POST", "acme", "/api/v1/auth/logout", res.Token, nil)
		case "delete":
			r = k.Do("DELETE", "acme", "/api/v1/auth/account/sessions/"+idJTI(t, res.Token), other, nil)
		case "revoke-others":
			r = k.Do("POST", "acme", "/api/v1/auth/account/sessions/revoke-others", other, nil)
		case "password":
			r = k.Do("POST", "acme", "/api/v1/auth/account/password", other, map[string]any{"current_password": webtest.Password, "new_password": "Second-pass-2"})
		}
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", how, r.Status, r.Body)
		}
		webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/refresh", "", map[string]any{"refresh_token": res.RefreshToken}), 401, "ERR_UNAUTHORIZED", "session_revoked")
		if how == "password" {
			// Put the password back for the next rounds.
			if _, err := identity.ChangePassword(webtest.Background, idActor(k, "acme", other), identity.PasswordChange{CurrentPassword: "Second-pass-2", NewPassword: webtest.Password}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// idActor authenticates a bearer directly.
func idActor(k *webtest.Kit, slug, bearer string) *app.Actor {
	k.T.Helper()
	act, err := identity.Authenticate(webtest.Background, k.App, k.Acquire(slug), bearer)
	if err != nil {
		k.T.Fatal(err)
	}
	return act
}

func TestIdentitySessionsLogoutAndRevocation(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	a := idSession(k, "acme", "owner")
	b := idSession(k, "acme", "owner")

	r := k.Do("GET", "acme", "/api/v1/auth/account/sessions", a, nil)
	if r.Status != 200 || len(r.List()) != 2 {
		t.Fatalf("sessions: %d %s", r.Status, r.Body)
	}
	for _, row := range r.List() {
		m := row.(map[string]any)
		if m["current"] != (m["jti"] == idJTI(t, a)) {
			t.Fatalf("current flag wrong: %v", m)
		}
	}
	if m := r.Meta(); m["has_next"] != false || m["total"].(float64) != 2 {
		t.Fatalf("meta %v", m)
	}

	// DELETE one: b is signed out, a is not.
	if r := k.Do("DELETE", "acme", "/api/v1/auth/account/sessions/"+idJTI(t, b), a, nil); r.Status != 200 {
		t.Fatalf("delete session: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", b, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
	idMe(k, "acme", a)
	webtest.ExpectErr(t, k.Do("DELETE", "acme", "/api/v1/auth/account/sessions/"+idJTI(t, b), a, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, k.Do("DELETE", "acme", "/api/v1/auth/account/sessions/nosuchjti", a, nil), 404, "ERR_NOT_FOUND", "not_found")
	// Another manager's session cannot be revoked by jti.
	webtest.CreateManager(k, "acme", 0, "staff1")
	s := idSession(k, "acme", "staff1")
	webtest.ExpectErr(t, k.Do("DELETE", "acme", "/api/v1/auth/account/sessions/"+idJTI(t, s), a, nil), 404, "ERR_NOT_FOUND", "not_found")
	idMe(k, "acme", s)

	// revoke-others keeps the current one.
	c := idSession(k, "acme", "owner")
	d := idSession(k, "acme", "owner")
	r = k.Do("POST", "acme", "/api/v1/auth/account/sessions/revoke-others", c, nil)
	if r.Status != 200 || r.Data()["revoked"].(float64) != 2 {
		t.Fatalf("revoke-others: %d %s", r.Status, r.Body)
	}
	idMe(k, "acme", c)
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", d, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", a, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
	idMe(k, "acme", s) // staff1 untouched
	r = k.Do("GET", "acme", "/api/v1/auth/account/sessions", c, nil)
	if len(r.List()) != 1 || r.List()[0].(map[string]any)["current"] != true {
		t.Fatalf("sessions after revoke-others: %s", r.Body)
	}

	// Logout revokes the calling session.
	r = k.Do("POST", "acme", "/api/v1/auth/logout", c, nil)
	if r.Status != 200 || r.Data()["ok"] != true {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", c, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/logout", c, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
}

func TestIdentityPasswordChange(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	cur := idSession(k, "acme", "owner")
	other := idSession(k, "acme", "owner")

	r := k.Do("POST", "acme", "/api/v1/auth/account/password", cur, map[string]any{"current_password": "Wrong-pass-1", "new_password": "Brand-new-2"})
	if r.Status != 400 || r.Reason() != "invalid_password" || r.Field() != "current_password" {
		t.Fatalf("wrong current password: %d %s", r.Status, r.Body)
	}
	r = k.Do("POST", "acme", "/api/v1/auth/account/password", cur, map[string]any{"current_password": webtest.Password, "new_password": "short"})
	if r.Status != 400 || r.Field() != "new_password" {
		t.Fatalf("weak new password: %d %s", r.Status, r.Body)
	}
	idMe(k, "acme", other) // refusals changed nothing

	r = k.Do("POST", "acme", "/api/v1/auth/account/password", cur, map[string]any{"current_password": webtest.Password, "new_password": "Brand-new-2"})
	if r.Status != 200 {
		t.Fatalf("change: %d %s", r.Status, r.Body)
	}
	idMe(k, "acme", cur)
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", other, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
	if _, err := identity.Login(webtest.Background, k.App, k.Acquire("acme"), identity.LoginRequest{Email: "owner", Password: webtest.Password}); app.AsError(err) == nil || app.AsError(err).Reason != "invalid_credentials" {
		t.Fatalf("old password still works: %v", err)
	}
	idLogin(k, "acme", "owner", "Brand-new-2")
}

func TestIdentityPasswordChangeBucket(t *testing.T) {
	t.Parallel()
	k := newIDKit(t, false, newIDStickyLimiter())
	tok := idSession(k, "acme", "owner")
	for i := 0; i < 10; i++ {
		r := k.Do("POST", "acme", "/api/v1/auth/account/password", tok, map[string]any{"current_password": "Wrong-pass-1", "new_password": "Brand-new-2"})
		if r.Status != 400 {
			t.Fatalf("call %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := k.Do("POST", "acme", "/api/v1/auth/account/password", tok, map[string]any{"current_password": webtest.Password, "new_password": "Brand-new-2"})
	webtest.ExpectErr(t, r, 429, "ERR_RATE_LIMITED", "rate_limited")
	if r.Header.Get("Retry-After") != "" {
		t.Fatal("429 carries Retry-After")
	}
	// The bucket is per operator: another manager is not affected, and the
	// refused call changed nothing.
	webtest.CreateManager(k, "acme", 0, "staff1")
	s := idSession(k, "acme", "staff1")
	if r := k.Do("POST", "acme", "/api/v1/auth/account/password", s, map[string]any{"current_password": webtest.Password, "new_password": "Brand-new-2"}); r.Status != 200 {
		t.Fatalf("other operator: %d %s", r.Status, r.Body)
	}
	idLogin(k, "acme", "owner", webtest.Password)
	// 2fa/disable and recovery-codes share account_reauth.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/account/2fa/disable", tok, map[string]any{"password": webtest.Password}), 429, "ERR_RATE_LIMITED", "rate_limited")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/account/2fa/recovery-codes", tok, map[string]any{"password": webtest.Password}), 429, "ERR_RATE_LIMITED", "rate_limited")
}

func TestIdentityForeignAudienceAndTenantTokens(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	k.Tenant("beta")
	tok := idSession(k, "acme", "owner")
	claims := idClaims(t, tok)

	// Control: the same claims re-signed are accepted (the forgery is
	// faithful), so what follows fails for the claim alone.
	idMe(k, "acme", idForge(k, claims))

	portal := map[string]any{}
	for key, v := range claims {
		portal[key] = v
	}
	portal["aud"] = "portal"
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", idForge(k, portal), nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/managers", idForge(k, portal), nil), 401, "ERR_UNAUTHORIZED", "invalid_token")

	expired := map[string]any{}
	for key, v := range claims {
		expired[key] = v
	}
	expired["exp"] = time.Now().Add(-time.Minute).Unix()
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", idForge(k, expired), nil), 401, "ERR_UNAUTHORIZED", "invalid_token")

	// A token of tenant A on tenant B's host.
	webtest.ExpectErr(t, k.Do("GET", "beta", "/api/v1/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
	// Even when re-signed claiming B's id, the session row is A's.
	bclaims := map[string]any{}
	for key, v := range claims {
		bclaims[key] = v
	}
	binfo, _ := k.App.TenantBySlug("beta")
	bclaims["tid"] = binfo.ID
	webtest.ExpectErr(t, k.Do("GET", "beta", "/api/v1/auth/me", idForge(k, bclaims), nil), 401, "ERR_UNAUTHORIZED", "invalid_token")

	// A tampered signature.
	bad := tok[:len(tok)-2] + "AA"
	if bad == tok {
		bad = tok[:len(tok)-2] + "BB"
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", bad, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
}

func TestIdentityBearerShapes(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", "", nil), 401, "ERR_UNAUTHORIZED", "missing_bearer_token")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", "", nil, "Authorization", "Basic "+tok), 401, "ERR_UNAUTHORIZED", "missing_bearer_token")
	for _, bad := range []string{"abc", "a.b", "a.b.c.d", "xrt_short", "xrt_" + strings.Repeat("A", 42), "xrt_" + strings.Repeat("A", 44),
		"xrt_" + strings.Repeat("A", 42) + "+", "a..c", "a.b!.c"} {
		webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", bad, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
	}
	// A well-formed API token nobody issued.
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", "xrt_"+strings.Repeat("A", 43), nil), 401, "ERR_UNAUTHORIZED", "api_token_invalid")
	// The scheme is case-insensitive.
	if r := k.Do("GET", "acme", "/api/v1/auth/me", "", nil, "Authorization", "bearer "+tok); r.Status != 200 {
		t.Fatalf("lower-case scheme: %d %s", r.Status, r.Body)
	}
	// Apex: every credential fails like a bad one.
	webtest.ExpectErr(t, k.Do("GET", "", "/api/v1/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
}

func TestIdentityMeShape(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	r := k.Do("GET", "acme", "/api/v1/auth/me", tok, nil)
	if r.Status != 200 {
		t.Fatalf("me: %d %s", r.Status, r.Body)
	}
	d := r.Data()
	idWantKeys(t, "me", d, "version", "manager", "roles", "permissions", "is_admin", "tenant_wide", "settings", "tenant")
	idWantKeys(t, "me.manager", d["manager"], "id", "tenant_id", "email", "username", "status", "two_factor_enabled")
	idWantKeys(t, "me.settings", d["settings"], "currency", "timezone", "default_language", "pos_undo_window_seconds")
	idWantKeys(t, "me.tenant", d["tenant"], "license_status", "license_expires_at", "max_users", "users_count", "blocked", "blocked_reason")

	if d["version"] != app.Version || d["version"] == "" {
		t.Fatalf("version %v", d["version"])
	}
	info, _ := k.App.TenantBySlug("acme")
	m := d["manager"].(map[string]any)
	if int64(m["id"].(float64)) != webtest.OwnerID(k, "acme") || int64(m["tenant_id"].(float64)) != info.ID || m["email"] != "owner@acme.test" ||
		m["username"] != "owner" || m["status"] != "active" || m["two_factor_enabled"] != false {
		t.Fatalf("manager %v", m)
	}
	if !reflect.DeepEqual(webtest.Strings(d["roles"]), []string{"administrator"}) || d["is_admin"] != true {
		t.Fatalf("roles %v is_admin %v", d["roles"], d["is_admin"])
	}
	if !reflect.DeepEqual(webtest.Strings(d["permissions"]), k.App.AllPermissionCodes()) {
		t.Fatalf("admin permissions %v", d["permissions"])
	}
	s := d["settings"].(map[string]any)
	if s["currency"] != "USD" || s["timezone"] != "UTC" || s["default_language"] != "en" {
		t.Fatalf("settings %v", s)
	}
	// pos_undo_window_seconds is an integer on the wire.
	var raw struct {
		Data struct {
			Settings struct {
				Pos json.Number `json:"pos_undo_window_seconds"`
			} `json:"settings"`
		} `json:"data"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	if n, err := raw.Data.Settings.Pos.Int64(); err != nil || n != 300 {
		t.Fatalf("pos_undo_window_seconds %q", raw.Data.Settings.Pos)
	}
	tn := d["tenant"].(map[string]any)
	if tn["license_status"] != "active" || tn["max_users"] != nil || tn["users_count"].(float64) != 0 || tn["blocked"] != false || tn["blocked_reason"] != "" {
		t.Fatalf("tenant %v (max_users null = unlimited)", tn)
	}

	// A capped tenant with an expiry: numbers and the timestamp format.
	exp := app.T(time.Now().Add(48 * time.Hour))
	if _, err := k.App.UpdateTenant(webtest.Background, "acme", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, V: 500},
		LicenseExpiresAt: app.Opt[app.Time]{Set: true, V: exp}}); err != nil {
		t.Fatal(err)
	}
	tn = idMe(k, "acme", tok)["tenant"].(map[string]any)
	if tn["max_users"] != float64(500) || tn["license_expires_at"] != app.FormatTime(exp.Time) || tn["license_status"] != "active" {
		t.Fatalf("capped tenant %v", tn)
	}
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`).MatchString(tn["license_expires_at"].(string)) {
		t.Fatalf("license_expires_at %v", tn["license_expires_at"])
	}

	// A manager with a plain role: its codes, not admin, roles named.
	webtest.CreateManager(k, "acme", 0, "cash1", "cashier")
	d = idMe(k, "acme", idSession(k, "acme", "cash1"))
	if d["is_admin"] != false || !reflect.DeepEqual(webtest.Strings(d["roles"]), []string{"cashier"}) {
		t.Fatalf("cashier me %v", d)
	}
	want := []string{"prm_cards_verify", "prm_pos_sell", "prm_profiles_index", "prm_users_activate", "prm_users_deposit", "prm_users_index"}
	if !reflect.DeepEqual(webtest.Strings(d["permissions"]), want) {
		t.Fatalf("cashier permissions %v", d["permissions"])
	}
	// A manager without roles: empty arrays, never null.
	webtest.CreateManager(k, "acme", 0, "bare1")
	r = k.Do("GET", "acme", "/api/v1/auth/me", idSession(k, "acme", "bare1"), nil)
	if !bytes.Contains(r.Body, []byte(`"roles":[]`)) || !bytes.Contains(r.Body, []byte(`"permissions":[]`)) {
		t.Fatalf("bare manager me: %s", r.Body)
	}
}

func TestIdentityAuthContext(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	idExec(k, "acme", `INSERT INTO settings(key, value) VALUES ('branding', '{"color":"#123456"}')
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`)
	for _, c := range []struct{ host, kind string }{{"", "apex"}, {"nope", "unknown"}, {"a.b", "unknown"}} {
		r := k.Do("GET", c.host, "/api/v1/auth/context", "", nil)
		if r.Status != 200 || r.Data()["host_kind"] != c.kind || r.Data()["tenant"] != nil {
			t.Fatalf("host %q: %d %s", c.host, r.Status, r.Body)
		}
		if _, ok := r.Data()["tenant"]; !ok {
			t.Fatalf("host %q: tenant key missing (want null): %s", c.host, r.Body)
		}
	}
	r := k.Do("GET", "acme", "/api/v1/auth/context", "", nil)
	if r.Status != 200 || r.Data()["host_kind"] != "tenant" {
		t.Fatalf("tenant host: %d %s", r.Status, r.Body)
	}
	tn := r.Data()["tenant"].(map[string]any)
	idWantKeys(t, "context tenant", tn, "slug", "name", "branding")
	if tn["slug"] != "acme" || tn["name"] != "ACME" || tn["branding"].(map[string]any)["color"] != "#123456" {
		t.Fatalf("tenant %v", tn)
	}
	// A credential is not needed, and a bad one does not hurt.
	if r := k.Do("GET", "acme", "/api/v1/auth/context", "garbage", nil); r.Status != 200 {
		t.Fatalf("with a bad bearer: %d", r.Status)
	}
}

// idOtherCode is a six-digit code no step near now accepts.
func idOtherCode(t testing.TB, secret string) string {
	t.Helper()
	near := map[string]bool{}
	for d := -3; d <= 3; d++ {
		c, err := totp.GenerateCode(secret, time.Now().Add(time.Duration(d)*30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		near[c] = true
	}
	for _, c := range []string{"123456", "654321", "000000", "999999", "111111"} {
		if !near[c] {
			return c
		}
	}
	t.Fatal("no unused code")
	return ""
}

func TestIdentityTwoFactor(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")

	// Enable before setup: nothing pending.
	if r := k.Do("POST", "acme", "/api/v1/auth/account/2fa/enable", tok, map[string]any{"code": "123456"}); r.Status != 409 {
		t.Fatalf("enable before setup: %d %s", r.Status, r.Body)
	}

	r := k.Do("POST", "acme", "/api/v1/auth/account/2fa/setup", tok, nil)
	if r.Status != 200 {
		t.Fatalf("setup: %d %s", r.Status, r.Body)
	}
	d := r.Data()
	secret := d["secret"].(string)
	if !regexp.MustCompile(`^[A-Z2-7]{16,}$`).MatchString(secret) {
		t.Fatalf("secret %q", secret)
	}
	url := d["otpauth_url"].(string)
	if !strings.HasPrefix(url, "otpauth://totp/") || !strings.Contains(url, "secret="+secret) {
		t.Fatalf("otpauth url %q", url)
	}
	qr := d["qr_png"].(string)
	const prefix = "data:image/png;base64,"
	if !strings.HasPrefix(qr, prefix) {
		t.Fatalf("qr %.40q", qr)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(qr, prefix))
	if err != nil {
		t.Fatal(err)
	}
	if img, err := png.Decode(bytes.NewReader(raw)); err != nil || img.Bounds().Dx() < 100 {
		t.Fatalf("qr is not a PNG: %v", err)
	}
	// Setup alone changes nothing at login.
	if me := idMe(k, "acme", tok); me["manager"].(map[string]any)["two_factor_enabled"] != false {
		t.Fatal("enabled by setup alone")
	}
	idLogin(k, "acme", "owner", webtest.Password)

	r = k.Do("POST", "acme", "/api/v1/auth/account/2fa/enable", tok, map[string]any{"code": idOtherCode(t, secret)})
	if r.Status != 400 || r.Reason() != "invalid_totp_code" {
		t.Fatalf("enable with a wrong code: %d %s", r.Status, r.Body)
	}
	code, _ := totp.GenerateCode(secret, time.Now())
	r = k.Do("POST", "acme", "/api/v1/auth/account/2fa/enable", tok, map[string]any{"code": code})
	if r.Status != 200 {
		t.Fatalf("enable: %d %s", r.Status, r.Body)
	}
	recovery := webtest.Strings(r.Data()["recovery_codes"])
	if len(recovery) != 10 {
		t.Fatalf("recovery codes %v", recovery)
	}
	seen := map[string]bool{}
	for _, c := range recovery {
		if seen[c] || len(c) < 10 {
			t.Fatalf("recovery codes %v", recovery)
		}
		seen[c] = true
	}
	if me := idMe(k, "acme", tok); me["manager"].(map[string]any)["two_factor_enabled"] != true {
		t.Fatal("two_factor_enabled false after enable")
	}
	// The code used at enable cannot open a session.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "totp_code", code)), 401, "ERR_UNAUTHORIZED", "invalid_totp_code")

	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password)), 401, "ERR_UNAUTHORIZED", "mfa_required")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "totp_code", idOtherCode(t, secret))), 401, "ERR_UNAUTHORIZED", "invalid_totp_code")
	// The password is checked before the second factor.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", "Wrong-pass-1")), 401, "ERR_UNAUTHORIZED", "invalid_credentials")

	next, _ := totp.GenerateCode(secret, time.Now().Add(30*time.Second))
	if r := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "totp_code", next)); r.Status != 200 {
		t.Fatalf("login with the next step's code: %d %s", r.Status, r.Body)
	}
	// Replayed inside its window: refused.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "totp_code", next)), 401, "ERR_UNAUTHORIZED", "invalid_totp_code")

	// Recovery codes: single use, instead of a TOTP code.
	if r := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "totp_code", recovery[0])); r.Status != 200 {
		t.Fatalf("login with a recovery code: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "totp_code", recovery[0])), 401, "ERR_UNAUTHORIZED", "invalid_totp_code")

	// New recovery codes need the password; the old ones die.
	r = k.Do("POST", "acme", "/api/v1/auth/account/2fa/recovery-codes", tok, map[string]any{"password": "Wrong-pass-1"})
	if r.Status != 400 || r.Reason() != "invalid_password" {
		t.Fatalf("recovery codes with a wrong password: %d %s", r.Status, r.Body)
	}
	r = k.Do("POST", "acme", "/api/v1/auth/account/2fa/recovery-codes", tok, map[string]any{"password": webtest.Password})
	fresh := webtest.Strings(r.Data()["recovery_codes"])
	if r.Status != 200 || len(fresh) != 10 {
		t.Fatalf("recovery codes: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "totp_code", recovery[1])), 401, "ERR_UNAUTHORIZED", "invalid_totp_code")
	if r := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password, "totp_code", fresh[0])); r.Status != 200 {
		t.Fatalf("login with a fresh recovery code: %d %s", r.Status, r.Body)
	}

	// Disable needs the password.
	r = k.Do("POST", "acme", "/api/v1/auth/account/2fa/disable", tok, map[string]any{"password": "Wrong-pass-1"})
	if r.Status != 400 || r.Reason() != "invalid_password" {
		t.Fatalf("disable with a wrong password: %d %s", r.Status, r.Body)
	}
	r = k.Do("POST", "acme", "/api/v1/auth/account/2fa/disable", tok, map[string]any{})
	if r.Status != 400 {
		t.Fatalf("disable without a password: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password)), 401, "ERR_UNAUTHORIZED", "mfa_required")
	if r := k.Do("POST", "acme", "/api/v1/auth/account/2fa/disable", tok, map[string]any{"password": webtest.Password}); r.Status != 200 {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	if me := idMe(k, "acme", tok); me["manager"].(map[string]any)["two_factor_enabled"] != false {
		t.Fatal("still enabled after disable")
	}
	if r := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password)); r.Status != 200 {
		t.Fatalf("login after disable: %d %s", r.Status, r.Body)
	}
	// Recovery codes are gone with it.
	if r := k.Do("POST", "acme", "/api/v1/auth/account/2fa/recovery-codes", tok, map[string]any{"password": webtest.Password}); r.Status != 409 {
		t.Fatalf("recovery codes while disabled: %d %s", r.Status, r.Body)
	}
}

func TestIdentityTwoFactorAdminReset(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := idSession(k, "acme", "owner")
	staff := webtest.CreateManager(k, "acme", 0, "staff1", "support")
	webtest.Enable2FA(k, "acme", idSession(k, "acme", "staff1"))
	if _, err := identity.Login(webtest.Background, k.App, k.Acquire("acme"), identity.LoginRequest{Email: "staff1", Password: webtest.Password}); app.AsError(err) == nil || app.AsError(err).Reason != "mfa_required" {
		t.Fatalf("staff1 without code: %v", err)
	}

	full, _ := idAPIToken(k, "acme", owner, map[string]any{"full_access": true})
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/2fa/reset", staff), full, nil), 403, "ERR_FORBIDDEN", "api_token_forbidden")
	// Not reset by the refused call.
	if _, err := identity.Login(webtest.Background, k.App, k.Acquire("acme"), identity.LoginRequest{Email: "staff1", Password: webtest.Password}); app.AsError(err) == nil || app.AsError(err).Reason != "mfa_required" {
		t.Fatalf("staff1 after refused reset: %v", err)
	}
	// A manager without prm_managers_update cannot reset anyone.
	webtest.CreateManager(k, "acme", 0, "cash1", "cashier")
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/2fa/reset", staff), idSession(k, "acme", "cash1"), nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")

	if r := k.Do("POST", "acme", idP("/managers/%d/2fa/reset", staff), owner, nil); r.Status != 200 {
		t.Fatalf("reset: %d %s", r.Status, r.Body)
	}
	idLogin(k, "acme", "staff1", webtest.Password)
	if r := k.Do("GET", "acme", idP("/managers/%d", staff), owner, nil); r.Data()["two_factor_enabled"] != false {
		t.Fatalf("manager record after reset: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/2fa/reset", 999999), owner, nil), 404, "ERR_NOT_FOUND", "not_found")
}

func TestIdentityAccount(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	owner := webtest.OwnerID(k, "acme")
	r := k.Do("GET", "acme", "/api/v1/auth/account", tok, nil)
	if r.Status != 200 || int64(r.Data()["id"].(float64)) != owner || r.Data()["username"] != "owner" {
		t.Fatalf("account: %d %s", r.Status, r.Body)
	}
	if bytes.Contains(r.Body, []byte("password")) || bytes.Contains(r.Body, []byte("totp")) {
		t.Fatalf("account leaks secrets: %s", r.Body)
	}
	r = k.Do("PATCH", "acme", "/api/v1/auth/account", tok, map[string]any{"firstname": "Olga", "language": "ar"})
	if r.Status != 200 || r.Data()["firstname"] != "Olga" || r.Data()["language"] != "ar" || r.Data()["email"] != "owner@acme.test" {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if r := k.Do("PATCH", "acme", "/api/v1/auth/account", tok, map[string]any{"language": "fr"}); r.Status != 400 || r.Field() != "language" {
		t.Fatalf("unsupported language: %d %s", r.Status, r.Body)
	}
	if r := k.Do("PATCH", "acme", "/api/v1/auth/account", tok, map[string]any{"email": "", "username": ""}); r.Status != 400 || r.Reason() != "identity_required" {
		t.Fatalf("no identity: %d %s", r.Status, r.Body)
	}
	webtest.CreateManager(k, "acme", 0, "staff1")
	if r := k.Do("PATCH", "acme", "/api/v1/auth/account", tok, map[string]any{"username": "STAFF1"}); r.Status != 409 || r.Reason() != "username_taken" {
		t.Fatalf("taken username: %d %s", r.Status, r.Body)
	}
	// Parent and wallet are not the account's to change.
	if r := k.Do("PATCH", "acme", "/api/v1/auth/account", tok, map[string]any{"balance": 1000}); r.Status == 200 && r.Data()["balance"] != float64(0) {
		t.Fatalf("balance through account: %s", r.Body)
	}

	// Avatar: images only, bounded, stored under the tenant's files.
	var img bytes.Buffer
	png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 4)))
	r = k.Do("POST", "acme", "/api/v1/auth/account/avatar", tok, img.Bytes(), "Content-Type", "image/png")
	if r.Status != 200 || r.Data()["avatar"] != fmt.Sprintf("avatars/%d.png", owner) {
		t.Fatalf("avatar: %d %s", r.Status, r.Body)
	}
	if _, err := os.Stat(filepath.Join(k.App.FilesDir("acme"), "avatars", fmt.Sprintf("%d.png", owner))); err != nil {
		t.Fatalf("avatar file: %v", err)
	}
	if r := k.Do("POST", "acme", "/api/v1/auth/account/avatar", tok, "<html>not an image</html>", "Content-Type", "image/png"); r.Status != 400 || r.Reason() != "avatar_not_image" {
		t.Fatalf("not an image: %d %s", r.Status, r.Body)
	}
	big := append(img.Bytes(), make([]byte, identity.MaxAvatarBytes)...)
	if r := k.Do("POST", "acme", "/api/v1/auth/account/avatar", tok, big, "Content-Type", "image/png"); r.Status != 400 || r.Reason() != "avatar_too_large" {
		t.Fatalf("too large: %d %s", r.Status, r.Body)
	}
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	fw, _ := w.CreateFormFile("avatar", "a.png")
	fw.Write(img.Bytes())
	w.Close()
	if r := k.Do("POST", "acme", "/api/v1/auth/account/avatar", tok, mp.Bytes(), "Content-Type", w.FormDataContentType()); r.Status != 200 {
		t.Fatalf("multipart avatar: %d %s", r.Status, r.Body)
	}

	// Limits.
	r = k.Do("GET", "acme", "/api/v1/auth/account/limits", tok, nil)
	if r.Status != 200 || r.Data()["page_size_max"] != float64(200) || r.Data()["window_seconds"] != float64(60) {
		t.Fatalf("limits: %d %s", r.Status, r.Body)
	}
	if ob := r.Data()["operator_buckets"].(map[string]any); ob["account_reauth"] != float64(10) || ob["api_token_reveal"] != float64(10) {
		t.Fatalf("operator buckets %v", ob)
	}
	if tb := r.Data()["tenant_buckets"].(map[string]any); tb["t_mutate"] == nil {
		t.Fatalf("tenant buckets %v", tb)
	}

	// Push tokens.
	if r := k.Do("POST", "acme", "/api/v1/auth/push-tokens", tok, map[string]any{"token": "dev-1", "platform": "ios"}); r.Status != 200 {
		t.Fatalf("push add: %d %s", r.Status, r.Body)
	}
	k.Do("POST", "acme", "/api/v1/auth/push-tokens", tok, map[string]any{"token": "dev-1", "platform": "android"})
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM push_tokens WHERE manager_id = ? AND platform = 'android'`, owner); n != 1 {
		t.Fatalf("%d push tokens", n)
	}
	if r := k.Do("POST", "acme", "/api/v1/auth/push-tokens", tok, map[string]any{"token": ""}); r.Status != 400 {
		t.Fatalf("empty push token: %d %s", r.Status, r.Body)
	}
	if r := k.Do("DELETE", "acme", "/api/v1/auth/push-tokens", tok, map[string]any{"token": "dev-1"}); r.Status != 200 {
		t.Fatalf("push remove: %d %s", r.Status, r.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM push_tokens`); n != 0 {
		t.Fatalf("%d push tokens left", n)
	}
}

func TestIdentityImpersonationExitAfterImpersonatorSignedOut(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	staff := webtest.CreateManager(k, "acme", 0, "staff1", "support")
	owner := idSession(k, "acme", "owner")
	r := k.Do("POST", "acme", idP("/managers/%d/login-as", staff), owner, nil)
	if r.Status != 200 {
		t.Fatalf("login-as: %d %s", r.Status, r.Body)
	}
	imp := r.Data()["token"].(string)
	k.Do("POST", "acme", "/api/v1/auth/logout", owner, nil)
	// No live session to return to: 401 — and the impersonated session ends all the same.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/impersonation/exit", imp, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", imp, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
}

// idErrorSansRequestID is a response's error object as canonical JSON
// without the per-request request_id.
func idErrorSansRequestID(t *testing.T, r webtest.Resp) string {
	t.Helper()
	e, ok := r.JSON["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object: %d %s", r.Status, r.Body)
	}
	c := map[string]any{}
	for k, v := range e {
		if k != "request_id" {
			c[k] = v
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
