package portalentry

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"time"

	"xr/app"
	"xr/app/portal"
	"xr/app/subs"
)

// One-time codes (table portal_codes), kept by hash only:
//   - invite: staff give it to a subscriber they created, who sets a portal
//     password with it (POST /portal/join); 7 days.
//   - exchange: traded once for a portal session (POST /portal/exchange);
//     made by staff links, tunnel identification and the messenger; 5 minutes.
//   - messenger_link: the short code a subscriber sends to the bot to link
//     its messaging account (POST /portal/messenger-exchange); 10 minutes.
//
// A code is single use. Unknown, wrong, used and expired codes, and codes
// of a subscriber since deleted or disabled, answer alike: 400 invalid_code.
const (
	kindInvite        = "invite"
	kindExchange      = "exchange"
	kindMessengerLink = "messenger_link"

	inviteTTL        = 7 * 24 * time.Hour
	exchangeTTL      = 5 * time.Minute
	messengerLinkTTL = 10 * time.Minute
)

// codeAlphabet has no look-alike characters (0/O, 1/I/L).
const codeAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

// shortCode is n characters of codeAlphabet, for codes a person types.
func shortCode(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b)
}

// normCode is how a typed code is compared: upper case, no spaces or dashes.
func normCode(kind, code string) string {
	if kind == kindExchange {
		return strings.TrimSpace(code)
	}
	r := strings.NewReplacer(" ", "", "-", "")
	return strings.ToUpper(r.Replace(strings.TrimSpace(code)))
}

func codeHash(kind, code string) []byte { return app.SHA256(kind + ":" + normCode(kind, code)) }

var errInvalidCode = app.ErrValidation("invalid_code", "code")

// insertCode stores a new code of kind for userID in tx.
func insertCode(ctx context.Context, tx *sql.Tx, kind, code string, userID, createdBy int64, source string, now time.Time, ttl time.Duration) error {
	var by any
	if createdBy != 0 {
		by = createdBy
	}
	// Forget codes expired for a day.
	if _, err := tx.ExecContext(ctx, `DELETE FROM portal_codes WHERE expires_at < ?`, app.FormatTime(now.Add(-24*time.Hour))); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO portal_codes(code_hash, kind, user_id, source, created_by, created_at, expires_at) VALUES (?,?,?,?,?,?,?)`,
		codeHash(kind, code), kind, userID, source, by, app.FormatTime(now), app.FormatTime(now.Add(ttl)))
	return err
}

// liveCode is a usable code's subscriber and who made it.
type liveCode struct {
	UserID    int64
	CreatedBy int64
	Source    string
	ExpiresAt string
}

// findCode reads a usable code (unused, unexpired, subscriber in standing);
// anything else is errInvalidCode.
func findCode(ctx context.Context, q app.Querier, kind, code string, now string) (*liveCode, error) {
	if normCode(kind, code) == "" {
		return nil, app.ErrValidation("code_required", "code")
	}
	var c liveCode
	var by sql.NullInt64
	var used sql.NullString
	var enabled, deleted bool
	err := q.QueryRowContext(ctx, `SELECT c.user_id, c.created_by, c.source, c.expires_at, c.used_at, u.enabled, u.deleted_at IS NOT NULL
		FROM portal_codes c JOIN users u ON u.id = c.user_id WHERE c.code_hash = ? AND c.kind = ?`, codeHash(kind, code), kind).
		Scan(&c.UserID, &by, &c.Source, &c.ExpiresAt, &used, &enabled, &deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errInvalidCode
	}
	if err != nil {
		return nil, err
	}
	if used.Valid || c.ExpiresAt <= now || !enabled || deleted {
		return nil, errInvalidCode
	}
	c.CreatedBy = by.Int64
	return &c, nil
}

// useCode finds and spends a code in tx.
func useCode(ctx context.Context, tx *sql.Tx, kind, code, now string) (*liveCode, error) {
	c, err := findCode(ctx, tx, kind, code, now)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE portal_codes SET used_at = ? WHERE code_hash = ?`, now, codeHash(kind, code)); err != nil {
		return nil, err
	}
	return c, nil
}

// Invite is POST /users/{id}/portal-invite: the code (shown once) and the
// link a subscriber opens to join.
type Invite struct {
	UserID    int64    `json:"user_id"`
	Username  string   `json:"username"`
	Code      string   `json:"code"`
	Link      string   `json:"link"` // path on the tenant's host
	ExpiresAt app.Time `json:"expires_at"`
}

