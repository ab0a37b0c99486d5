package subs

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"xr/app"
	"xr/db"
)

// AddonKinds: what an add-on adds to the current period.
var AddonKinds = []string{"data", "days", "time"}

// AddonKind is a JSON enum of AddonKinds.
type AddonKind string

func (k *AddonKind) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, AddonKinds...)
	*k = AddonKind(s)
	return err
}

// Addon is an item of the add-on catalogue: extra data (bytes), days or
// time (seconds) for a price, allowed on every plan or on listed plans.
type Addon struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Kind        string    `json:"kind"`
	Amount      int64     `json:"amount"` // bytes (data), days, or seconds (time)
	Price       app.Money `json:"price"`
	Enabled     bool      `json:"enabled"`
	AllProfiles bool      `json:"all_profiles"`
	ProfileIDs  []int64   `json:"profile_ids"`
	CreatedAt   app.Time  `json:"created_at"`
	UpdatedAt   app.Time  `json:"updated_at"`
}

// AddonInput creates or patches an add-on.
type AddonInput struct {
	Name        app.Opt[string]    `json:"name"`
	Description app.Opt[string]    `json:"description"`
	Kind        app.Opt[AddonKind] `json:"kind"`
	Amount      app.Opt[int64]     `json:"amount"`
	Price       app.Opt[app.Money] `json:"price"`
	Enabled     app.Opt[bool]      `json:"enabled"`
}

func (in *AddonInput) validate(create bool) error {
	if create {
		if !in.Name.Set || strings.TrimSpace(in.Name.V) == "" {
			return app.ErrValidation("name_required", "name")
		}
		if !in.Kind.Set || in.Kind.Null {
			return app.ErrValidation("kind_required", "kind")
		}
		if !in.Amount.Set {
			return app.ErrValidation("amount_required", "amount")
		}
	}
	if in.Name.Set && (in.Name.Null || strings.TrimSpace(in.Name.V) == "" || len(in.Name.V) > 128) {
		return app.ErrValidation("invalid_name", "name")
	}
	if in.Amount.Set && (in.Amount.Null || in.Amount.V <= 0) {
		return app.ErrValidation("amount_must_be_positive", "amount")
	}
	if in.Price.Set && (in.Price.Null || in.Price.V < 0) {
		return app.ErrValidation("invalid_price", "price")
	}
	return nil
}

const addonCols = `id, name, description, kind, amount, price, enabled, all_profiles, created_at, updated_at`

func scanAddon(row interface{ Scan(...any) error }) (*Addon, error) {
	a := &Addon{ProfileIDs: []int64{}}
	var price int64
	err := row.Scan(&a.ID, &a.Name, &a.Description, &a.Kind, &a.Amount, &price, &a.Enabled, &a.AllProfiles, &a.CreatedAt, &a.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	a.Price = app.Money(price)
	return a, err
}

func (a *Addon) loadProfiles(ctx context.Context, q app.Querier) error {
	ids, err := app.QueryIDs(ctx, q, `SELECT profile_id FROM addon_profiles WHERE addon_id = ? ORDER BY profile_id`, a.ID)
	if ids != nil {
		a.ProfileIDs = ids
	}
	return err
}

func getAddon(ctx context.Context, q app.Querier, id int64) (*Addon, error) {
	a, err := scanAddon(q.QueryRowContext(ctx, `SELECT `+addonCols+` FROM addons WHERE id = ?`, id))
	if err != nil {
		return nil, err
	}
	return a, a.loadProfiles(ctx, q)
}

func queryAddons(ctx context.Context, q app.Querier, where string, args ...any) ([]Addon, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+addonCols+` FROM addons WHERE `+where+` ORDER BY name, id`, args...)
	if err != nil {
		return nil, err
	}
	out := []Addon{}
	for rows.Next() {
		a, err := scanAddon(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, *a)
	}
	rows.Close()
	for i := range out {
		if err := out[i].loadProfiles(ctx, q); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// ListAddons is GET /admin/addons: the whole catalogue (one page).
func ListAddons(ctx context.Context, act *app.Actor) ([]Addon, error) {
	if err := act.Require(PermAddonsIndex); err != nil {
		return nil, err
	}
	var out []Addon
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = queryAddons(ctx, tx, "1=1")
		return err
	})
	return out, err
}

// PurchasableAddons is GET /addons: the enabled add-ons, narrowed to those
// allowed on the plan of subscriber userID when given (0 = all enabled).
func PurchasableAddons(ctx context.Context, act *app.Actor, userID int64) ([]Addon, error) {
	if err := act.Require(PermUsersAddon); err != nil {
		return nil, err
	}
	var out []Addon
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		if userID == 0 {
			var err error
			out, err = queryAddons(ctx, tx, "enabled = 1")
			return err
		}
		u, err := loadUser(ctx, tx, act, userID)
		if err != nil {
			return err
		}
		out, err = queryAddons(ctx, tx, `enabled = 1 AND (all_profiles = 1 OR id IN (SELECT addon_id FROM addon_profiles WHERE profile_id = ?))`, nullInt(u.ProfileID))
		return err
	})
	return out, err
}

