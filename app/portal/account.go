package portal

import (
	"context"
	"database/sql"
	"errors"
	"net/mail"
	"strings"
	"time"

	"xr/app"
	"xr/app/subs"
	"xr/app/tools"
)

// Quota is the current period's usage against the enforced limits
// (a limit of 0 is unlimited).
type Quota struct {
	UsedBytes    int64 `json:"used_bytes"`
	BytesLimit   int64 `json:"bytes_limit"`
	UsedSeconds  int64 `json:"used_seconds"`
	SecondsLimit int64 `json:"seconds_limit"`
}

// Me is GET /portal/me: the caller's own record.
type Me struct {
	ID          int64       `json:"id"`
	Username    string      `json:"username"`
	Firstname   string      `json:"firstname"`
	Lastname    string      `json:"lastname"`
	Email       string      `json:"email"`
	Phone       string      `json:"phone"`
	ProfileID   *int64      `json:"profile_id"`
	ProfileName string      `json:"profile_name"`
	Expiration  app.Time    `json:"expiration"`
	Balance     app.Money   `json:"balance"`
	Debt        app.Money   `json:"debt"`
	DebtLimit   *app.Money  `json:"debt_limit"` // null = unlimited credit
	Status      subs.Status `json:"status"`
	Quota       Quota       `json:"quota"`
	CreatedAt   app.Time    `json:"created_at"`
	// Announcements are the unread, unexpired announcements (GET /portal/me only).
	Announcements []tools.PortalAnnouncement `json:"announcements,omitempty"`
}

// self is the subscriber row the portal works on.
type self struct {
	Me
	FUPDown int64
}

func readSelf(ctx context.Context, q app.Querier, now time.Time, uid int64) (*self, error) {
	var s self
	var pid, limit sql.NullInt64
	var pname sql.NullString
	var bal int64
	var fup sql.NullInt64
	var enabled, deleted, online bool
	err := q.QueryRowContext(ctx, `SELECT u.id, u.username, u.firstname, u.lastname, u.email, u.phone, u.profile_id, p.name, u.expiration,
		u.balance, u.debt_limit, u.bytes_limit, u.used_bytes, u.seconds_limit, u.used_seconds, u.created_at, p.fup_rate_down_kbps,
		u.enabled, u.deleted_at IS NOT NULL, EXISTS (SELECT 1 FROM radius_sessions r WHERE r.user_id = u.id AND r.stop_time IS NULL)
		FROM users u LEFT JOIN profiles p ON p.id = u.profile_id WHERE u.id = ?`, uid).
		Scan(&s.ID, &s.Username, &s.Firstname, &s.Lastname, &s.Email, &s.Phone, &pid, &pname, &s.Expiration,
			&bal, &limit, &s.Quota.BytesLimit, &s.Quota.UsedBytes, &s.Quota.SecondsLimit, &s.Quota.UsedSeconds, &s.CreatedAt, &fup,
			&enabled, &deleted, &online)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if pid.Valid {
		s.ProfileID = &pid.Int64
	}
	s.ProfileName = pname.String
	s.Balance = app.Money(bal)
	if bal < 0 {
		s.Debt = app.Money(-bal)
	}
	if limit.Valid {
		m := app.Money(limit.Int64)
		s.DebtLimit = &m
	}
	s.FUPDown = fup.Int64
	s.Status = subs.StatusOf(subs.StatusInput{Enabled: enabled, Deleted: deleted, Online: online, Expiration: s.Expiration.Time,
		BytesLimit: s.Quota.BytesLimit, UsedBytes: s.Quota.UsedBytes, SecondsLimit: s.Quota.SecondsLimit, UsedSeconds: s.Quota.UsedSeconds,
		FUPRateDownKbps: s.FUPDown}, now)
	return &s, nil
}

// GetMe reads the caller's own record.
func GetMe(ctx context.Context, act *app.Actor) (*Me, error) {
	t, uid := act.Tenant, act.SubscriberID
	s, err := readSelf(ctx, t.DB.R, t.Now(), uid)
	if err != nil {
		return nil, err
	}
	if s.Announcements, err = tools.ActiveAnnouncements(ctx, t, uid); err != nil {
		return nil, err
	}
	return &s.Me, nil
}

// AccountPatch is PATCH /portal/account: contact fields only.
type AccountPatch struct {
	Email     app.Opt[string] `json:"email"`
	Phone     app.Opt[string] `json:"phone"`
	Firstname app.Opt[string] `json:"firstname"`
	Lastname  app.Opt[string] `json:"lastname"`
}

func checkField(field string, o app.Opt[string], max int) (string, error) {
	v := strings.TrimSpace(o.V)
	if len(v) > max {
		return "", app.ErrValidation("too_long", field)
	}
	if strings.ContainsAny(v, "\x00\r\n") {
		return "", app.ErrValidation("invalid_value", field)
	}
	return v, nil
}

