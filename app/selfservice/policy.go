package selfservice

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"xr/app"
	"xr/app/bandwidth"
	"xr/app/subs"
	"xr/db"
)

// BoostOption is one speed boost a plan offers: a rate for a duration at a
// price.
type BoostOption struct {
	ID              int64     `json:"id"`
	Name            string    `json:"name"`
	RateDownKbps    int64     `json:"rate_down_kbps"`
	RateUpKbps      int64     `json:"rate_up_kbps"`
	DurationMinutes int64     `json:"duration_minutes"`
	Price           app.Money `json:"price"`
}

// ExtensionPolicy is what an extension of a plan gives and costs. Days 0:
// the plan offers none. MaxPerMonth 0: the tenant setting
// selfservice_extensions_per_month.
type ExtensionPolicy struct {
	Days        int64     `json:"days"`
	Price       app.Money `json:"price"`
	MaxPerMonth int64     `json:"max_per_month"`
}

// PlanPolicy is GET/PUT /admin/profiles/{id}/self-service: what the portal
// offers a subscriber on the plan.
type PlanPolicy struct {
	ProfileID     int64           `json:"profile_id"`
	ChangeTargets []int64         `json:"change_targets"` // plans a subscriber may change to
	Extension     ExtensionPolicy `json:"extension"`
	Boosts        []BoostOption   `json:"boosts"`
}

// PlanPolicyInput replaces a plan's policy whole.
type PlanPolicyInput struct {
	ChangeTargets []int64         `json:"change_targets"`
	Extension     ExtensionPolicy `json:"extension"`
	Boosts        []BoostOption   `json:"boosts"` // ids are ignored: the options are replaced
}

// MaxBoostOptions bounds a plan's boost options.
const MaxBoostOptions = 20

// MaxBoostMinutes bounds a boost's duration (31 days).
const MaxBoostMinutes = 31 * 24 * 60

func (in *PlanPolicyInput) validate(self int64) error {
	e := in.Extension
	if e.Days < 0 || e.Days > 366 {
		return app.ErrValidation("out_of_range", "extension.days")
	}
	if e.Price < 0 || !e.Price.InAmountRange() {
		return app.ErrValidation("invalid_price", "extension.price")
	}
	if e.MaxPerMonth < 0 || e.MaxPerMonth > 31 {
		return app.ErrValidation("out_of_range", "extension.max_per_month")
	}
	if len(in.Boosts) > MaxBoostOptions {
		return app.ErrValidation("out_of_range", "boosts")
	}
	for i := range in.Boosts {
		b := &in.Boosts[i]
		b.Name = strings.TrimSpace(b.Name)
		if len(b.Name) > 100 {
			return app.ErrValidation("too_long", "boosts.name").With("index", i)
		}
		if b.RateDownKbps <= 0 || b.RateUpKbps <= 0 || b.RateDownKbps > bandwidth.MaxRateKbps || b.RateUpKbps > bandwidth.MaxRateKbps {
			return app.ErrValidation("out_of_range", "boosts.rate_down_kbps").With("index", i)
		}
		if b.DurationMinutes <= 0 || b.DurationMinutes > MaxBoostMinutes {
			return app.ErrValidation("out_of_range", "boosts.duration_minutes").With("index", i)
		}
		if b.Price < 0 || !b.Price.InAmountRange() {
			return app.ErrValidation("invalid_price", "boosts.price").With("index", i)
		}
	}
	for _, id := range in.ChangeTargets {
		if id == self {
			return app.ErrValidation("profile_not_allowed", "change_targets").With("id", id)
		}
	}
	return nil
}

// GetPlanPolicy reads a plan's self-service policy (empty when staff set
// none: no changes, no extensions, no boosts).
func GetPlanPolicy(ctx context.Context, act *app.Actor, id int64) (*PlanPolicy, error) {
	if err := act.Require(subs.PermProfilesIndex, subs.PermProfilesManage); err != nil {
		return nil, err
	}
	var out *PlanPolicy
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		if err := planExists(ctx, tx, id); err != nil {
			return err
		}
		var err error
		out, err = readPolicy(ctx, tx, id)
		return err
	})
	return out, err
}

