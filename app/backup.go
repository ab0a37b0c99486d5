package app

import (
	"context"
	"database/sql"
	"fmt"

	"xr/db"
)

// BackupTenant writes a consistent snapshot of t to path.
func (a *App) BackupTenant(ctx context.Context, t *Tenant, path string) error {
	if err := db.Snapshot(ctx, t.DB, path); err != nil {
		return ErrValidation("backup_failed", "out").With("cause", err.Error())
	}
	return nil
}

// RestoreTenant checks a backup file (integrity, xr tenant marker, schema
// version, and that it was taken from this tenant unless forced) and then
// replaces t's content with it in one transaction, migrating it forward.
func (a *App) RestoreTenant(ctx context.Context, t *Tenant, path string, otherTenantOK bool) error {
	if _, err := db.CheckTenantFile(ctx, path); err != nil {
		return ErrValidation("invalid_backup_file", "from").With("cause", err.Error())
	}
	if !otherTenantOK {
		if slug, err := db.FileMeta(ctx, path, "tenant_slug"); err != nil || slug != t.Slug {
			return ErrValidation("backup_of_other_tenant", "from").With("cause", fmt.Sprintf("file belongs to %q", slug))
		}
	}
	if err := db.RestoreInto(ctx, t.DB, path); err != nil {
		return err
	}
	if err := db.Migrate(ctx, t.DB, "tenant"); err != nil {
		return err
	}
	DropGrants(t.Slug)
	// Whatever jobs the snapshot carried must run here.
	return t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'tenant_slug'`, t.Slug)
		return err
	})
}
