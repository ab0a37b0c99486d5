package subs

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"xr/app"
	"xr/db"
)

// Profile is a plan: price, duration, limits, rates and who may assign it.
type Profile struct {
	ID              int64     `json:"id"`
	Name            string    `json:"name"`
	Description     string    `json:"description"`
	Price           app.Money `json:"price"`
	DurationDays    int64     `json:"duration_days"`
	BytesLimit      int64     `json:"bytes_limit"`   // 0 = unlimited
	SecondsLimit    int64     `json:"seconds_limit"` // 0 = unlimited
	RateDownKbps    int64     `json:"rate_down_kbps"`
	RateUpKbps      int64     `json:"rate_up_kbps"`
	SimultaneousUse int64     `json:"simultaneous_use"`
	FUPRateDownKbps int64     `json:"fup_rate_down_kbps"`
	FUPRateUpKbps   int64     `json:"fup_rate_up_kbps"`
	ExpiredPool     string    `json:"expired_pool"`
	Enabled         bool      `json:"enabled"`
	// AllManagers: every manager who may create subscribers may assign the
	// plan. Otherwise only the managers of ManagerIDs and their subtrees.
	// The owner and administrators may always assign every plan.
	AllManagers bool     `json:"all_managers"`
	ManagerIDs  []int64  `json:"manager_ids"`
	UsersCount  int64    `json:"users_count"`
	CreatedAt   app.Time `json:"created_at"`
	UpdatedAt   app.Time `json:"updated_at"`
}

// ProfileInput creates or patches a plan (PATCH: only present fields).
type ProfileInput struct {
	Name            app.Opt[string]    `json:"name"`
	Description     app.Opt[string]    `json:"description"`
	Price           app.Opt[app.Money] `json:"price"`
	DurationDays    app.Opt[int64]     `json:"duration_days"`
	BytesLimit      app.Opt[int64]     `json:"bytes_limit"`
	SecondsLimit    app.Opt[int64]     `json:"seconds_limit"`
	RateDownKbps    app.Opt[int64]     `json:"rate_down_kbps"`
	RateUpKbps      app.Opt[int64]     `json:"rate_up_kbps"`
	SimultaneousUse app.Opt[int64]     `json:"simultaneous_use"`
	FUPRateDownKbps app.Opt[int64]     `json:"fup_rate_down_kbps"`
	FUPRateUpKbps   app.Opt[int64]     `json:"fup_rate_up_kbps"`
	ExpiredPool     app.Opt[string]    `json:"expired_pool"`
	Enabled         app.Opt[bool]      `json:"enabled"`
	AllManagers     app.Opt[bool]      `json:"all_managers"`
	ManagerIDs      app.Opt[[]int64]   `json:"manager_ids"`
}

func (in *ProfileInput) validate(create bool) error {
	if create && (!in.Name.Set || strings.TrimSpace(in.Name.V) == "") {
		return app.ErrValidation("name_required", "name")
	}
	if in.Name.Set && (in.Name.Null || strings.TrimSpace(in.Name.V) == "" || len(in.Name.V) > 128) {
		return app.ErrValidation("invalid_name", "name")
	}
	if in.Price.Set && (in.Price.Null || in.Price.V < 0) {
		return app.ErrValidation("invalid_price", "price")
	}
	nonNeg := []struct {
		o     app.Opt[int64]
		field string
	}{
		{in.DurationDays, "duration_days"}, {in.BytesLimit, "bytes_limit"}, {in.SecondsLimit, "seconds_limit"},
		{in.RateDownKbps, "rate_down_kbps"}, {in.RateUpKbps, "rate_up_kbps"}, {in.SimultaneousUse, "simultaneous_use"},
		{in.FUPRateDownKbps, "fup_rate_down_kbps"}, {in.FUPRateUpKbps, "fup_rate_up_kbps"},
	}
	for _, f := range nonNeg {
		if f.o.Set && (f.o.Null || f.o.V < 0) {
			return app.ErrValidation("must_not_be_negative", f.field)
		}
	}
	if in.DurationDays.Set && in.DurationDays.V > 36600 {
		return app.ErrValidation("out_of_range", "duration_days")
	}
	if in.ExpiredPool.Set && len(in.ExpiredPool.V) > 64 {
		return app.ErrValidation("too_long", "expired_pool")
	}
	if in.Description.Set {
		if err := checkText("description", in.Description.V); err != nil {
			return err
		}
	}
	return nil
}

