package identity

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"xr/app"
)

// MeManager is the manager block of /auth/me.
type MeManager struct {
	ID               int64   `json:"id"`
	TenantID         int64   `json:"tenant_id"`
	Email            *string `json:"email"`
	Username         *string `json:"username"`
	Status           string  `json:"status"`
	TwoFactorEnabled bool    `json:"two_factor_enabled"`
}

// MeSettings is the settings block of /auth/me.
type MeSettings struct {
	Currency             string `json:"currency"`
	Timezone             string `json:"timezone"`
	DefaultLanguage      string `json:"default_language"`
	PosUndoWindowSeconds int64  `json:"pos_undo_window_seconds"`
}

// MeTenant is the tenant block of /auth/me.
type MeTenant struct {
	LicenseStatus    string   `json:"license_status"`
	LicenseExpiresAt app.Time `json:"license_expires_at"`
	MaxUsers         *int64   `json:"max_users"`
	UsersCount       int64    `json:"users_count"`
	Blocked          bool     `json:"blocked"`
	BlockedReason    string   `json:"blocked_reason"`
}

// Me is GET /auth/me.
type Me struct {
	Version     string     `json:"version"`
	Manager     MeManager  `json:"manager"`
	Roles       []string   `json:"roles"`
	Permissions []string   `json:"permissions"`
	IsAdmin     bool       `json:"is_admin"`
	Settings    MeSettings `json:"settings"`
	Tenant      MeTenant   `json:"tenant"`
}

// GetMe describes the current credential.
func GetMe(ctx context.Context, a *app.App, act *app.Actor) (*Me, error) {
	t := act.Tenant
	m := &Me{Version: app.Version, Roles: act.Roles, Permissions: act.PermList(), IsAdmin: act.IsAdmin}
	var email, username sql.NullString
	err := t.DB.R.QueryRowContext(ctx, `SELECT id, email, username, status, totp_enabled FROM managers WHERE id = ?`, act.ManagerID).
		Scan(&m.Manager.ID, &email, &username, &m.Manager.Status, &m.Manager.TwoFactorEnabled)
	if err != nil {
		return nil, err
	}
	m.Manager.TenantID = t.ID
	if email.Valid {
		m.Manager.Email = &email.String
	}
	if username.Valid {
		m.Manager.Username = &username.String
	}
	m.Settings = MeSettings{Currency: "USD", Timezone: "UTC", DefaultLanguage: "en", PosUndoWindowSeconds: 300}
	rows, err := t.DB.R.QueryContext(ctx, `SELECT key, value FROM settings WHERE key IN ('currency', 'timezone', 'default_language', 'pos_undo_window_seconds')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		var dst any
		switch k {
		case "currency":
			dst = &m.Settings.Currency
		case "timezone":
			dst = &m.Settings.Timezone
		case "default_language":
			dst = &m.Settings.DefaultLanguage
		case "pos_undo_window_seconds":
			dst = &m.Settings.PosUndoWindowSeconds
		default:
			continue
		}
		if err := json.Unmarshal([]byte(v), dst); err != nil {
			return nil, fmt.Errorf("setting %s: %w", k, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	lic, err := t.CurrentLicense(ctx)
	if err != nil {
		return nil, err
	}
	m.Tenant = MeTenant{LicenseStatus: lic.Status, LicenseExpiresAt: lic.ExpiresAt, MaxUsers: lic.MaxUsers, UsersCount: lic.UsersCount,
		Blocked: lic.Blocked, BlockedReason: lic.BlockedReason}
	return m, nil
}

// PublicTenant is the descriptor /auth/context shows a login page.
type PublicTenant struct {
	Slug     string          `json:"slug"`
	Name     string          `json:"name"`
	Branding json.RawMessage `json:"branding"`
}

// PublicDescriptor reads the tenant's public face.
func PublicDescriptor(ctx context.Context, t *app.Tenant) PublicTenant {
	p := PublicTenant{Slug: t.Slug, Name: t.Name, Branding: json.RawMessage("null")}
	var b string
	if err := t.DB.R.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'branding'`).Scan(&b); err == nil && json.Valid([]byte(b)) {
		p.Branding = json.RawMessage(b)
	}
	return p
}
