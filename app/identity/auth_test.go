package identity

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/pquerna/otp/totp"

	"xr/app"
	"xr/internal/xrtest"
)

// Identity tests (prefix idt to stay clear of the helpers
// moved from package app).

var idtCtx = context.Background()

// idtTenant opens an instance with tenant "acme" and returns it acquired.
func idtTenant(t testing.TB) (*app.App, *app.Tenant) {
	t.Helper()
	a := xrtest.TenantApp(t, "acme")
	return a, xrtest.Acquire(t, a, "acme")
}

// TestIdentityPortalAudienceTokenRefused: a subscriber-portal token sent to
// the admin API answers 401 invalid_token, even with a live jti.
func TestIdentityPortalAudienceTokenRefused(t *testing.T) {
	t.Parallel()
	a, tt := idtTenant(t)
	res, err := Login(idtCtx, a, tt, LoginRequest{Email: "owner", Password: xrtest.Password})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := parseToken(a, res.Token, "staff")
	if !ok || c.Aud != "staff" {
		t.Fatalf("claims %+v", c)
	}
	// Control: the same claims re-signed authenticate.
	if _, err := Authenticate(idtCtx, a, tt, signToken(a.Keys, c)); err != nil {
		t.Fatalf("re-signed staff token: %v", err)
	}
	portal := c
	portal.Aud = "portal"
	xrtest.WantError(t, errOnly(Authenticate(idtCtx, a, tt, signToken(a.Keys, portal))), 401, app.CodeUnauthorized, "invalid_token")
	for _, mut := range []func(*sessionClaims){
		func(s *sessionClaims) { s.Aud = "" },
		func(s *sessionClaims) { s.Tid++ },
		func(s *sessionClaims) { s.Sub++ },
		func(s *sessionClaims) { s.Jti = "" },
		func(s *sessionClaims) { s.Jti = "unknown-jti" },
		func(s *sessionClaims) { s.Exp = time.Now().UTC().Add(-time.Second).Unix() },
	} {
		x := c
		mut(&x)
		xrtest.WantError(t, errOnly(Authenticate(idtCtx, a, tt, signToken(a.Keys, x))), 401, app.CodeUnauthorized, "invalid_token")
	}
	// Signed with another key.
	other := &app.Keys{Sign: make([]byte, 32), Enc: a.Keys.Enc}
	xrtest.WantError(t, errOnly(Authenticate(idtCtx, a, tt, signToken(other, c))), 401, app.CodeUnauthorized, "invalid_token")
	// No tenant (apex host): every credential fails.
	xrtest.WantError(t, errOnly(Authenticate(idtCtx, a, nil, res.Token)), 401, app.CodeUnauthorized, "invalid_token")
	xrtest.WantError(t, errOnly(Authenticate(idtCtx, a, nil, "xrt_"+strings.Repeat("a", 43))), 401, app.CodeUnauthorized, "api_token_invalid")
	xrtest.WantError(t, errOnly(Authenticate(idtCtx, a, tt, "")), 401, app.CodeUnauthorized, "missing_bearer_token")
}

func errOnly(_ *app.Actor, err error) error { return err }

func TestIdentityCredentialShapes(t *testing.T) {
	t.Parallel()
	b43 := strings.Repeat("A", 42) + "_"
	for _, c := range []struct {
		s            string
		api, session bool
	}{
		{"xrt_" + b43, true, false},
		{"xrt_" + strings.Repeat("-", 43), true, false},
		{"xrt_" + strings.Repeat("A", 42), false, false},
		{"xrt_" + strings.Repeat("A", 44), false, false},
		{"xrt_" + strings.Repeat("A", 42) + "=", false, false},
		{"XRT_" + b43, false, false},
		{"a.b.c", false, true},
		{"a-_.b.c9", false, true},
		{"a.b", false, false},
		{"a.b.c.d", false, false},
		{"a..c", false, false},
		{"a.b+.c", false, false},
		{"", false, false},
	} {
		if IsAPITokenShape(c.s) != c.api || IsSessionTokenShape(c.s) != c.session {
			t.Errorf("%q: api %v session %v", c.s, IsAPITokenShape(c.s), IsSessionTokenShape(c.s))
		}
	}
	// Minted tokens have the shapes.
	if s := apiTokenPrefix + app.RandomToken(32); !IsAPITokenShape(s) {
		t.Fatalf("minted API token %q", s)
	}
}