// AddonsForSubscriber are the enabled add-ons subscriber userID's plan may
// take (the portal's offer; no scope check: the caller is the subscriber).
func AddonsForSubscriber(ctx context.Context, q app.Querier, userID int64) ([]Addon, error) {
	var pid sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT profile_id FROM users WHERE id = ? AND deleted_at IS NULL`, userID).Scan(&pid); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, app.ErrNotFound()
		}
		return nil, err
	}
	return queryAddons(ctx, q, `enabled = 1 AND (all_profiles = 1 OR id IN (SELECT addon_id FROM addon_profiles WHERE profile_id = ?))`, nullInt(pid))
}

func addonConflict(err error) error {
	if db.IsUnique(err) {
		return app.ErrConflict("name_taken").With("field", "name")
	}
	return err
}

// CreateAddon adds an add-on to the catalogue (allowed on every plan until
// PUT allowed-profiles narrows it).
func CreateAddon(ctx context.Context, act *app.Actor, in AddonInput) (*Addon, error) {
	if err := act.Require(PermAddonsManage); err != nil {
		return nil, err
	}
	if err := in.validate(true); err != nil {
		return nil, err
	}
	var a *Addon
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		now := nowText()
		enabled := !in.Enabled.Set || in.Enabled.V
		r, err := tx.ExecContext(ctx, `INSERT INTO addons(name, description, kind, amount, price, enabled, all_profiles, created_at, updated_at) VALUES (?,?,?,?,?,?,1,?,?)`,
			strings.TrimSpace(in.Name.V), in.Description.V, string(in.Kind.V), in.Amount.V, int64(in.Price.V), enabled, now, now)
		if err != nil {
			return addonConflict(err)
		}
		id, _ := r.LastInsertId()
		a, err = getAddon(ctx, tx, id)
		return err
	})
	return a, err
}

// UpdateAddon patches an add-on.
func UpdateAddon(ctx context.Context, act *app.Actor, id int64, in AddonInput) (*Addon, error) {
	if err := act.Require(PermAddonsManage); err != nil {
		return nil, err
	}
	if err := in.validate(false); err != nil {
		return nil, err
	}
	var a *Addon
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := getAddon(ctx, tx, id); err != nil {
			return err
		}
		var p app.Patch
		if in.Name.Set {
			p.Set("name", strings.TrimSpace(in.Name.V))
		}
		if in.Description.Set {
			p.Set("description", in.Description.V)
		}
		if in.Kind.Set {
			p.Set("kind", string(in.Kind.V))
		}
		if in.Amount.Set {
			p.Set("amount", in.Amount.V)
		}
		if in.Price.Set {
			p.Set("price", int64(in.Price.V))
		}
		if in.Enabled.Set {
			p.Set("enabled", in.Enabled.V)
		}
		if _, err := p.Exec(ctx, tx, "addons", id, nowText()); err != nil {
			return addonConflict(err)
		}
		var err error
		a, err = getAddon(ctx, tx, id)
		return err
	})
	return a, err
}

// DeleteAddon removes an add-on; one already bought is only disabled, so
// purchase history keeps its reference (409 addon_in_use answers that).
func DeleteAddon(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermAddonsManage); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := getAddon(ctx, tx, id); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM user_addons WHERE addon_id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return app.ErrConflict("addon_in_use")
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM addons WHERE id = ?`, id)
		return err
	})
}

// BulkDeleteAddons deletes each id on its own.
func BulkDeleteAddons(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermAddonsManage); err != nil {
		return app.BulkResult{}, err
	}
	if err := in.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error { return DeleteAddon(ctx, act, id) }), nil
}

// AllowedProfiles is GET/PUT /admin/addons/{id}/allowed-profiles.
type AllowedProfiles struct {
	AllProfiles bool    `json:"all_profiles"`
	ProfileIDs  []int64 `json:"profile_ids"`
}

// AllowedProfilesInput replaces the plans an add-on may be bought on:
// all_profiles true opens it to every plan; otherwise exactly profile_ids
// (empty = none).
type AllowedProfilesInput struct {
	AllProfiles bool    `json:"all_profiles"`
	ProfileIDs  []int64 `json:"profile_ids"`
}

// GetAllowedProfiles reads an add-on's plans.
func GetAllowedProfiles(ctx context.Context, act *app.Actor, id int64) (*AllowedProfiles, error) {
	if err := act.Require(PermAddonsIndex); err != nil {
		return nil, err
	}
	a, err := getAddon(ctx, act.Tenant.DB.R, id)
	if err != nil {
		return nil, err
	}
	return &AllowedProfiles{AllProfiles: a.AllProfiles, ProfileIDs: a.ProfileIDs}, nil
}

// SetAllowedProfiles replaces an add-on's plans.
func SetAllowedProfiles(ctx context.Context, act *app.Actor, id int64, in AllowedProfilesInput) (*AllowedProfiles, error) {
	if err := act.Require(PermAddonsManage); err != nil {
		return nil, err
	}
	var out *AllowedProfiles
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := getAddon(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM addon_profiles WHERE addon_id = ?`, id); err != nil {
			return err
		}
		if !in.AllProfiles {
			for _, p := range in.ProfileIDs {
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO addon_profiles(addon_id, profile_id) VALUES (?,?)`, id, p); err != nil {
					if db.IsForeignKey(err) {
						return app.ErrValidation("profile_not_found", "profile_ids").With("id", p)
					}
					return err
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE addons SET all_profiles = ?, updated_at = ? WHERE id = ?`, in.AllProfiles, nowText(), id); err != nil {
			return err
		}
		a, err := getAddon(ctx, tx, id)
		if err != nil {
			return err
		}
		out = &AllowedProfiles{AllProfiles: a.AllProfiles, ProfileIDs: a.ProfileIDs}
		return nil
	})
	return out, err
}
