package app

import (
	"context"
	"database/sql"
)

// ManagerRecord is what InsertManager stores.
type ManagerRecord struct {
	ParentID                   int64 // 0 = root
	Username, Email            string
	PasswordHash               string
	Firstname, Lastname, Phone string
	DebtLimit                  Money
	DiscountRate               int64
	CustomFields               string
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// InsertManager adds a manager and its closure rows in tx.
func InsertManager(ctx context.Context, tx *sql.Tx, m ManagerRecord) (int64, error) {
	now := stampNow()
	var parent any
	if m.ParentID != 0 {
		parent = m.ParentID
	}
	if m.CustomFields == "" {
		m.CustomFields = "{}"
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO managers(parent_id, username, email, password_hash, firstname, lastname, phone, debt_limit, discount_rate, custom_fields, password_changed_at, created_at, updated_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`, parent, nullStr(m.Username), nullStr(m.Email), m.PasswordHash, m.Firstname, m.Lastname, m.Phone,
		int64(m.DebtLimit), m.DiscountRate, m.CustomFields, now, now, now)
	if err != nil {
		return 0, err
	}
	id, _ := r.LastInsertId()
	if _, err := tx.ExecContext(ctx, `INSERT INTO manager_tree(ancestor_id, descendant_id, depth)
		SELECT ancestor_id, ?, depth + 1 FROM manager_tree WHERE descendant_id = ?
		UNION ALL SELECT ?, ?, 0`, id, m.ParentID, id, id); err != nil {
		return 0, err
	}
	return id, nil
}

// roleTemplate is a system role provisioned in every tenant; its codes
// are the installed modules' RoleGrants for its key.
type roleTemplate struct {
	Key, Name, Description string
}

var roleTemplates = []roleTemplate{
	{"reseller", "reseller", "Sells service and cards to subscribers below it"},
	{"support", "support", "Helps subscribers: reads records, resets quota, answers tickets"},
	{"cashier", "cashier", "Takes payments at the counter"},
}

// provisionRoles creates the system roles of a new tenant and returns the
// administrator role's id.
func provisionRoles(ctx context.Context, tx *sql.Tx, reg *Registry) (int64, error) {
	now := stampNow()
	r, err := tx.ExecContext(ctx, `INSERT INTO roles(name, description, is_system, template_key, immutable, created_at, updated_at) VALUES (?,?,1,?,1,?,?)`,
		AdminRoleName, "Every permission, now and in later releases", "administrator", now, now)
	if err != nil {
		return 0, err
	}
	adminID, _ := r.LastInsertId()
	for _, rt := range roleTemplates {
		r, err := tx.ExecContext(ctx, `INSERT INTO roles(name, description, is_system, template_key, immutable, created_at, updated_at) VALUES (?,?,1,?,0,?,?)`,
			rt.Name, rt.Description, rt.Key, now, now)
		if err != nil {
			return 0, err
		}
		id, _ := r.LastInsertId()
		for _, c := range reg.RoleGrants(rt.Key) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO role_permissions(role_id, code) VALUES (?,?)`, id, string(c)); err != nil {
				return 0, err
			}
		}
	}
	return adminID, nil
}
