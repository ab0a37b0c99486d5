package bandwidth

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"xr/app"
	"xr/app/aaa"
)

// WindowInput is the body of POST /admin/tools/bandwidth/schedules: a
// weekly window in the tenant time zone (end <= start crosses midnight).
type WindowInput struct {
	Name         string   `json:"name"`
	Target       Target   `json:"target"`
	RateDownKbps int64    `json:"rate_down_kbps"`
	RateUpKbps   int64    `json:"rate_up_kbps"`
	Weekdays     []string `json:"weekdays"` // empty = every day
	Start        string   `json:"start"`    // HH:MM
	End          string   `json:"end"`      // HH:MM
	Enabled      *bool    `json:"enabled"`
}

// WindowPatch is the body of PATCH .../schedules/{id}.
type WindowPatch struct {
	Name         app.Opt[string]   `json:"name"`
	RateDownKbps app.Opt[int64]    `json:"rate_down_kbps"`
	RateUpKbps   app.Opt[int64]    `json:"rate_up_kbps"`
	Weekdays     app.Opt[[]string] `json:"weekdays"`
	Start        app.Opt[string]   `json:"start"`
	End          app.Opt[string]   `json:"end"`
	Enabled      app.Opt[bool]     `json:"enabled"`
}

type window struct {
	mask, start, end int
}

func parseWindow(days []string, start, end string) (window, error) {
	var w window
	var err error
	if w.start, err = app.ParseTimeOfDay(start, "start"); err != nil {
		return w, err
	}
	if w.end, err = app.ParseTimeOfDay(end, "end"); err != nil {
		return w, err
	}
	for _, d := range days {
		i := -1
		for k, name := range app.Weekdays {
			if strings.EqualFold(d, name) {
				i = k
			}
		}
		if i < 0 {
			return w, app.ErrValidation("invalid_weekday", "weekdays").With("value", d)
		}
		w.mask |= 1 << i
	}
	if w.mask == 0 {
		w.mask = 127
	}
	return w, nil
}

// minutes marks the minutes of the week the window covers.
func (w window) minutes() []bool {
	week := make([]bool, 7*1440)
	length := w.end - w.start
	if length <= 0 {
		length += 1440
	}
	for d := 0; d < 7; d++ {
		if w.mask&(1<<d) == 0 {
			continue
		}
		for m := 0; m < length; m++ {
			week[(d*1440+w.start+m)%len(week)] = true
		}
	}
	return week
}