const profileCols = `p.id, p.name, p.description, p.price, p.duration_days, p.bytes_limit, p.seconds_limit, p.rate_down_kbps, p.rate_up_kbps,
	p.simultaneous_use, p.fup_rate_down_kbps, p.fup_rate_up_kbps, p.expired_pool, p.enabled, p.all_managers, p.created_at, p.updated_at,
	(SELECT COUNT(*) FROM users u WHERE u.profile_id = p.id AND u.deleted_at IS NULL)`

func scanProfile(row interface{ Scan(...any) error }) (*Profile, error) {
	p := &Profile{ManagerIDs: []int64{}}
	var price int64
	err := row.Scan(&p.ID, &p.Name, &p.Description, &price, &p.DurationDays, &p.BytesLimit, &p.SecondsLimit, &p.RateDownKbps,
		&p.RateUpKbps, &p.SimultaneousUse, &p.FUPRateDownKbps, &p.FUPRateUpKbps, &p.ExpiredPool, &p.Enabled, &p.AllManagers,
		&p.CreatedAt, &p.UpdatedAt, &p.UsersCount)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	p.Price = app.Money(price)
	return p, err
}

func (p *Profile) loadManagers(ctx context.Context, q app.Querier) error {
	ids, err := app.QueryIDs(ctx, q, `SELECT manager_id FROM profile_managers WHERE profile_id = ? ORDER BY manager_id`, p.ID)
	if ids != nil {
		p.ManagerIDs = ids
	}
	return err
}

// assignableSQL is the condition (on alias p) for plans the actor may
// assign: every enabled plan for tenant-wide callers; otherwise plans open
// to all managers or granted to the caller or one of its ancestors.
func assignableSQL(act *app.Actor) (string, []any) {
	if act.TenantWide {
		return "p.enabled = 1", nil
	}
	return `p.enabled = 1 AND (p.all_managers = 1 OR EXISTS (SELECT 1 FROM profile_managers pm JOIN manager_tree mt ON mt.ancestor_id = pm.manager_id
		WHERE pm.profile_id = p.id AND mt.descendant_id = ?))`, []any{act.ManagerID}
}

// visibleSQL: tenant-wide callers see every plan; others the plans they may assign.
func visibleSQL(act *app.Actor) (string, []any) {
	if act.TenantWide {
		return "1=1", nil
	}
	return assignableSQL(act)
}

