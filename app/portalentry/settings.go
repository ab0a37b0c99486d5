package portalentry

import (
	"context"
	"database/sql"
	"errors"
	"net/netip"
	"slices"
	"strings"

	"xr/app"
)

// Settings is GET/PUT /admin/portal-entry/settings: the tenant settings of
// the ways into the portal (registry keys in app/settings.go), read and
// written together (prm_settings).
type Settings struct {
	Signup    bool `json:"signup"` // portal_feature_signup
	Join      bool `json:"join"`
	Exchange  bool `json:"exchange"`
	Tunnel    bool `json:"tunnel"`
	Messenger bool `json:"messenger"`
	// SignupProfileID is the plan of self-registered subscribers (0 = none).
	SignupProfileID int64 `json:"signup_profile_id"`
	// SignupManagerID owns them (0 = the tenant owner).
	SignupManagerID int64 `json:"signup_manager_id"`
	// SignupRequired are standard fields required at sign-up (StandardFields).
	SignupRequired []string `json:"signup_required"`
	// SignupVerification is where the code goes: email or sms.
	SignupVerification string `json:"signup_verification"`
	// TunnelRanges are the CIDR ranges tunnel requests must come from.
	TunnelRanges []string `json:"tunnel_ranges"`
	// MessengerSecretSet tells whether a messenger secret exists (never shown).
	MessengerSecretSet bool `json:"messenger_secret_set"`
}

// GetSettings reads the settings (prm_settings).
func GetSettings(ctx context.Context, act *app.Actor) (*Settings, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	return readSettings(ctx, act.Tenant.DB.R)
}

func readSettings(ctx context.Context, q app.Querier) (*Settings, error) {
	s := &Settings{}
	for _, b := range []struct {
		set app.BoolSetting
		v   *bool
	}{{app.SettingPortalSignup, &s.Signup}, {app.SettingPortalJoin, &s.Join}, {app.SettingPortalExchange, &s.Exchange},
		{app.SettingPortalTunnel, &s.Tunnel}, {app.SettingPortalMessenger, &s.Messenger}} {
		v, err := b.set.Get(ctx, q)
		if err != nil {
			return nil, err
		}
		*b.v = v
	}
	var err error
	if s.SignupProfileID, err = app.SettingSignupProfile.Get(ctx, q); err != nil {
		return nil, err
	}
	if s.SignupManagerID, err = app.SettingSignupManager.Get(ctx, q); err != nil {
		return nil, err
	}
	req, err := app.SettingSignupRequired.Get(ctx, q)
	if err != nil {
		return nil, err
	}
	s.SignupRequired = append([]string{}, splitList(req)...)
	if s.SignupVerification, err = app.SettingSignupVerification.Get(ctx, q); err != nil {
		return nil, err
	}
	ranges, err := app.SettingTunnelRanges.Get(ctx, q)
	if err != nil {
		return nil, err
	}
	s.TunnelRanges = append([]string{}, splitList(ranges)...)
	var one int
	err = q.QueryRowContext(ctx, `SELECT 1 FROM messenger_secret WHERE id = 1`).Scan(&one)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	s.MessengerSecretSet = err == nil
	return s, nil
}

// SettingsInput is PUT /admin/portal-entry/settings: every field is
// written (the console sends the whole form).
type SettingsInput struct {
	Signup             bool     `json:"signup"`
	Join               bool     `json:"join"`
	Exchange           bool     `json:"exchange"`
	Tunnel             bool     `json:"tunnel"`
	Messenger          bool     `json:"messenger"`
	SignupProfileID    int64    `json:"signup_profile_id"`
	SignupManagerID    int64    `json:"signup_manager_id"`
	SignupRequired     []string `json:"signup_required"`
	SignupVerification string   `json:"signup_verification"`
	TunnelRanges       []string `json:"tunnel_ranges"`
}

// UpdateSettings checks and writes the settings: 400 profile_not_found,
// invalid_parent_id (field signup_manager_id), invalid_enum
// (signup_required, signup_verification), invalid_cidr (tunnel_ranges).
func UpdateSettings(ctx context.Context, act *app.Actor, in SettingsInput) (*Settings, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	for _, f := range in.SignupRequired {
		if !slices.Contains(StandardFields, f) {
			return nil, app.ErrValidation("invalid_enum", "signup_required").With("allowed", StandardFields)
		}
	}
	if in.SignupVerification == "" {
		in.SignupVerification = "email"
	}
	if in.SignupVerification != "email" && in.SignupVerification != "sms" {
		return nil, app.ErrValidation("invalid_enum", "signup_verification").With("allowed", []string{"email", "sms"})
	}
	var ranges []string
	for _, r := range in.TunnelRanges {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		p, err := netip.ParsePrefix(r)
		if err != nil {
			return nil, app.ErrValidation("invalid_cidr", "tunnel_ranges")
		}
		ranges = append(ranges, p.Masked().String())
	}
	t := act.Tenant
	var out *Settings
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if in.SignupProfileID != 0 {
			var one int
			if err := tx.QueryRowContext(ctx, `SELECT 1 FROM profiles WHERE id = ?`, in.SignupProfileID).Scan(&one); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					return app.ErrValidation("profile_not_found", "signup_profile_id")
				}
				return err
			}
		}
		if in.SignupManagerID != 0 {
			ok, err := act.InScope(ctx, tx, in.SignupManagerID)
			if err != nil {
				return err
			}
			if !ok {
				return app.ErrValidation("invalid_parent_id", "signup_manager_id")
			}
		}
		vals := map[string]any{
			app.SettingPortalSignup.Key: in.Signup, app.SettingPortalJoin.Key: in.Join, app.SettingPortalExchange.Key: in.Exchange,
			app.SettingPortalTunnel.Key: in.Tunnel, app.SettingPortalMessenger.Key: in.Messenger,
			app.SettingSignupProfile.Key: in.SignupProfileID, app.SettingSignupManager.Key: in.SignupManagerID,
			app.SettingSignupRequired.Key: strings.Join(in.SignupRequired, ","), app.SettingSignupVerification.Key: in.SignupVerification,
			app.SettingTunnelRanges.Key: strings.Join(ranges, ","),
		}
		for k, v := range vals {
			if err := app.PutSetting(ctx, tx, k, v); err != nil {
				return err
			}
		}
		var err error
		out, err = readSettings(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
