package portalentry

import (
	"context"
	"database/sql"
	"errors"
	"net/netip"
	"slices"
	"strings"

	"xr/app"
	"xr/app/portal"
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
	}{{portal.SettingPortalSignup, &s.Signup}, {portal.SettingPortalJoin, &s.Join}, {portal.SettingPortalExchange, &s.Exchange},
		{portal.SettingPortalTunnel, &s.Tunnel}, {portal.SettingPortalMessenger, &s.Messenger}} {
		v, err := b.set.Get(ctx, q)
		if err != nil {
			return nil, err
		}
		*b.v = v
	}
	var err error
	if s.SignupProfileID, err = SettingSignupProfile.Get(ctx, q); err != nil {
		return nil, err
	}
	if s.SignupManagerID, err = SettingSignupManager.Get(ctx, q); err != nil {
		return nil, err
	}
	req, err := SettingSignupRequired.Get(ctx, q)
	if err != nil {
		return nil, err
	}
	s.SignupRequired = append([]string{}, splitList(req)...)
	if s.SignupVerification, err = SettingSignupVerification.Get(ctx, q); err != nil {
		return nil, err
	}
	ranges, err := SettingTunnelRanges.Get(ctx, q)
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
			portal.SettingPortalSignup.Key: in.Signup, portal.SettingPortalJoin.Key: in.Join, portal.SettingPortalExchange.Key: in.Exchange,
			portal.SettingPortalTunnel.Key: in.Tunnel, portal.SettingPortalMessenger.Key: in.Messenger,
			SettingSignupProfile.Key: in.SignupProfileID, SettingSignupManager.Key: in.SignupManagerID,
			SettingSignupRequired.Key: strings.Join(in.SignupRequired, ","), SettingSignupVerification.Key: in.SignupVerification,
			SettingTunnelRanges.Key: strings.Join(ranges, ","),
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

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingSignupProfile      = app.IntSetting{Key: "signup_profile_id", Default: 0, Description: "portal sign-up: plan a self-registered subscriber gets (0 = none)"}
	SettingSignupManager      = app.IntSetting{Key: "signup_manager_id", Default: 0, Description: "portal sign-up: manager owning self-registered subscribers (0 = the tenant owner)"}
	SettingSignupRequired     = app.StringSetting{Key: "signup_required_fields", Default: "", Description: "portal sign-up: comma-separated standard fields required besides the form's (firstname, lastname, email, phone, address, national_id)"}
	SettingSignupVerification = app.StringSetting{Key: "signup_verification", Default: "email", Description: "portal sign-up: channel of the verification code, email or sms"}
	SettingTunnelRanges       = app.StringSetting{Key: "portal_tunnel_ranges", Default: "", Description: "portal tunnel login: comma-separated CIDR ranges requests must come from"}
)

var settingDecls = []app.Setting{
	SettingSignupProfile, SettingSignupManager, SettingSignupRequired, SettingSignupVerification,
	SettingTunnelRanges,
}
