package subs

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"time"

	"xr/app"
)

// The per-row operations of a bulk change. The users group's bulk rows
// (bulk.go) and the bulk-change engine (app/tools) both apply them through
// these functions: one mechanism per operation.

// Operations of a bulk change.
const (
	OpSetPlan       = "set_plan"
	OpSetParent     = "set_parent"
	OpSetGroup      = "set_group"
	OpAddDays       = "add_days"
	OpSetExpiration = "set_expiration"
	OpAddTraffic    = "add_traffic"
	OpEnable        = "enable"
	OpDisable       = "disable"
	OpSetField      = "set_field"
	OpResetQuota    = "reset_quota"
)

// opPerms is the permission each operation needs: the one of the users
// group's bulk row doing the same.
var opPerms = map[string]app.Perm{
	OpSetPlan: PermUsersChangeProfile, OpSetParent: PermUsersChangeParent, OpSetGroup: PermGroupsAssign,
	OpAddDays: PermUsersExtend, OpSetExpiration: PermUsersExtend, OpAddTraffic: PermUsersAddTraffic,
	OpEnable: PermUsersEnableDisable, OpDisable: PermUsersEnableDisable, OpSetField: PermUsersUpdate,
	OpResetQuota: PermUsersResetQuota,
}

// Change is one operation of a bulk change. Which fields count depends on
// op: profile_id (set_plan; null unbinds), parent_id (set_parent),
// group_id (set_group; null ungroups), days (add_days), expiration
// (set_expiration), bytes (add_traffic), field and value (set_field: a
// custom field of the subscriber form; null removes it).
type Change struct {
	Op         string          `json:"op"`
	ProfileID  *int64          `json:"profile_id,omitempty"`
	ParentID   int64           `json:"parent_id,omitempty"`
	GroupID    *int64          `json:"group_id,omitempty"`
	Days       int64           `json:"days,omitempty"`
	Expiration *app.DateOrTime `json:"expiration,omitempty"`
	Bytes      int64           `json:"bytes,omitempty"`
	Field      string          `json:"field,omitempty"`
	Value      json.RawMessage `json:"value,omitempty"`
}

// ChangePerm is the permission op needs (false for an unknown op).
func ChangePerm(op string) (app.Perm, bool) { p, ok := opPerms[op]; return p, ok }

// MaxChanges bounds the operations of one bulk change.
const MaxChanges = 10

// CheckChanges validates operations for the caller (400 naming
// operations[i].field): the whole call is refused before any row. It does
// not check permissions (the caller lists or refuses those).
func CheckChanges(ctx context.Context, q app.Querier, act *app.Actor, cs []Change) error {
	if len(cs) == 0 {
		return app.ErrValidation("operations_required", "operations")
	}
	if len(cs) > MaxChanges {
		return app.ErrValidation("too_many_operations", "operations")
	}
	for i, c := range cs {
		f := func(name string) string { return "operations[" + strconv.Itoa(i) + "]." + name }
		switch c.Op {
		case OpSetPlan:
			if c.ProfileID != nil {
				if err := requireAssignable(ctx, q, act, *c.ProfileID); err != nil {
					return app.ErrValidation("invalid_profile_id", f("profile_id"))
				}
			}
		case OpSetParent:
			if c.ParentID <= 0 {
				return app.ErrValidation("parent_id_required", f("parent_id"))
			}
			if err := requireParent(ctx, q, act, c.ParentID); err != nil {
				return app.ErrValidation("invalid_parent_id", f("parent_id"))
			}
		case OpSetGroup:
			if c.GroupID != nil {
				if err := requireGroup(ctx, q, *c.GroupID); err != nil {
					return app.ErrValidation("invalid_group_id", f("group_id"))
				}
			}
		case OpAddDays:
			if c.Days <= 0 || c.Days > 36600 {
				return app.ErrValidation("out_of_range", f("days"))
			}
		case OpSetExpiration:
			if c.Expiration == nil || c.Expiration.IsZero() {
				return app.ErrValidation("expiration_required", f("expiration"))
			}
		case OpAddTraffic:
			if c.Bytes <= 0 {
				return app.ErrValidation("out_of_range", f("bytes"))
			}
		case OpSetField:
			if c.Field == "" {
				return app.ErrValidation("field_required", f("field"))
			}
			if len(c.Value) == 0 {
				return app.ErrValidation("value_required", f("value"))
			}
		case OpEnable, OpDisable, OpResetQuota:
		default:
			return app.ErrValidation("invalid_enum", f("op"))
		}
	}
	return nil
}

