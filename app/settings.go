package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// Tenant settings live in the tenant table settings(key, value), value
// being JSON text ("USD", 300, true, {...}). Every key xr reads is declared
// once below as a typed setting and listed in Settings; code reads a
// setting only through its typed Get, never with raw SQL
// (TestSettingsRegistry enforces it).
//
// Get falls back to the declared default when the row is missing and
// returns an error when the stored value is not of the setting's type (a
// corrupt value). Readers that have an error path return that error.
// Readers that have none — the RADIUS hot path in app/aaa (the
// stale-session window in authorize.go, the replace-stale switch, the
// interim interval cached by the tenant index in index.go, the truth sweep
// in truth.go), the console's language/currency/time zone and the error
// page language in web, and the public login descriptor's branding — call
// GetOr, which logs the corrupt value at WARN (slog: key, error) and uses
// the default, so one bad row never stops RADIUS or a page render.

// SettingDef describes one tenant setting for the registry.
type SettingDef struct {
	Key         string `json:"key"`
	Type        string `json:"type"`    // int, bool, string, money, json
	Default     string `json:"default"` // JSON text
	Description string `json:"description"`
	// Seeded settings are written with their default when a tenant is
	// created (DefaultSettings).
	Seeded bool `json:"-"`
}

// IntSetting is a setting holding a JSON integer.
type IntSetting struct {
	Key, Description string
	Default          int64
	Seeded           bool
}

// BoolSetting is a setting holding JSON true/false (1/0 is read too).
type BoolSetting struct {
	Key, Description string
	Default          bool
	Seeded           bool
}

// StringSetting is a setting holding a JSON string.
type StringSetting struct {
	Key, Description string
	Default          string
	Seeded           bool
}

// MoneySetting is a setting holding an amount of major units, as a JSON
// number or a JSON string ("0.5").
type MoneySetting struct {
	Key, Description string
	Default          Money
}

// JSONSetting is a setting holding any JSON value (an object, usually);
// its default is JSON null.
type JSONSetting struct {
	Key, Description string
}

