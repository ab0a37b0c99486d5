package portal

import (
	"context"
	"sort"

	"xr/app"
)

// Feature names one optional part of the portal a tenant may switch off.
// Each is a tenant setting "portal_feature_<name>" (bool); a switched-off
// feature answers 403 feature_disabled on every row that belongs to it, and
// GET /portal/config lists which are on so a client hides what is off.
type Feature string

// The portal's optional features. A new one is one line here and one in
// featureSettings.
const (
	FeatureSignup        Feature = "signup"         // POST /signup, GET /signup/schema
	FeatureJoin          Feature = "join"           // invite codes: /join, /join/context
	FeatureExchange      Feature = "exchange"       // one-time codes traded for a session
	FeatureTunnel        Feature = "tunnel"         // identify by the framed IP of a live session
	FeatureMessenger     Feature = "messenger"      // messenger link and exchange
	FeaturePayments      Feature = "payments"       // online deposit and purchase
	FeatureChangeProfile Feature = "change_profile" // plan changes and quotes
	FeatureExtend        Feature = "extend"         // extensions on credit
	FeatureAutoRenew     Feature = "auto_renew"     // automatic renewal from the wallet
	FeatureSpeedBoost    Feature = "speed_boost"    // temporary speed boosts
	FeatureParental      Feature = "parental"       // parental control
	FeatureGuest         Feature = "guest"          // guest access on the subscriber's account
)

// featureSettings maps each feature to its tenant setting. Defaults: what a
// small ISP expects on; self sign-up, tunnel login and the messenger are
// opt-in because they need configuration first.
var featureSettings = map[Feature]featureSwitch{
	FeatureSignup:        SettingPortalSignup,
	FeatureJoin:          SettingPortalJoin,
	FeatureExchange:      SettingPortalExchange,
	FeatureTunnel:        SettingPortalTunnel,
	FeatureMessenger:     SettingPortalMessenger,
	FeaturePayments:      SettingPortalPayments,
	FeatureChangeProfile: SettingPortalChangeProfile,
	FeatureExtend:        SettingPortalExtend,
	FeatureAutoRenew:     SettingPortalAutoRenew,
	FeatureSpeedBoost:    SettingPortalSpeedBoost,
	FeatureParental:      SettingPortalParental,
	FeatureGuest:         SettingPortalGuest,
}

// featureSwitch is a feature's registry setting (declared in app/settings.go).
type featureSwitch = app.BoolSetting

// RequireFeature refuses with 403 feature_disabled when the tenant has
// switched f off (and 503 site_offline when the whole portal is off).
func RequireFeature(ctx context.Context, t *app.Tenant, f Feature) error {
	if err := RequireEnabled(ctx, t); err != nil {
		return err
	}
	s, ok := featureSettings[f]
	if !ok {
		return app.ErrForbidden("feature_disabled")
	}
	on, err := s.Get(ctx, t.DB.R)
	if err != nil {
		return err
	}
	if !on {
		return app.ErrForbidden("feature_disabled")
	}
	return nil
}

// Features answers which optional features the tenant offers, sorted by
// name, for GET /portal/config.
func Features(ctx context.Context, t *app.Tenant) ([]string, error) {
	var on []string
	for f, s := range featureSettings {
		v, err := s.Get(ctx, t.DB.R)
		if err != nil {
			return nil, err
		}
		if v {
			on = append(on, string(f))
		}
	}
	sort.Strings(on)
	if on == nil {
		on = []string{}
	}
	return on, nil
}
