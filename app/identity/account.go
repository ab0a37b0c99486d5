package identity

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"xr/app"
)

// GetAccount is the caller's own manager record.
func GetAccount(ctx context.Context, act *app.Actor) (*Manager, error) {
	return scanManager(act.Tenant, act.Tenant.DB.R.QueryRowContext(ctx, `SELECT `+managerCols+` FROM managers m WHERE m.id = ?`, act.ManagerID))
}

// AccountInput is what a manager may change of itself.
type AccountInput struct {
	Email     app.Opt[string] `json:"email"`
	Username  app.Opt[string] `json:"username"`
	Firstname app.Opt[string] `json:"firstname"`
	Lastname  app.Opt[string] `json:"lastname"`
	Phone     app.Opt[string] `json:"phone"`
	Language  app.Opt[string] `json:"language"`
}

// UpdateAccount patches the caller's own profile fields.
func UpdateAccount(ctx context.Context, act *app.Actor, in AccountInput) (*Manager, error) {
	mi := ManagerInput{Email: in.Email, Username: in.Username, Firstname: in.Firstname, Lastname: in.Lastname, Phone: in.Phone, Language: in.Language}
	if err := mi.validate(false); err != nil {
		return nil, err
	}
	if in.Language.Set && in.Language.V != "" && in.Language.V != "en" && in.Language.V != "ar" {
		return nil, app.ErrValidation("unsupported_language", "language")
	}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error { return patchManagerColumns(ctx, tx, act.ManagerID, mi) })
	if err != nil {
		return nil, err
	}
	return GetAccount(ctx, act)
}

// PasswordChange is POST /auth/account/password.
type PasswordChange struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// Done is the answer of an action with nothing else to say.
type Done struct {
	OK bool `json:"ok"`
}

// ChangePassword re-checks the current password, sets the new one and
// signs out every other session of the caller.
func ChangePassword(ctx context.Context, act *app.Actor, in PasswordChange) (*Done, error) {
	current, next := in.CurrentPassword, in.NewPassword
	if err := CheckOwnPassword(ctx, act.Tenant.App, act, current); err != nil {
		if e := app.AsError(err); e != nil {
			e.Field = "current_password"
		}
		return nil, err
	}
	if err := app.CheckPasswordStrength(next, "new_password"); err != nil {
		return nil, err
	}
	if current == next {
		return nil, app.ErrValidation("password_unchanged", "new_password")
	}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE managers SET password_hash = ?, password_changed_at = ?, updated_at = ? WHERE id = ?`,
			app.HashPassword(next), act.Tenant.NowText(), act.Tenant.NowText(), act.ManagerID); err != nil {
			return err
		}
		return revokeSessions(ctx, tx, act.ManagerID, act.JTI)
	})
	if err != nil {
		return nil, err
	}
	return &Done{OK: true}, nil
}

// SessionInfo is a row of /auth/account/sessions.
type SessionInfo struct {
	JTI            string   `json:"jti"`
	CreatedAt      app.Time `json:"created_at"`
	ExpiresAt      app.Time `json:"expires_at"`
	IP             string   `json:"ip"`
	UserAgent      string   `json:"user_agent"`
	Current        bool     `json:"current"`
	ImpersonatorID *int64   `json:"impersonator_id"`
	HasRefresh     bool     `json:"has_refresh"`
}

// ListSessions lists the caller's live sessions, newest first.
func ListSessions(ctx context.Context, act *app.Actor) ([]SessionInfo, error) {
	rows, err := act.Tenant.DB.R.QueryContext(ctx, `SELECT jti, created_at, expires_at, ip, user_agent, impersonator_id, refresh_hash IS NOT NULL
		FROM auth_sessions WHERE manager_id = ? AND revoked_at IS NULL AND (expires_at > ? OR refresh_expires_at > ?) ORDER BY created_at DESC, jti`,
		act.ManagerID, act.Tenant.NowText(), act.Tenant.NowText())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []SessionInfo{}
	for rows.Next() {
		var s SessionInfo
		var imp sql.NullInt64
		if err := rows.Scan(&s.JTI, &s.CreatedAt, &s.ExpiresAt, &s.IP, &s.UserAgent, &imp, &s.HasRefresh); err != nil {
			return nil, err
		}
		if imp.Valid {
			s.ImpersonatorID = &imp.Int64
		}
		s.Current = s.JTI == act.JTI
		out = append(out, s)
	}
	return out, rows.Err()
}

// RevokeSession signs out one of the caller's sessions.
func RevokeSession(ctx context.Context, act *app.Actor, jti string) error {
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE auth_sessions SET revoked_at = ? WHERE jti = ? AND manager_id = ? AND revoked_at IS NULL`, act.Tenant.NowText(), jti, act.ManagerID)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return app.ErrNotFound()
		}
		return nil
	})
}

