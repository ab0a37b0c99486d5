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
// once as a typed setting by the area that reads it (the kernel's below)
// and listed in its Module's Settings, which puts it in the App's registry;
// code reads a setting only through its typed Get, never with raw SQL
// (TestSettingsReadOnlyThroughRegistry enforces it).
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

// Setting is a typed setting (IntSetting, BoolSetting, ...) as a module
// declares it (Module.Settings): its registry entry.
type Setting interface{ Def() SettingDef }

// The kernel's own settings (kernelModule); every other setting is
// declared by the area that reads it.
var (
	SettingCurrency               = StringSetting{Key: "currency", Default: "USD", Seeded: true, Description: "ISO currency code shown with amounts"}
	SettingTimezone               = StringSetting{Key: "timezone", Default: "UTC", Seeded: true, Description: "IANA time zone the console shows times in"}
	SettingDefaultLanguage        = StringSetting{Key: "default_language", Default: "en", Seeded: true, Description: "language of the console, portal and error messages (en, ar)"}
	SettingRadiusAuthLogDays      = IntSetting{Key: "radius_auth_log_days", Default: 14, Description: "days of RADIUS auth log kept (min 1)"}
	SettingRadiusSessionRetention = IntSetting{Key: SessionRetentionSetting, Default: DefaultSessionRetentionDays, Description: "days closed sessions and their usage are kept"}
)

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
