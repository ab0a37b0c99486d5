package app

import (
	"context"
)

// rawSettingForTest reads a stored setting's JSON text, bypassing the
// registry (tests only).
func rawSettingForTest(ctx context.Context, tt *Tenant, key string) (string, error) {
	var v string
	err := tt.DB.R.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	return v, err
}