// RevokeOtherSessions signs out every session of the caller but this one.
func RevokeOtherSessions(ctx context.Context, act *app.Actor) (int64, error) {
	var n int64
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE auth_sessions SET revoked_at = ? WHERE manager_id = ? AND jti <> ? AND revoked_at IS NULL`, act.Tenant.NowText(), act.ManagerID, act.JTI)
		if err != nil {
			return err
		}
		n, _ = r.RowsAffected()
		return nil
	})
	return n, err
}

// Avatar limits.
const MaxAvatarBytes = 512 << 10

var avatarTypes = map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}

// SetAvatar stores an image (sniffed, not trusted from the client) under
// the tenant's files and records its path.
func SetAvatar(ctx context.Context, act *app.Actor, data []byte) (string, error) {
	if len(data) == 0 {
		return "", app.ErrValidation("avatar_required", "avatar")
	}
	if len(data) > MaxAvatarBytes {
		return "", app.ErrValidation("avatar_too_large", "avatar")
	}
	ext, ok := avatarTypes[http.DetectContentType(data)]
	if !ok {
		return "", app.ErrValidation("avatar_not_image", "avatar")
	}
	t := act.Tenant
	dir := filepath.Join(t.App.FilesDir(t.Slug), "avatars")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := strconv.FormatInt(act.ManagerID, 10) + ext
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return "", err
	}
	rel := "avatars/" + name
	err := t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE managers SET avatar = ?, updated_at = ? WHERE id = ?`, rel, t.NowText(), act.ManagerID)
		return err
	})
	return rel, err
}

// AccountLimits is /auth/account/limits: the budgets that apply to the
// caller and the tenant's licence caps.
type AccountLimits struct {
	Tier            string         `json:"tier"`
	TenantBuckets   map[string]int `json:"tenant_buckets"`
	OperatorBuckets map[string]int `json:"operator_buckets"`
	WindowSeconds   int            `json:"window_seconds"`
	MaxUsers        *int64         `json:"max_users"`
	UsersCount      int64          `json:"users_count"`
	PageSizeMax     int            `json:"page_size_max"`
}

// GetAccountLimits computes the caller's limits.
func GetAccountLimits(ctx context.Context, act *app.Actor) (AccountLimits, error) {
	t := act.Tenant
	n, err := t.CountUsers(ctx)
	if err != nil {
		return AccountLimits{}, err
	}
	l := AccountLimits{Tier: t.Tier(), TenantBuckets: map[string]int{}, OperatorBuckets: map[string]int{}, WindowSeconds: 60,
		MaxUsers: t.MaxUsers, UsersCount: n, PageSizeMax: app.MaxPageSize}
	for name, def := range t.App.Buckets() {
		switch def.Scope {
		case app.ScopeTenant:
			l.TenantBuckets[name] = app.ScaledLimit(def.Limit, l.Tier)
		case app.ScopeOperator:
			l.OperatorBuckets[name] = def.Limit
		}
	}
	return l, nil
}

// PushToken registers a device for notifications.
type PushToken struct {
	Token    string `json:"token"`
	Platform string `json:"platform"`
}

// AddPushToken stores (or refreshes) a device token of the caller.
func AddPushToken(ctx context.Context, act *app.Actor, p PushToken) error {
	if p.Token == "" || len(p.Token) > 4096 {
		return app.ErrValidation("token_required", "token")
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO push_tokens(manager_id, token, platform, created_at) VALUES (?,?,?,?)
			ON CONFLICT(manager_id, token) DO UPDATE SET platform = excluded.platform`, act.ManagerID, p.Token, p.Platform, act.Tenant.NowText())
		return err
	})
}

// RemovePushToken forgets a device token (all of the caller's when empty).
func RemovePushToken(ctx context.Context, act *app.Actor, token string) error {
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		var err error
		if token == "" {
			_, err = tx.ExecContext(ctx, `DELETE FROM push_tokens WHERE manager_id = ?`, act.ManagerID)
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM push_tokens WHERE manager_id = ? AND token = ?`, act.ManagerID, token)
		}
		return err
	})
}
