package identity

import (
	"context"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/internal/xrtest"
)

// Credential rules 1-3 and 12 at the app level: shapes are told apart
// before any lookup, and a token is bound to its tenant and audience.
func TestAuthenticateCredentialRules(t *testing.T) {
	t.Parallel()
	a := xrtest.App(t)
	ctx := context.Background()
	xrtest.Tenant(t, a, "acme")
	acme := xrtest.Acquire(t, a, "acme")
	xrtest.Tenant(t, a, "beta")
	beta := xrtest.Acquire(t, a, "beta")
	res, err := Login(ctx, a, acme, LoginRequest{Email: "owner", Password: xrtest.Password})
	if err != nil {
		t.Fatal(err)
	}
	act, err := Authenticate(ctx, a, acme, res.Token)
	if err != nil || act.ManagerID != res.UserID || act.Kind != app.CredSession || act.Tenant.Slug != "acme" || !act.IsAdmin {
		t.Fatalf("valid token: %+v %v", act, err)
	}

	c, ok := parseToken(a, res.Token, "staff")
	if !ok {
		t.Fatal("own token does not parse")
	}
	sign := func(mut func(*sessionClaims)) string {
		cc := c
		mut(&cc)
		return signToken(a.Keys, cc)
	}
	parts := strings.Split(res.Token, ".")
	flipped := []byte(parts[2])
	if flipped[0] == 'A' {
		flipped[0] = 'B'
	} else {
		flipped[0] = 'A'
	}
	cases := map[string]struct {
		tenant *app.Tenant
		token  string
		reason string
	}{
		"missing":            {acme, "", "missing_bearer_token"},
		"garbage":            {acme, "hello world", "invalid_token"},
		"two segments":       {acme, "abc.def", "invalid_token"},
		"bad signature":      {acme, parts[0] + "." + parts[1] + "." + string(flipped), "invalid_token"},
		"forged claims":      {acme, parts[0] + "." + strings.Split(sign(func(s *sessionClaims) { s.Exp += 3600 }), ".")[1] + "." + parts[2], "invalid_token"},
		"expired":            {acme, sign(func(s *sessionClaims) { s.Exp = time.Now().Add(-time.Second).Unix() }), "invalid_token"},
		"other tenant":       {beta, res.Token, "invalid_token"},
		"portal audience":    {acme, sign(func(s *sessionClaims) { s.Aud = "portal" }), "invalid_token"},
		"unknown session":    {acme, sign(func(s *sessionClaims) { s.Jti = "nope" }), "invalid_token"},
		"other subject":      {acme, sign(func(s *sessionClaims) { s.Sub = 2 }), "invalid_token"},
		"no tenant (apex)":   {nil, res.Token, "invalid_token"},
		"api token on apex":  {nil, "xrt_" + strings.Repeat("A", 43), "api_token_invalid"},
		"unknown api token":  {acme, "xrt_" + strings.Repeat("A", 43), "api_token_invalid"},
		"api token too long": {acme, "xrt_" + strings.Repeat("A", 44), "invalid_token"},
	}
	for name, c := range cases {
		_, err := Authenticate(ctx, a, c.tenant, c.token)
		e := app.AsError(err)
		if e == nil || e.Status != 401 || e.Code != app.CodeUnauthorized || e.Reason != c.reason {
			t.Errorf("%s: %v, want 401 %s", name, err, c.reason)
		}
	}

	// Shapes.
	if !IsAPITokenShape("xrt_"+strings.Repeat("a", 42)+"-") || IsAPITokenShape("xrt_"+strings.Repeat("a", 42)+"=") || IsAPITokenShape("xrt_abc") {
		t.Error("API token shape")
	}
	if !IsSessionTokenShape("a.b.c") || IsSessionTokenShape("a..c") || IsSessionTokenShape("a.b.c.d") || IsSessionTokenShape("a.b.c=") {
		t.Error("session token shape")
	}

	// Logout revokes: session_revoked, told apart from invalid_token.
	if err := Logout(ctx, act); err != nil {
		t.Fatal(err)
	}
	_, err = Authenticate(ctx, a, acme, res.Token)
	xrtest.WantError(t, err, 401, app.CodeUnauthorized, "session_revoked")
}