// overlap finds an enabled window over the same targets whose minutes meet
// w's (409 bandwidth_schedule_overlap naming it).
func overlap(ctx context.Context, tx *sql.Tx, self int64, tg Target, w window) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, target_kind, target_ids, weekdays, start_minute, end_minute FROM bandwidth_rules
		WHERE kind = 'window' AND enabled = 1 AND id != ?`, self)
	if err != nil {
		return err
	}
	defer rows.Close()
	mine := w.minutes()
	ids := map[int64]bool{}
	for _, id := range tg.IDs {
		ids[id] = true
	}
	for rows.Next() {
		var id int64
		var kind, list string
		var o window
		if err := rows.Scan(&id, &kind, &list, &o.mask, &o.start, &o.end); err != nil {
			return err
		}
		if kind != tg.Kind {
			continue
		}
		var other []int64
		if err := json.Unmarshal([]byte(list), &other); err != nil {
			return fmt.Errorf("bandwidth rule %d: %w", id, err)
		}
		shared := false
		for _, x := range other {
			shared = shared || ids[x]
		}
		if !shared {
			continue
		}
		theirs := o.minutes()
		for m := range mine {
			if mine[m] && theirs[m] {
				return app.ErrConflict("bandwidth_schedule_overlap").With("schedule_id", id)
			}
		}
	}
	return rows.Err()
}

func edgeKeys(id int64) (string, string) {
	return fmt.Sprintf("bandwidth.%d.start", id), fmt.Sprintf("bandwidth.%d.end", id)
}

// armEdges sets the two app schedules of a window: its start on its
// weekdays, its end on the day it ends (the next one when it crosses
// midnight).
func armEdges(ctx context.Context, tx *sql.Tx, id int64, w window, enabled bool, now time.Time) error {
	startKey, endKey := edgeKeys(id)
	endMask := w.mask
	if w.end <= w.start {
		endMask = ((w.mask << 1) | (w.mask >> 6)) & 127
	}
	for _, e := range []struct {
		key, edge string
		mask, min int
	}{{startKey, "start", w.mask, w.start}, {endKey, "end", endMask, w.end}} {
		var days []string
		for i, d := range app.Weekdays {
			if e.mask&(1<<i) != 0 {
				days = append(days, d)
			}
		}
		if _, err := app.SetSchedule(ctx, tx, app.ScheduleSpec{Key: e.key, Kind: EdgeJob, Frequency: "weekly", Weekdays: days,
			Time: fmt.Sprintf("%02d:%02d", e.min/60, e.min%60), Enabled: enabled, Payload: map[string]any{"rule_id": id, "edge": e.edge}}, now); err != nil {
			return err
		}
	}
	return nil
}

// ListSchedules answers every window.
func ListSchedules(ctx context.Context, act *app.Actor) ([]*Rule, error) {
	if err := act.Require(PermToolsBandwidthControl); err != nil {
		return nil, err
	}
	return listRules(ctx, act, `kind = 'window'`)
}

func listRules(ctx context.Context, act *app.Actor, cond string) ([]*Rule, error) {
	t := act.Tenant
	out := []*Rule{}
	err := t.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+ruleCols+` FROM bandwidth_rules WHERE `+cond+` ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		var all []*Rule
		for rows.Next() {
			r, err := scanRule(rows)
			if err != nil {
				return err
			}
			all = append(all, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		tz := app.SettingTimezone.GetOr(ctx, tx)
		for _, r := range all {
			if err := ownRule(ctx, tx, act, r); err != nil {
				continue
			}
			if r.Kind == "window" {
				r.Timezone = tz
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// CreateSchedule stores a window and arms its edges.
func CreateSchedule(ctx context.Context, act *app.Actor, in WindowInput) (*Rule, error) {
	if err := act.Require(PermToolsBandwidthControl); err != nil {
		return nil, err
	}
	if err := validateRates(in.RateDownKbps, in.RateUpKbps); err != nil {
		return nil, err
	}
	if len(in.Name) > 100 {
		return nil, app.ErrValidation("invalid_name", "name")
	}
	w, err := parseWindow(in.Weekdays, in.Start, in.End)
	if err != nil {
		return nil, err
	}
	enabled := in.Enabled == nil || *in.Enabled
	t := act.Tenant
	now := t.Now()
	var rule *Rule
	err = t.Write(ctx, func(tx *sql.Tx) error {
		tg, err := resolveTarget(ctx, tx, act, in.Target)
		if err != nil {
			return err
		}
		if enabled {
			if err := overlap(ctx, tx, 0, tg, w); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO bandwidth_rules(kind, name, target_kind, target_ids, rate_down_kbps, rate_up_kbps, weekdays, start_minute, end_minute, enabled, created_by, created_at, updated_at)
			VALUES ('window',?,?,?,?,?,?,?,?,?,?,?,?)`, in.Name, tg.Kind, idsJSON(tg.IDs), in.RateDownKbps, in.RateUpKbps, w.mask, w.start, w.end, enabled,
			nullID(act.ManagerID), app.FormatTime(now), app.FormatTime(now))
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if err := armEdges(ctx, tx, id, w, enabled, now); err != nil {
			return err
		}
		rule, err = getRule(ctx, tx, id, "window")
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := reconcileIfInForce(ctx, act, rule, now, "window_start"); err != nil {
		return nil, err
	}
	return rule, nil
}

// reconcileIfInForce sends the window's sessions their rate when a change
// takes effect inside the window (created, edited or deleted while open).
func reconcileIfInForce(ctx context.Context, act *app.Actor, r *Rule, now time.Time, action string) error {
	w, err := parseWindow(r.Weekdays, r.Start, r.End)
	if err != nil {
		return err
	}
	rr := aaa.RateRule{Kind: "window", Weekdays: w.mask, StartMin: w.start, EndMin: w.end}
	loc := app.TenantLocation(ctx, act.Tenant.DB.R)
	if !rr.InForce(now, loc) {
		return nil
	}
	_, err = reconcileFor(ctx, act, r.Target, r.ID, action)
	return err
}

// PatchSchedule changes a window (its target stays: delete and create).
func PatchSchedule(ctx context.Context, act *app.Actor, id int64, in WindowPatch) (*Rule, error) {
	if err := act.Require(PermToolsBandwidthControl); err != nil {
		return nil, err
	}
	t := act.Tenant
	now := t.Now()
	var before, rule *Rule
	err := t.Write(ctx, func(tx *sql.Tx) error {
		r, err := getRule(ctx, tx, id, "window")
		if err != nil {
			return err
		}
		if err := ownRule(ctx, tx, act, r); err != nil {
			return err
		}
		before = r
		name, down, up, days, start, end, enabled := r.Name, r.RateDownKbps, r.RateUpKbps, r.Weekdays, r.Start, r.End, r.Enabled
		if in.Name.Set {
			name = in.Name.V
		}
		if in.RateDownKbps.Set {
			down = in.RateDownKbps.V
		}
		if in.RateUpKbps.Set {
			up = in.RateUpKbps.V
		}
		if in.Weekdays.Set {
			days = in.Weekdays.V
		}
		if in.Start.Set {
			start = in.Start.V
		}
		if in.End.Set {
			end = in.End.V
		}
		if in.Enabled.Set {
			enabled = in.Enabled.V
		}
		if len(name) > 100 {
			return app.ErrValidation("invalid_name", "name")
		}
		if err := validateRates(down, up); err != nil {
			return err
		}
		w, err := parseWindow(days, start, end)
		if err != nil {
			return err
		}
		if enabled {
			if err := overlap(ctx, tx, id, r.Target, w); err != nil {
				return err
			}
		}
		var p app.Patch
		app.SetOptOrZero(&p, "name", in.Name, func(s string) any { return s })
		if in.RateDownKbps.Set {
			p.Set("rate_down_kbps", down)
		}
		if in.RateUpKbps.Set {
			p.Set("rate_up_kbps", up)
		}
		if in.Weekdays.Set {
			p.Set("weekdays", w.mask)
		}
		if in.Start.Set {
			p.Set("start_minute", w.start)
		}
		if in.End.Set {
			p.Set("end_minute", w.end)
		}
		if in.Enabled.Set {
			p.Set("enabled", enabled)
		}
		if _, err := p.Exec(ctx, tx, "bandwidth_rules", id, app.FormatTime(now)); err != nil {
			return err
		}
		if err := armEdges(ctx, tx, id, w, enabled, now); err != nil {
			return err
		}
		rule, err = getRule(ctx, tx, id, "window")
		return err
	})
	if err != nil {
		return nil, err
	}
	// Open before or after the change: its sessions get their new rate.
	if err := reconcileIfInForce(ctx, act, before, now, "window_end"); err != nil {
		return nil, err
	}
	if err := reconcileIfInForce(ctx, act, rule, now, "window_start"); err != nil {
		return nil, err
	}
	return rule, nil
}

// DeleteSchedule removes a window and its edges.
func DeleteSchedule(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermToolsBandwidthControl); err != nil {
		return err
	}
	t := act.Tenant
	now := t.Now()
	var rule *Rule
	err := t.Write(ctx, func(tx *sql.Tx) error {
		r, err := getRule(ctx, tx, id, "window")
		if err != nil {
			return err
		}
		if err := ownRule(ctx, tx, act, r); err != nil {
			return err
		}
		rule = r
		startKey, endKey := edgeKeys(id)
		if err := app.DeleteSchedules(ctx, tx, now, "schedule deleted", startKey, endKey); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM bandwidth_rules WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return err
	}
	if rule.Enabled {
		return reconcileIfInForce(ctx, act, rule, now, "window_end")
	}
	return nil
}

// runEdge is a window's start or end: every online session of its target
// gets the rate in force now (the window's or, after it, the plan's).
func runEdge(ctx context.Context, jc *app.JobContext) (any, error) {
	var p struct {
		RuleID int64  `json:"rule_id"`
		Edge   string `json:"edge"`
	}
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	r, err := getRule(ctx, t.DB.R, p.RuleID, "window")
	if app.AsError(err) != nil {
		return map[string]string{"skipped": "gone"}, nil // deleted since
	}
	if err != nil {
		return nil, err
	}
	return reconcile(ctx, t, "", nil, r.Target, r.ID, "window_"+p.Edge)
}
