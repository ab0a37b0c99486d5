package app

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
)

// SettingInt reads an integer tenant setting with a fallback.
func (t *Tenant) SettingInt(ctx context.Context, key string, def int64) int64 {
	var s string
	if err := t.DB.R.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&s); err != nil {
		return def
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return def
	}
	return v
}

// SettingString reads a string tenant setting with a fallback.
func (t *Tenant) SettingString(ctx context.Context, key, def string) string {
	var s string
	if err := t.DB.R.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&s); err != nil {
		return def
	}
	var v string
	if json.Unmarshal([]byte(s), &v) != nil {
		return def
	}
	return v
}
