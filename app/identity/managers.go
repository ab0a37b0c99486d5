package identity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"xr/app"
	"xr/db"
)

// Manager is a staff member or reseller as GET /managers/{id} returns it.
type Manager struct {
	ID               int64           `json:"id"`
	TenantID         int64           `json:"tenant_id"`
	Email            *string         `json:"email"`
	Username         *string         `json:"username"`
	Firstname        string          `json:"firstname"`
	Lastname         string          `json:"lastname"`
	Phone            string          `json:"phone"`
	Company          string          `json:"company"`
	Address          string          `json:"address"`
	Notes            string          `json:"notes"`
	Language         string          `json:"language"`
	Status           string          `json:"status"`
	ParentManagerID  *int64          `json:"parent_manager_id"`
	Balance          app.Money       `json:"balance"`
	DebtLimit        app.Money       `json:"debt_limit"`
	DiscountRate     float64         `json:"discount_rate"`
	PointsBalance    int64           `json:"points_balance"`
	GroupID          *int64          `json:"group_id"`
	TwoFactorEnabled bool            `json:"two_factor_enabled"`
	UsersCount       int64           `json:"users_count"`
	CustomFields     json.RawMessage `json:"custom_fields"`
	CreatedAt        app.Time        `json:"created_at"`
	UpdatedAt        app.Time        `json:"updated_at"`
}

// ManagerRow is a row of GET /managers: the record plus the list-only
// projection (debt, parent_username, users_count).
type ManagerRow struct {
	Manager
	ParentUsername *string   `json:"parent_username"`
	Debt           app.Money `json:"debt"`
}

const managerCols = `m.id, m.email, m.username, m.firstname, m.lastname, m.phone, m.company, m.address, m.notes, m.language, m.status,
	m.parent_id, m.balance, m.debt_limit, m.discount_rate, m.points_balance, m.group_id, m.totp_enabled, m.custom_fields, m.created_at, m.updated_at`

func scanManager(t *app.Tenant, row interface{ Scan(...any) error }, extra ...any) (*Manager, error) {
	m := &Manager{TenantID: t.ID}
	var email, username sql.NullString
	var parent, group sql.NullInt64
	var bal, limit, disc int64
	var cf string
	dest := []any{&m.ID, &email, &username, &m.Firstname, &m.Lastname, &m.Phone, &m.Company, &m.Address, &m.Notes, &m.Language, &m.Status,
		&parent, &bal, &limit, &disc, &m.PointsBalance, &group, &m.TwoFactorEnabled, &cf, &m.CreatedAt, &m.UpdatedAt}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, app.ErrNotFound()
		}
		return nil, err
	}
	if email.Valid {
		m.Email = &email.String
	}
	if username.Valid {
		m.Username = &username.String
	}
	if parent.Valid {
		m.ParentManagerID = &parent.Int64
	}
	if group.Valid {
		m.GroupID = &group.Int64
	}
	m.Balance, m.DebtLimit, m.DiscountRate = app.Money(bal), app.Money(limit), float64(disc)/1000
	m.CustomFields = json.RawMessage(cf)
	return m, nil
}

// managerListSpec is GET /managers' sort and filter allow-list.
var managerListSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "m.id", "username": "m.username", "email": "m.email", "created_at": "m.created_at", "balance": "m.balance", "status": "m.status"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"parent_id": app.FilterInt, "status": app.FilterString, "group_id": app.FilterInt},
	Aliases:     []string{"parent_id"},
}

// ManagerListSpec exposes the list spec to the HTTP layer.
func ManagerListSpec() app.ListSpec { return managerListSpec }

