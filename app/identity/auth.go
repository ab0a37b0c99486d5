package identity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"xr/app"
	"xr/db"
)

// sessionClaims are what a session token carries (staff or portal).
type sessionClaims struct {
	Tid int64  // tenant id
	Sub int64  // manager id (staff) or subscriber id (portal)
	Jti string // the session row
	Aud string // staff or portal
	Exp int64  // unix seconds
	Imp int64  // impersonating manager, 0 when none
}

// tokenClaims is a session token's JWT body: the registered claims (sub as
// a decimal string, aud, exp, jti) plus the tenant and the impersonator.
type tokenClaims struct {
	jwt.RegisteredClaims
	Tid int64 `json:"tid"`
	Imp int64 `json:"imp,omitempty"`
}

// signToken makes a JWT (HS256 with the instance signing key) through
// golang-jwt. Signing cannot fail with a []byte key and these claims; if
// it ever did, the empty token it answers verifies nowhere.
func signToken(k *app.Keys, c sessionClaims) string {
	tc := tokenClaims{RegisteredClaims: jwt.RegisteredClaims{Subject: strconv.FormatInt(c.Sub, 10), Audience: jwt.ClaimStrings{c.Aud},
		ExpiresAt: jwt.NewNumericDate(time.Unix(c.Exp, 0)), ID: c.Jti}, Tid: c.Tid, Imp: c.Imp}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, tc).SignedString(k.Sign)
	if err != nil {
		return ""
	}
	return tok
}

// parseToken verifies a session token through golang-jwt: HS256 only, the
// instance key's signature, the audience aud and an expiry in the future
// (all checked by the library), then decodes the claims.
func parseToken(a *app.App, tok, aud string) (sessionClaims, bool) {
	var tc tokenClaims
	_, err := jwt.ParseWithClaims(tok, &tc, func(*jwt.Token) (any, error) { return a.Keys.Sign, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithAudience(aud), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(a.Now))
	if err != nil {
		return sessionClaims{}, false
	}
	sub, err := strconv.ParseInt(tc.Subject, 10, 64)
	if err != nil {
		return sessionClaims{}, false
	}
	return sessionClaims{Tid: tc.Tid, Sub: sub, Jti: tc.ID, Aud: aud, Exp: tc.ExpiresAt.Unix(), Imp: tc.Imp}, true
}

// Credential shapes, told apart before any lookup.
const apiTokenPrefix = "xrt_"

// IsAPITokenShape reports xrt_ + exactly 43 base64url characters.
func IsAPITokenShape(s string) bool {
	if len(s) != len(apiTokenPrefix)+43 || !strings.HasPrefix(s, apiTokenPrefix) {
		return false
	}
	return isB64URL(s[len(apiTokenPrefix):])
}

// IsSessionTokenShape reports three non-empty dot-separated base64url segments.
func IsSessionTokenShape(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || !isB64URL(p) {
			return false
		}
	}
	return true
}

func isB64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Authenticate turns a bearer credential into an actor of tenant t. t is
// nil when the host resolved no tenant: every credential then fails.
func Authenticate(ctx context.Context, a *app.App, t *app.Tenant, bearer string) (*app.Actor, error) {
	if bearer == "" {
		return nil, app.ErrUnauthorized("missing_bearer_token")
	}
	switch {
	case IsAPITokenShape(bearer):
		if t == nil {
			return nil, app.ErrUnauthorized("api_token_invalid")
		}
		return authAPIToken(ctx, a, t, bearer)
	case IsSessionTokenShape(bearer):
		if t == nil {
			return nil, app.ErrUnauthorized("invalid_token")
		}
		return authSession(ctx, a, t, bearer)
	}
	return nil, app.ErrUnauthorized("invalid_token")
}