// IssueInvite makes a portal invite code for a subscriber in the caller's
// subtree (prm_users_update; out of scope is the 404 of a missing one). An
// earlier unused invite of the subscriber stops working.
func IssueInvite(ctx context.Context, act *app.Actor, userID int64) (*Invite, error) {
	if err := act.Require(subs.PermUsersUpdate); err != nil {
		return nil, err
	}
	u, err := subs.Lookup(ctx, act.Tenant.DB.R, act, userID)
	if err != nil {
		return nil, err
	}
	t := act.Tenant
	now := t.Now()
	raw := shortCode(10)
	code := raw[:5] + "-" + raw[5:]
	err = t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE portal_codes SET used_at = ? WHERE user_id = ? AND kind = ? AND used_at IS NULL`,
			app.FormatTime(now), userID, kindInvite); err != nil {
			return err
		}
		return insertCode(ctx, tx, kindInvite, code, userID, act.ManagerID, "staff", now, inviteTTL)
	})
	if err != nil {
		return nil, err
	}
	return &Invite{UserID: userID, Username: u.Username, Code: code, Link: "/my/join?code=" + url.QueryEscape(code),
		ExpiresAt: app.T(now.Add(inviteTTL))}, nil
}

// JoinContext is GET /portal/join/context: whom an invite code is for.
type JoinContext struct {
	Username  string   `json:"username"`
	Firstname string   `json:"firstname"`
	ExpiresAt app.Time `json:"expires_at"`
	// CaptchaRequired: POST /portal/join needs captcha_id and captcha_answer.
	CaptchaRequired bool `json:"captcha_required"`
}

// GetJoinContext reads an invite code without spending it.
func GetJoinContext(ctx context.Context, t *app.Tenant, code string) (*JoinContext, error) {
	if err := requireTenantFeature(ctx, t, portal.FeatureJoin); err != nil {
		return nil, err
	}
	c, err := findCode(ctx, t.DB.R, kindInvite, code, t.NowText())
	if err != nil {
		return nil, err
	}
	out := &JoinContext{CaptchaRequired: true}
	u, err := subs.Read(ctx, t.DB.R, c.UserID)
	if err != nil {
		return nil, err
	}
	out.Username, out.Firstname = u.Username, u.FirstName
	exp, err := app.ParseTime(c.ExpiresAt, true)
	if err != nil {
		return nil, app.ErrInternal(err)
	}
	out.ExpiresAt = app.T(exp)
	return out, nil
}

// JoinInput is POST /portal/join.
type JoinInput struct {
	Code          string `json:"code"`
	Password      string `json:"password"` // the new portal password
	CaptchaID     string `json:"captcha_id"`
	CaptchaAnswer string `json:"captcha_answer"`
	Refresh       bool   `json:"refresh"`
	IP            string `json:"-"`
	UserAgent     string `json:"-"`
}

// Join spends an invite code: the subscriber's portal password becomes
// in.Password and a portal session opens. The captcha is checked first
// (and spent), then the password's strength, then the code.
func Join(ctx context.Context, t *app.Tenant, in JoinInput) (*portal.Session, error) {
	if err := requireTenantFeature(ctx, t, portal.FeatureJoin); err != nil {
		return nil, err
	}
	if normCode(kindInvite, in.Code) == "" {
		return nil, app.ErrValidation("code_required", "code")
	}
	if err := VerifyCaptcha(ctx, t, in.CaptchaID, in.CaptchaAnswer, in.IP); err != nil {
		return nil, err
	}
	if in.Password == "" {
		return nil, app.ErrValidation("password_required", "password")
	}
	pw, err := subs.NewPortalPassword(in.Password, "password")
	if err != nil {
		return nil, err
	}
	var uid int64
	err = t.Write(ctx, func(tx *sql.Tx) error {
		c, err := useCode(ctx, tx, kindInvite, in.Code, t.NowText())
		if err != nil {
			return err
		}
		uid = c.UserID
		return subs.SetPortalPassword(ctx, tx, uid, pw, "portal_join")
	})
	if err != nil {
		return nil, err
	}
	return portal.OpenSessionFor(ctx, t, uid, 0, in.Refresh, in.IP, in.UserAgent)
}

// ExchangeInput is POST /portal/exchange.
type ExchangeInput struct {
	Code      string `json:"code"`
	Refresh   bool   `json:"refresh"`
	IP        string `json:"-"`
	UserAgent string `json:"-"`
}

// Exchange trades a one-time exchange code for a portal session. A code
// from a staff link opens a borrowed session (no refresh token).
func Exchange(ctx context.Context, t *app.Tenant, in ExchangeInput) (*portal.Session, error) {
	if err := requireTenantFeature(ctx, t, portal.FeatureExchange); err != nil {
		return nil, err
	}
	var c *liveCode
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		c, err = useCode(ctx, tx, kindExchange, in.Code, t.NowText())
		return err
	})
	if err != nil {
		return nil, err
	}
	by := int64(0)
	if c.Source == "staff" {
		by = c.CreatedBy
	}
	s, err := portal.OpenSessionFor(ctx, t, c.UserID, by, in.Refresh, in.IP, in.UserAgent)
	if err != nil {
		return nil, errInvalidCode
	}
	return s, nil
}

// ExchangeCode is a one-time code for POST /portal/exchange and the link
// that carries it.
type ExchangeCode struct {
	Code      string   `json:"code"`
	Link      string   `json:"link"` // path on the tenant's host
	ExpiresAt app.Time `json:"expires_at"`
}

// newExchangeCode stores an exchange code for userID in tx.
func newExchangeCode(ctx context.Context, tx *sql.Tx, t *app.Tenant, userID, createdBy int64, source string) (*ExchangeCode, error) {
	now := t.Now()
	code := app.RandomToken(24)
	if err := insertCode(ctx, tx, kindExchange, code, userID, createdBy, source, now, exchangeTTL); err != nil {
		return nil, err
	}
	return &ExchangeCode{Code: code, Link: "/my/enter?code=" + url.QueryEscape(code), ExpiresAt: app.T(now.Add(exchangeTTL))}, nil
}

// IssueLoginLink is POST /users/{id}/portal-link: a staff login-as link,
// a one-time code that opens a session borrowed by the caller
// (prm_users_login_as, the subscriber in the caller's subtree).
func IssueLoginLink(ctx context.Context, act *app.Actor, userID int64) (*ExchangeCode, error) {
	if err := act.Require(subs.PermUsersLoginAs); err != nil {
		return nil, err
	}
	if _, err := subs.Lookup(ctx, act.Tenant.DB.R, act, userID); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *ExchangeCode
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = newExchangeCode(ctx, tx, t, userID, act.ManagerID, "staff")
		return err
	})
	return out, err
}

// requireTenantFeature is portal.RequireFeature on a tenant host (the apex
// names no tenant: 404).
func requireTenantFeature(ctx context.Context, t *app.Tenant, f portal.Feature) error {
	if t == nil {
		return app.ErrNotFound()
	}
	return portal.RequireFeature(ctx, t, f)
}
