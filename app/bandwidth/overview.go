package bandwidth

import (
	"context"
	"database/sql"
	"time"

	"xr/app"
	"xr/app/aaa"
)

// PlanRate is a plan's rate and the rate in force for it at a moment.
type PlanRate struct {
	ID                    int64  `json:"id"`
	Name                  string `json:"name"`
	RateDownKbps          int64  `json:"rate_down_kbps"`
	RateUpKbps            int64  `json:"rate_up_kbps"`
	EffectiveRateDownKbps int64  `json:"effective_rate_down_kbps"`
	EffectiveRateUpKbps   int64  `json:"effective_rate_up_kbps"`
	RuleID                *int64 `json:"rule_id"`
}

// Overview is GET /admin/tools/bandwidth: the rate of every plan at a
// moment (now, or ?at=) and the rules in force then.
type Overview struct {
	At       app.Time   `json:"at"`
	Timezone string     `json:"timezone"`
	Plans    []PlanRate `json:"plans"`
	InForce  []*Rule    `json:"in_force"`
}

// GetOverview answers the effective rates at `at` ("" = now).
func GetOverview(ctx context.Context, act *app.Actor, at string) (*Overview, error) {
	if err := act.Require(PermToolsBandwidthControl); err != nil {
		return nil, err
	}
	t := act.Tenant
	when := t.Now()
	if at != "" {
		v, err := app.ParseTime(at, false)
		if err != nil {
			if v2, err2 := time.Parse(time.RFC3339, at); err2 == nil {
				v, err = v2.UTC(), nil
			}
		}
		if err != nil {
			return nil, app.ErrValidation("invalid_value", "at")
		}
		when = v
	}
	out := &Overview{At: app.Time{Time: when}, Plans: []PlanRate{}, InForce: []*Rule{}}
	var rules []aaa.RateRule
	var loc *time.Location
	err := t.Read(ctx, func(tx *sql.Tx) error {
		var err error
		if rules, err = aaa.LoadRateRules(ctx, tx); err != nil {
			return err
		}
		loc = app.TenantLocation(ctx, tx)
		out.Timezone = app.SettingTimezone.GetOr(ctx, tx)
		rows, err := tx.QueryContext(ctx, `SELECT id, name, rate_down_kbps, rate_up_kbps FROM profiles ORDER BY name, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p PlanRate
			if err := rows.Scan(&p.ID, &p.Name, &p.RateDownKbps, &p.RateUpKbps); err != nil {
				return err
			}
			p.EffectiveRateDownKbps, p.EffectiveRateUpKbps = p.RateDownKbps, p.RateUpKbps
			// The plan-wide rule in force (narrower rules show in in_force).
			var planRules []aaa.RateRule
			for _, r := range rules {
				if r.TargetKind == "plan" {
					planRules = append(planRules, r)
				}
			}
			if r := aaa.PickRate(planRules, p.ID, 0, 0, 0, when, loc); r != nil {
				id := r.ID
				p.EffectiveRateDownKbps, p.EffectiveRateUpKbps, p.RuleID = r.Down, r.Up, &id
			}
			out.Plans = append(out.Plans, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	inForce := map[int64]bool{}
	for i := range rules {
		if rules[i].InForce(when, loc) {
			inForce[rules[i].ID] = true
		}
	}
	all, err := listRules(ctx, act, `reverted_at IS NULL AND enabled = 1`)
	if err != nil {
		return nil, err
	}
	for _, r := range all {
		if inForce[r.ID] {
			out.InForce = append(out.InForce, r)
		}
	}
	return out, nil
}

// CoARecord is one row of GET /admin/tools/bandwidth/history.
type CoARecord struct {
	ID           int64    `json:"id"`
	RuleID       *int64   `json:"rule_id"`
	Action       string   `json:"action"`
	SessionID    *int64   `json:"session_id"`
	UserID       *int64   `json:"user_id"`
	Username     string   `json:"username"`
	NASID        *int64   `json:"nas_id"`
	NASType      string   `json:"nas_type"`
	RateDownKbps int64    `json:"rate_down_kbps"`
	RateUpKbps   int64    `json:"rate_up_kbps"`
	Outcome      string   `json:"outcome"`
	CreatedAt    app.Time `json:"created_at"`
}

// HistorySpec is the list spec of the history.
var HistorySpec = app.ListSpec{DefaultSort: "id", Sorts: map[string]string{"id": "c.id", "created_at": "c.created_at"},
	Filters: map[string]app.FilterKind{"rule_id": app.FilterInt, "outcome": app.FilterString, "action": app.FilterString}}

// History lists the CoAs of rate changes, newest first, within the
// caller's subtree.
func History(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[CoARecord], error) {
	if err := act.Require(PermToolsBandwidthControl); err != nil {
		return app.Page[CoARecord]{}, err
	}
	scope, args := act.ScopeSQL("c.parent_id")
	where := scope
	if v, ok := q.Filters["rule_id"]; ok {
		where += ` AND c.rule_id = ?`
		args = append(args, v)
	}
	if v, ok := q.Filters["outcome"]; ok {
		where += ` AND c.outcome = ?`
		args = append(args, v)
	}
	if v, ok := q.Filters["action"]; ok {
		where += ` AND c.action = ?`
		args = append(args, v)
	}
	return app.QueryPage(ctx, act.Tenant, q, `c.id, c.rule_id, c.action, c.session_id, c.user_id, c.username, c.nas_id, c.nas_type, c.rate_down_kbps, c.rate_up_kbps, c.outcome, c.created_at`,
		`FROM bandwidth_coa c WHERE `+where, args, "c.id", func(rows *sql.Rows) (CoARecord, error) {
			var r CoARecord
			err := rows.Scan(&r.ID, &r.RuleID, &r.Action, &r.SessionID, &r.UserID, &r.Username, &r.NASID, &r.NASType, &r.RateDownKbps, &r.RateUpKbps, &r.Outcome, &r.CreatedAt)
			return r, err
		})
}