// ListManagers lists the caller's descendants (never the caller itself).
func ListManagers(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[ManagerRow], error) {
	if err := act.Require(PermManagersIndex); err != nil {
		return app.Page[ManagerRow]{}, err
	}
	t := act.Tenant
	scope, args := act.ScopeSQL("m.id")
	where := []string{scope, "m.id <> ?"}
	args = append(args, act.ManagerID)
	if v, ok := q.Int("parent_id"); ok {
		where = append(where, "m.parent_id = ?")
		args = append(args, v)
	}
	if v, ok := q.Str("status"); ok {
		where = append(where, "m.status = ?")
		args = append(args, v)
	}
	if v, ok := q.Int("group_id"); ok {
		where = append(where, "m.group_id = ?")
		args = append(args, v)
	}
	if q.Q != "" {
		like := "%" + app.LikeEscape(q.Q) + "%"
		where = append(where, `(m.username LIKE ? ESCAPE '\' OR m.email LIKE ? ESCAPE '\' OR m.firstname LIKE ? ESCAPE '\' OR m.lastname LIKE ? ESCAPE '\' OR (m.firstname || ' ' || m.lastname) LIKE ? ESCAPE '\')`)
		args = append(args, like, like, like, like, like)
	}
	cond := strings.Join(where, " AND ")
	return app.QueryPage(ctx, t, q, managerCols+`, p.username,
		COALESCE((SELECT outstanding_after FROM manager_loans l WHERE l.manager_id = m.id ORDER BY l.id DESC LIMIT 1), 0),
		`+usersCountExpr("m.id"), `FROM managers m LEFT JOIN managers p ON p.id = m.parent_id WHERE `+cond, args, "m.id",
		func(rows *sql.Rows) (ManagerRow, error) {
			var r ManagerRow
			var pu sql.NullString
			var debt, users int64
			m, err := scanManager(t, rows, &pu, &debt, &users)
			if err != nil {
				return r, err
			}
			r.Manager, r.ParentUsername, r.Debt = *m, nullStrPtr(pu), app.Money(debt)
			r.UsersCount = users
			return r, nil
		})
}

// usersCountExpr counts a manager's own subscribers; zero while the
// subscribers schema is absent.
func usersCountExpr(col string) string {
	return `(SELECT COUNT(*) FROM users u WHERE u.parent_id = ` + col + ` AND u.deleted_at IS NULL)`
}

// GetManager reads one manager in the caller's scope (the caller itself
// included); users_count reads zero here, as the spec says.
func GetManager(ctx context.Context, act *app.Actor, id int64) (*Manager, error) {
	if err := act.Require(PermManagersIndex); err != nil {
		return nil, err
	}
	return getManager(ctx, act, id)
}

// getManager reads a manager in the caller's subtree for the function
// that answers with it (which checked the caller's permission).
func getManager(ctx context.Context, act *app.Actor, id int64) (*Manager, error) {
	t := act.Tenant
	if err := act.RequireScope(ctx, t.DB.R, id); err != nil {
		return nil, err
	}
	return scanManager(t, t.DB.R.QueryRowContext(ctx, `SELECT `+managerCols+` FROM managers m WHERE m.id = ?`, id))
}

// ManagerName is a row of /managers/all.
type ManagerName struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// AllManagers lists id and display name of every manager in scope.
func AllManagers(ctx context.Context, act *app.Actor) ([]ManagerName, error) {
	if err := act.Require(PermManagersIndex); err != nil {
		return nil, err
	}
	return managerNames(ctx, act)
}

// ParentChoices are the managers a new manager may be created under (the
// console's form): those of AllManagers, for a caller who may create.
func ParentChoices(ctx context.Context, act *app.Actor) ([]ManagerName, error) {
	if err := act.Require(PermManagersCreate); err != nil {
		return nil, err
	}
	return managerNames(ctx, act)
}

