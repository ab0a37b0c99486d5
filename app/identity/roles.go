package identity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"

	"xr/app"
	"xr/db"
)

// Role is a named set of permission codes.
type Role struct {
	ID                int64    `json:"id"`
	TenantID          int64    `json:"tenant_id"`
	Name              string   `json:"name"`
	Description       string   `json:"description"`
	IsSystem          bool     `json:"is_system"`
	TemplateKey       *string  `json:"template_key"`
	Immutable         bool     `json:"immutable"`
	TenantWide        bool     `json:"tenant_wide"` // holders see every record, not only their subtree
	PermissionCount   int      `json:"permission_count"`
	Permissions       []string `json:"permissions"`
	PortalPermissions []string `json:"portal_permissions"`
	CreatedAt         app.Time `json:"created_at"`
	UpdatedAt         app.Time `json:"updated_at"`
}

func listRoles(ctx context.Context, t *app.Tenant, where string, args ...any) ([]Role, error) {
	rows, err := t.DB.R.QueryContext(ctx, `SELECT r.id, r.name, r.description, r.is_system, r.template_key, r.immutable, r.tenant_wide, r.portal_permissions, r.created_at, r.updated_at,
		COALESCE((SELECT group_concat(code, ' ') FROM role_permissions rp WHERE rp.role_id = r.id), '')
		FROM roles r `+where+` ORDER BY r.is_system DESC, r.immutable DESC, r.name`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Role{}
	for rows.Next() {
		r := Role{TenantID: t.ID}
		var tk sql.NullString
		var portal, codes string
		if err := rows.Scan(&r.ID, &r.Name, &r.Description, &r.IsSystem, &tk, &r.Immutable, &r.TenantWide, &portal, &r.CreatedAt, &r.UpdatedAt, &codes); err != nil {
			return nil, err
		}
		if tk.Valid {
			r.TemplateKey = &tk.String
		}
		if r.PortalPermissions, err = jsonStrings(portal); err != nil {
			return nil, fmt.Errorf("role %d portal_permissions: %w", r.ID, err)
		}
		if r.Immutable && r.Name == app.AdminRoleName {
			r.TenantWide = true
			r.Permissions = t.App.AllPermissionCodes()
		} else {
			r.Permissions = strings.Fields(codes)
			sort.Strings(r.Permissions)
		}
		if r.Permissions == nil {
			r.Permissions = []string{}
		}
		r.PermissionCount = len(r.Permissions)
		out = append(out, r)
	}
	return out, rows.Err()
}

// ListRoles lists every role, system roles first.
func ListRoles(ctx context.Context, act *app.Actor) ([]Role, error) {
	if err := act.Require(PermRolesManage); err != nil {
		return nil, err
	}
	return listRoles(ctx, act.Tenant, "")
}

// GetRole reads one role. template_key is populated by the list only.
func GetRole(ctx context.Context, act *app.Actor, id int64) (*Role, error) {
	if err := act.Require(PermRolesManage); err != nil {
		return nil, err
	}
	rs, err := listRoles(ctx, act.Tenant, "WHERE r.id = ?", id)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, app.ErrNotFound()
	}
	rs[0].TemplateKey = nil
	return &rs[0], nil
}

func roleCodes(ctx context.Context, q app.Querier, roleID int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT code FROM role_permissions WHERE role_id = ?`, roleID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// RoleInput creates or patches a role.
type RoleInput struct {
	Name        app.Opt[string]   `json:"name"`
	Description app.Opt[string]   `json:"description"`
	Permissions app.Opt[[]string] `json:"permissions"`
	// TenantWide: holders see every record of the tenant. Only a caller
	// that sees the whole tenant itself may turn it on.
	TenantWide app.Opt[bool] `json:"tenant_wide"`
}

// checkWideGrantable refuses to turn tenant-wide visibility on for a
// caller that lacks it: a role never widens past its editor's own scope.
func checkWideGrantable(act *app.Actor, in RoleInput) error {
	if in.TenantWide.Set && in.TenantWide.V && !act.TenantWide {
		return app.ErrForbidden("cannot_grant_tenant_wide").With("field", "tenant_wide")
	}
	return nil
}

// checkGrantable rejects unknown codes (never dropped) and codes the
// caller does not hold itself.
func checkGrantable(act *app.Actor, codes []string) error {
	for _, c := range codes {
		if !act.Tenant.App.KnownPermission(c) {
			return app.ErrValidation("unknown_permission", "permissions").With("permission", c)
		}
	}
	for _, c := range codes {
		if !act.Perms[app.Perm(c)] {
			return app.ErrForbidden("cannot_grant_permission").With("permission", c)
		}
	}
	return nil
}

func checkRoleName(name string) error {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 64 {
		return app.ErrValidation("invalid_role_name", "name")
	}
	if app.ReservedRoleName(strings.ToLower(name)) {
		return app.ErrValidation("role_name_reserved", "name")
	}
	return nil
}

func writeRoleCodes(ctx context.Context, tx *sql.Tx, id int64, codes []string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM role_permissions WHERE role_id = ?`, id); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, c := range codes {
		if seen[c] {
			continue
		}
		seen[c] = true
		if _, err := tx.ExecContext(ctx, `INSERT INTO role_permissions(role_id, code) VALUES (?,?)`, id, c); err != nil {
			return err
		}
	}
	return nil
}