func authSession(ctx context.Context, a *app.App, t *app.Tenant, tok string) (*app.Actor, error) {
	c, ok := parseToken(a, tok, "staff")
	if !ok || c.Tid != t.ID || c.Jti == "" {
		return nil, app.ErrUnauthorized("invalid_token")
	}
	var mid int64
	var revoked sql.NullString
	err := t.DB.R.QueryRowContext(ctx, `SELECT manager_id, revoked_at FROM auth_sessions WHERE jti = ?`, c.Jti).Scan(&mid, &revoked)
	if errors.Is(err, sql.ErrNoRows) && t.DB.Followed() {
		// Signed in on this standby: kept in memory.
		if ses, ok := standbySessionsOf(a).find(t.ID, c.Jti); ok {
			mid, revoked.Valid, err = ses.managerID, ses.revoked, nil
		}
	}
	if errors.Is(err, sql.ErrNoRows) || (err == nil && mid != c.Sub) {
		return nil, app.ErrUnauthorized("invalid_token")
	}
	if err != nil {
		return nil, err
	}
	if revoked.Valid {
		return nil, app.ErrUnauthorized("session_revoked")
	}
	act, status, err := app.ManagerActor(ctx, t, c.Sub, nil)
	if err != nil {
		return nil, err
	}
	if status != "active" {
		return nil, app.ErrUnauthorized("invalid_token")
	}
	act.Kind, act.JTI, act.Impersonator = app.CredSession, c.Jti, c.Imp
	return act, nil
}

func authAPIToken(ctx context.Context, a *app.App, t *app.Tenant, tok string) (*app.Actor, error) {
	var id, mid int64
	var scopes string
	var full, disabled bool
	var expires, revoked sql.NullString
	err := t.DB.R.QueryRowContext(ctx, `SELECT id, manager_id, scopes, full_access, disabled, expires_at, revoked_at FROM api_tokens WHERE token_hash = ?`,
		app.SHA256(tok)).Scan(&id, &mid, &scopes, &full, &disabled, &expires, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrUnauthorized("api_token_invalid")
	}
	if err != nil {
		return nil, err
	}
	switch {
	case revoked.Valid:
		return nil, app.ErrUnauthorized("api_token_revoked")
	case expires.Valid && expires.String <= t.NowText():
		return nil, app.ErrUnauthorized("api_token_expired")
	case disabled:
		return nil, app.ErrUnauthorized("api_token_disabled")
	}
	act, status, err := app.ManagerActor(ctx, t, mid, nil)
	if err != nil {
		return nil, err
	}
	if status != "active" {
		return nil, app.ErrUnauthorized("api_token_owner_inactive")
	}
	if !full {
		scope, err := jsonStrings(scopes)
		if err != nil {
			return nil, fmt.Errorf("api token %d scopes: %w", id, err)
		}
		// The grant is cached: narrowing it costs no second read.
		if act, _, err = app.ManagerActor(ctx, t, mid, scope); err != nil {
			return nil, err
		}
	}
	act.Kind, act.TokenID = app.CredAPIToken, id
	touchToken(t, id)
	return act, nil
}

// touchedKey keys the App's API token last-use throttle (a *sync.Map of
// "tenant/token" → time), kept on the App so it goes with it.
type touchedKey struct{}

func tokenTouched(a *app.App) *sync.Map {
	if m, ok := a.Value(touchedKey{}).(*sync.Map); ok {
		return m
	}
	return a.ValueOrStore(touchedKey{}, &sync.Map{}).(*sync.Map)
}