func managerNames(ctx context.Context, act *app.Actor) ([]ManagerName, error) {
	scope, args := act.ScopeSQL("m.id")
	rows, err := act.Tenant.DB.R.QueryContext(ctx, `SELECT m.id, COALESCE(NULLIF(TRIM(m.firstname || ' ' || m.lastname), ''), m.username, m.email)
		FROM managers m WHERE `+scope+` ORDER BY m.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ManagerName{}
	for rows.Next() {
		var n ManagerName
		if err := rows.Scan(&n.ID, &n.Name); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// ManagerInput creates or patches a manager.
type ManagerInput struct {
	Email           app.Opt[string]          `json:"email"`
	Username        app.Opt[string]          `json:"username"`
	Password        app.Opt[string]          `json:"password"`
	ParentManagerID app.Opt[int64]           `json:"parent_manager_id"`
	Firstname       app.Opt[string]          `json:"firstname"`
	Lastname        app.Opt[string]          `json:"lastname"`
	Phone           app.Opt[string]          `json:"phone"`
	Company         app.Opt[string]          `json:"company"`
	Address         app.Opt[string]          `json:"address"`
	Notes           app.Opt[string]          `json:"notes"`
	Language        app.Opt[string]          `json:"language"`
	DebtLimit       app.Opt[app.Money]       `json:"debt_limit"`
	DiscountRate    app.Opt[app.Money]       `json:"discount_rate"` // percent, up to 3 decimals
	GroupID         app.Opt[int64]           `json:"group_id"`
	RoleIDs         app.Opt[[]int64]         `json:"role_ids"`
	CustomFields    app.Opt[json.RawMessage] `json:"custom_fields"`
}

func (in *ManagerInput) validate(create bool) error {
	trim := func(o *app.Opt[string]) {
		if o.Set {
			o.V = strings.TrimSpace(o.V)
		}
	}
	trim(&in.Email)
	trim(&in.Username)
	if create && in.Email.V == "" && in.Username.V == "" {
		return app.ErrValidation("identity_required", "username")
	}
	if in.Username.Set && in.Username.V != "" && !usernameRe.MatchString(in.Username.V) {
		return app.ErrValidation("invalid_username", "username")
	}
	if in.Email.Set && in.Email.V != "" && !emailRe.MatchString(in.Email.V) {
		return app.ErrValidation("invalid_email", "email")
	}
	if create && !in.Password.Set {
		return app.ErrValidation("password_required", "password")
	}
	if in.Password.Set {
		if err := app.CheckPasswordStrength(in.Password.V, "password"); err != nil {
			return err
		}
	}
	if in.ParentManagerID.Set && in.ParentManagerID.Null {
		return app.ErrValidation("parent_required", "parent_manager_id")
	}
	if in.DebtLimit.Set && (in.DebtLimit.Null || in.DebtLimit.V < 0) {
		return app.ErrValidation("invalid_debt_limit", "debt_limit")
	}
	if in.DiscountRate.Set && (in.DiscountRate.Null || in.DiscountRate.V < 0 || in.DiscountRate.V > 100*app.Scale) {
		return app.ErrValidation("invalid_discount_rate", "discount_rate")
	}
	if in.CustomFields.Set && !in.CustomFields.Null {
		var m map[string]any
		if json.Unmarshal(in.CustomFields.V, &m) != nil {
			return app.ErrValidation("invalid_custom_fields", "custom_fields")
		}
	}
	for _, f := range []struct {
		o    app.Opt[string]
		name string
	}{{in.Firstname, "firstname"}, {in.Lastname, "lastname"}, {in.Phone, "phone"}, {in.Company, "company"}, {in.Address, "address"}, {in.Notes, "notes"}, {in.Language, "language"}} {
		if len(f.o.V) > 1000 {
			return app.ErrValidation("too_long", f.name)
		}
	}
	return nil
}

func identityConflict(err error) error {
	if db.IsUnique(err) {
		if strings.Contains(err.Error(), "email") {
			return app.ErrConflict("email_taken").With("field", "email")
		}
		return app.ErrConflict("username_taken").With("field", "username")
	}
	return err
}

// CreateManager adds a manager under a parent in the caller's subtree.
func CreateManager(ctx context.Context, act *app.Actor, in ManagerInput) (*Manager, error) {
	if err := act.Require(PermManagersCreate); err != nil {
		return nil, err
	}
	if err := in.validate(true); err != nil {
		return nil, err
	}
	if in.RoleIDs.Set && len(in.RoleIDs.V) > 0 {
		// Assigning roles on create is role assignment: the code of PUT
		// /managers/{id}/roles, and refused for an impersonated caller.
		if err := act.Require(PermRolesManage); err != nil {
			return nil, err
		}
		if act.Impersonator != 0 {
			return nil, app.ErrForbidden("impersonation_forbidden")
		}
	}
	t := act.Tenant
	parent := act.ManagerID
	if in.ParentManagerID.Set {
		parent = in.ParentManagerID.V
	}
	var id int64
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if ok, err := act.InScope(ctx, tx, parent); err != nil {
			return err
		} else if !ok {
			return app.ErrValidation("parent_not_found", "parent_manager_id")
		}
		cf := "{}"
		if in.CustomFields.Set && !in.CustomFields.Null {
			cf = string(in.CustomFields.V)
		}
		var err error
		id, err = app.InsertManager(ctx, tx, app.ManagerRecord{ParentID: parent, Username: in.Username.V, Email: in.Email.V,
			PasswordHash: app.HashPassword(in.Password.V), Firstname: in.Firstname.V, Lastname: in.Lastname.V, Phone: in.Phone.V,
			DebtLimit: in.DebtLimit.V, DiscountRate: int64(in.DiscountRate.V), CustomFields: cf})
		if err != nil {
			return identityConflict(err)
		}
		if err := patchManagerColumns(ctx, tx, id, ManagerInput{Company: in.Company, Address: in.Address, Notes: in.Notes, Language: in.Language, GroupID: in.GroupID}); err != nil {
			return err
		}
		if in.RoleIDs.Set {
			if err := setManagerRoles(ctx, tx, act, id, in.RoleIDs.V); err != nil {
				return err
			}
		}
		return app.Emit(ctx, tx, "manager.created", map[string]any{"id": id, "parent_manager_id": parent, "username": in.Username.V, "email": in.Email.V})
	})
	if err != nil {
		return nil, err
	}
	return scanManager(t, t.DB.R.QueryRowContext(ctx, `SELECT `+managerCols+` FROM managers m WHERE m.id = ?`, id))
}

// patchManagerColumns writes the plain columns present in in.
func patchManagerColumns(ctx context.Context, tx *sql.Tx, id int64, in ManagerInput) error {
	var p app.Patch
	ident := func(v string) any { return nullStr(v) }
	app.SetOptOrZero(&p, "email", in.Email, ident)
	app.SetOptOrZero(&p, "username", in.Username, ident)
	for _, f := range []struct {
		col string
		o   app.Opt[string]
	}{{"firstname", in.Firstname}, {"lastname", in.Lastname}, {"phone", in.Phone}, {"company", in.Company},
		{"address", in.Address}, {"notes", in.Notes}, {"language", in.Language}} {
		app.SetOptOrZero(&p, f.col, f.o, func(v string) any { return v }) // null clears to ""
	}
	if in.Password.Set {
		p.Set("password_hash", app.HashPassword(in.Password.V))
		p.Set("password_changed_at", app.StampNow())
	}
	app.SetOptOrZero(&p, "debt_limit", in.DebtLimit, func(m app.Money) any { return int64(m) })
	app.SetOptOrZero(&p, "discount_rate", in.DiscountRate, func(r app.Money) any { return int64(r) })
	if in.GroupID.Set && !in.GroupID.Null {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM manager_groups WHERE id = ?`, in.GroupID.V).Scan(&one); err != nil {
			return app.ErrValidation("group_not_found", "group_id")
		}
	}
	app.SetOpt(&p, "group_id", in.GroupID)
	if in.CustomFields.Set {
		v := "{}"
		if !in.CustomFields.Null {
			v = string(in.CustomFields.V)
		}
		p.Set("custom_fields", v)
	}
	if p.Empty() {
		return nil
	}
	if (in.Email.Set && in.Email.V == "") || (in.Username.Set && in.Username.V == "") {
		// Checked before the write: the table's CHECK would fail it as a 500.
		var email, username sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT email, username FROM managers WHERE id = ?`, id).Scan(&email, &username); err != nil {
			return err
		}
		if in.Email.Set {
			email.Valid = in.Email.V != ""
		}
		if in.Username.Set {
			username.Valid = in.Username.V != ""
		}
		if !email.Valid && !username.Valid {
			return app.ErrValidation("identity_required", "username")
		}
	}
	if _, err := p.Exec(ctx, tx, "managers", id, app.StampNow()); err != nil {
		return identityConflict(err)
	}
	return nil
}

// UpdateManager patches a manager in scope; omitted fields are untouched.
// A new parent must be in scope and outside the manager's own subtree.
func UpdateManager(ctx context.Context, act *app.Actor, id int64, in ManagerInput) (*Manager, error) {
	if err := act.Require(PermManagersUpdate); err != nil {
		return nil, err
	}
	if err := in.validate(false); err != nil {
		return nil, err
	}
	if in.RoleIDs.Set {
		return nil, app.ErrValidation("use_roles_endpoint", "role_ids")
	}
	// A password set here is a password reset: refused for an impersonated
	// caller, and one's own goes through the re-authenticated account route.
	if in.Password.Set && act.Impersonator != 0 {
		return nil, app.ErrForbidden("impersonation_forbidden")
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := act.RequireScope(ctx, tx, id); err != nil {
			return err
		}
		if in.Password.Set && id == act.ManagerID && act.Kind != app.CredSystem {
			return app.ErrForbidden("use_account_password")
		}
		if in.ParentManagerID.Set {
			if err := moveManager(ctx, tx, act, id, in.ParentManagerID.V); err != nil {
				return err
			}
		}
		if err := patchManagerColumns(ctx, tx, id, in); err != nil {
			return err
		}
		if in.Password.Set {
			return revokeSessions(ctx, tx, id, "")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return scanManager(t, t.DB.R.QueryRowContext(ctx, `SELECT `+managerCols+` FROM managers m WHERE m.id = ?`, id))
}

func moveManager(ctx context.Context, tx *sql.Tx, act *app.Actor, id, parent int64) error {
	var cur sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT parent_id FROM managers WHERE id = ?`, id).Scan(&cur); err != nil {
		return err
	}
	if !cur.Valid {
		return app.ErrConflict("root_cannot_move")
	}
	if cur.Int64 == parent {
		return nil
	}
	if id == act.ManagerID {
		return app.ErrForbidden("cannot_move_self")
	}
	if ok, err := act.InScope(ctx, tx, parent); err != nil {
		return err
	} else if !ok {
		return app.ErrValidation("parent_not_found", "parent_manager_id")
	}
	var cycle int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM manager_tree WHERE ancestor_id = ? AND descendant_id = ?`, id, parent).Scan(&cycle); err != nil {
		return err
	}
	if cycle > 0 {
		return app.ErrValidation("parent_in_own_subtree", "parent_manager_id")
	}
	// Re-hang the subtree: drop the links from the old ancestors, add the
	// new ones (closure-table move).
	if _, err := tx.ExecContext(ctx, `DELETE FROM manager_tree WHERE descendant_id IN (SELECT descendant_id FROM manager_tree WHERE ancestor_id = ?)
		AND ancestor_id NOT IN (SELECT descendant_id FROM manager_tree WHERE ancestor_id = ?)`, id, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO manager_tree(ancestor_id, descendant_id, depth)
		SELECT a.ancestor_id, d.descendant_id, a.depth + d.depth + 1
		FROM manager_tree a, manager_tree d WHERE a.descendant_id = ? AND d.ancestor_id = ?`, parent, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE managers SET parent_id = ?, updated_at = ? WHERE id = ?`, parent, act.Tenant.NowText(), id)
	return err
}

// SetManagerStatus suspends or activates a manager in scope. A suspended
// manager cannot sign in and its API tokens stop authenticating; the
// subscribers below are untouched.
func SetManagerStatus(ctx context.Context, act *app.Actor, id int64, status string) error {
	if err := act.Require(PermManagersUpdate); err != nil {
		return err
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := act.RequireScope(ctx, tx, id); err != nil {
			return err
		}
		if status == "suspended" {
			if id == act.ManagerID {
				return app.ErrForbidden("cannot_suspend_self")
			}
			var parent sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT parent_id FROM managers WHERE id = ?`, id).Scan(&parent); err != nil {
				return err
			}
			if !parent.Valid {
				return app.ErrConflict("root_cannot_be_suspended")
			}
		}
		r, err := tx.ExecContext(ctx, `UPDATE managers SET status = ?, updated_at = ? WHERE id = ? AND status <> ?`, status, t.NowText(), id, status)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n > 0 && status == "suspended" {
			return app.Emit(ctx, tx, "manager.suspended", map[string]any{"id": id})
		}
		return nil
	})
	if err == nil {
		t.App.DropGrants(t.Slug)
	}
	return err
}

