// Package bandwidth is bandwidth control (/admin/tools/bandwidth*): rate
// overrides applied now for a target set (plan, group, NAS, subscribers),
// for a duration or until reverted, and weekly time-of-day windows ("night
// boost", "evening FUP") applied and reverted at their edges by the job
// runner through app schedules. A rule is a row of bandwidth_rules; the
// RADIUS index holds them (app/aaa/bandwidth.go) so a new session gets the
// rate in force at Access-Accept, and every online session of the target
// gets a CoA-Request with its new rate, recorded per session (ack, nak,
// timeout) in bandwidth_coa.
package bandwidth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/subs"
)

// Job kinds.
const (
	EdgeJob   = "bandwidth.edge"   // a window's start or end (scheduled)
	ExpireJob = "bandwidth.expire" // an override's end
	CoAJob    = "bandwidth.coa"    // the CoAs of a change too large to wait for
)

// SyncCoALimit is how many online sessions a request sends CoAs to itself;
// beyond it the CoAs run as a job (the answer says queued, with its id).
const SyncCoALimit = 200

// Module is bandwidth control's contribution to an instance.
var Module = app.Module{
	Name:        "bandwidth",
	Jobs:        map[string]app.JobHandler{EdgeJob: app.Scheduled(runEdge), ExpireJob: runExpire, CoAJob: runCoA},
	Permissions: permCatalogue,
}

// MaxRateKbps bounds a rate (100 Gbit/s).
const MaxRateKbps = 100_000_000

// Target is the set a rule applies to.
type Target struct {
	Kind string  `json:"kind"` // plan | group | nas | users
	IDs  []int64 `json:"ids"`
}

// Rule is an override or a window as the API shows it.
type Rule struct {
	ID           int64    `json:"id"`
	Kind         string   `json:"kind"`
	Name         string   `json:"name"`
	Target       Target   `json:"target"`
	RateDownKbps int64    `json:"rate_down_kbps"`
	RateUpKbps   int64    `json:"rate_up_kbps"`
	StartsAt     app.Time `json:"starts_at"`
	EndsAt       app.Time `json:"ends_at"`
	RevertedAt   app.Time `json:"reverted_at"`
	Weekdays     []string `json:"weekdays,omitempty"`
	Start        string   `json:"start,omitempty"`
	End          string   `json:"end,omitempty"`
	Enabled      bool     `json:"enabled"`
	Timezone     string   `json:"timezone,omitempty"`
	CreatedAt    app.Time `json:"created_at"`
}

const ruleCols = `id, kind, name, target_kind, target_ids, rate_down_kbps, rate_up_kbps, starts_at, ends_at, reverted_at, weekdays, start_minute, end_minute, enabled, created_at`

func scanRule(row interface{ Scan(...any) error }) (*Rule, error) {
	r := &Rule{}
	var ids string
	var mask, sm, em int
	if err := row.Scan(&r.ID, &r.Kind, &r.Name, &r.Target.Kind, &ids, &r.RateDownKbps, &r.RateUpKbps, &r.StartsAt, &r.EndsAt, &r.RevertedAt,
		&mask, &sm, &em, &r.Enabled, &r.CreatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(ids), &r.Target.IDs); err != nil {
		return nil, fmt.Errorf("bandwidth rule %d: %w", r.ID, err)
	}
	if r.Kind == "window" {
		for i, w := range app.Weekdays {
			if mask&(1<<i) != 0 {
				r.Weekdays = append(r.Weekdays, w)
			}
		}
		r.Start, r.End = fmt.Sprintf("%02d:%02d", sm/60, sm%60), fmt.Sprintf("%02d:%02d", em/60, em%60)
	}
	return r, nil
}

func getRule(ctx context.Context, q app.Querier, id int64, kind string) (*Rule, error) {
	r, err := scanRule(q.QueryRowContext(ctx, `SELECT `+ruleCols+` FROM bandwidth_rules WHERE id = ? AND kind = ?`, id, kind))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return r, err
}

