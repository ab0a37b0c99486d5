package aaa

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"xr/app"
)

// RateRule is a bandwidth rule (table bandwidth_rules, app/bandwidth) as
// the authorizer holds it: a rate for a target set, in force for a period
// (an override) or on a weekly time-of-day window. The index keeps the
// tenant's rules in memory, so Access-Accept applies the one in force
// without a query per packet.
type RateRule struct {
	ID         int64
	Kind       string // override | window
	TargetKind string // plan | group | nas | users
	Targets    map[int64]bool
	Down, Up   int64
	StartsAt   time.Time // override
	EndsAt     time.Time // override; zero = until reverted
	Weekdays   int       // window: bit d = time.Weekday d
	StartMin   int
	EndMin     int
}

// InForce reports whether the rule applies at now (windows in loc).
func (r *RateRule) InForce(now time.Time, loc *time.Location) bool {
	if r.Kind == "override" {
		return !now.Before(r.StartsAt) && (r.EndsAt.IsZero() || now.Before(r.EndsAt))
	}
	l := now.In(loc)
	m := l.Hour()*60 + l.Minute()
	day := int(l.Weekday())
	prev := (day + 6) % 7
	if r.StartMin < r.EndMin {
		return r.Weekdays&(1<<day) != 0 && m >= r.StartMin && m < r.EndMin
	}
	// Crosses midnight (or a whole day when start == end).
	return (r.Weekdays&(1<<day) != 0 && m >= r.StartMin) || (r.Weekdays&(1<<prev) != 0 && m < r.EndMin)
}

// Matches reports whether the rule targets a subscriber.
func (r *RateRule) Matches(planID, groupID, nasID, userID int64) bool {
	switch r.TargetKind {
	case "plan":
		return r.Targets[planID]
	case "group":
		return groupID != 0 && r.Targets[groupID]
	case "nas":
		return r.Targets[nasID]
	case "users":
		return r.Targets[userID]
	}
	return false
}

var targetRank = map[string]int{"plan": 1, "group": 2, "nas": 3, "users": 4}

// PickRate is the rule in force for a subscriber at now, or nil: an
// override beats a window, a narrower target beats a wider one (users >
// NAS > group > plan), and the newer rule beats the older.
func PickRate(rules []RateRule, planID, groupID, nasID, userID int64, now time.Time, loc *time.Location) *RateRule {
	var best *RateRule
	for i := range rules {
		r := &rules[i]
		if !r.Matches(planID, groupID, nasID, userID) || !r.InForce(now, loc) {
			continue
		}
		if best == nil || better(r, best) {
			best = r
		}
	}
	return best
}

func better(a, b *RateRule) bool {
	if (a.Kind == "override") != (b.Kind == "override") {
		return a.Kind == "override"
	}
	if targetRank[a.TargetKind] != targetRank[b.TargetKind] {
		return targetRank[a.TargetKind] > targetRank[b.TargetKind]
	}
	return a.ID > b.ID
}

// LoadRateRules reads the rules that can be in force (not reverted, enabled).
func LoadRateRules(ctx context.Context, q app.Querier) ([]RateRule, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, kind, target_kind, target_ids, rate_down_kbps, rate_up_kbps, COALESCE(starts_at, ''), COALESCE(ends_at, ''),
		weekdays, start_minute, end_minute FROM bandwidth_rules WHERE reverted_at IS NULL AND enabled = 1 ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RateRule
	for rows.Next() {
		var r RateRule
		var ids, starts, ends string
		if err := rows.Scan(&r.ID, &r.Kind, &r.TargetKind, &ids, &r.Down, &r.Up, &starts, &ends, &r.Weekdays, &r.StartMin, &r.EndMin); err != nil {
			return nil, err
		}
		var list []int64
		if err := json.Unmarshal([]byte(ids), &list); err != nil {
			return nil, fmt.Errorf("bandwidth rule %d target_ids: %w", r.ID, err)
		}
		r.Targets = make(map[int64]bool, len(list))
		for _, id := range list {
			r.Targets[id] = true
		}
		if starts != "" {
			if r.StartsAt, err = app.ParseTime(starts, false); err != nil {
				return nil, fmt.Errorf("bandwidth rule %d starts_at: %w", r.ID, err)
			}
		}
		if ends != "" {
			if r.EndsAt, err = app.ParseTime(ends, false); err != nil {
				return nil, fmt.Errorf("bandwidth rule %d ends_at: %w", r.ID, err)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// loadRules refreshes the index's rules and time zone (under ti.mu).
func (ti *tenantIndex) loadRules(ctx context.Context, q app.Querier) error {
	rules, err := LoadRateRules(ctx, q)
	if err != nil {
		return err
	}
	ti.rules, ti.loc = rules, app.TenantLocation(ctx, q)
	return nil
}

// overrideRate applies the bandwidth rule in force to an accepted answer
// (not to an expired pool or a FUP rate, which stay as decided).
func (ti *tenantIndex) overrideRate(a *Answer, r *record, nasID int64, now time.Time) {
	if a.Refusal != "" || a.FramedPool != "" || len(ti.rules) == 0 {
		return
	}
	if r.bytesLimit > 0 && r.usedBytes >= r.bytesLimit {
		return
	}
	if rule := PickRate(ti.rules, r.profileID, r.groupID, nasID, r.id, now, ti.loc); rule != nil {
		a.RateDownKbps, a.RateUpKbps = rule.Down, rule.Up
	}
}

type serviceKey struct{}

// ServiceOf is the RADIUS service attached to a (nil in a process that
// serves no RADIUS, e.g. the command line).
func ServiceOf(a *app.App) *Service {
	s, _ := a.Value(serviceKey{}).(*Service)
	return s
}

// CoA outcomes of a rate change as bandwidth control records them.
const (
	RateACK     = "ack"
	RateNAK     = "nak"
	RateTimeout = "timeout"
	RateError   = "error"
)

// ChangeSessionRate sends a CoA-Request with a new rate to the NAS of an
// open session (the NAS-specific attribute is the wire layer's, the same
// as Access-Accept's) and answers ack, nak, timeout or error.
func (s *Service) ChangeSessionRate(ctx context.Context, slug string, nasID int64, username, acctSessionID string, down, up int64) string {
	if s.ChangeRate == nil {
		return RateError
	}
	var nas *NAS
	for _, n := range *s.nas.Load() {
		if n.TenantSlug == slug && n.ID == nasID {
			nas = n
			break
		}
	}
	if nas == nil {
		return RateError
	}
	outcome, err := s.ChangeRate(ctx, nas, username, acctSessionID, down, up)
	switch {
	case outcome == "ok":
		return RateACK
	case outcome == "nak":
		return RateNAK
	case err != nil:
		return RateError
	}
	return RateTimeout
}

// NASType is the type of a NAS of the directory ("" when unknown).
func (s *Service) NASType(slug string, nasID int64) string {
	for _, n := range *s.nas.Load() {
		if n.TenantSlug == slug && n.ID == nasID {
			return n.Type
		}
	}
	return ""
}