// DeleteManager hard-deletes a manager in scope, refused while anything
// references it (sub-managers, subscribers, card stock, ledger records).
func DeleteManager(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermManagersDelete); err != nil {
		return err
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := act.RequireScope(ctx, tx, id); err != nil {
			return err
		}
		if id == act.ManagerID {
			return app.ErrForbidden("cannot_delete_self")
		}
		var parent sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT parent_id FROM managers WHERE id = ?`, id).Scan(&parent); err != nil {
			return err
		}
		if !parent.Valid {
			return app.ErrConflict("root_cannot_be_deleted")
		}
		refs := append(append([]string{}, managerReferences...), t.App.ManagerReferences()...)
		for _, q := range refs {
			var n int
			if err := tx.QueryRowContext(ctx, q, id).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return app.ErrConflict("manager_in_use")
			}
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM managers WHERE id = ?`, id)
		if db.IsForeignKey(err) {
			return app.ErrConflict("manager_in_use")
		}
		return err
	})
	if err == nil {
		t.App.DropGrants(t.Slug)
	}
	return err
}

// managerReferences are identity's own counts that keep a manager from
// being deleted; modules add theirs (Module.ManagerRefs).
var managerReferences = []string{
	`SELECT COUNT(*) FROM managers WHERE parent_id = ?`,
	`SELECT COUNT(*) FROM manager_journal WHERE manager_id = ?`,
	`SELECT COUNT(*) FROM manager_loans WHERE manager_id = ?`,
}

