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
// version, that it was taken from this tenant unless forced, and that this
// instance's keys open its sealed values: keys_foreign.go) and then
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
	if n, err := a.UnopenedSealed(ctx, path); err != nil {
		return ErrValidation("invalid_backup_file", "from").With("cause", err.Error())
	} else if n > 0 {
		return ErrSealedWithOtherKeys("from", n)
	}
	if err := db.RestoreInto(ctx, t.DB, path); err != nil {
		return err
	}
	if err := db.Migrate(ctx, t.DB, "tenant"); err != nil {
		return err
	}
	a.DropGrants(t.Slug)
	// Whatever jobs the snapshot carried must run here.
	if err := t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'tenant_slug'`, t.Slug)
		return err
	}); err != nil {
		return err
	}
	// The snapshot's queued work (jobs, devices, messages) replaced what
	// the scheduler knew: every task reads its due time again.
	if err := a.sched.replaced(ctx, t); err != nil {
		return err
	}
	return a.syncNASIndex(ctx, t)
}

// syncNASIndex makes the instance NAS index follow the tenant's nas table
// after a restore brought back the snapshot's NAS rows. An IP another
// tenant holds stays with that tenant.
func (a *App) syncNASIndex(ctx context.Context, t *Tenant) error {
	rows, err := t.DB.R.QueryContext(ctx, `SELECT id, ip FROM nas`)
	if err != nil {
		return err
	}
	type nasIP struct {
		id int64
		ip string
	}
	var list []nasIP
	for rows.Next() {
		var n nasIP
		if err := rows.Scan(&n.id, &n.ip); err != nil {
			rows.Close()
			return err
		}
		list = append(list, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM nas_index WHERE tenant_id = ?`, t.ID); err != nil {
			return err
		}
		for _, n := range list {
			if _, err := tx.ExecContext(ctx, `INSERT INTO nas_index(ip, tenant_id, nas_id) VALUES (?,?,?) ON CONFLICT(ip) DO NOTHING`, n.ip, t.ID, n.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return a.reload(ctx)
}
