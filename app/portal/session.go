// Package portal is the subscriber self-service portal: a subscriber signs
// in with its own credentials and reads or changes only its own record.
// Every function takes the tenant and the subscriber id of the verified
// portal token; no id ever comes from the request.
//
// Which password signs in: the portal password (users.portal_password_hash)
// when one is set, and only it; a subscriber without a portal password signs
// in with its RADIUS password (the sealed one, compared in constant time).
// Setting a portal password (POST /password) therefore retires the RADIUS
// password as a portal credential.
//
// Sessions: a token lives portal_session_minutes (tenant setting, default
// 720); asked with refresh:true it lives one hour and comes with a
// single-use refresh token valid refresh_length_days (default 30). Each
// token has a portal_sessions row: revocation (password change) ends it.
package portal

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/identity"
	"xr/app/subs"
)

// RequireEnabled is 503 site_offline when the tenant's portal is off.
func RequireEnabled(ctx context.Context, t *app.Tenant) error {
	if t == nil {
		return app.ErrNotFound()
	}
	on, err := SettingPortalEnabled.Get(ctx, t.DB.R)
	if err != nil {
		return err
	}
	if !on {
		return app.ErrUnavailable("site_offline")
	}
	return nil
}

// LoginInput is POST /portal/login.
type LoginInput struct {
	Username  string `json:"username"`
	Password  string `json:"password"`
	Refresh   bool   `json:"refresh"`
	IP        string `json:"-"`
	UserAgent string `json:"-"`
}

// RefreshInput is POST /portal/refresh.
type RefreshInput struct {
	RefreshToken string `json:"refresh_token"`
	IP           string `json:"-"`
	UserAgent    string `json:"-"`
}

// Session is the login and refresh response.
type Session struct {
	Token            string `json:"token"`
	ExpiresAt        int64  `json:"expires_at"`
	UserID           int64  `json:"user_id"`
	Username         string `json:"username"`
	RefreshToken     string `json:"refresh_token,omitempty"`
	RefreshExpiresAt int64  `json:"refresh_expires_at,omitempty"`
}

// credRow is what a sign-in checks.
type credRow struct {
	ID         int64
	Username   string
	Sealed     []byte
	PortalHash string
	Enabled    bool
	Deleted    bool
}