// ManagerRoles lists the roles assigned to a manager in scope.
func ManagerRoles(ctx context.Context, act *app.Actor, id int64) ([]Role, error) {
	if err := act.Require(PermManagersIndex); err != nil {
		return nil, err
	}
	return managerRoles(ctx, act, id)
}

func managerRoles(ctx context.Context, act *app.Actor, id int64) ([]Role, error) {
	t := act.Tenant
	if err := act.RequireScope(ctx, t.DB.R, id); err != nil {
		return nil, err
	}
	return listRoles(ctx, t, `WHERE r.id IN (SELECT role_id FROM manager_roles WHERE manager_id = ?)`, id)
}

// SetManagerRoles replaces a manager's roles. The caller may grant only
// roles whose codes it holds itself; the change applies at once to the
// manager's sessions and tokens.
func SetManagerRoles(ctx context.Context, act *app.Actor, id int64, roleIDs []int64) ([]Role, error) {
	if err := act.Require(PermRolesManage); err != nil {
		return nil, err
	}
	if roleIDs == nil {
		return nil, app.ErrValidation("role_ids_required", "role_ids")
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := act.RequireScope(ctx, tx, id); err != nil {
			return err
		}
		return setManagerRoles(ctx, tx, act, id, roleIDs)
	})
	if err != nil {
		return nil, err
	}
	t.App.DropGrants(t.Slug)
	return managerRoles(ctx, act, id)
}

