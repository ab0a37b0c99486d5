package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"xr/db"
)

// TenantCopy is one tenant CopyTenants makes.
type TenantCopy struct {
	Slug, Name                string
	AdminUsername, AdminEmail string
	// Edit, when set, changes the copy further, in the transaction that
	// names it (a NAS address of its own).
	Edit func(ctx context.Context, tx *sql.Tx) error
}

// CopyTenants makes many tenants at once as copies of the tenant template:
// what CreateTenant makes (the same settings, system roles and owner,
// and whatever else the template holds), renamed; the owner's username
// and email are each copy's, its password the template owner's (hashing
// a password per tenant would take most of the time). The registry rows,
// and the directory rows of the NASes a copy holds, are written in one
// instance transaction, so the copies appear together or not at all.
// It exists to measure xr with thousands of tenants (xr dev tenants).
func (a *App) CopyTenants(ctx context.Context, template string, copies []TenantCopy) error {
	for _, c := range copies {
		if err := ValidateSlug(c.Slug); err != nil {
			return fmt.Errorf("%s: %w", c.Slug, err)
		}
		if _, ok := a.TenantBySlug(c.Slug); ok {
			return ErrConflict("slug_taken").With("field", "slug").With("slug", c.Slug)
		}
	}
	tpl, release, err := a.Acquire(template)
	if err != nil {
		return err
	}
	snap := filepath.Join(a.Cfg.DataDir, "tenants", ".copy-"+RandomToken(6)+".db")
	err = db.Snapshot(ctx, tpl.DB, snap)
	release()
	if err != nil {
		return err
	}
	body, err := os.ReadFile(snap)
	if err != nil {
		return errors.Join(err, os.Remove(snap))
	}
	if err := os.Remove(snap); err != nil {
		return err
	}
	nas := make([][]nasIndexRow, len(copies))
	var written sync.Map // path → true
	errs := make([]error, len(copies))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 16 * runtime.NumCPU() { // mostly waiting on the disk
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				path := db.TenantPath(a.Cfg.DataDir, copies[i].Slug)
				if _, err := os.Stat(path); err == nil {
					errs[i] = ErrConflict("slug_taken").With("field", "slug").With("slug", copies[i].Slug)
					continue
				}
				written.Store(path, true)
				nas[i], errs[i] = writeCopy(ctx, path, body, copies[i])
			}
		}()
	}
	for i := range copies {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return errors.Join(err, removeWritten(&written))
	}
	now := a.NowText()
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		for i, c := range copies {
			r, err := tx.ExecContext(ctx, `INSERT INTO tenants(slug, name, created_at, updated_at) VALUES (?,?,?,?)`, c.Slug, strings.TrimSpace(c.Name), now, now)
			if db.IsUnique(err) {
				return ErrConflict("slug_taken").With("field", "slug").With("slug", c.Slug)
			}
			if err != nil {
				return err
			}
			id, err := r.LastInsertId()
			if err != nil {
				return err
			}
			for _, n := range nas[i] {
				if _, err := tx.ExecContext(ctx, `INSERT INTO nas_index(ip, tenant_id, nas_id, name, secret_sealed, type, coa_port, require_message_authenticator)
					VALUES (?,?,?,?,?,?,?,?)`, n.ip, id, n.id, n.name, n.sealed, n.typ, n.coaPort, n.requireMA); err != nil {
					return fmt.Errorf("%s nas %s: %w", c.Slug, n.ip, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return errors.Join(err, removeWritten(&written))
	}
	return a.reload(ctx)
}

// nasIndexRow is a NAS row of a copy, for the instance directory.
type nasIndexRow struct {
	id, coaPort   int64
	ip, name, typ string
	sealed        []byte
	requireMA     bool
}

// writeCopy writes one copy and renames it; it answers the copy's NASes.
func writeCopy(ctx context.Context, path string, body []byte, c TenantCopy) ([]nasIndexRow, error) {
	if err := os.WriteFile(path, body, 0o600); err != nil {
		return nil, err
	}
	var out []nasIndexRow
	err := db.EditFile(ctx, path, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'tenant_slug'`, c.Slug); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE managers SET username = ?, email = ? WHERE id = (SELECT MIN(id) FROM managers WHERE parent_id IS NULL)`,
			nullStr(c.AdminUsername), nullStr(c.AdminEmail)); err != nil {
			return err
		}
		if c.Edit != nil {
			if err := c.Edit(ctx, tx); err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, ip, name, secret_sealed, type, coa_port, require_message_authenticator FROM nas`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n nasIndexRow
			if err := rows.Scan(&n.id, &n.ip, &n.name, &n.sealed, &n.typ, &n.coaPort, &n.requireMA); err != nil {
				return err
			}
			out = append(out, n)
		}
		return rows.Err()
	})
	return out, err
}

func removeWritten(written *sync.Map) error {
	var errs []error
	written.Range(func(k, _ any) bool {
		errs = append(errs, removeTenantFiles(k.(string)))
		return true
	})
	return errors.Join(errs...)
}