// RowState is a subscriber as a bulk change shows it before and after.
type RowState struct {
	ID           int64                      `json:"id"`
	Username     string                     `json:"username"`
	ProfileID    *int64                     `json:"profile_id"`
	ParentID     int64                      `json:"parent_id"`
	GroupID      *int64                     `json:"group_id"`
	Enabled      bool                       `json:"enabled"`
	Expiration   app.Time                   `json:"expiration"`
	BytesLimit   int64                      `json:"bytes_limit"`
	UsedBytes    int64                      `json:"used_bytes"`
	UsedSeconds  int64                      `json:"used_seconds"`
	CustomFields map[string]json.RawMessage `json:"custom_fields"`
}

// ReadRowState reads a subscriber's state for a bulk change's log (no
// scope check: the caller selected it within its scope).
func ReadRowState(ctx context.Context, q app.Querier, id int64) (*RowState, error) {
	u, err := readURow(ctx, q, id)
	if err != nil {
		return nil, err
	}
	var custom string
	if err := q.QueryRowContext(ctx, `SELECT custom_fields FROM users WHERE id = ?`, id).Scan(&custom); err != nil {
		return nil, err
	}
	s := &RowState{ID: u.ID, Username: u.Username, ProfileID: ptrOf(u.ProfileID), ParentID: u.ParentID, GroupID: ptrOf(u.GroupID),
		Enabled: u.Enabled, Expiration: u.Expiration, BytesLimit: u.BytesLimit, UsedBytes: u.UsedBytes, UsedSeconds: u.UsedSeconds,
		CustomFields: map[string]json.RawMessage{}}
	if custom != "" {
		if err := json.Unmarshal([]byte(custom), &s.CustomFields); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ApplyChanges applies operations to subscriber id in tx (scope-checked,
// not deleted), in order; it emits user.updated per change. The caller has
// checked the operations (CheckChanges) and their permissions.
func ApplyChanges(ctx context.Context, tx *sql.Tx, act *app.Actor, id int64, cs []Change) error {
	u, err := loadUser(ctx, tx, act, id)
	if err != nil {
		return err
	}
	if err := u.live(); err != nil {
		return err
	}
	now := act.Tenant.Now()
	for _, c := range cs {
		var err error
		switch c.Op {
		case OpSetPlan:
			var p any
			if c.ProfileID != nil {
				p = *c.ProfileID
			}
			err = rowSetProfile(ctx, tx, u, p)
		case OpSetParent:
			err = rowSetParent(ctx, tx, u, c.ParentID)
		case OpSetGroup:
			var g any
			if c.GroupID != nil {
				g = *c.GroupID
			}
			err = rowSetGroup(ctx, tx, u, g)
		case OpAddDays:
			err = rowExtend(ctx, tx, u, now, time.Duration(c.Days)*24*time.Hour)
		case OpSetExpiration:
			err = rowSetExpiration(ctx, tx, u, c.Expiration.Time)
		case OpAddTraffic:
			err = rowAddTraffic(ctx, tx, u, c.Bytes)
		case OpEnable, OpDisable:
			_, err = rowSetEnabled(ctx, tx, u, c.Op == OpEnable)
		case OpResetQuota:
			err = rowResetQuota(ctx, tx, u)
		case OpSetField:
			err = rowSetField(ctx, tx, u, c.Field, c.Value)
		}
		if err != nil {
			return err
		}
		if u, err = loadUser(ctx, tx, act, id); err != nil {
			return err
		}
	}
	return nil
}

func rowExtend(ctx context.Context, tx *sql.Tx, u *urow, now time.Time, d time.Duration) error {
	exp := app.T(later(now, u.Expiration).Add(d))
	if _, err := tx.ExecContext(ctx, `UPDATE users SET expiration = ?, updated_at = ? WHERE id = ?`, exp, nowText(), u.ID); err != nil {
		return err
	}
	return updated(ctx, tx, u, "expiration")
}

func rowAddTraffic(ctx context.Context, tx *sql.Tx, u *urow, bytes int64) error {
	if u.BytesLimit <= 0 {
		return app.ErrConflict("quota_unlimited")
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET bytes_limit = bytes_limit + ?, updated_at = ? WHERE id = ?`, bytes, nowText(), u.ID); err != nil {
		return err
	}
	return updated(ctx, tx, u, "bytes_limit")
}

func rowResetQuota(ctx context.Context, tx *sql.Tx, u *urow) error {
	if _, err := tx.ExecContext(ctx, `UPDATE users SET used_bytes = 0, used_seconds = 0, updated_at = ? WHERE id = ?`, nowText(), u.ID); err != nil {
		return err
	}
	return updated(ctx, tx, u, "quota")
}

func rowSetExpiration(ctx context.Context, tx *sql.Tx, u *urow, exp app.Time) error {
	if _, err := tx.ExecContext(ctx, `UPDATE users SET expiration = ?, updated_at = ? WHERE id = ?`, exp, nowText(), u.ID); err != nil {
		return err
	}
	return updated(ctx, tx, u, "expiration")
}

func rowSetGroup(ctx context.Context, tx *sql.Tx, u *urow, group any) error {
	if _, err := tx.ExecContext(ctx, `UPDATE users SET group_id = ?, updated_at = ? WHERE id = ?`, group, nowText(), u.ID); err != nil {
		return err
	}
	return updated(ctx, tx, u, "group_id")
}

func rowSetParent(ctx context.Context, tx *sql.Tx, u *urow, parent int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE users SET parent_id = ?, updated_at = ? WHERE id = ?`, parent, nowText(), u.ID); err != nil {
		return err
	}
	return updated(ctx, tx, u, "parent_id")
}

func rowSetProfile(ctx context.Context, tx *sql.Tx, u *urow, profile any) error {
	if _, err := tx.ExecContext(ctx, `UPDATE users SET profile_id = ?, updated_at = ? WHERE id = ?`, profile, nowText(), u.ID); err != nil {
		return err
	}
	return updated(ctx, tx, u, "profile_id")
}

// rowSetEnabled switches u on or off (no-op when unchanged).
func rowSetEnabled(ctx context.Context, tx *sql.Tx, u *urow, enabled bool) (bool, error) {
	if u.Enabled == enabled {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET enabled = ?, updated_at = ? WHERE id = ?`, enabled, nowText(), u.ID); err != nil {
		return false, err
	}
	return true, emitEnabled(ctx, tx, u, enabled)
}

// rowSetField sets (or with null removes) one custom field, validated
// against the subscriber form like an edit.
func rowSetField(ctx context.Context, tx *sql.Tx, u *urow, field string, value json.RawMessage) error {
	var custom string
	if err := tx.QueryRowContext(ctx, `SELECT custom_fields FROM users WHERE id = ?`, u.ID).Scan(&custom); err != nil {
		return err
	}
	existing := map[string]json.RawMessage{}
	if custom != "" {
		if err := json.Unmarshal([]byte(custom), &existing); err != nil {
			return err
		}
	}
	out, err := ValidateCustomFields(ctx, tx, "user", map[string]json.RawMessage{field: value}, existing)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET custom_fields = ?, updated_at = ? WHERE id = ?`, out, nowText(), u.ID); err != nil {
		return err
	}
	return updated(ctx, tx, u, "custom_fields")
}