func setManagerRoles(ctx context.Context, tx *sql.Tx, act *app.Actor, id int64, roleIDs []int64) error {
	seen := map[int64]bool{}
	adminKept := false
	for _, rid := range roleIDs {
		if seen[rid] {
			continue
		}
		seen[rid] = true
		var immutable, wide bool
		var name string
		err := tx.QueryRowContext(ctx, `SELECT name, immutable, tenant_wide FROM roles WHERE id = ?`, rid).Scan(&name, &immutable, &wide)
		if errors.Is(err, sql.ErrNoRows) {
			return app.ErrValidation("role_not_found", "role_ids").With("role_id", rid)
		}
		if err != nil {
			return err
		}
		if immutable && name == app.AdminRoleName {
			adminKept = true
			if !act.IsAdmin {
				return app.ErrForbidden("cannot_grant_role").With("role_id", rid)
			}
			continue
		}
		if wide && !act.TenantWide {
			// Visibility is granted like codes: only by one who has it.
			return app.ErrForbidden("cannot_grant_role").With("role_id", rid).With("field", "tenant_wide")
		}
		codes, err := roleCodes(ctx, tx, rid)
		if err != nil {
			return err
		}
		for _, c := range codes {
			if !act.Perms[app.Perm(c)] {
				return app.ErrForbidden("cannot_grant_role").With("role_id", rid).With("permission", c)
			}
		}
	}
	var parent sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT parent_id FROM managers WHERE id = ?`, id).Scan(&parent); err != nil {
		return err
	}
	if !parent.Valid && !adminKept {
		return app.ErrConflict("root_must_be_administrator")
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM manager_roles WHERE manager_id = ?`, id); err != nil {
		return err
	}
	for rid := range seen {
		if _, err := tx.ExecContext(ctx, `INSERT INTO manager_roles(manager_id, role_id) VALUES (?,?)`, id, rid); err != nil {
			return err
		}
	}
	return nil
}

