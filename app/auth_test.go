package app

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

// Identity tests of package app (prefix idt to stay clear of the helpers
// other areas add here).

const idtPassword = "Owner-pass-1"

var idtCtx = context.Background()

// idtTenant opens an instance with tenant "acme" and returns it acquired.
func idtTenant(t testing.TB) (*App, *Tenant) {
	t.Helper()
	a, err := Open(Config{DataDir: t.TempDir(), Domain: "xr.test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	if _, _, err := a.CreateTenant(idtCtx, NewTenant{Slug: "acme", Name: "ACME", AdminUsername: "owner", AdminEmail: "owner@acme.test", AdminPassword: idtPassword}); err != nil {
		t.Fatal(err)
	}
	tt, release, err := a.Acquire("acme")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return a, tt
}

func idtWant(t testing.TB, err error, status int, code, reason string) {
	t.Helper()
	e := AsError(err)
	if e == nil || e.Status != status || e.Code != code || e.Reason != reason {
		t.Fatalf("want %d %s/%s, got %v", status, code, reason, err)
	}
}

// TestIdentityPortalAudienceTokenRefused: a subscriber-portal token sent to
// the admin API answers 401 invalid_token, even with a live jti.
func TestIdentityPortalAudienceTokenRefused(t *testing.T) {
	a, tt := idtTenant(t)
	res, err := a.Login(idtCtx, tt, LoginRequest{Email: "owner", Password: idtPassword})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := a.Keys.parseToken(res.Token)
	if !ok || c.Aud != "staff" {
		t.Fatalf("claims %+v", c)
	}
	// Control: the same claims re-signed authenticate.
	if _, err := a.Authenticate(idtCtx, tt, a.Keys.signToken(c)); err != nil {
		t.Fatalf("re-signed staff token: %v", err)
	}
	portal := c
	portal.Aud = "portal"
	idtWant(t, errOnly(a.Authenticate(idtCtx, tt, a.Keys.signToken(portal))), 401, CodeUnauthorized, "invalid_token")
	for _, mut := range []func(*sessionClaims){
		func(s *sessionClaims) { s.Aud = "" },
		func(s *sessionClaims) { s.Tid++ },
		func(s *sessionClaims) { s.Sub++ },
		func(s *sessionClaims) { s.Jti = "" },
		func(s *sessionClaims) { s.Jti = "unknown-jti" },
		func(s *sessionClaims) { s.Exp = Now().Add(-time.Second).Unix() },
	} {
		x := c
		mut(&x)
		idtWant(t, errOnly(a.Authenticate(idtCtx, tt, a.Keys.signToken(x))), 401, CodeUnauthorized, "invalid_token")
	}
	// Signed with another key.
	other := &Keys{Sign: make([]byte, 32), Enc: a.Keys.Enc}
	idtWant(t, errOnly(a.Authenticate(idtCtx, tt, other.signToken(c))), 401, CodeUnauthorized, "invalid_token")
	// No tenant (apex host): every credential fails.
	idtWant(t, errOnly(a.Authenticate(idtCtx, nil, res.Token)), 401, CodeUnauthorized, "invalid_token")
	idtWant(t, errOnly(a.Authenticate(idtCtx, nil, "xrt_"+strings.Repeat("a", 43))), 401, CodeUnauthorized, "api_token_invalid")
	idtWant(t, errOnly(a.Authenticate(idtCtx, tt, "")), 401, CodeUnauthorized, "missing_bearer_token")
}

func errOnly(_ *Actor, err error) error { return err }

func TestIdentityCredentialShapes(t *testing.T) {
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
	if s := apiTokenPrefix + RandomToken(32); !IsAPITokenShape(s) {
		t.Fatalf("minted API token %q", s)
	}
}

func TestIdentityTOTPWindow(t *testing.T) {
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
	a, tt := idtTenant(t)
	base := time.Date(2030, 1, 1, 12, 0, 5, 0, time.UTC)
	old := Now
	Now = func() time.Time { return base }
	t.Cleanup(func() { Now = old })

	sys, err := SystemActor(idtCtx, tt)
	if err != nil {
		t.Fatal(err)
	}
	setup, err := a.SetupTOTP(idtCtx, sys)
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
	if _, err := a.EnableTOTP(idtCtx, sys, code(base)); err != nil {
		t.Fatal(err)
	}
	// The enable step (and the one before) is spent.
	idtWant(t, a.checkSecondFactor(idtCtx, tt, sys.ManagerID, code(base)), 401, CodeUnauthorized, "invalid_totp_code")
	idtWant(t, a.checkSecondFactor(idtCtx, tt, sys.ManagerID, code(base.Add(-30*time.Second))), 401, CodeUnauthorized, "invalid_totp_code")
	next := code(base.Add(30 * time.Second))
	if err := a.checkSecondFactor(idtCtx, tt, sys.ManagerID, next); err != nil {
		t.Fatalf("next step: %v", err)
	}
	idtWant(t, a.checkSecondFactor(idtCtx, tt, sys.ManagerID, next), 401, CodeUnauthorized, "invalid_totp_code")
	// Time moves on: the following step is fresh.
	Now = func() time.Time { return base.Add(60 * time.Second) }
	if err := a.checkSecondFactor(idtCtx, tt, sys.ManagerID, code(base.Add(60*time.Second))); err != nil {
		t.Fatalf("later step: %v", err)
	}
	// Two steps away: refused.
	idtWant(t, a.checkSecondFactor(idtCtx, tt, sys.ManagerID, code(base.Add(150*time.Second))), 401, CodeUnauthorized, "invalid_totp_code")
}

func TestIdentityActorScopeIntersection(t *testing.T) {
	g := &grant{roles: []string{"administrator", "support"}, perms: map[Perm]bool{"prm_a": true, "prm_b": true, "prm_c": true}, isAdmin: true, status: "active"}
	full := actorFor(nil, 1, g, nil)
	if !full.IsAdmin || !reflect.DeepEqual(full.Roles, []string{"administrator", "support"}) || len(full.Perms) != 3 {
		t.Fatalf("unscoped %+v", full)
	}
	scoped := actorFor(nil, 1, g, []string{"prm_b", "prm_z"})
	if scoped.IsAdmin || !reflect.DeepEqual(scoped.Roles, []string{"support"}) || !reflect.DeepEqual(scoped.PermList(), []string{"prm_b"}) {
		t.Fatalf("scoped %+v", scoped)
	}
	empty := actorFor(nil, 1, g, []string{})
	if empty.IsAdmin || len(empty.Perms) != 0 || empty.Can("prm_a") || empty.Require("prm_a") == nil {
		t.Fatalf("empty scope %+v", empty)
	}
	if empty.Require() != nil {
		t.Fatal("no codes required refused")
	}
	// The cached grant is not touched by narrowing.
	if len(g.perms) != 3 || len(g.roles) != 2 {
		t.Fatalf("grant mutated: %+v", g)
	}
}

// TestIdentityRefreshIdenticalAnswers: an expired and an unknown refresh
// token are the same error; a revoked session is told apart.
func TestIdentityRefreshIdenticalAnswers(t *testing.T) {
	a, tt := idtTenant(t)
	res, err := a.Login(idtCtx, tt, LoginRequest{Email: "owner", Password: idtPassword, Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	old := Now
	t.Cleanup(func() { Now = old })
	Now = func() time.Time { return old().Add(31 * 24 * time.Hour) }
	_, expired := a.Refresh(idtCtx, tt, res.RefreshToken, "", "")
	Now = old
	_, unknown := a.Refresh(idtCtx, tt, res.RefreshToken+"x", "", "")
	if e1, e2 := AsError(expired), AsError(unknown); e1 == nil || e2 == nil || !reflect.DeepEqual(*e1, *e2) || e1.Reason != "invalid_refresh_token" {
		t.Fatalf("expired %v, unknown %v", expired, unknown)
	}
	// Still usable before expiry, once.
	res2, err := a.Refresh(idtCtx, tt, res.RefreshToken, "", "")
	if err != nil {
		t.Fatal(err)
	}
	// Logged out: distinguished.
	act, err := a.Authenticate(idtCtx, tt, res2.Token)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Logout(idtCtx, act); err != nil {
		t.Fatal(err)
	}
	idtWant(t, errOnly2(a.Refresh(idtCtx, tt, res2.RefreshToken, "", "")), 401, CodeUnauthorized, "session_revoked")
}

func errOnly2(_ *LoginResult, err error) error { return err }

// TestIdentityRequireScopeTellsMissingFromOutside: both write the same 404;
// bulk calls see not_found vs not_authorized.
func TestIdentityRequireScopeTellsMissingFromOutside(t *testing.T) {
	_, tt := idtTenant(t)
	sys, err := SystemActor(idtCtx, tt)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string, parent int64) int64 {
		in := ManagerInput{Username: Opt[string]{Set: true, V: name}, Password: Opt[string]{Set: true, V: idtPassword}}
		if parent != 0 {
			in.ParentManagerID = Opt[int64]{Set: true, V: parent}
		}
		m, err := CreateManager(idtCtx, sys, in)
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	a := mk("a", 0)
	a1 := mk("a1", a)
	b := mk("b", 0)
	act := &Actor{Tenant: tt, ManagerID: a, Perms: map[Perm]bool{}}
	if err := act.RequireScope(idtCtx, tt.DB.R, a1); err != nil {
		t.Fatal(err)
	}
	out := act.RequireScope(idtCtx, tt.DB.R, b)
	missing := act.RequireScope(idtCtx, tt.DB.R, 999999)
	idtWant(t, out, 404, CodeNotFound, "not_found")
	idtWant(t, missing, 404, CodeNotFound, "not_found")
	if bulkFailure(b, out).Reason != "not_authorized" || bulkFailure(999999, missing).Reason != "not_found" {
		t.Fatalf("bulk reasons %v / %v", bulkFailure(b, out), bulkFailure(999999, missing))
	}
	// Tenant-wide: a missing record is not_found too.
	if r := bulkFailure(999999, sys.RequireScope(idtCtx, tt.DB.R, 999999)); r.Reason != "not_found" {
		t.Fatalf("tenant-wide missing: %v", r)
	}
}