// The settings xr reads.
var (
	SettingCurrency             = StringSetting{Key: "currency", Default: "USD", Seeded: true, Description: "ISO currency code shown with amounts"}
	SettingTimezone             = StringSetting{Key: "timezone", Default: "UTC", Seeded: true, Description: "IANA time zone the console shows times in"}
	SettingDefaultLanguage      = StringSetting{Key: "default_language", Default: "en", Seeded: true, Description: "language of the console, portal and error messages (en, ar)"}
	SettingPOSUndoWindow        = IntSetting{Key: "pos_undo_window_seconds", Default: 300, Seeded: true, Description: "seconds a POS sale can be undone"}
	SettingSessionLength        = IntSetting{Key: "session_length_minutes", Default: 720, Seeded: true, Description: "manager access-token lifetime in minutes"}
	SettingRefreshLength        = IntSetting{Key: "refresh_length_days", Default: 30, Seeded: true, Description: "manager and portal refresh-token lifetime in days"}
	SettingPortalSession        = IntSetting{Key: "portal_session_minutes", Default: 720, Description: "subscriber portal access-token lifetime in minutes"}
	SettingPortalEnabled        = BoolSetting{Key: "portal_enabled", Default: true, Seeded: true, Description: "subscriber portal open (false answers 503 site_offline)"}
	SettingActivationPayer      = StringSetting{Key: "activation_payer", Default: "subscriber", Seeded: true, Description: "who pays an activation: subscriber or reseller"}
	SettingPointsPerActivation  = IntSetting{Key: "points_per_activation", Default: 0, Description: "loyalty points a subscriber earns per activation"}
	SettingPointsValue          = MoneySetting{Key: "points_value", Default: 0, Description: "money value of one loyalty point (major units)"}
	SettingCardsSellToResellers = BoolSetting{Key: "cards_sell_to_resellers", Default: false, Description: "card batches may be sold to resellers"}
	SettingBranding             = JSONSetting{Key: "branding", Description: "login-page branding object shown by /auth/context"}

	SettingRadiusInterimInterval  = IntSetting{Key: "radius_interim_interval", Default: 300, Seeded: true, Description: "Acct-Interim-Interval sent to NASes, seconds"}
	SettingRadiusIdleWindow       = IntSetting{Key: "radius_idle_window", Default: 900, Seeded: true, Description: "seconds without accounting after which a session counts as stale in listings"}
	SettingRadiusPublicAddress    = StringSetting{Key: "radius_public_address", Default: "", Description: "RADIUS server address shown in NAS setup"}
	SettingRadiusStalePct         = IntSetting{Key: "radius_stale_multiplier_pct", Default: 250, Description: "a session is stale after this percent of the interim interval (min 100)"}
	SettingRadiusStaleFloor       = IntSetting{Key: "radius_stale_floor_seconds", Default: 300, Description: "a session is never stale sooner than this many seconds"}
	SettingRadiusZombieDisconnect = IntSetting{Key: "radius_zombie_disconnect", Default: 0, Description: "1 = the truth sweep sends Disconnect for zombie sessions"}
	SettingRadiusReplaceStale     = BoolSetting{Key: "radius_replace_stale_session", Default: true, Description: "a login refused for simultaneous use replaces the subscriber's stale sessions"}
	SettingRadiusAuthLogDays      = IntSetting{Key: "radius_auth_log_days", Default: 14, Description: "days of RADIUS auth log kept (min 1)"}
	SettingRadiusSessionRetention = IntSetting{Key: SessionRetentionSetting, Default: DefaultSessionRetentionDays, Description: "days closed sessions and their usage are kept"}

	SettingTicketsAssignment    = StringSetting{Key: "tickets_assignment_strategy", Default: "manual", Description: "how new tickets are assigned: manual, round_robin, least_open, category_team"}
	SettingTicketsReopenDays    = IntSetting{Key: "tickets_reopen_days", Default: 7, Description: "days after closing during which staff may bulk-reopen a ticket"}
	SettingTicketsAttachmentMax = IntSetting{Key: "tickets_attachment_max_bytes", Default: 10 << 20, Description: "largest ticket attachment accepted, bytes"}

	SettingPortalSignup        = BoolSetting{Key: "portal_feature_signup", Default: false, Description: "portal: self sign-up (POST /portal/signup)"}
	SettingPortalJoin          = BoolSetting{Key: "portal_feature_join", Default: true, Description: "portal: staff-created subscribers join with an invite code"}
	SettingPortalExchange      = BoolSetting{Key: "portal_feature_exchange", Default: true, Description: "portal: one-time codes (login-as links, hotspot, messenger) open a session"}
	SettingPortalTunnel        = BoolSetting{Key: "portal_feature_tunnel", Default: false, Description: "portal: one-click login identified by the framed IP of a live session"}
	SettingPortalMessenger     = BoolSetting{Key: "portal_feature_messenger", Default: false, Description: "portal: link a messenger account by a short code"}
	SettingPortalPayments      = BoolSetting{Key: "portal_feature_payments", Default: true, Description: "portal: online deposits and purchases through payment gateways"}
	SettingPortalChangeProfile = BoolSetting{Key: "portal_feature_change_profile", Default: true, Description: "portal: the subscriber changes its plan (quote, change-profile)"}
	SettingPortalExtend        = BoolSetting{Key: "portal_feature_extend", Default: true, Description: "portal: extensions on credit (grace days)"}
	SettingPortalAutoRenew     = BoolSetting{Key: "portal_feature_auto_renew", Default: true, Description: "portal: automatic renewal from the wallet at expiry"}
	SettingPortalSpeedBoost    = BoolSetting{Key: "portal_feature_speed_boost", Default: true, Description: "portal: temporary paid speed boosts"}
	SettingPortalParental      = BoolSetting{Key: "portal_feature_parental", Default: true, Description: "portal: parental control (blocked windows, pause, PIN)"}
	SettingPortalGuest         = BoolSetting{Key: "portal_feature_guest", Default: true, Description: "portal: time-limited guest access on the subscriber's account"}

	SettingSignupProfile      = IntSetting{Key: "signup_profile_id", Default: 0, Description: "portal sign-up: plan a self-registered subscriber gets (0 = none)"}
	SettingSignupManager      = IntSetting{Key: "signup_manager_id", Default: 0, Description: "portal sign-up: manager owning self-registered subscribers (0 = the tenant owner)"}
	SettingSignupRequired     = StringSetting{Key: "signup_required_fields", Default: "", Description: "portal sign-up: comma-separated standard fields required besides the form's (firstname, lastname, email, phone, address, national_id)"}
	SettingSignupVerification = StringSetting{Key: "signup_verification", Default: "email", Description: "portal sign-up: channel of the verification code, email or sms"}
	SettingTunnelRanges       = StringSetting{Key: "portal_tunnel_ranges", Default: "", Description: "portal tunnel login: comma-separated CIDR ranges requests must come from"}

	SettingSelfServiceProration       = StringSetting{Key: "selfservice_proration", Default: "daily", Description: "portal plan change now: credit for the unused part of the current plan, daily (whole unused days), exact (by the second) or none (docs/selfservice.md)"}
	SettingSelfServiceChangeFee       = MoneySetting{Key: "selfservice_change_fee", Default: 0, Description: "portal plan change: a fee added to every change (major units)"}
	SettingSelfServiceExtensionsMonth = IntSetting{Key: "selfservice_extensions_per_month", Default: 1, Description: "portal extensions a subscriber may take per calendar month when its plan sets no limit"}

	SettingMailFromName      = StringSetting{Key: "mail_from_name", Default: "", Description: "display name of the tenant's outgoing mail (empty: the tenant's name)"}
	SettingMailFromAddress   = StringSetting{Key: "mail_from_address", Default: "", Description: "sender address of the tenant's outgoing mail (empty: the relay's --smtp-from)"}
	SettingMessagesPerMinute = IntSetting{Key: "messages_per_minute", Default: 60, Description: "outbound email and SMS messages sent per minute at most (1-6000)"}

	SettingMonitoringRanges = StringSetting{Key: "monitoring_network_ranges", Default: "", Description: "monitoring: comma-separated CIDR ranges devices may be probed in besides the NAS (empty: private and CGNAT ranges)"}
	SettingMapTileURL       = StringSetting{Key: "monitoring_map_tile_url", Default: "https://tile.openstreetmap.org/{z}/{x}/{y}.png", Description: "map: tile URL template ({z}/{x}/{y}, optional {s}) the console's map loads in the staff's browser (empty: no base map)"}
	SettingMapAttribution   = StringSetting{Key: "monitoring_map_attribution", Default: "© OpenStreetMap contributors", Description: "map: attribution shown with the tiles"}

	SettingDevgwIdleTimeout = IntSetting{Key: "devgw_idle_timeout_seconds", Default: 600, Description: "device gateway: a console without traffic either way for this many seconds is closed (60-86400)"}
	SettingDevgwMaxDuration = IntSetting{Key: "devgw_max_duration_seconds", Default: 7200, Description: "device gateway: a console is closed after this many seconds (60-86400)"}
	SettingDevgwMaxTenant   = IntSetting{Key: "devgw_max_consoles", Default: 10, Description: "device gateway: open consoles of the tenant at most"}
	SettingDevgwMaxManager  = IntSetting{Key: "devgw_max_consoles_per_manager", Default: 3, Description: "device gateway: open consoles of one manager at most"}
	SettingDevgwRecord      = BoolSetting{Key: "devgw_record", Default: true, Description: "device gateway: record console output (not input) as asciicast v2 in the tenant's files"}

	SettingShopHoldMinutes      = IntSetting{Key: "shop_hold_minutes", Default: 15, Description: "shop: minutes an unpaid purchase holds its cards; its payment expires with the hold (1-1440)"}
	SettingShopMaxCardsUnpaid   = IntSetting{Key: "shop_max_cards_per_purchase", Default: 5, Description: "shop: cards one unpaid purchase may hold at most (1-20)"}
	SettingShopMaxHeldPerClient = IntSetting{Key: "shop_max_held_per_client", Default: 10, Description: "shop: cards the unpaid purchases of one client address may hold together at most (1-200)"}
)