// ResetManagerPassword sets a new password for a manager in scope (a
// random one when none is given, returned once) and signs it out everywhere.
func ResetManagerPassword(ctx context.Context, act *app.Actor, id int64, password string) (string, error) {
	if err := act.Require(PermManagersUpdate); err != nil {
		return "", err
	}
	if password == "" {
		password = "Xr-" + app.RandomToken(12)
	}
	if err := app.CheckPasswordStrength(password, "password"); err != nil {
		return "", err
	}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if err := act.RequireScope(ctx, tx, id); err != nil {
			return err
		}
		if id == act.ManagerID {
			return app.ErrForbidden("use_account_password")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE managers SET password_hash = ?, password_changed_at = ?, updated_at = ? WHERE id = ?`,
			app.HashPassword(password), act.Tenant.NowText(), act.Tenant.NowText(), id); err != nil {
			return err
		}
		return revokeSessions(ctx, tx, id, "")
	})
	return password, err
}

// ResetManager2FA turns two-factor off for a manager in scope (an admin
// helping a locked-out colleague).
func ResetManager2FA(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermManagersUpdate); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if err := act.RequireScope(ctx, tx, id); err != nil {
			return err
		}
		return clearTOTP(ctx, tx, id)
	})
}

// revokeSessions signs a manager out of every session but keep.
func revokeSessions(ctx context.Context, tx *sql.Tx, managerID int64, keep string) error {
	_, err := tx.ExecContext(ctx, `UPDATE auth_sessions SET revoked_at = ? WHERE manager_id = ? AND jti <> ? AND revoked_at IS NULL`,
		app.StampNow(), managerID, keep)
	return err
}

// LoginAs opens a session as a manager in scope, recording the caller as
// the impersonator; nested impersonation is refused.
func LoginAs(ctx context.Context, act *app.Actor, id int64, ip, ua string) (*LoginResult, error) {
	if err := act.Require(PermManagersLoginAs); err != nil {
		return nil, err
	}
	a := act.Tenant.App
	t := act.Tenant
	if act.Impersonator != 0 {
		return nil, app.ErrForbidden("impersonation_forbidden")
	}
	if err := act.RequireScope(ctx, t.DB.R, id); err != nil {
		return nil, err
	}
	if id == act.ManagerID {
		return nil, app.ErrValidation("cannot_impersonate_self", "id")
	}
	var status string
	if err := t.DB.R.QueryRowContext(ctx, `SELECT status FROM managers WHERE id = ?`, id).Scan(&status); err != nil {
		return nil, err
	}
	if status != "active" {
		return nil, app.ErrConflict("manager_suspended")
	}
	return openSession(ctx, a, t, id, act.ManagerID, act.JTI, false, ip, ua)
}

// ExitImpersonation ends a login-as session and hands back a token of the
// impersonator's own session, which must still be live.
func ExitImpersonation(ctx context.Context, act *app.Actor) (*LoginResult, error) {
	a := act.Tenant.App
	if act.Impersonator == 0 {
		return nil, app.ErrConflict("not_impersonating")
	}
	t := act.Tenant
	var parent sql.NullString
	var expires string
	var revoked sql.NullString
	var mid int64
	// The login-as session ends even when there is no live session to
	// return to: that refusal is reported after the revocation commits.
	var refusal error
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT parent_jti FROM auth_sessions WHERE jti = ?`, act.JTI).Scan(&parent); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE auth_sessions SET revoked_at = ? WHERE jti = ?`, t.NowText(), act.JTI); err != nil {
			return err
		}
		if !parent.Valid {
			refusal = app.ErrConflict("impersonator_session_gone")
			return nil
		}
		err := tx.QueryRowContext(ctx, `SELECT manager_id, expires_at, revoked_at FROM auth_sessions WHERE jti = ?`, parent.String).Scan(&mid, &expires, &revoked)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && (revoked.Valid || expires <= t.NowText())) {
			refusal = app.ErrUnauthorized("session_revoked")
			return nil
		}
		return err
	})
	if err == nil {
		err = refusal
	}
	if err != nil {
		return nil, err
	}
	exp, _ := app.ParseTime(expires, false)
	res := &LoginResult{UserID: mid, TenantID: t.ID, TenantSlug: t.Slug, ExpiresAt: exp.Unix()}
	res.Token = signToken(a.Keys, sessionClaims{Tid: t.ID, Sub: mid, Jti: parent.String, Aud: "staff", Exp: exp.Unix()})
	who, _, err := app.ManagerActor(ctx, t, mid, nil)
	if err != nil {
		return nil, err
	}
	res.Roles = append([]string{}, who.Roles...)
	return res, nil
}

// permGroupsAssign is subs.PermGroupsAssign, named here again because
// subs imports identity (manager wallets); TestPermConstantsMatchCatalogue
// (app/modules) holds the two equal.
const permGroupsAssign app.Perm = "prm_groups_assign"

// BulkSetManagerGroup is SetManagerGroup for each of ids (the bulk shape).
func BulkSetManagerGroup(ctx context.Context, act *app.Actor, ids []int64, groupID *int64, groupName string) (app.BulkResult, error) {
	if err := act.Require(permGroupsAssign); err != nil {
		return app.BulkResult{}, err
	}
	in := app.BulkIDs{IDs: ids}
	if err := in.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, ids, func(ctx context.Context, id int64) error {
		return SetManagerGroup(ctx, act, id, groupID, groupName)
	}), nil
}

// SetManagerGroup puts a manager in scope into a group (nil = none). A
// group may be named; it is created when missing.
func SetManagerGroup(ctx context.Context, act *app.Actor, id int64, groupID *int64, groupName string) error {
	if err := act.Require(permGroupsAssign); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if err := act.RequireScope(ctx, tx, id); err != nil {
			return err
		}
		g, err := resolveGroup(ctx, tx, groupID, groupName)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE managers SET group_id = ?, updated_at = ? WHERE id = ?`, g, act.Tenant.NowText(), id)
		return err
	})
}

func resolveGroup(ctx context.Context, tx *sql.Tx, groupID *int64, name string) (any, error) {
	name = strings.TrimSpace(name)
	switch {
	case groupID != nil:
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM manager_groups WHERE id = ?`, *groupID).Scan(&one); err != nil {
			return nil, app.ErrValidation("group_not_found", "group_id")
		}
		return *groupID, nil
	case name != "":
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM manager_groups WHERE name = ?`, name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			r, err := tx.ExecContext(ctx, `INSERT INTO manager_groups(name, created_at) VALUES (?,?)`, name, app.StampNow())
			if err != nil {
				return nil, err
			}
			id, _ = r.LastInsertId()
		} else if err != nil {
			return nil, err
		}
		return id, nil
	}
	return nil, nil
}