// CreateRole makes a hand-made role.
func CreateRole(ctx context.Context, act *app.Actor, in RoleInput) (*Role, error) {
	if err := act.Require(PermRolesManage); err != nil {
		return nil, err
	}
	if !in.Name.Set {
		return nil, app.ErrValidation("name_required", "name")
	}
	if err := checkRoleName(in.Name.V); err != nil {
		return nil, err
	}
	if err := checkGrantable(act, in.Permissions.V); err != nil {
		return nil, err
	}
	if err := checkWideGrantable(act, in); err != nil {
		return nil, err
	}
	var id int64
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		now := act.Tenant.NowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO roles(name, description, tenant_wide, created_at, updated_at) VALUES (?,?,?,?,?)`,
			strings.TrimSpace(in.Name.V), in.Description.V, in.TenantWide.V, now, now)
		if db.IsUnique(err) {
			return app.ErrConflict("role_name_taken").With("field", "name")
		}
		if err != nil {
			return err
		}
		id, _ = r.LastInsertId()
		return writeRoleCodes(ctx, tx, id, in.Permissions.V)
	})
	if err != nil {
		return nil, err
	}
	return GetRole(ctx, act, id)
}

// UpdateRole edits a role; the administrator role is immutable. Holders and
// their tokens see the change on their next request.
func UpdateRole(ctx context.Context, act *app.Actor, id int64, in RoleInput) (*Role, error) {
	if err := act.Require(PermRolesManage); err != nil {
		return nil, err
	}
	if in.Name.Set {
		if err := checkRoleName(in.Name.V); err != nil {
			return nil, err
		}
	}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		var immutable, wide bool
		var name string
		err := tx.QueryRowContext(ctx, `SELECT name, immutable, tenant_wide FROM roles WHERE id = ?`, id).Scan(&name, &immutable, &wide)
		if errors.Is(err, sql.ErrNoRows) {
			return app.ErrNotFound()
		}
		if err != nil {
			return err
		}
		if immutable {
			return app.ErrConflict("role_immutable")
		}
		// Like codes, only turning the flag on needs the caller to have it.
		if !wide {
			if err := checkWideGrantable(act, in); err != nil {
				return err
			}
		}
		var p app.Patch
		app.SetOptOrZero(&p, "name", in.Name, func(v string) any { return strings.TrimSpace(v) })
		app.SetOptOrZero(&p, "description", in.Description, func(v string) any { return v })
		app.SetOptOrZero(&p, "tenant_wide", in.TenantWide, func(v bool) any { return v })
		if _, err := p.Exec(ctx, tx, "roles", id, ""); db.IsUnique(err) {
			return app.ErrConflict("role_name_taken").With("field", "name")
		} else if err != nil {
			return err
		}
		if in.Permissions.Set {
			// Only codes being added must be held by the caller; a caller may
			// remove codes it lacks.
			old, err := roleCodes(ctx, tx, id)
			if err != nil {
				return err
			}
			had := map[string]bool{}
			for _, c := range old {
				had[c] = true
			}
			var added []string
			for _, c := range in.Permissions.V {
				if !had[c] {
					added = append(added, c)
				}
			}
			for _, c := range in.Permissions.V {
				if !act.Tenant.App.KnownPermission(c) {
					return app.ErrValidation("unknown_permission", "permissions").With("permission", c)
				}
			}
			if err := checkGrantable(act, added); err != nil {
				return err
			}
			if err := writeRoleCodes(ctx, tx, id, in.Permissions.V); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE roles SET updated_at = ? WHERE id = ?`, act.Tenant.NowText(), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	act.Tenant.App.DropGrants(act.Tenant.Slug)
	return GetRole(ctx, act, id)
}

// DeleteRole removes a hand-made role that nobody holds.
func DeleteRole(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermRolesManage); err != nil {
		return err
	}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		var system, immutable bool
		err := tx.QueryRowContext(ctx, `SELECT is_system, immutable FROM roles WHERE id = ?`, id).Scan(&system, &immutable)
		if errors.Is(err, sql.ErrNoRows) {
			return app.ErrNotFound()
		}
		if err != nil {
			return err
		}
		if system || immutable {
			return app.ErrConflict("role_is_system")
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM manager_roles WHERE role_id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return app.ErrConflict("role_in_use")
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM roles WHERE id = ?`, id)
		return err
	})
	if err == nil {
		act.Tenant.App.DropGrants(act.Tenant.Slug)
	}
	return err
}

// SetPortalPermissions replaces a role's subscriber-portal capabilities.
func SetPortalPermissions(ctx context.Context, act *app.Actor, id int64, perms []string) (*Role, error) {
	if err := act.Require(PermRolesManage); err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, p := range PortalPermissions {
		known[p] = true
	}
	for _, p := range perms {
		if !known[p] {
			return nil, app.ErrValidation("unknown_portal_permission", "permissions").With("permission", p)
		}
	}
	if perms == nil {
		perms = []string{}
	}
	sort.Strings(perms)
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `UPDATE roles SET portal_permissions = ?, updated_at = ? WHERE id = ?`, mustJSON(perms), act.Tenant.NowText(), id)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return app.ErrNotFound()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return GetRole(ctx, act, id)
}

func mustJSON(v any) string {
	b, _ := jsonMarshal(v)
	return string(b)
}