// Settings is the registry of every tenant setting xr reads.
var Settings = []SettingDef{
	SettingCurrency.Def(), SettingTimezone.Def(), SettingDefaultLanguage.Def(), SettingPOSUndoWindow.Def(),
	SettingSessionLength.Def(), SettingRefreshLength.Def(), SettingPortalSession.Def(), SettingPortalEnabled.Def(),
	SettingActivationPayer.Def(), SettingPointsPerActivation.Def(), SettingPointsValue.Def(),
	SettingCardsSellToResellers.Def(), SettingBranding.Def(),
	SettingRadiusInterimInterval.Def(), SettingRadiusIdleWindow.Def(), SettingRadiusPublicAddress.Def(),
	SettingRadiusStalePct.Def(), SettingRadiusStaleFloor.Def(), SettingRadiusZombieDisconnect.Def(),
	SettingRadiusReplaceStale.Def(), SettingRadiusAuthLogDays.Def(), SettingRadiusSessionRetention.Def(),
	SettingTicketsAssignment.Def(), SettingTicketsReopenDays.Def(), SettingTicketsAttachmentMax.Def(),
	SettingMailFromName.Def(), SettingMailFromAddress.Def(), SettingMessagesPerMinute.Def(),
	SettingPortalSignup.Def(), SettingPortalJoin.Def(), SettingPortalExchange.Def(), SettingPortalTunnel.Def(),
	SettingPortalMessenger.Def(), SettingPortalPayments.Def(), SettingPortalChangeProfile.Def(), SettingPortalExtend.Def(),
	SettingPortalAutoRenew.Def(), SettingPortalSpeedBoost.Def(), SettingPortalParental.Def(), SettingPortalGuest.Def(),
	SettingSelfServiceProration.Def(), SettingSelfServiceChangeFee.Def(), SettingSelfServiceExtensionsMonth.Def(),
	SettingSignupProfile.Def(), SettingSignupManager.Def(), SettingSignupRequired.Def(), SettingSignupVerification.Def(), SettingTunnelRanges.Def(),
	SettingMonitoringRanges.Def(), SettingMapTileURL.Def(), SettingMapAttribution.Def(),
	SettingDevgwIdleTimeout.Def(), SettingDevgwMaxDuration.Def(), SettingDevgwMaxTenant.Def(), SettingDevgwMaxManager.Def(), SettingDevgwRecord.Def(),
	SettingShopHoldMinutes.Def(), SettingShopMaxCardsUnpaid.Def(), SettingShopMaxHeldPerClient.Def(),
}

