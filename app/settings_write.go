package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// PutSetting stores a registered tenant setting in tx (a transaction of
// Tenant.Write), JSON-encoded the way its typed accessor reads it back. A
// key outside the App's registry, or a value the accessor would refuse, is
// an error (a programming mistake, never user input: areas validate their
// inputs first).
func PutSetting(ctx context.Context, tx *sql.Tx, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	t := TenantOf(tx)
	if t == nil {
		return fmt.Errorf("setting %q: not a tenant write transaction", key)
	}
	d, known := t.App.Registry().Setting(key)
	if !known {
		return fmt.Errorf("setting %q is not in the registry", key)
	}
	if err := d.ParseSetting(string(raw)); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES (?,?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, string(raw))
	return err
}