// requireAssignable answers 400 profile_not_assignable for a plan that is
// missing, disabled or not granted to the actor.
func requireAssignable(ctx context.Context, q app.Querier, act *app.Actor, profileID int64) error {
	cond, args := assignableSQL(act)
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM profiles p WHERE p.id = ? AND `+cond, append([]any{profileID}, args...)...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrValidation("profile_not_assignable", "profile_id")
	}
	return err
}

var profileListSpec = app.ListSpec{
	Sorts: map[string]string{"id": "p.id", "name": "p.name", "price": "p.price", "duration_days": "p.duration_days",
		"created_at": "p.created_at"},
	DefaultSort: "name",
	DefaultAsc:  true,
	Filters:     map[string]app.FilterKind{"enabled": app.FilterBool},
}

// ProfileListSpec is the list spec of GET /admin/profiles (q searches name
// and description).
func ProfileListSpec() app.ListSpec { return profileListSpec }

// ListProfiles lists the plans the actor sees.
func ListProfiles(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[Profile], error) {
	if err := act.Require(PermProfilesIndex); err != nil {
		return app.Page[Profile]{}, err
	}
	cond, args := visibleSQL(act)
	where := []string{cond}
	if v, ok := q.Bool("enabled"); ok {
		where = append(where, "p.enabled = ?")
		args = append(args, v)
	}
	if q.Q != "" {
		like := "%" + app.LikeEscape(q.Q) + "%"
		where = append(where, `(p.name LIKE ? ESCAPE '\' OR p.description LIKE ? ESCAPE '\')`)
		args = append(args, like, like)
	}
	w := strings.Join(where, " AND ")
	var page app.Page[Profile]
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var total int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM profiles p WHERE `+w, args...).Scan(&total); err != nil {
			return err
		}
		page.Meta = q.MetaFor(total)
		rows, err := tx.QueryContext(ctx, `SELECT `+profileCols+` FROM profiles p WHERE `+w+q.OrderLimit("p.id"), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			p, err := scanProfile(rows)
			if err != nil {
				return err
			}
			page.Rows = append(page.Rows, *p)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		for i := range page.Rows {
			if err := page.Rows[i].loadManagers(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
	return page, err
}

func getProfile(ctx context.Context, q app.Querier, act *app.Actor, id int64) (*Profile, error) {
	cond, args := visibleSQL(act)
	p, err := scanProfile(q.QueryRowContext(ctx, `SELECT `+profileCols+` FROM profiles p WHERE p.id = ? AND `+cond, append([]any{id}, args...)...))
	if err != nil {
		return nil, err
	}
	return p, p.loadManagers(ctx, q)
}

// GetProfile reads one plan the actor sees.
func GetProfile(ctx context.Context, act *app.Actor, id int64) (*Profile, error) {
	if err := act.Require(PermProfilesIndex); err != nil {
		return nil, err
	}
	return LookupProfile(ctx, act, id)
}

// LookupProfile is one plan the caller sees (404 otherwise), for another
// area's function about plans; it checks no permission, that function did.
func LookupProfile(ctx context.Context, act *app.Actor, id int64) (*Profile, error) {
	var p *Profile
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var err error
		p, err = getProfile(ctx, tx, act, id)
		return err
	})
	return p, err
}

func setProfileManagers(ctx context.Context, tx *sql.Tx, id int64, ids []int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM profile_managers WHERE profile_id = ?`, id); err != nil {
		return err
	}
	for _, m := range ids {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM managers WHERE id = ?`, m).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return app.ErrValidation("invalid_manager_id", "manager_ids").With("id", m)
			}
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO profile_managers(profile_id, manager_id) VALUES (?,?)`, id, m); err != nil {
			return err
		}
	}
	return nil
}

func profileConflict(err error) error {
	if db.IsUnique(err) {
		return app.ErrConflict("name_taken").With("field", "name")
	}
	return err
}

// CreateProfile adds a plan (route permission prm_profiles_manage).
func CreateProfile(ctx context.Context, act *app.Actor, in ProfileInput) (*Profile, error) {
	if err := act.Require(PermProfilesManage); err != nil {
		return nil, err
	}
	return createProfile(ctx, act, in)
}

// permToolsLegacyImport is dataimport.PermToolsLegacyImport, named here
// again because dataimport imports subs; TestPermConstantsMatchCatalogue
// (app/modules) holds the two equal.
const permToolsLegacyImport app.Perm = "prm_tools_legacy_import"

// ImportProfile is CreateProfile for a legacy import, which brings the
// other system's plans with its subscribers (prm_tools_legacy_import).
func ImportProfile(ctx context.Context, act *app.Actor, in ProfileInput) (*Profile, error) {
	if err := act.Require(PermProfilesManage, permToolsLegacyImport); err != nil {
		return nil, err
	}
	return createProfile(ctx, act, in)
}

func createProfile(ctx context.Context, act *app.Actor, in ProfileInput) (*Profile, error) {
	if err := in.validate(true); err != nil {
		return nil, err
	}
	def := func(o app.Opt[int64], d int64) int64 {
		if o.Set {
			return o.V
		}
		return d
	}
	enabled, all := true, true
	if in.Enabled.Set {
		enabled = in.Enabled.V
	}
	if in.AllManagers.Set {
		all = in.AllManagers.V
	}
	if in.ManagerIDs.Set && !in.AllManagers.Set && len(in.ManagerIDs.V) > 0 {
		all = false // naming managers restricts the plan to them
	}
	var p *Profile
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		now := nowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO profiles(name, description, price, duration_days, bytes_limit, seconds_limit, rate_down_kbps, rate_up_kbps,
			simultaneous_use, fup_rate_down_kbps, fup_rate_up_kbps, expired_pool, enabled, all_managers, created_at, updated_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			strings.TrimSpace(in.Name.V), in.Description.V, int64(in.Price.V), def(in.DurationDays, 30), def(in.BytesLimit, 0), def(in.SecondsLimit, 0),
			def(in.RateDownKbps, 0), def(in.RateUpKbps, 0), def(in.SimultaneousUse, 1), def(in.FUPRateDownKbps, 0), def(in.FUPRateUpKbps, 0),
			in.ExpiredPool.V, enabled, all, now, now)
		if err != nil {
			return profileConflict(err)
		}
		id, _ := r.LastInsertId()
		if in.ManagerIDs.Set {
			if err := setProfileManagers(ctx, tx, id, in.ManagerIDs.V); err != nil {
				return err
			}
		}
		p, err = getProfile(ctx, tx, act, id)
		return err
	})
	return p, err
}

