package subs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"xr/app"
	"xr/db"
)

// CreateInput is the body of POST /users. Creating is identity only: no
// money, no quota, no activation.
type CreateInput struct {
	Username       string                     `json:"username"`
	Password       string                     `json:"password"`
	ParentID       *int64                     `json:"parent_id"`  // default the caller
	ProfileID      *int64                     `json:"profile_id"` // must be assignable by the caller; metadata only
	GroupID        *int64                     `json:"group_id"`
	Enabled        *bool                      `json:"enabled"`
	Expiration     *app.DateOrTime            `json:"expiration"`
	DebtLimit      *app.Money                 `json:"debt_limit"` // omitted or null = unlimited credit; 0 = none
	PortalPassword string                     `json:"portal_password"`
	Email          string                     `json:"email"`
	Firstname      string                     `json:"firstname"`
	Lastname       string                     `json:"lastname"`
	Phone          string                     `json:"phone"`
	ContractID     string                     `json:"contract_id"`
	NationalID     string                     `json:"national_id"`
	Address        string                     `json:"address"`
	Notes          string                     `json:"notes"`
	StaticIP       string                     `json:"static_ip"`
	MacLockEnabled bool                       `json:"mac_lock_enabled"`
	MacLockedAddrs []string                   `json:"mac_locked_addrs"`
	CustomFields   map[string]json.RawMessage `json:"custom_fields"`
}

// requireParent answers 400 invalid_parent_id for a manager that is
// missing or outside the actor's subtree (both the same answer).
func requireParent(ctx context.Context, q app.Querier, act *app.Actor, id int64) error {
	ok, err := act.InScope(ctx, q, id)
	if err != nil {
		return err
	}
	if !ok {
		return app.ErrValidation("invalid_parent_id", "parent_id")
	}
	return nil
}