// SetPlanPolicy replaces a plan's self-service policy.
func SetPlanPolicy(ctx context.Context, act *app.Actor, id int64, in PlanPolicyInput) (*PlanPolicy, error) {
	if err := act.Require(subs.PermProfilesManage); err != nil {
		return nil, err
	}
	if err := in.validate(id); err != nil {
		return nil, err
	}
	var out *PlanPolicy
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if err := planExists(ctx, tx, id); err != nil {
			return err
		}
		if err := writePolicy(ctx, tx, id, in, act.Tenant.NowText()); err != nil {
			return err
		}
		var err error
		out, err = readPolicy(ctx, tx, id)
		return err
	})
	return out, err
}

func planExists(ctx context.Context, q app.Querier, id int64) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM profiles WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrNotFound()
	}
	return err
}

// readPolicy reads the policy of plan id (zero values when none).
func readPolicy(ctx context.Context, q app.Querier, id int64) (*PlanPolicy, error) {
	p := &PlanPolicy{ProfileID: id, ChangeTargets: []int64{}, Boosts: []BoostOption{}}
	var price int64
	err := q.QueryRowContext(ctx, `SELECT extension_days, extension_price, extension_max_per_month FROM ss_plan_policies WHERE profile_id = ?`, id).
		Scan(&p.Extension.Days, &price, &p.Extension.MaxPerMonth)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	p.Extension.Price = app.Money(price)
	ids, err := app.QueryIDs(ctx, q, `SELECT target_id FROM ss_plan_targets WHERE profile_id = ? ORDER BY target_id`, id)
	if err != nil {
		return nil, err
	}
	if ids != nil {
		p.ChangeTargets = ids
	}
	p.Boosts, err = boostOptions(ctx, q, id)
	return p, err
}

func boostOptions(ctx context.Context, q app.Querier, profileID int64) ([]BoostOption, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name, rate_down_kbps, rate_up_kbps, duration_minutes, price FROM ss_boost_options
		WHERE profile_id = ? ORDER BY position, id`, profileID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []BoostOption{}
	for rows.Next() {
		var b BoostOption
		var price int64
		if err := rows.Scan(&b.ID, &b.Name, &b.RateDownKbps, &b.RateUpKbps, &b.DurationMinutes, &price); err != nil {
			return nil, err
		}
		b.Price = app.Money(price)
		out = append(out, b)
	}
	return out, rows.Err()
}

func writePolicy(ctx context.Context, tx *sql.Tx, id int64, in PlanPolicyInput, now string) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO ss_plan_policies(profile_id, extension_days, extension_price, extension_max_per_month, updated_at)
		VALUES (?,?,?,?,?) ON CONFLICT(profile_id) DO UPDATE SET extension_days = excluded.extension_days,
		extension_price = excluded.extension_price, extension_max_per_month = excluded.extension_max_per_month, updated_at = excluded.updated_at`,
		id, in.Extension.Days, int64(in.Extension.Price), in.Extension.MaxPerMonth, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM ss_plan_targets WHERE profile_id = ?`, id); err != nil {
		return err
	}
	for _, t := range in.ChangeTargets {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO ss_plan_targets(profile_id, target_id) VALUES (?,?)`, id, t); err != nil {
			if db.IsForeignKey(err) {
				return app.ErrValidation("profile_not_found", "change_targets").With("id", t)
			}
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM ss_boost_options WHERE profile_id = ?`, id); err != nil {
		return err
	}
	for i, b := range in.Boosts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO ss_boost_options(profile_id, name, rate_down_kbps, rate_up_kbps, duration_minutes, price, position)
			VALUES (?,?,?,?,?,?,?)`, id, b.Name, b.RateDownKbps, b.RateUpKbps, b.DurationMinutes, int64(b.Price), i); err != nil {
			return err
		}
	}
	return nil
}
