package app

import (
	"context"
	"database/sql"
)

// managerRow is what insertManager stores.
type managerRow struct {
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

// insertManager adds a manager and its closure rows in tx.
func insertManager(ctx context.Context, tx *sql.Tx, m managerRow) (int64, error) {
	now := NowText()
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

// roleTemplate is a system role provisioned in every tenant.
type roleTemplate struct {
	Key, Name, Description string
	Perms                  []string
}

var roleTemplates = []roleTemplate{
	{"reseller", "reseller", "Sells service and cards to subscribers below it",
		[]string{"prm_users_index", "prm_users_create", "prm_users_update", "prm_users_activate", "prm_users_extend", "prm_users_deposit",
			"prm_users_enable_disable", "prm_users_live_traffic", "prm_cards_list", "prm_cards_verify", "prm_cards_generate_user",
			"prm_cards_download", "prm_managers_index", "prm_managers_create", "prm_managers_update", "prm_managers_deposit",
			"prm_managers_journal", "prm_managers_self_deposit", "prm_profiles_index", "prm_report_sessions"}},
	{"support", "support", "Helps subscribers: reads records, resets quota, answers tickets",
		[]string{"prm_users_index", "prm_users_update", "prm_users_reset_quota", "prm_users_live_traffic", "prm_users_mac_lock",
			"prm_users_ping", "prm_report_sessions", "prm_tickets_view", "prm_tickets_reply", "prm_profiles_index", "prm_cards_list"}},
	{"cashier", "cashier", "Takes payments at the counter",
		[]string{"prm_users_index", "prm_users_deposit", "prm_users_activate", "prm_cards_verify", "prm_pos_sell", "prm_profiles_index"}},
}

// provisionRoles creates the system roles of a new tenant and returns the
// administrator role's id.
func provisionRoles(ctx context.Context, tx *sql.Tx) (int64, error) {
	now := NowText()
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
		for _, c := range rt.Perms {
			if !KnownPermission(c) {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO role_permissions(role_id, code) VALUES (?,?)`, id, c); err != nil {
				return 0, err
			}
		}
	}
	return adminID, nil
}