// Create is POST /users.
func Create(ctx context.Context, act *app.Actor, in CreateInput) (*Created, error) {
	if err := act.Require(PermUsersCreate); err != nil {
		return nil, err
	}
	t := act.Tenant
	nu := NewUser{Username: in.Username, Password: in.Password, PortalPassword: in.PortalPassword, ParentID: act.ManagerID,
		Enabled: in.Enabled, DebtLimit: in.DebtLimit, Email: in.Email, Firstname: in.Firstname, Lastname: in.Lastname, Phone: in.Phone,
		ContractID: in.ContractID, NationalID: in.NationalID, Address: in.Address, Notes: in.Notes, StaticIP: in.StaticIP,
		MacLockEnabled: in.MacLockEnabled, MacLockedAddrs: in.MacLockedAddrs, CustomFields: in.CustomFields, ActorID: act.ManagerID}
	if in.ParentID != nil {
		nu.ParentID = *in.ParentID
	}
	if in.ProfileID != nil {
		nu.ProfileID = *in.ProfileID
	}
	if in.GroupID != nil {
		nu.GroupID = *in.GroupID
	}
	if in.Expiration != nil {
		nu.Expiration = in.Expiration.Time
	}
	if in.Enabled != nil && !*in.Enabled && !act.Can(PermUsersEnableDisable) {
		return nil, app.ErrForbidden("")
	}
	if in.GroupID != nil && !act.Can(PermGroupsAssign) {
		return nil, app.ErrForbidden("")
	}
	if err := validateNewUser(&nu); err != nil {
		return nil, err
	}
	var out *Created
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := requireParent(ctx, tx, act, nu.ParentID); err != nil {
			return err
		}
		if nu.ProfileID != 0 {
			if err := requireAssignable(ctx, tx, act, nu.ProfileID); err != nil {
				return err
			}
		}
		var err error
		out, err = CreateUser(ctx, tx, t, nu)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

const detailCols = listCols + `, u.firstname, u.lastname, u.phone, u.contract_id, u.national_id, u.address, u.notes, u.static_ip,
	u.group_id, COALESCE(g.name, ''), u.debt_limit, u.points_balance, u.portal_password_hash <> '', u.lookup_token, u.custom_fields, u.updated_at`

const detailFrom = listFrom + ` LEFT JOIN user_groups g ON g.id = u.group_id`

func scanDetail(row interface{ Scan(...any) error }, tenantID int64, now time.Time) (*UserDetail, error) {
	d := &UserDetail{}
	var group sql.NullInt64
	var limit sql.NullInt64
	var custom string
	u, err := scanListRow(row, tenantID, now, &d.Firstname, &d.Lastname, &d.Phone, &d.ContractID, &d.NationalID, &d.Address,
		&d.Notes, &d.StaticIP, &group, &d.GroupName, &limit, &d.PointsBalance, &d.HasPortalPassword, &d.LookupToken, &custom, &d.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	d.User = *u
	d.GroupID = ptrOf(group)
	if limit.Valid {
		m := app.Money(limit.Int64)
		d.DebtLimit = &m
	}
	if err := json.Unmarshal([]byte(custom), &d.CustomFields); err != nil {
		return nil, fmt.Errorf("user %d custom_fields: %w", d.ID, err)
	}
	if d.CustomFields == nil {
		d.CustomFields = map[string]json.RawMessage{}
	}
	return d, nil
}

// readDetail reads a record and its deleted_at/seconds (not in the list scan).
func readDetail(ctx context.Context, q app.Querier, t *app.Tenant, where string, arg any) (*UserDetail, int64, error) {
	d, err := scanDetail(q.QueryRowContext(ctx, `SELECT `+detailCols+detailFrom+` WHERE `+where, arg), t.ID, t.Now())
	if err != nil {
		return nil, 0, err
	}
	var parent int64
	err = q.QueryRowContext(ctx, `SELECT parent_id, seconds_limit, used_seconds, deleted_at FROM users WHERE id = ?`, d.ID).
		Scan(&parent, &d.SecondsLimit, &d.UsedSeconds, &d.DeletedAt)
	if d.SecondsLimit > 0 {
		d.SecondsRemaining = max(0, d.SecondsLimit-d.UsedSeconds)
	}
	return d, parent, err
}

// GetUser is GET /users/{id}: the record with lookup_token and custom
// fields; one outside the actor's subtree answers like a missing one.
func GetUser(ctx context.Context, act *app.Actor, id int64) (*UserDetail, error) {
	if err := act.Require(PermUsersIndex); err != nil {
		return nil, err
	}
	return userDetail(ctx, act, id)
}

// userDetail reads the detail of a subscriber the caller may act on (the
// answer of the actions that change one; their permission was checked).
func userDetail(ctx context.Context, act *app.Actor, id int64) (*UserDetail, error) {
	return getDetail(ctx, act, "u.id = ?", id)
}

func getDetail(ctx context.Context, act *app.Actor, where string, arg any) (*UserDetail, error) {
	var d *UserDetail
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var parent int64
		var err error
		d, parent, err = readDetail(ctx, tx, act.Tenant, where, arg)
		if err != nil {
			return err
		}
		return act.RequireScope(ctx, tx, parent)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Resolve is GET /users/resolve: the subscriber of a scan token (the QR
// payload without its "xr:u:" prefix, which is also tolerated here).
func Resolve(ctx context.Context, act *app.Actor, code string) (*UserDetail, error) {
	if err := act.Require(PermUsersIndex); err != nil {
		return nil, err
	}
	code = strings.TrimPrefix(strings.TrimSpace(code), "xr:u:")
	if code == "" {
		return nil, app.ErrValidation("code_required", "code")
	}
	if len(code) > 128 {
		return nil, app.ErrNotFound()
	}
	return getDetail(ctx, act, "u.lookup_token = ?", code)
}

// UserPatch is PATCH /users/{id}: only present fields change. Writing
// mac_locked_addrs without mac_lock_enabled stores a list that enforces
// nothing. Changing parent_id needs prm_users_change_parent, profile_id
// prm_users_change_profile, enabled prm_users_enable_disable, expiration
// prm_users_extend, group_id prm_groups_assign.
type UserPatch struct {
	Username       app.Opt[string]                     `json:"username"`
	Password       app.Opt[string]                     `json:"password"`
	PortalPassword app.Opt[string]                     `json:"portal_password"`
	ParentID       app.Opt[int64]                      `json:"parent_id"`
	ProfileID      app.Opt[int64]                      `json:"profile_id"`
	GroupID        app.Opt[int64]                      `json:"group_id"`
	Enabled        app.Opt[bool]                       `json:"enabled"`
	Expiration     app.Opt[app.DateOrTime]             `json:"expiration"`
	DebtLimit      app.Opt[app.Money]                  `json:"debt_limit"`
	Email          app.Opt[string]                     `json:"email"`
	Firstname      app.Opt[string]                     `json:"firstname"`
	Lastname       app.Opt[string]                     `json:"lastname"`
	Phone          app.Opt[string]                     `json:"phone"`
	ContractID     app.Opt[string]                     `json:"contract_id"`
	NationalID     app.Opt[string]                     `json:"national_id"`
	Address        app.Opt[string]                     `json:"address"`
	Notes          app.Opt[string]                     `json:"notes"`
	StaticIP       app.Opt[string]                     `json:"static_ip"`
	MacLockEnabled app.Opt[bool]                       `json:"mac_lock_enabled"`
	MacLockedAddrs app.Opt[[]string]                   `json:"mac_locked_addrs"`
	CustomFields   app.Opt[map[string]json.RawMessage] `json:"custom_fields"`
}

func (p *UserPatch) authorize(act *app.Actor) error {
	// field is the code without "prm_users_" (the whole code when it has
	// no such prefix), as details.field has always carried.
	need := []struct {
		set   bool
		code  app.Perm
		field string
	}{
		{p.ParentID.Set, PermUsersChangeParent, "change_parent"}, {p.ProfileID.Set, PermUsersChangeProfile, "change_profile"},
		{p.Enabled.Set, PermUsersEnableDisable, "enable_disable"}, {p.Expiration.Set, PermUsersExtend, "extend"},
		{p.GroupID.Set, PermGroupsAssign, string(PermGroupsAssign)},
	}
	for _, n := range need {
		if n.set && !act.Can(n.code) {
			return app.ErrForbidden("").With("field", n.field)
		}
	}
	return nil
}

func (p *UserPatch) validate() error {
	if p.Username.Set && (p.Username.Null || !ValidUsername(strings.TrimSpace(p.Username.V))) {
		return app.ErrValidation("invalid_username", "username")
	}
	if p.Password.Set {
		if err := checkRadiusPassword(p.Password.V, "password"); err != nil {
			return err
		}
	}
	if p.PortalPassword.Set && !p.PortalPassword.Null && p.PortalPassword.V != "" {
		if err := app.CheckPasswordStrength(p.PortalPassword.V, "portal_password"); err != nil {
			return err
		}
	}
	if p.ParentID.Set && p.ParentID.Null {
		return app.ErrValidation("invalid_parent_id", "parent_id")
	}
	if p.DebtLimit.Set && !p.DebtLimit.Null && p.DebtLimit.V < 0 {
		return app.ErrValidation("invalid_debt_limit", "debt_limit")
	}
	if p.Enabled.Set && p.Enabled.Null {
		return app.ErrValidation("invalid_value", "enabled")
	}
	if p.MacLockEnabled.Set && p.MacLockEnabled.Null {
		return app.ErrValidation("invalid_value", "mac_lock_enabled")
	}
	if p.Email.Set {
		p.Email.V = strings.TrimSpace(p.Email.V)
		if err := checkEmail(p.Email.V); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		o    app.Opt[string]
		name string
	}{{p.Firstname, "firstname"}, {p.Lastname, "lastname"}, {p.Phone, "phone"}, {p.ContractID, "contract_id"},
		{p.NationalID, "national_id"}, {p.Address, "address"}} {
		if err := checkText(f.name, f.o.V); err != nil {
			return err
		}
	}
	if len(p.Notes.V) > 4000 {
		return app.ErrValidation("too_long", "notes")
	}
	if p.StaticIP.Set {
		ip, err := normStaticIP(p.StaticIP.V)
		if err != nil {
			return err
		}
		p.StaticIP.V = ip
	}
	if p.MacLockedAddrs.Set {
		macs, err := normMACs(p.MacLockedAddrs.V)
		if err != nil {
			return err
		}
		p.MacLockedAddrs.V = macs
	}
	return nil
}

// UpdateUser is PATCH /users/{id}; it emits user.updated (and
// user.enabled/user.disabled when enabled changes).
func UpdateUser(ctx context.Context, act *app.Actor, id int64, p UserPatch) (*UserDetail, error) {
	if err := act.Require(PermUsersUpdate); err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	if err := p.authorize(act); err != nil {
		return nil, err
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		u, err := loadUser(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if err := u.live(); err != nil {
			return err
		}
		var pt app.Patch
		set := pt.Set
		changed := []string{}
		if p.Username.Set {
			set("username", strings.TrimSpace(p.Username.V))
			changed = append(changed, "username")
		}
		if p.Password.Set {
			set("password_sealed", t.App.Keys.Seal([]byte(p.Password.V)))
			changed = append(changed, "password")
		}
		if p.PortalPassword.Set {
			h := ""
			if !p.PortalPassword.Null && p.PortalPassword.V != "" {
				h = app.HashPassword(p.PortalPassword.V)
			}
			set("portal_password_hash", h)
			changed = append(changed, "portal_password")
		}
		if p.ParentID.Set && p.ParentID.V != u.ParentID {
			if err := requireParent(ctx, tx, act, p.ParentID.V); err != nil {
				return err
			}
			set("parent_id", p.ParentID.V)
			changed = append(changed, "parent_id")
		}
		if p.ProfileID.Set {
			if p.ProfileID.Null {
				set("profile_id", nil)
			} else {
				if !u.ProfileID.Valid || u.ProfileID.Int64 != p.ProfileID.V {
					if err := requireAssignable(ctx, tx, act, p.ProfileID.V); err != nil {
						return err
					}
				}
				set("profile_id", p.ProfileID.V)
			}
			changed = append(changed, "profile_id")
		}
		if p.GroupID.Set {
			if p.GroupID.Null {
				set("group_id", nil)
			} else {
				if err := requireGroup(ctx, tx, p.GroupID.V); err != nil {
					return err
				}
				set("group_id", p.GroupID.V)
			}
			changed = append(changed, "group_id")
		}
		if p.Enabled.Set {
			set("enabled", p.Enabled.V)
			changed = append(changed, "enabled")
		}
		if p.Expiration.Set {
			set("expiration", p.Expiration.V.Time)
			changed = append(changed, "expiration")
		}
		if p.DebtLimit.Set {
			if p.DebtLimit.Null {
				set("debt_limit", nil)
			} else {
				set("debt_limit", int64(p.DebtLimit.V))
			}
			changed = append(changed, "debt_limit")
		}
		for _, f := range []struct {
			o   app.Opt[string]
			col string
		}{{p.Email, "email"}, {p.Firstname, "firstname"}, {p.Lastname, "lastname"}, {p.Phone, "phone"}, {p.ContractID, "contract_id"},
			{p.NationalID, "national_id"}, {p.Address, "address"}, {p.Notes, "notes"}, {p.StaticIP, "static_ip"}} {
			if f.o.Set {
				set(f.col, f.o.V)
				changed = append(changed, f.col)
			}
		}
		if p.MacLockEnabled.Set {
			set("mac_lock_enabled", p.MacLockEnabled.V)
			changed = append(changed, "mac_lock_enabled")
		}
		if p.MacLockedAddrs.Set {
			macs := p.MacLockedAddrs.V
			if macs == nil {
				macs = []string{}
			}
			set("mac_locked_addrs", jsonText(macs))
			changed = append(changed, "mac_locked_addrs")
		}
		if p.CustomFields.Set {
			var cur string
			if err := tx.QueryRowContext(ctx, `SELECT custom_fields FROM users WHERE id = ?`, id).Scan(&cur); err != nil {
				return err
			}
			existing := map[string]json.RawMessage{}
			if err := json.Unmarshal([]byte(cur), &existing); err != nil {
				return fmt.Errorf("user %d custom_fields: %w", id, err)
			}
			custom, err := ValidateCustomFields(ctx, tx, "user", p.CustomFields.V, existing)
			if err != nil {
				return err
			}
			set("custom_fields", custom)
			changed = append(changed, "custom_fields")
		}
		if pt.Empty() {
			return nil
		}
		_, err = pt.Exec(ctx, tx, "users", id, nowText())
		switch {
		case db.IsUnique(err) && p.StaticIP.Set && p.StaticIP.V != "" && staticIPTaken(ctx, tx, p.StaticIP.V, id):
			return app.ErrConflict("static_ip_taken").With("field", "static_ip")
		case db.IsUnique(err), db.IsTriggerAbort(err): // the trigger: a card login
			return app.ErrConflict("username_taken").With("field", "username")
		case err != nil:
			return err
		}
		if err := app.Emit(ctx, tx, "user.updated", map[string]any{"id": id, "username": u.Username, "changed": changed}); err != nil {
			return err
		}
		if p.Enabled.Set && p.Enabled.V != u.Enabled {
			return emitEnabled(ctx, tx, u, p.Enabled.V)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return userDetail(ctx, act, id)
}

func emitEnabled(ctx context.Context, tx *sql.Tx, u *urow, enabled bool) error {
	ev := "user.disabled"
	if enabled {
		ev = "user.enabled"
	}
	return app.Emit(ctx, tx, ev, map[string]any{"id": u.ID, "username": u.Username})
}

// setEnabled switches one subscriber on or off (no-op when unchanged).
func setEnabled(ctx context.Context, act *app.Actor, id int64, enabled bool) error {
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		u, err := loadUser(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if err := u.live(); err != nil {
			return err
		}
		_, err = rowSetEnabled(ctx, tx, u, enabled)
		return err
	})
}

// EnableUser is POST /users/{id}/enable.
func EnableUser(ctx context.Context, act *app.Actor, id int64) (*UserDetail, error) {
	if err := act.Require(PermUsersEnableDisable); err != nil {
		return nil, err
	}
	if err := setEnabled(ctx, act, id, true); err != nil {
		return nil, err
	}
	return userDetail(ctx, act, id)
}

// DisableUser is POST /users/{id}/disable.
func DisableUser(ctx context.Context, act *app.Actor, id int64) (*UserDetail, error) {
	if err := act.Require(PermUsersEnableDisable); err != nil {
		return nil, err
	}
	if err := setEnabled(ctx, act, id, false); err != nil {
		return nil, err
	}
	return userDetail(ctx, act, id)
}

// DeleteUser soft-deletes a subscriber: it disappears from lists and from
// the licence count, can no longer connect, and keeps its ledger and its
// username. A second delete is a no-op.
func DeleteUser(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermUsersDelete); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		u, err := loadUser(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if !u.DeletedAt.IsZero() {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET deleted_at = ?, updated_at = ? WHERE id = ?`, nowText(), nowText(), id); err != nil {
			return err
		}
		return app.Emit(ctx, tx, "user.deleted", map[string]any{"id": id, "username": u.Username})
	})
}

// ParentOption is a manager the caller may put subscribers under.
type ParentOption struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
	Name     string `json:"name"`
	Depth    int    `json:"depth"` // below the caller
}

// ProfileOption is a plan the caller may assign.
type ProfileOption struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	Price        app.Money `json:"price"`
	DurationDays int64     `json:"duration_days"`
	BytesLimit   int64     `json:"bytes_limit"`
}

// OwnerContext is GET /users/owner-context: what a create form may offer
// the caller.
type OwnerContext struct {
	DefaultParentID int64           `json:"default_parent_id"`
	Parents         []ParentOption  `json:"parents"`
	Profiles        []ProfileOption `json:"profiles"`
	Groups          []Group         `json:"groups"`
	CustomFields    []FormField     `json:"custom_fields"`
	CanSetGroup     bool            `json:"can_set_group"`
	ActivationPayer string          `json:"activation_payer"`
}

// GetOwnerContext lists the parents (the caller's active subtree), plans
// and groups the caller may choose, and the subscriber form's fields.
func GetOwnerContext(ctx context.Context, act *app.Actor) (*OwnerContext, error) {
	if err := act.Require(PermUsersCreate); err != nil {
		return nil, err
	}
	return ownerContext(ctx, act)
}

// The card forms' permissions (cards.PermCardsGenerateUser and
// cards.PermCardsDesigner): package cards imports subs, so they are
// named here again; TestPermConstantsMatchCatalogue (app/modules) holds
// them equal.
const (
	permCardsGenerateUser app.Perm = "prm_cards_generate_user"
	permCardsDesigner     app.Perm = "prm_cards_designer"
)

// FormChoices is the owner context for the console's forms and filters
// that name a parent or a plan: the subscriber list, create, edit and
// activation forms and the card series and template forms.
func FormChoices(ctx context.Context, act *app.Actor) (*OwnerContext, error) {
	if err := act.Require(PermUsersIndex, PermUsersCreate, PermUsersChangeProfile, permCardsGenerateUser, permCardsDesigner); err != nil {
		return nil, err
	}
	return ownerContext(ctx, act)
}

func ownerContext(ctx context.Context, act *app.Actor) (*OwnerContext, error) {
	oc := &OwnerContext{DefaultParentID: act.ManagerID, Parents: []ParentOption{}, Profiles: []ProfileOption{}, Groups: []Group{},
		CustomFields: []FormField{}, CanSetGroup: act.Can(PermGroupsAssign)}
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT m.id, COALESCE(m.username, m.email, ''), TRIM(m.firstname || ' ' || m.lastname), mt.depth
			FROM manager_tree mt JOIN managers m ON m.id = mt.descendant_id
			WHERE mt.ancestor_id = ? AND (m.status = 'active' OR m.id = ?) ORDER BY mt.depth, m.username LIMIT 5000`, act.ManagerID, act.ManagerID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var p ParentOption
			if err := rows.Scan(&p.ID, &p.Username, &p.Name, &p.Depth); err != nil {
				rows.Close()
				return err
			}
			oc.Parents = append(oc.Parents, p)
		}
		rows.Close()
		cond, args := assignableSQL(act)
		rows, err = tx.QueryContext(ctx, `SELECT p.id, p.name, p.price, p.duration_days, p.bytes_limit FROM profiles p WHERE `+cond+` ORDER BY p.name`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var p ProfileOption
			var price int64
			if err := rows.Scan(&p.ID, &p.Name, &price, &p.DurationDays, &p.BytesLimit); err != nil {
				rows.Close()
				return err
			}
			p.Price = app.Money(price)
			oc.Profiles = append(oc.Profiles, p)
		}
		rows.Close()
		if oc.Groups, err = listGroups(ctx, tx); err != nil {
			return err
		}
		fields, err := loadFormFields(ctx, tx, "user")
		for _, f := range fields {
			if f.Enabled {
				oc.CustomFields = append(oc.CustomFields, f)
			}
		}
		if err != nil {
			return err
		}
		oc.ActivationPayer, err = SettingActivationPayer.Get(ctx, tx)
		return err
	})
	return oc, err
}