// UpdateProfile patches a plan. Subscribers keep their current period;
// the new values apply from their next activation (and to RADIUS rates
// at once).
func UpdateProfile(ctx context.Context, act *app.Actor, id int64, in ProfileInput) (*Profile, error) {
	if err := act.Require(PermProfilesManage); err != nil {
		return nil, err
	}
	if err := in.validate(false); err != nil {
		return nil, err
	}
	var p *Profile
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := getProfile(ctx, tx, act, id); err != nil {
			return err
		}
		var pt app.Patch
		ints := []struct {
			o   app.Opt[int64]
			col string
		}{
			{in.DurationDays, "duration_days"}, {in.BytesLimit, "bytes_limit"}, {in.SecondsLimit, "seconds_limit"},
			{in.RateDownKbps, "rate_down_kbps"}, {in.RateUpKbps, "rate_up_kbps"}, {in.SimultaneousUse, "simultaneous_use"},
			{in.FUPRateDownKbps, "fup_rate_down_kbps"}, {in.FUPRateUpKbps, "fup_rate_up_kbps"},
		}
		for _, f := range ints {
			if f.o.Set {
				pt.Set(f.col, f.o.V)
			}
		}
		if in.Name.Set {
			pt.Set("name", strings.TrimSpace(in.Name.V))
		}
		if in.Description.Set {
			pt.Set("description", in.Description.V)
		}
		if in.Price.Set {
			pt.Set("price", int64(in.Price.V))
		}
		if in.ExpiredPool.Set {
			pt.Set("expired_pool", in.ExpiredPool.V)
		}
		if in.Enabled.Set {
			pt.Set("enabled", in.Enabled.V)
		}
		if in.AllManagers.Set {
			pt.Set("all_managers", in.AllManagers.V)
		}
		if _, err := pt.Exec(ctx, tx, "profiles", id, nowText()); err != nil {
			return profileConflict(err)
		}
		if in.ManagerIDs.Set {
			if err := setProfileManagers(ctx, tx, id, in.ManagerIDs.V); err != nil {
				return err
			}
		}
		var err error
		p, err = getProfile(ctx, tx, act, id)
		return err
	})
	return p, err
}

func DeleteProfile(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermProfilesManage); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := getProfile(ctx, tx, act, id); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE profile_id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return app.ErrConflict("profile_in_use").With("users", n)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM profiles WHERE id = ?`, id)
		if db.IsForeignKey(err) {
			return app.ErrConflict("profile_in_use")
		}
		return err
	})
}

// planRow is what activation needs of a plan.
type planRow struct {
	ID              int64
	Name            string
	Price           int64
	DurationDays    int64
	BytesLimit      int64
	SecondsLimit    int64
	Enabled         bool
	FUPRateDownKbps int64
}

func readPlan(ctx context.Context, q app.Querier, id int64) (*planRow, error) {
	p := &planRow{}
	err := q.QueryRowContext(ctx, `SELECT id, name, price, duration_days, bytes_limit, seconds_limit, enabled, fup_rate_down_kbps FROM profiles WHERE id = ?`, id).
		Scan(&p.ID, &p.Name, &p.Price, &p.DurationDays, &p.BytesLimit, &p.SecondsLimit, &p.Enabled, &p.FUPRateDownKbps)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrValidation("profile_not_found", "profile_id")
	}
	return p, err
}