// touchToken records a token's last use at most once a minute per token,
// off the request path: authentication stays a read.
func touchToken(t *app.Tenant, id int64) {
	key := t.Slug + "/" + strconv.FormatInt(t.ID, 10) + "/" + strconv.FormatInt(id, 10)
	now := time.Now()
	touched := tokenTouched(t.App)
	if last, ok := touched.Load(key); ok && now.Sub(last.(time.Time)) < time.Minute {
		return
	}
	touched.Store(key, now)
	// The write outlives the request: it holds the tenant itself, so its
	// files cannot close under it (a tenant not opened through the pool
	// is written as is).
	d, log, slug := t.DB, t.App.Log, t.Slug
	release := func() {}
	if held, rel, ok := t.App.AcquireOpen(slug); ok {
		d, release = held.DB, rel
	}
	go func() {
		defer release()
		err := d.Write(context.Background(), func(tx *sql.Tx) error {
			_, err := tx.Exec(`UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, t.NowText(), id)
			return err
		})
		// Best effort: a missed last-used stamp is retried on the token's
		// next use after a minute and never blocks the request.
		if err != nil {
			log.Warn("record api token use", "tenant", slug, "token", id, "err", err)
		}
	}()
}

// LoginRequest is POST /auth/login's body plus the caller's address.
type LoginRequest struct {
	Email      string `json:"email"`
	Password   string `json:"password"`
	TOTPCode   string `json:"totp_code"`
	TenantSlug string `json:"tenant_slug"`
	Refresh    bool   `json:"refresh"`
	IP         string `json:"-"`
	UserAgent  string `json:"-"`
}

// LoginResult is the login response's data.
type LoginResult struct {
	Token            string   `json:"token"`
	UserID           int64    `json:"user_id"`
	TenantID         int64    `json:"tenant_id"`
	TenantSlug       string   `json:"tenant_slug"`
	Roles            []string `json:"roles"`
	ExpiresAt        int64    `json:"expires_at"`
	RefreshToken     string   `json:"refresh_token,omitempty"`
	RefreshExpiresAt int64    `json:"refresh_expires_at,omitempty"`
}

// errInvalidCredentials is the one answer for an unknown account (or tenant)
// and a wrong password: same status, reason and message, after the same
// argon2 work (a dummy hash when there is no account), so a login never
// tells which accounts exist.
func errInvalidCredentials() error { return app.ErrUnauthorized("invalid_credentials") }

// Login checks a manager's credentials (and second factor) and opens a
// session. t is the host's tenant, or nil when the host names none; then
// tenant_slug chooses it. An unknown account and a wrong password both
// answer 401 invalid_credentials; only after the password matched do
// account_suspended and mfa_required tell more.
func Login(ctx context.Context, a *app.App, t *app.Tenant, req LoginRequest) (*LoginResult, error) {
	if t == nil {
		if req.TenantSlug == "" {
			app.VerifyPassword("", req.Password)
			return nil, errInvalidCredentials()
		}
		tt, release, err := a.Acquire(req.TenantSlug)
		if err != nil {
			app.VerifyPassword("", req.Password)
			return nil, errInvalidCredentials()
		}
		defer release()
		t = tt
	}
	if strings.TrimSpace(req.Email) == "" {
		return nil, app.ErrValidation("email_required", "email")
	}
	if req.Password == "" {
		return nil, app.ErrValidation("password_required", "password")
	}
	var id int64
	var hash, status string
	var totpEnabled bool
	err := t.DB.R.QueryRowContext(ctx, `SELECT id, password_hash, status, totp_enabled FROM managers WHERE username = ? OR email = ? ORDER BY id LIMIT 1`,
		strings.TrimSpace(req.Email), strings.TrimSpace(req.Email)).Scan(&id, &hash, &status, &totpEnabled)
	if errors.Is(err, sql.ErrNoRows) {
		app.VerifyPassword("", req.Password)
		return nil, errInvalidCredentials()
	}
	if err != nil {
		return nil, err
	}
	if !app.VerifyPassword(hash, req.Password) {
		return nil, errInvalidCredentials()
	}
	if status != "active" {
		return nil, app.ErrUnauthorized("account_suspended")
	}
	if totpEnabled {
		if req.TOTPCode == "" {
			return nil, app.ErrUnauthorized("mfa_required")
		}
		if err := checkSecondFactor(ctx, a, t, id, req.TOTPCode); err != nil {
			return nil, err
		}
	}
	return openSession(ctx, a, t, id, 0, "", req.Refresh, req.IP, req.UserAgent)
}

// openSession records a session row and signs its token.
func openSession(ctx context.Context, a *app.App, t *app.Tenant, managerID, impersonator int64, parentJTI string, refresh bool, ip, ua string) (*LoginResult, error) {
	now := t.Now()
	minutes, err := SettingSessionLength.Get(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	days, err := SettingRefreshLength.Get(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	length := time.Duration(minutes) * time.Minute
	if refresh {
		length = min(length, time.Hour)
	}
	exp := now.Add(length)
	res := &LoginResult{UserID: managerID, TenantID: t.ID, TenantSlug: t.Slug, ExpiresAt: exp.Unix()}
	jti := app.RandomToken(16)
	var refreshHash any
	var refreshExp any
	if refresh {
		res.RefreshToken = strconv.FormatInt(t.ID, 10) + "." + app.RandomToken(32)
		rexp := now.Add(time.Duration(days) * 24 * time.Hour)
		res.RefreshExpiresAt = rexp.Unix()
		refreshHash, refreshExp = app.SHA256(res.RefreshToken), app.FormatTime(rexp)
	}
	var imp, parent any
	if impersonator != 0 {
		imp, parent = impersonator, parentJTI
	}
	if t.DB.Followed() {
		// A standby: the session lives in memory (standby_sessions.go).
		res.RefreshToken, res.RefreshExpiresAt = "", 0
		if !standbySessionsOf(a).open(jti, standbySession{tenantID: t.ID, managerID: managerID, expires: exp}, now) {
			return nil, db.ErrStandbyReadOnly
		}
		return signedSession(ctx, a, t, res, jti, impersonator)
	}
	err = t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO auth_sessions(jti, manager_id, audience, impersonator_id, parent_jti, ip, user_agent, created_at, expires_at, refresh_hash, refresh_expires_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,?)`, jti, managerID, "staff", imp, parent, ip, truncate(ua, 255), app.FormatTime(now), app.FormatTime(exp), refreshHash, refreshExp)
		return err
	})
	if err != nil {
		return nil, err
	}
	return signedSession(ctx, a, t, res, jti, impersonator)
}

// signedSession completes res, whose session jti is stored: its token and
// the manager's roles.
func signedSession(ctx context.Context, a *app.App, t *app.Tenant, res *LoginResult, jti string, impersonator int64) (*LoginResult, error) {
	res.Token = signToken(a.Keys, sessionClaims{Tid: t.ID, Sub: res.UserID, Jti: jti, Aud: "staff", Exp: res.ExpiresAt, Imp: impersonator})
	act, _, err := app.ManagerActor(ctx, t, res.UserID, nil)
	if err != nil {
		return nil, err
	}
	res.Roles = append([]string{}, act.Roles...)
	return res, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Refresh exchanges a refresh token (usable once) for a new session. An
// expired and an unknown token answer identically; a revoked session is
// told apart.
func Refresh(ctx context.Context, a *app.App, hostTenant *app.Tenant, refreshToken, ip, ua string) (*LoginResult, error) {
	tidStr, _, ok := strings.Cut(refreshToken, ".")
	tid, err := strconv.ParseInt(tidStr, 10, 64)
	if refreshToken == "" {
		return nil, app.ErrValidation("refresh_token_required", "refresh_token")
	}
	invalid := app.ErrUnauthorized("invalid_refresh_token")
	if !ok || err != nil {
		return nil, invalid
	}
	info, found := a.TenantByID(tid)
	if !found || (hostTenant != nil && hostTenant.ID != tid) {
		return nil, invalid
	}
	t, release, err := a.Acquire(info.Slug)
	if err != nil {
		return nil, invalid
	}
	defer release()
	var jti string
	var mid int64
	var revoked, rexp sql.NullString
	err = t.Write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT jti, manager_id, revoked_at, refresh_expires_at FROM auth_sessions WHERE refresh_hash = ?`, app.SHA256(refreshToken)).
			Scan(&jti, &mid, &revoked, &rexp)
		if errors.Is(err, sql.ErrNoRows) {
			return invalid
		}
		if err != nil {
			return err
		}
		if revoked.Valid {
			return app.ErrUnauthorized("session_revoked")
		}
		if !rexp.Valid || rexp.String <= t.NowText() {
			return invalid
		}
		// Used once: the old session ends with its refresh token.
		_, err = tx.ExecContext(ctx, `UPDATE auth_sessions SET refresh_hash = NULL, revoked_at = ? WHERE jti = ?`, t.NowText(), jti)
		return err
	})
	if err != nil {
		return nil, err
	}
	_, status, err := app.ManagerActor(ctx, t, mid, nil)
	if err != nil {
		return nil, err
	}
	if status != "active" {
		return nil, app.ErrUnauthorized("session_revoked")
	}
	return openSession(ctx, a, t, mid, 0, "", true, ip, ua)
}

// Logout revokes the caller's session. Revocations keep the refresh hash so
// that /auth/refresh can answer session_revoked rather than an unknown token.
func Logout(ctx context.Context, act *app.Actor) error {
	if act.Tenant.DB.Followed() && standbySessionsOf(act.Tenant.App).revoke(act.Tenant.ID, act.JTI) {
		return nil
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE auth_sessions SET revoked_at = ? WHERE jti = ? AND revoked_at IS NULL`, act.Tenant.NowText(), act.JTI)
		return err
	})
}