// DefaultSettings are a new tenant's settings (JSON values): the seeded
// registry entries with their defaults.
var DefaultSettings = func() map[string]string {
	m := map[string]string{}
	for _, d := range Settings {
		if d.Seeded {
			m[d.Key] = d.Default
		}
	}
	return m
}()

// Def is s's registry entry.
func (s IntSetting) Def() SettingDef {
	return SettingDef{Key: s.Key, Type: "int", Default: strconv.FormatInt(s.Default, 10), Description: s.Description, Seeded: s.Seeded}
}

// Def is s's registry entry.
func (s BoolSetting) Def() SettingDef {
	return SettingDef{Key: s.Key, Type: "bool", Default: strconv.FormatBool(s.Default), Description: s.Description, Seeded: s.Seeded}
}

// Def is s's registry entry.
func (s StringSetting) Def() SettingDef {
	b, _ := json.Marshal(s.Default) // a string always marshals
	return SettingDef{Key: s.Key, Type: "string", Default: string(b), Description: s.Description, Seeded: s.Seeded}
}

// Def is s's registry entry.
func (s MoneySetting) Def() SettingDef {
	return SettingDef{Key: s.Key, Type: "money", Default: strconv.Quote(s.Default.String()), Description: s.Description}
}

// Def is s's registry entry.
func (s JSONSetting) Def() SettingDef {
	return SettingDef{Key: s.Key, Type: "json", Default: "null", Description: s.Description}
}

// rawSetting reads key's stored JSON text; ok is false when the row is
// missing.
func rawSetting(ctx context.Context, q Querier, key string) (raw string, ok bool, err error) {
	err = q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("setting %s: %w", key, err)
	}
	return strings.TrimSpace(raw), true, nil
}

func corrupt(key, typ, raw string) error {
	return fmt.Errorf("setting %s: stored value %q is not a JSON %s", key, raw, typ)
}

// ParseSetting checks raw (JSON text) against d's type.
func (d SettingDef) ParseSetting(raw string) error {
	var err error
	switch d.Type {
	case "int":
		_, err = parseIntSetting(d.Key, raw)
	case "bool":
		_, err = parseBoolSetting(d.Key, raw)
	case "string":
		_, err = parseStringSetting(d.Key, raw)
	case "money":
		_, err = parseMoneySetting(d.Key, raw)
	case "json":
		if !json.Valid([]byte(raw)) {
			err = corrupt(d.Key, "value", raw)
		}
	default:
		err = fmt.Errorf("setting %s: unknown type %q", d.Key, d.Type)
	}
	return err
}