// validateRates checks a rate pair.
func validateRates(down, up int64) error {
	if down <= 0 || down > MaxRateKbps {
		return app.ErrValidation("out_of_range", "rate_down_kbps")
	}
	if up <= 0 || up > MaxRateKbps {
		return app.ErrValidation("out_of_range", "rate_up_kbps")
	}
	return nil
}

// resolveTarget validates a target in tx and narrows it to the caller's
// subtree: a caller who sees a subtree only targets its own subscribers,
// so a plan or group is expanded to those subscribers, and a NAS (shared by
// every reseller) is refused.
func resolveTarget(ctx context.Context, tx *sql.Tx, act *app.Actor, tg Target) (Target, error) {
	table := map[string]string{"plan": "profiles", "group": "user_groups", "nas": "nas", "users": "users"}[tg.Kind]
	if table == "" {
		return tg, app.ErrValidation("invalid_enum", "target.kind").With("allowed", []string{"plan", "group", "nas", "users"})
	}
	if len(tg.IDs) == 0 {
		return tg, app.ErrValidation("ids_required", "target.ids")
	}
	if len(tg.IDs) > app.MaxBulkIDs {
		return tg, app.ErrValidation("too_many_ids", "target.ids")
	}
	seen := map[int64]bool{}
	ids := []int64{}
	for _, id := range tg.IDs {
		if id <= 0 {
			return tg, app.ErrValidation("invalid_id", "target.ids")
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
		if tg.Kind == "users" {
			// Missing and outside the subtree answer the same 404.
			if _, err := subs.LookupLive(ctx, tx, act, id); err != nil {
				if e := app.AsError(err); e != nil && e.Code == app.CodeNotFound {
					return tg, e.With("id", id)
				}
				return tg, err
			}
			continue
		}
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM `+table+` WHERE id = ?`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return tg, app.ErrNotFound().With("id", id)
		}
		if err != nil {
			return tg, err
		}
	}
	tg.IDs = ids
	if act.TenantWide || tg.Kind == "users" {
		return tg, nil
	}
	if tg.Kind == "nas" {
		return tg, app.ErrForbidden("bandwidth_nas_tenant_wide")
	}
	col := map[string]string{"plan": "u.profile_id", "group": "u.group_id"}[tg.Kind]
	scope, sargs := act.ScopeSQL("u.parent_id")
	in := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")
	args := append([]any{}, sargs...)
	for _, id := range ids {
		args = append(args, id)
	}
	users, err := app.QueryIDs(ctx, tx, `SELECT u.id FROM users u WHERE u.deleted_at IS NULL AND `+scope+` AND `+col+` IN (`+in+`) ORDER BY u.id`, args...)
	if err != nil {
		return tg, err
	}
	if len(users) == 0 {
		return tg, app.ErrValidation("bandwidth_target_empty", "target.ids")
	}
	return Target{Kind: "users", IDs: users}, nil
}

func idsJSON(ids []int64) string {
	b, _ := json.Marshal(ids) // []int64 always marshals
	return string(b)
}

// session is an online session a rate change reaches.
type session struct {
	rowID, userID, parentID, nasID int64
	sid, username                  string
	profileID, groupID             int64
	inFUP                          bool
}

// reconcile sends every online session of target (within the caller's
// scope, "" = all) its rate in force at now and records the outcomes.
func reconcile(ctx context.Context, t *app.Tenant, scope string, scopeArgs []any, target Target, ruleID int64, action string) (Outcomes, error) {
	return reconcileUpTo(ctx, t, scope, scopeArgs, target, ruleID, action, 0, 0)
}

// coaJob is the payload of a CoA job: the change and the caller's scope.
type coaJob struct {
	RuleID  int64  `json:"rule_id"`
	Action  string `json:"action"`
	Target  Target `json:"target"`
	Manager int64  `json:"manager_id"` // 0 = tenant-wide
}

// reconcileFor is reconcile within act's scope; with more than
// SyncCoALimit sessions it queues a CoA job instead of waiting.
func reconcileFor(ctx context.Context, act *app.Actor, target Target, ruleID int64, action string) (Outcomes, error) {
	scope, args := act.ScopeSQL("u.parent_id")
	manager := act.ManagerID
	if act.TenantWide {
		manager = 0
	}
	return reconcileUpTo(ctx, act.Tenant, scope, args, target, ruleID, action, SyncCoALimit, manager)
}

func runCoA(ctx context.Context, jc *app.JobContext) (any, error) {
	var p coaJob
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	act := &app.Actor{Tenant: jc.Tenant, ManagerID: p.Manager, TenantWide: p.Manager == 0}
	scope, args := act.ScopeSQL("u.parent_id")
	return reconcile(ctx, jc.Tenant, scope, args, p.Target, p.RuleID, p.Action)
}

// reconcileUpTo is reconcile; with limit > 0 and more sessions than
// limit, it queues the CoAs as a job (scope of manager) and says so.
func reconcileUpTo(ctx context.Context, t *app.Tenant, scope string, scopeArgs []any, target Target, ruleID int64, action string, limit int, manager int64) (Outcomes, error) {
	var out Outcomes
	if len(target.IDs) == 0 {
		return out, nil
	}
	now := t.Now()
	col := map[string]string{"plan": "u.profile_id", "group": "u.group_id", "nas": "s.nas_id", "users": "u.id"}[target.Kind]
	if scope == "" {
		scope = "1=1"
	}
	in := strings.TrimSuffix(strings.Repeat("?,", len(target.IDs)), ",")
	args := append([]any{}, scopeArgs...)
	for _, id := range target.IDs {
		args = append(args, id)
	}
	var sessions []session
	var rules []aaa.RateRule
	plans := map[int64][2]int64{}
	var loc *time.Location
	err := t.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT s.id, u.id, u.parent_id, s.nas_id, s.acct_session_id, s.username, COALESCE(u.profile_id, 0), COALESCE(u.group_id, 0),
			u.bytes_limit > 0 AND u.used_bytes >= u.bytes_limit
			FROM radius_sessions s JOIN users u ON u.id = s.user_id
			WHERE s.stop_time IS NULL AND `+scope+` AND `+col+` IN (`+in+`) ORDER BY s.id`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s session
			if err := rows.Scan(&s.rowID, &s.userID, &s.parentID, &s.nasID, &s.sid, &s.username, &s.profileID, &s.groupID, &s.inFUP); err != nil {
				return err
			}
			sessions = append(sessions, s)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if rules, err = aaa.LoadRateRules(ctx, tx); err != nil {
			return err
		}
		loc = app.TenantLocation(ctx, tx)
		prows, err := tx.QueryContext(ctx, `SELECT id, rate_down_kbps, rate_up_kbps FROM profiles`)
		if err != nil {
			return err
		}
		defer prows.Close()
		for prows.Next() {
			var id, d, u int64
			if err := prows.Scan(&id, &d, &u); err != nil {
				return err
			}
			plans[id] = [2]int64{d, u}
		}
		return prows.Err()
	})
	if err != nil {
		return out, err
	}
	if limit > 0 && len(sessions) > limit {
		var job int64
		err := t.Write(ctx, func(tx *sql.Tx) error {
			var err error
			job, err = app.EnqueueJob(ctx, tx, CoAJob, coaJob{RuleID: ruleID, Action: action, Target: target, Manager: manager}, t.Now(), manager, 3)
			return err
		})
		if err != nil {
			return out, err
		}
		return Outcomes{Sessions: len(sessions), Queued: true, JobID: &job}, nil
	}
	svc := aaa.ServiceOf(t.App)
	type result struct {
		s        session
		down, up int64
		outcome  string
		nasType  string
		skipped  bool
	}
	results := make([]result, len(sessions))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, s := range sessions {
		results[i].s = s
		if s.inFUP {
			results[i].skipped = true // the FUP rate stays until the quota resets
			continue
		}
		down, up := plans[s.profileID][0], plans[s.profileID][1]
		if r := aaa.PickRate(rules, s.profileID, s.groupID, s.nasID, s.userID, now, loc); r != nil {
			down, up = r.Down, r.Up
		}
		results[i].down, results[i].up = down, up
		if svc == nil {
			results[i].outcome = aaa.RateError
			continue
		}
		results[i].nasType = svc.NASType(t.Slug, s.nasID)
		wg.Add(1)
		go func(i int, s session) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i].outcome = svc.ChangeSessionRate(ctx, t.Slug, s.nasID, s.username, s.sid, results[i].down, results[i].up)
		}(i, s)
	}
	wg.Wait()
	stamp := t.NowText()
	err = t.Write(ctx, func(tx *sql.Tx) error {
		for _, r := range results {
			if r.skipped {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO bandwidth_coa(rule_id, action, session_id, user_id, parent_id, username, nas_id, nas_type, rate_down_kbps, rate_up_kbps, outcome, created_at)
				VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`, nullID(ruleID), action, r.s.rowID, r.s.userID, r.s.parentID, r.s.username, r.s.nasID, r.nasType, r.down, r.up, r.outcome, stamp); err != nil {
				return err
			}
			out.add(r.outcome)
		}
		return nil
	})
	return out, err
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// Outcomes counts the CoA answers of one rate change.
type Outcomes struct {
	Sessions int    `json:"sessions"`
	Queued   bool   `json:"queued"` // sent by a job (JobID): too many to wait for
	JobID    *int64 `json:"job_id"`
	ACK      int    `json:"ack"`
	NAK      int    `json:"nak"`
	Timeout  int    `json:"timeout"`
	Error    int    `json:"error"`
}

func (o *Outcomes) add(outcome string) {
	o.Sessions++
	switch outcome {
	case aaa.RateACK:
		o.ACK++
	case aaa.RateNAK:
		o.NAK++
	case aaa.RateTimeout:
		o.Timeout++
	default:
		o.Error++
	}
}

// ApplyInput is the body of POST /admin/tools/bandwidth/apply: a new
// override, or the revert of one (revert_id).
type ApplyInput struct {
	Name            string `json:"name"`
	Target          Target `json:"target"`
	RateDownKbps    int64  `json:"rate_down_kbps"`
	RateUpKbps      int64  `json:"rate_up_kbps"`
	DurationMinutes int    `json:"duration_minutes"` // 0 = until reverted
	RevertID        int64  `json:"revert_id"`
}

// ApplyResult is the override and what its CoAs answered.
type ApplyResult struct {
	Rule *Rule    `json:"rule"`
	CoA  Outcomes `json:"coa"`
}

// Apply changes the rate of a target set now (or reverts an override).
func Apply(ctx context.Context, act *app.Actor, in ApplyInput) (*ApplyResult, error) {
	if err := act.Require(PermToolsBandwidthControl); err != nil {
		return nil, err
	}
	if in.RevertID != 0 {
		return revert(ctx, act, in.RevertID)
	}
	if err := validateRates(in.RateDownKbps, in.RateUpKbps); err != nil {
		return nil, err
	}
	if in.DurationMinutes < 0 || in.DurationMinutes > 366*24*60 {
		return nil, app.ErrValidation("out_of_range", "duration_minutes")
	}
	if len(in.Name) > 100 {
		return nil, app.ErrValidation("invalid_name", "name")
	}
	t := act.Tenant
	now := t.Now()
	var rule *Rule
	err := t.Write(ctx, func(tx *sql.Tx) error {
		tg, err := resolveTarget(ctx, tx, act, in.Target)
		if err != nil {
			return err
		}
		var ends any
		if in.DurationMinutes > 0 {
			ends = app.FormatTime(now.Add(time.Duration(in.DurationMinutes) * time.Minute))
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO bandwidth_rules(kind, name, target_kind, target_ids, rate_down_kbps, rate_up_kbps, starts_at, ends_at, created_by, created_at, updated_at)
			VALUES ('override',?,?,?,?,?,?,?,?,?,?)`, in.Name, tg.Kind, idsJSON(tg.IDs), in.RateDownKbps, in.RateUpKbps, app.FormatTime(now), ends, nullID(act.ManagerID), app.FormatTime(now), app.FormatTime(now))
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if in.DurationMinutes > 0 {
			end := now.Add(time.Duration(in.DurationMinutes) * time.Minute)
			if _, err := app.EnqueueJob(ctx, tx, ExpireJob, map[string]int64{"rule_id": id}, end, act.ManagerID, 3); err != nil {
				return err
			}
		}
		rule, err = getRule(ctx, tx, id, "override")
		return err
	})
	if err != nil {
		return nil, err
	}
	out, err := reconcileFor(ctx, act, rule.Target, rule.ID, "apply")
	if err != nil {
		return nil, err
	}
	return &ApplyResult{Rule: rule, CoA: out}, nil
}

