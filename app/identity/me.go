package identity

import (
	"context"
	"database/sql"
	"encoding/json"

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
	TenantWide  bool       `json:"tenant_wide"` // sees every record, not only its own subtree
	Settings    MeSettings `json:"settings"`
	Tenant      MeTenant   `json:"tenant"`
}

// GetMe describes the current credential.
func GetMe(ctx context.Context, act *app.Actor) (*Me, error) {
	t := act.Tenant
	m := &Me{Version: app.Version, Roles: act.Roles, Permissions: act.PermList(), IsAdmin: act.IsAdmin, TenantWide: act.TenantWide}
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
	for _, r := range []struct {
		s   app.StringSetting
		dst *string
	}{{app.SettingCurrency, &m.Settings.Currency}, {app.SettingTimezone, &m.Settings.Timezone}, {app.SettingDefaultLanguage, &m.Settings.DefaultLanguage}} {
		if *r.dst, err = r.s.Get(ctx, t.DB.R); err != nil {
			return nil, err
		}
	}
	if m.Settings.PosUndoWindowSeconds, err = SettingPOSUndoWindow.Get(ctx, t.DB.R); err != nil {
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
	return PublicTenant{Slug: t.Slug, Name: t.Name, Branding: SettingBranding.GetOr(ctx, t.DB.R)}
}