// UpdateAccount changes the caller's email, phone and names (null or ""
// clears one) and emits user.updated. The portal's own input rules come
// first; the write, subs' validation and the event are subs.UpdateContact.
func UpdateAccount(ctx context.Context, act *app.Actor, p AccountPatch) (*Me, error) {
	t, uid := act.Tenant, act.SubscriberID
	var c subs.Contact
	for _, f := range []struct {
		col string
		o   app.Opt[string]
		dst *app.Opt[string]
		max int
	}{{"email", p.Email, &c.Email, 255}, {"phone", p.Phone, &c.Phone, 64}, {"firstname", p.Firstname, &c.Firstname, 128}, {"lastname", p.Lastname, &c.Lastname, 128}} {
		if !f.o.Set {
			continue
		}
		v, err := checkField(f.col, f.o, f.max)
		if err != nil {
			return nil, err
		}
		if f.col == "email" && v != "" {
			if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
				return nil, app.ErrValidation("invalid_email", "email")
			}
		}
		*f.dst = app.Opt[string]{Set: true, V: v}
	}
	if c.Email.Set || c.Phone.Set || c.Firstname.Set || c.Lastname.Set {
		err := t.Write(ctx, func(tx *sql.Tx) error {
			return subs.UpdateContact(ctx, tx, uid, c, "portal")
		})
		if err != nil {
			return nil, err
		}
	}
	return GetMe(ctx, act)
}

// PasswordInput is POST /portal/password.
type PasswordInput struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// ChangePassword checks the current portal credential (see the package
// doc: the portal password, or the RADIUS one while none is set), sets the
// new portal password and revokes every other portal session of the
// caller. The RADIUS password is not changed.
func ChangePassword(ctx context.Context, act *app.Actor, in PasswordInput) error {
	t, uid := act.Tenant, act.SubscriberID
	jti := act.JTI
	if in.CurrentPassword == "" {
		return app.ErrValidation("password_required", "current_password")
	}
	c, err := readCred(ctx, t.DB.R, `id = ?`, uid)
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrNotFound()
	}
	if err != nil {
		return err
	}
	if !checkPassword(t, c, in.CurrentPassword) {
		return app.ErrValidation("invalid_password", "current_password")
	}
	// subs checks the strength (as for a staff-set portal password) and
	// hashes it here, outside the writing transaction.
	pw, err := subs.NewPortalPassword(in.NewPassword, "new_password")
	if err != nil {
		return err
	}
	if in.NewPassword == in.CurrentPassword {
		return app.ErrValidation("password_unchanged", "new_password")
	}
	err = t.Write(ctx, func(tx *sql.Tx) error {
		if err := subs.SetPortalPassword(ctx, tx, uid, pw, "portal"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE portal_sessions SET revoked_at = ? WHERE user_id = ? AND jti <> ? AND revoked_at IS NULL`, act.Tenant.NowText(), uid, jti)
		return err
	})
	if err != nil {
		return err
	}
	return nil
}

// Credentials is GET /portal/credentials: the subscriber's own RADIUS
// login, the password in clear. It is the caller's own secret (what its
// router or device needs); the staff API serves it likewise.
type Credentials struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// GetCredentials opens the sealed RADIUS password of the caller.
func GetCredentials(ctx context.Context, act *app.Actor) (*Credentials, error) {
	t, uid := act.Tenant, act.SubscriberID
	c, err := readCred(ctx, t.DB.R, `id = ?`, uid)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	pw, err := t.App.Keys.Open(c.Sealed)
	if err != nil {
		return nil, err
	}
	return &Credentials{Username: c.Username, Password: string(pw)}, nil
}

// PushTokenInput is POST and DELETE /portal/push-tokens.
type PushTokenInput struct {
	Token    string `json:"token"`
	Platform string `json:"platform"`
}

// PushTokenResult answers both.
type PushTokenResult struct {
	Token    string `json:"token"`
	Platform string `json:"platform,omitempty"`
	Deleted  bool   `json:"deleted,omitempty"`
}

// maxPushTokens bounds one subscriber's devices; the oldest goes first.
const maxPushTokens = 20

// AddPushToken registers (or re-registers) a device token of the caller.
func AddPushToken(ctx context.Context, act *app.Actor, in PushTokenInput) (*PushTokenResult, error) {
	t, uid := act.Tenant, act.SubscriberID
	in.Token = strings.TrimSpace(in.Token)
	if in.Token == "" {
		return nil, app.ErrValidation("token_required", "token")
	}
	if len(in.Token) > 512 {
		return nil, app.ErrValidation("too_long", "token")
	}
	in.Platform = strings.ToLower(strings.TrimSpace(in.Platform))
	if len(in.Platform) > 32 {
		return nil, app.ErrValidation("too_long", "platform")
	}
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO portal_push_tokens(user_id, token, platform, created_at) VALUES (?,?,?,?)
			ON CONFLICT(user_id, token) DO UPDATE SET platform = excluded.platform, created_at = excluded.created_at`,
			uid, in.Token, in.Platform, act.Tenant.NowText()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM portal_push_tokens WHERE user_id = ? AND token NOT IN
			(SELECT token FROM portal_push_tokens WHERE user_id = ? ORDER BY created_at DESC, token LIMIT ?)`, uid, uid, maxPushTokens)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &PushTokenResult{Token: in.Token, Platform: in.Platform}, nil
}

// DeletePushToken forgets one device token of the caller (idempotent:
// deleted false when it was not registered).
func DeletePushToken(ctx context.Context, act *app.Actor, token string) (*PushTokenResult, error) {
	t, uid := act.Tenant, act.SubscriberID
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, app.ErrValidation("token_required", "token")
	}
	var n int64
	err := t.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM portal_push_tokens WHERE user_id = ? AND token = ?`, uid, token)
		if err != nil {
			return err
		}
		n, _ = r.RowsAffected()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &PushTokenResult{Token: token, Deleted: n > 0}, nil
}