// revert ends an override now and sends its sessions their rate again.
func revert(ctx context.Context, act *app.Actor, id int64) (*ApplyResult, error) {
	t := act.Tenant
	var rule *Rule
	err := t.Write(ctx, func(tx *sql.Tx) error {
		r, err := getRule(ctx, tx, id, "override")
		if err != nil {
			return err
		}
		if err := ownRule(ctx, tx, act, r); err != nil {
			return err
		}
		if !r.RevertedAt.IsZero() {
			return app.ErrConflict("bandwidth_already_reverted")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE bandwidth_rules SET reverted_at = ?, updated_at = ? WHERE id = ?`, t.NowText(), t.NowText(), id); err != nil {
			return err
		}
		rule, err = getRule(ctx, tx, id, "override")
		return err
	})
	if err != nil {
		return nil, err
	}
	out, err := reconcileFor(ctx, act, rule.Target, rule.ID, "revert")
	if err != nil {
		return nil, err
	}
	return &ApplyResult{Rule: rule, CoA: out}, nil
}

// ownRule answers 404 for a rule a scoped caller did not make within its
// subtree (a scoped caller's rules always target its own subscribers).
func ownRule(ctx context.Context, tx *sql.Tx, act *app.Actor, r *Rule) error {
	if act.TenantWide {
		return nil
	}
	if r.Target.Kind != "users" {
		return app.ErrNotFound()
	}
	for _, uid := range r.Target.IDs {
		u, err := subs.Read(ctx, tx, uid)
		if e := app.AsError(err); e != nil && e.Code == app.CodeNotFound {
			continue // gone since: nothing to hide
		}
		if err != nil {
			return err
		}
		if ok, err := act.InScope(ctx, tx, u.ParentID); err != nil || !ok {
			if err != nil {
				return err
			}
			return app.ErrNotFound()
		}
	}
	return nil
}

// runExpire sends the sessions of an override that ran out their rate.
func runExpire(ctx context.Context, jc *app.JobContext) (any, error) {
	var p struct {
		RuleID int64 `json:"rule_id"`
	}
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	r, err := getRule(ctx, t.DB.R, p.RuleID, "override")
	if app.AsError(err) != nil {
		return map[string]string{"skipped": "gone"}, nil
	}
	if err != nil {
		return nil, err
	}
	if !r.RevertedAt.IsZero() {
		return map[string]string{"skipped": "reverted"}, nil
	}
	if !r.EndsAt.IsZero() && t.Now().Before(r.EndsAt.Time) {
		return nil, &app.RetryLater{At: r.EndsAt.Time}
	}
	return reconcile(ctx, t, "", nil, r.Target, r.ID, "expire")
}
