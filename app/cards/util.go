package cards

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"xr/app"
)

func jsonText(v any) string {
	if v == nil {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// parseExpiration reads an expiration of a request: yyyy-MM-dd HH:mm:ss,
// or yyyy-MM-dd meaning the end of that day (UTC). Malformed or not in the
// future → 400 invalid_expiration.
func parseExpiration(s string, now time.Time) (app.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return app.Time{}, app.ErrValidation("expiration_required", "expiration")
	}
	t, err := app.ParseTime(s, false)
	if err != nil {
		d, derr := app.ParseTime(s, true)
		if derr != nil {
			return app.Time{}, app.ErrValidation("invalid_expiration", "expiration")
		}
		t = d.Add(24*time.Hour - time.Second)
	}
	if !t.After(now) {
		return app.Time{}, app.ErrValidation("invalid_expiration", "expiration").With("reason_detail", "in_the_past")
	}
	return app.T(t), nil
}

// isRoot reports whether managerID is the tenant owner (the house).
func isRoot(ctx context.Context, q app.Querier, managerID int64) (bool, error) {
	var parent sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT parent_id FROM managers WHERE id = ?`, managerID).Scan(&parent)
	if errors.Is(err, sql.ErrNoRows) {
		return false, app.ErrNotFound()
	}
	return err == nil && !parent.Valid, err
}

// requireManagerInScope answers 400 invalid_<field> for a manager missing
// or outside the actor's subtree (both the same answer).
func requireManagerInScope(ctx context.Context, q app.Querier, act *app.Actor, id int64, field string) error {
	if id <= 0 {
		return app.ErrValidation("invalid_"+field, field)
	}
	ok, err := act.InScope(ctx, q, id)
	if err != nil {
		return err
	}
	if !ok {
		return app.ErrValidation("invalid_"+field, field)
	}
	return nil
}

// plan is what cards read of a plan (profiles are the subscribers area's).
type plan struct {
	ID              int64
	Name            string
	Price           int64
	DurationDays    int64
	BytesLimit      int64
	SecondsLimit    int64
	RateDown        int64
	RateUp          int64
	SimultaneousUse int64
	Enabled         bool
}

func readPlan(ctx context.Context, q app.Querier, id int64) (*plan, error) {
	p := &plan{}
	err := q.QueryRowContext(ctx, `SELECT id, name, price, duration_days, bytes_limit, seconds_limit, rate_down_kbps, rate_up_kbps,
		simultaneous_use, enabled FROM profiles WHERE id = ?`, id).Scan(&p.ID, &p.Name, &p.Price, &p.DurationDays, &p.BytesLimit,
		&p.SecondsLimit, &p.RateDown, &p.RateUp, &p.SimultaneousUse, &p.Enabled)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return p, err
}

// requirePlanAssignable answers 400 plan_not_assignable for a plan that is
// missing, disabled or not granted to the actor (the rule of the
// subscribers area: plans open to all managers or granted to the caller or
// one of its ancestors; every enabled plan for tenant-wide callers).
func requirePlanAssignable(ctx context.Context, q app.Querier, act *app.Actor, id int64) error {
	cond, args := "p.enabled = 1", []any{}
	if !act.TenantWide {
		cond = `p.enabled = 1 AND (p.all_managers = 1 OR EXISTS (SELECT 1 FROM profile_managers pm JOIN manager_tree mt ON mt.ancestor_id = pm.manager_id
			WHERE pm.profile_id = p.id AND mt.descendant_id = ?))`
		args = append(args, act.ManagerID)
	}
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM profiles p WHERE p.id = ? AND `+cond, append([]any{id}, args...)...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrValidation("plan_not_assignable", "plan_profile_id")
	}
	return err
}

// liveCodes is the tenant's live code pool: unused cards of every series
// plus the cards series still being generated will add.
func liveCodes(ctx context.Context, q app.Querier) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT COALESCE(SUM(unused + CASE WHEN status = 'generating' THEN quantity - processed ELSE 0 END), 0) FROM card_batches`).Scan(&n)
	return n, err
}

// bumpContent marks what a printed sheet shows as changed (the stored PDF
// is then stale: pdf_ready false).
func bumpContent(ctx context.Context, tx *sql.Tx, batchID int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE card_batches SET content_version = content_version + 1, updated_at = ? WHERE id = ?`, app.StampNow(), batchID)
	return err
}