func TestIdentityTOTPWindow(t *testing.T) {
	t.Parallel()
	secret := "JBSWY3DPEHPK3PXP"
	now := time.Date(2030, 1, 1, 12, 0, 15, 0, time.UTC)
	step := now.Unix() / totpPeriod
	gen := func(s int64) string {
		c, err := totp.GenerateCode(secret, time.Unix(s*totpPeriod, 0))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	inWindow := map[string]bool{gen(step - 1): true, gen(step): true, gen(step + 1): true}
	for d := int64(-3); d <= 3; d++ {
		c := gen(step + d)
		got := matchTOTP(secret, c, now)
		switch {
		case d >= -1 && d <= 1:
			if got != step+d && gen(got) != c {
				t.Fatalf("step %+d: got %d want %d", d, got, step+d)
			}
		case !inWindow[c] && got != -1:
			t.Fatalf("step %+d accepted as %d", d, got)
		}
	}
	if matchTOTP(secret, "12345", now) != -1 || matchTOTP(secret, "abcdef", now) != -1 {
		t.Fatal("malformed code matched")
	}
}

// TestIdentityTOTPReplayUsesSteps: with the clock fixed, a code is accepted
// once; a code of an older or equal step is refused after it.
func TestIdentityTOTPReplayUsesSteps(t *testing.T) {
	t.Parallel()
	a, tt := idtTenant(t)
	base := time.Date(2030, 1, 1, 12, 0, 5, 0, time.UTC)
	a.SetClock(func() time.Time { return base })

	sys, err := app.SystemActor(idtCtx, tt)
	if err != nil {
		t.Fatal(err)
	}
	setup, err := SetupTOTP(idtCtx, sys)
	if err != nil {
		t.Fatal(err)
	}
	code := func(at time.Time) string {
		c, err := totp.GenerateCode(setup.Secret, at)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if _, err := EnableTOTP(idtCtx, sys, TOTPCode{Code: code(base)}); err != nil {
		t.Fatal(err)
	}
	// The enable step (and the one before) is spent.
	xrtest.WantError(t, checkSecondFactor(idtCtx, a, tt, sys.ManagerID, code(base)), 401, app.CodeUnauthorized, "invalid_totp_code")
	xrtest.WantError(t, checkSecondFactor(idtCtx, a, tt, sys.ManagerID, code(base.Add(-30*time.Second))), 401, app.CodeUnauthorized, "invalid_totp_code")
	next := code(base.Add(30 * time.Second))
	if err := checkSecondFactor(idtCtx, a, tt, sys.ManagerID, next); err != nil {
		t.Fatalf("next step: %v", err)
	}
	xrtest.WantError(t, checkSecondFactor(idtCtx, a, tt, sys.ManagerID, next), 401, app.CodeUnauthorized, "invalid_totp_code")
	// Time moves on: the following step is fresh.
	a.SetClock(func() time.Time { return base.Add(60 * time.Second) })
	if err := checkSecondFactor(idtCtx, a, tt, sys.ManagerID, code(base.Add(60*time.Second))); err != nil {
		t.Fatalf("later step: %v", err)
	}
	// Two steps away: refused.
	xrtest.WantError(t, checkSecondFactor(idtCtx, a, tt, sys.ManagerID, code(base.Add(150*time.Second))), 401, app.CodeUnauthorized, "invalid_totp_code")
}

// TestIdentityRefreshIdenticalAnswers: an expired and an unknown refresh
// token are the same error; a revoked session is told apart.
func TestIdentityRefreshIdenticalAnswers(t *testing.T) {
	t.Parallel()
	a, tt := idtTenant(t)
	res, err := Login(idtCtx, a, tt, LoginRequest{Email: "owner", Password: xrtest.Password, Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	a.SetClock(func() time.Time { return time.Now().Add(31 * 24 * time.Hour) })
	_, expired := Refresh(idtCtx, a, tt, res.RefreshToken, "", "")
	a.SetClock(nil)
	_, unknown := Refresh(idtCtx, a, tt, res.RefreshToken+"x", "", "")
	if e1, e2 := app.AsError(expired), app.AsError(unknown); e1 == nil || e2 == nil || !reflect.DeepEqual(*e1, *e2) || e1.Reason != "invalid_refresh_token" {
		t.Fatalf("expired %v, unknown %v", expired, unknown)
	}
	// Still usable before expiry, once.
	res2, err := Refresh(idtCtx, a, tt, res.RefreshToken, "", "")
	if err != nil {
		t.Fatal(err)
	}
	// Logged out: distinguished.
	act, err := Authenticate(idtCtx, a, tt, res2.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := Logout(idtCtx, act); err != nil {
		t.Fatal(err)
	}
	xrtest.WantError(t, errOnly2(Refresh(idtCtx, a, tt, res2.RefreshToken, "", "")), 401, app.CodeUnauthorized, "session_revoked")
}

func errOnly2(_ *LoginResult, err error) error { return err }

// TestIdentityTokenIsAJWTCheckedByTheLibrary: a session token is a standard
// HS256 JWT; golang-jwt refuses another algorithm (none, HS384), a missing
// expiry and a wrong audience before any lookup.
func TestIdentityTokenIsAJWTCheckedByTheLibrary(t *testing.T) {
	t.Parallel()
	a, tt := idtTenant(t)
	res, err := Login(idtCtx, a, tt, LoginRequest{Email: "owner", Password: xrtest.Password})
	if err != nil {
		t.Fatal(err)
	}
	var claims tokenClaims
	tok, err := jwt.ParseWithClaims(res.Token, &claims, func(*jwt.Token) (any, error) { return a.Keys.Sign, nil }, jwt.WithAudience("staff"))
	if err != nil || tok.Method.Alg() != "HS256" || claims.Subject != strconv.FormatInt(res.UserID, 10) || claims.Tid != tt.ID || claims.ExpiresAt.Unix() != res.ExpiresAt {
		t.Fatalf("token %v %+v", err, claims)
	}
	sign := func(m jwt.SigningMethod, key any, c tokenClaims) string {
		s, err := jwt.NewWithClaims(m, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if _, err := Authenticate(idtCtx, a, tt, sign(jwt.SigningMethodHS256, a.Keys.Sign, claims)); err != nil {
		t.Fatalf("control: %v", err)
	}
	noExp := claims
	noExp.ExpiresAt = nil
	for name, bad := range map[string]string{
		"none":   sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims),
		"HS384":  sign(jwt.SigningMethodHS384, a.Keys.Sign, claims),
		"no exp": sign(jwt.SigningMethodHS256, a.Keys.Sign, noExp),
	} {
		if _, err := Authenticate(idtCtx, a, tt, bad); app.AsError(err) == nil || app.AsError(err).Reason != "invalid_token" {
			t.Errorf("%s: %v", name, err)
		}
	}
}