func parseIntSetting(key, raw string) (int64, error) {
	if strings.HasPrefix(raw, `"`) { // json.Number would take "300"
		return 0, corrupt(key, "integer", raw)
	}
	var n json.Number
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber()
	if d.Decode(&n) != nil || d.More() {
		return 0, corrupt(key, "integer", raw)
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		return 0, corrupt(key, "integer", raw)
	}
	return v, nil
}

func parseBoolSetting(key, raw string) (bool, error) {
	switch raw {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, corrupt(key, "boolean", raw)
}

func parseStringSetting(key, raw string) (string, error) {
	var v string
	if json.Unmarshal([]byte(raw), &v) != nil {
		return "", corrupt(key, "string", raw)
	}
	return v, nil
}

func parseMoneySetting(key, raw string) (Money, error) {
	s := raw
	if strings.HasPrefix(s, `"`) && json.Unmarshal([]byte(raw), &s) != nil {
		return 0, corrupt(key, "amount", raw)
	}
	m, err := ParseMoney(strings.TrimSpace(s))
	if err != nil {
		return 0, corrupt(key, "amount", raw)
	}
	return m, nil
}

// Get reads s: the default when unset, an error when corrupt.
func (s IntSetting) Get(ctx context.Context, q Querier) (int64, error) {
	raw, ok, err := rawSetting(ctx, q, s.Key)
	if err != nil || !ok {
		return s.Default, err
	}
	return parseIntSetting(s.Key, raw)
}

// GetOr reads s for a caller with no error path: on any error it logs
// and returns the default.
func (s IntSetting) GetOr(ctx context.Context, q Querier) int64 {
	v, err := s.Get(ctx, q)
	if err != nil {
		logSettingError(ctx, s.Key, err)
		return s.Default
	}
	return v
}

// Get reads s: the default when unset, an error when corrupt.
func (s BoolSetting) Get(ctx context.Context, q Querier) (bool, error) {
	raw, ok, err := rawSetting(ctx, q, s.Key)
	if err != nil || !ok {
		return s.Default, err
	}
	return parseBoolSetting(s.Key, raw)
}

// GetOr reads s for a caller with no error path: on any error it logs
// and returns the default.
func (s BoolSetting) GetOr(ctx context.Context, q Querier) bool {
	v, err := s.Get(ctx, q)
	if err != nil {
		logSettingError(ctx, s.Key, err)
		return s.Default
	}
	return v
}

// Get reads s: the default when unset, an error when corrupt.
func (s StringSetting) Get(ctx context.Context, q Querier) (string, error) {
	raw, ok, err := rawSetting(ctx, q, s.Key)
	if err != nil || !ok {
		return s.Default, err
	}
	return parseStringSetting(s.Key, raw)
}

// GetOr reads s for a caller with no error path: on any error it logs
// and returns the default.
func (s StringSetting) GetOr(ctx context.Context, q Querier) string {
	v, err := s.Get(ctx, q)
	if err != nil {
		logSettingError(ctx, s.Key, err)
		return s.Default
	}
	return v
}

// Get reads s: the default when unset, an error when corrupt.
func (s MoneySetting) Get(ctx context.Context, q Querier) (Money, error) {
	raw, ok, err := rawSetting(ctx, q, s.Key)
	if err != nil || !ok {
		return s.Default, err
	}
	return parseMoneySetting(s.Key, raw)
}

// Get reads s as raw JSON: null when unset, an error when not JSON.
func (s JSONSetting) Get(ctx context.Context, q Querier) (json.RawMessage, error) {
	raw, ok, err := rawSetting(ctx, q, s.Key)
	if err != nil || !ok {
		return json.RawMessage("null"), err
	}
	if !json.Valid([]byte(raw)) {
		return json.RawMessage("null"), corrupt(s.Key, "value", raw)
	}
	return json.RawMessage(raw), nil
}

// GetOr reads s for a caller with no error path: on any error it logs
// and returns null.
func (s JSONSetting) GetOr(ctx context.Context, q Querier) json.RawMessage {
	v, err := s.Get(ctx, q)
	if err != nil {
		logSettingError(ctx, s.Key, err)
		return json.RawMessage("null")
	}
	return v
}

func logSettingError(ctx context.Context, key string, err error) {
	slog.WarnContext(ctx, "tenant setting unreadable; using its default", "key", key, "err", err)
}