func readCred(ctx context.Context, q app.Querier, where string, arg any) (*credRow, error) {
	var c credRow
	err := q.QueryRowContext(ctx, `SELECT id, username, password_sealed, portal_password_hash, enabled, deleted_at IS NOT NULL FROM users WHERE `+where, arg).
		Scan(&c.ID, &c.Username, &c.Sealed, &c.PortalHash, &c.Enabled, &c.Deleted)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// checkPassword applies the portal's password rule (see the package doc).
func checkPassword(t *app.Tenant, c *credRow, pw string) bool {
	if c.PortalHash != "" {
		return app.VerifyPassword(c.PortalHash, pw)
	}
	// Same cost as a hash check, so timing does not tell which rule applied.
	app.VerifyPassword("", pw)
	radius, err := t.App.Keys.Open(c.Sealed)
	if err != nil || len(radius) == 0 {
		return false
	}
	return subtle.ConstantTimeCompare(radius, []byte(pw)) == 1
}

// standing refuses a subscriber that may not use the portal.
func (c *credRow) standing() error {
	switch {
	case c.Deleted:
		return app.ErrUnauthorized("account_deleted")
	case !c.Enabled:
		return app.ErrUnauthorized("account_disabled")
	}
	return nil
}

// Login checks a subscriber's credentials on tenant t (the host's) and
// opens a portal session. An unknown username and a wrong password are one
// answer, 401 invalid_credentials, after the same argon2 work; only after
// the password matched: deleted 401 account_deleted, disabled 401
// account_disabled.
func Login(ctx context.Context, t *app.Tenant, in LoginInput) (*Session, error) {
	if t == nil {
		app.VerifyPassword("", in.Password)
		return nil, app.ErrUnauthorized("invalid_credentials")
	}
	if err := RequireEnabled(ctx, t); err != nil {
		return nil, err
	}
	in.Username = strings.TrimSpace(in.Username)
	if in.Username == "" {
		return nil, app.ErrValidation("username_required", "username")
	}
	if in.Password == "" {
		return nil, app.ErrValidation("password_required", "password")
	}
	c, err := readCred(ctx, t.DB.R, `username = ? ORDER BY deleted_at IS NOT NULL, id LIMIT 1`, in.Username)
	if errors.Is(err, sql.ErrNoRows) {
		app.VerifyPassword("", in.Password)
		return nil, app.ErrUnauthorized("invalid_credentials")
	}
	if err != nil {
		return nil, err
	}
	if !checkPassword(t, c, in.Password) {
		return nil, app.ErrUnauthorized("invalid_credentials")
	}
	if err := c.standing(); err != nil {
		return nil, err
	}
	return openSession(ctx, t, c, in.Refresh, in.IP, in.UserAgent)
}

func openSession(ctx context.Context, t *app.Tenant, c *credRow, refresh bool, ip, ua string) (*Session, error) {
	return openSessionBy(ctx, t, c, refresh, ip, ua, 0)
}

func openSessionBy(ctx context.Context, t *app.Tenant, c *credRow, refresh bool, ip, ua string, borrowedBy int64) (*Session, error) {
	now := t.Now()
	minutes, err := SettingPortalSession.Get(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	days, err := identity.SettingRefreshLength.Get(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	length := time.Duration(minutes) * time.Minute
	if length <= 0 {
		length = 720 * time.Minute
	}
	if refresh {
		length = min(length, time.Hour)
	}
	exp := now.Add(length)
	jti := app.RandomToken(16)
	s := &Session{UserID: c.ID, Username: c.Username, ExpiresAt: exp.Unix()}
	var refreshHash, refreshExp any
	if refresh {
		s.RefreshToken = "p" + strconv.FormatInt(t.ID, 10) + "." + app.RandomToken(32)
		rexp := now.Add(time.Duration(days) * 24 * time.Hour)
		s.RefreshExpiresAt = rexp.Unix()
		refreshHash, refreshExp = app.SHA256(s.RefreshToken), app.FormatTime(rexp)
	}
	if len(ua) > 255 {
		ua = ua[:255]
	}
	err = t.Write(ctx, func(tx *sql.Tx) error {
		var by any
		if borrowedBy != 0 {
			by = borrowedBy
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO portal_sessions(jti, user_id, ip, user_agent, created_at, expires_at, refresh_hash, refresh_expires_at, borrowed_by)
			VALUES (?,?,?,?,?,?,?,?,?)`, jti, c.ID, ip, ua, app.FormatTime(now), app.FormatTime(exp), refreshHash, refreshExp, by)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.Token = identity.SignPortalToken(t.App, t, c.ID, jti, exp)
	return s, nil
}

// Refresh exchanges a portal refresh token (usable once, on its own
// tenant's host) for a new session. Unknown and expired tokens answer
// alike (401 invalid_refresh_token); a revoked session 401 session_revoked.
func Refresh(ctx context.Context, t *app.Tenant, in RefreshInput) (*Session, error) {
	if t == nil {
		return nil, app.ErrUnauthorized("invalid_refresh_token")
	}
	if err := RequireEnabled(ctx, t); err != nil {
		return nil, err
	}
	if in.RefreshToken == "" {
		return nil, app.ErrValidation("refresh_token_required", "refresh_token")
	}
	invalid := app.ErrUnauthorized("invalid_refresh_token")
	if !strings.HasPrefix(in.RefreshToken, "p"+strconv.FormatInt(t.ID, 10)+".") {
		return nil, invalid
	}
	var c *credRow
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var jti string
		var uid int64
		var revoked, rexp sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT jti, user_id, revoked_at, refresh_expires_at FROM portal_sessions WHERE refresh_hash = ?`,
			app.SHA256(in.RefreshToken)).Scan(&jti, &uid, &revoked, &rexp)
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
		if c, err = readCred(ctx, tx, `id = ?`, uid); err != nil {
			return err
		}
		if err := c.standing(); err != nil {
			return err
		}
		// Used once: the old session ends with its refresh token.
		_, err = tx.ExecContext(ctx, `UPDATE portal_sessions SET refresh_hash = NULL, revoked_at = ? WHERE jti = ?`, t.NowText(), jti)
		return err
	})
	if err != nil {
		return nil, err
	}
	return openSession(ctx, t, c, true, in.IP, in.UserAgent)
}

// Authenticate turns a bearer portal token into the subscriber id and
// session id: the signature, audience and tenant (app.ParsePortalToken),
// then the session row (revoked: 401 session_revoked) and the subscriber's
// standing (deleted or disabled since: 401 account_deleted/account_disabled).
// A staff token is 401 invalid_token. An offline portal is 503 site_offline.
func Authenticate(ctx context.Context, t *app.Tenant, bearer string) (userID int64, jti string, err error) {
	if bearer == "" {
		return 0, "", app.ErrUnauthorized("missing_bearer_token")
	}
	if t == nil {
		return 0, "", app.ErrUnauthorized("invalid_token")
	}
	uid, jti, err := identity.ParsePortalToken(t.App, t, bearer)
	if err != nil {
		return 0, "", err
	}
	if err := RequireEnabled(ctx, t); err != nil {
		return 0, "", err
	}
	var sid int64
	var revoked sql.NullString
	var enabled, deleted bool
	err = t.DB.R.QueryRowContext(ctx, `SELECT s.user_id, s.revoked_at, u.enabled, u.deleted_at IS NOT NULL
		FROM portal_sessions s JOIN users u ON u.id = s.user_id WHERE s.jti = ?`, jti).Scan(&sid, &revoked, &enabled, &deleted)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && sid != uid) {
		return 0, "", app.ErrUnauthorized("invalid_token")
	}
	if err != nil {
		return 0, "", err
	}
	if revoked.Valid {
		return 0, "", app.ErrUnauthorized("session_revoked")
	}
	if err := (&credRow{Enabled: enabled, Deleted: deleted}).standing(); err != nil {
		return 0, "", err
	}
	return uid, jti, nil
}

// Config is GET /portal/config: what the portal's front end needs before
// sign-in. No secrets.
type Config struct {
	TenantName      string `json:"tenant_name"`
	TenantSlug      string `json:"tenant_slug"`
	Currency        string `json:"currency"`
	DefaultLanguage string `json:"default_language"`
	PortalEnabled   bool   `json:"portal_enabled"`
	// Features are the optional parts the tenant offers (see Feature).
	Features []string `json:"features"`
}

// GetConfig answers even while the portal is off (portal_enabled false).
func GetConfig(ctx context.Context, t *app.Tenant) (*Config, error) {
	if t == nil {
		return nil, app.ErrNotFound()
	}
	c := &Config{TenantName: t.Name, TenantSlug: t.Slug}
	var err error
	if c.Currency, err = app.SettingCurrency.Get(ctx, t.DB.R); err != nil {
		return nil, err
	}
	if c.DefaultLanguage, err = app.SettingDefaultLanguage.Get(ctx, t.DB.R); err != nil {
		return nil, err
	}
	if c.PortalEnabled, err = SettingPortalEnabled.Get(ctx, t.DB.R); err != nil {
		return nil, err
	}
	if c.Features, err = Features(ctx, t); err != nil {
		return nil, err
	}
	return c, nil
}

// LoginAs opens a borrowed portal session for a subscriber in the caller's
// subtree (POST /users/{id}/login-as, allowed for API tokens): staff see the
// portal as the subscriber does. The session records who borrowed it; it
// has no refresh token. Out of scope is the same 404 as missing.
func LoginAs(ctx context.Context, act *app.Actor, userID int64, ip, ua string) (*Session, error) {
	if err := act.Require(subs.PermUsersLoginAs); err != nil {
		return nil, err
	}
	t := act.Tenant
	if _, err := subs.Lookup(ctx, t.DB.R, act, userID); err != nil {
		return nil, err
	}
	if err := RequireEnabled(ctx, t); err != nil {
		return nil, err
	}
	c, err := readCred(ctx, t.DB.R, "id = ?", userID)
	if err != nil {
		return nil, app.ErrNotFound()
	}
	switch {
	case c.Deleted:
		return nil, app.ErrNotFound()
	case !c.Enabled:
		return nil, app.ErrConflict("account_disabled")
	}
	return openSessionBy(ctx, t, c, false, ip, ua, act.ManagerID)
}

// OpenSessionFor opens a portal session for subscriber userID of t without
// a password: the ways into the portal of app/portalentry (invite join,
// one-time code exchange) call it once they have checked their own proof.
// borrowedBy is the manager behind a staff link (0: the subscriber's own).
// A missing, deleted or disabled subscriber is 401 invalid_credentials, the
// answer of an unknown one.
func OpenSessionFor(ctx context.Context, t *app.Tenant, userID, borrowedBy int64, refresh bool, ip, ua string) (*Session, error) {
	if err := RequireEnabled(ctx, t); err != nil {
		return nil, err
	}
	c, err := readCred(ctx, t.DB.R, "id = ?", userID)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && c.standing() != nil) {
		return nil, app.ErrUnauthorized("invalid_credentials")
	}
	if err != nil {
		return nil, err
	}
	return openSessionBy(ctx, t, c, refresh && borrowedBy == 0, ip, ua, borrowedBy)
}
