package aaa

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"xr/app"
)

// Parental control as the authorizer holds it (table parental_controls,
// written by app/parental). The index keeps a map of the subscribers that
// have any parental state; a subscriber without one costs the hot path one
// length check (an empty map) or one map lookup, and no allocation.

// ReasonParentalBlocked is the refusal inside a blocked window or a pause.
const ReasonParentalBlocked = "parental_blocked"

// ParentalWindow is a weekly blocked window in the tenant time zone: Mask
// has bit d for time.Weekday d (the day the window starts), Start and End
// are minutes of the day; End <= Start crosses midnight (equal = 24 h).
type ParentalWindow struct {
	Mask  int `json:"m"`
	Start int `json:"s"`
	End   int `json:"e"`
}

// Parental is a subscriber's blocking state.
type Parental struct {
	Windows       []ParentalWindow
	PausedUntil   time.Time // zero = no pause
	UnlockedUntil time.Time // a right PIN lifted the block that ends then
}

// windowAt is the end of the occurrence of w in force at now, or zero.
func (w ParentalWindow) windowAt(now time.Time, loc *time.Location) time.Time {
	l := now.In(loc)
	length := w.End - w.Start
	if length <= 0 {
		length += 1440
	}
	for d := 0; d >= -1; d-- {
		start := time.Date(l.Year(), l.Month(), l.Day()+d, 0, w.Start, 0, 0, loc)
		if w.Mask&(1<<int(start.Weekday())) == 0 || now.Before(start) {
			continue
		}
		end := time.Date(l.Year(), l.Month(), l.Day()+d, 0, w.Start+length, 0, 0, loc)
		if now.Before(end) {
			return end
		}
	}
	return time.Time{}
}

// scheduled is the end of the blocked windows in force at now (windows
// that meet are one block), or zero when none is.
func (p *Parental) scheduled(now time.Time, loc *time.Location) time.Time {
	var until time.Time
	at := now
	for range 16 {
		var end time.Time
		for _, w := range p.Windows {
			if e := w.windowAt(at, loc); e.After(end) {
				end = e
			}
		}
		if end.IsZero() {
			break
		}
		until, at = end, end
	}
	return until
}

// Block reports whether access is blocked at now (a window or a pause in
// force and not lifted by an unlock) and until when: the end of that block.
func (p *Parental) Block(now time.Time, loc *time.Location) (bool, time.Time) {
	until := p.scheduled(now, loc)
	if now.Before(p.PausedUntil) && p.PausedUntil.After(until) {
		until = p.PausedUntil
	}
	if until.IsZero() || now.Before(p.UnlockedUntil) {
		return false, time.Time{}
	}
	return true, until
}

// NextStart is the first window start strictly after after, or zero
// without windows.
func (p *Parental) NextStart(after time.Time, loc *time.Location) time.Time {
	var next time.Time
	for _, w := range p.Windows {
		if w.Mask == 0 {
			continue
		}
		if n := app.NextRun(after, loc, w.Start, w.Mask); next.IsZero() || n.Before(next) {
			next = n
		}
	}
	return next
}

// ParseParentalWindows reads the stored windows column.
func ParseParentalWindows(s string) ([]ParentalWindow, error) {
	var ws []ParentalWindow
	if s == "" {
		return nil, nil
	}
	if err := json.Unmarshal([]byte(s), &ws); err != nil {
		return nil, err
	}
	return ws, nil
}

func loadParentals(ctx context.Context, q app.Querier, userID int64) (map[int64]*Parental, error) {
	query := `SELECT user_id, windows, COALESCE(paused_until, ''), COALESCE(unlocked_until, '') FROM parental_controls`
	var args []any
	if userID != 0 {
		query += ` WHERE user_id = ?`
		args = append(args, userID)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]*Parental{}
	for rows.Next() {
		var id int64
		var ws, paused, unlocked string
		if err := rows.Scan(&id, &ws, &paused, &unlocked); err != nil {
			return nil, err
		}
		p := &Parental{}
		if p.Windows, err = ParseParentalWindows(ws); err != nil {
			return nil, fmt.Errorf("parental %d windows: %w", id, err)
		}
		if paused != "" {
			if p.PausedUntil, err = app.ParseTime(paused, false); err != nil {
				return nil, fmt.Errorf("parental %d paused_until: %w", id, err)
			}
		}
		if unlocked != "" {
			if p.UnlockedUntil, err = app.ParseTime(unlocked, false); err != nil {
				return nil, fmt.Errorf("parental %d unlocked_until: %w", id, err)
			}
		}
		if len(p.Windows) == 0 && p.PausedUntil.IsZero() {
			continue // a PIN alone blocks nothing
		}
		out[id] = p
	}
	return out, rows.Err()
}

// loadParental refreshes the parental state of one subscriber (userID != 0)
// or of all (under ti.mu, or before the index is shared).
func (ti *tenantIndex) loadParental(ctx context.Context, q app.Querier, userID int64) error {
	got, err := loadParentals(ctx, q, userID)
	if err != nil {
		return err
	}
	if userID == 0 {
		ti.parental = got
		return nil
	}
	if ti.parental == nil {
		ti.parental = map[int64]*Parental{}
	}
	if p := got[userID]; p != nil {
		ti.parental[userID] = p
	} else {
		delete(ti.parental, userID)
	}
	return nil
}

// checkParental is the parental step of decide: it reports whether the
// subscriber is blocked now, and otherwise caps the Session-Timeout at the
// next window start (the Disconnect at that start is the job's). The
// explainer shows the step only for subscribers with parental state.
func (ti *tenantIndex) checkParental(r *record, a *Answer, now time.Time, tr *trace) bool {
	if len(ti.parental) == 0 {
		return false
	}
	p := ti.parental[r.id]
	if p == nil {
		return false
	}
	loc := ti.loc
	if loc == nil {
		loc = time.UTC
	}
	if blocked, _ := p.Block(now, loc); blocked {
		return true
	}
	if next := p.NextStart(now, loc); !next.IsZero() {
		if s := clampSeconds(next.Sub(now).Seconds()); a.SessionTimeout == 0 || s < a.SessionTimeout {
			a.SessionTimeout = s
		}
	}
	tr.add("parental", OutcomePass, "")
	return false
}

// parentalDetail is the explainer's text of the parental step.
func (ti *tenantIndex) parentalDetail(r *record, c *Check, now time.Time) string {
	p := ti.parental[r.id]
	if p == nil {
		return ""
	}
	loc := ti.loc
	if loc == nil {
		loc = time.UTC
	}
	if c.Outcome == OutcomeFail {
		_, until := p.Block(now, loc)
		return "blocked by parental control until " + app.FormatTime(until)
	}
	if next := p.NextStart(now, loc); !next.IsZero() {
		return "not blocked now; the next blocked window starts at " + app.FormatTime(next) + " (Session-Timeout until then)"
	}
	return "not blocked now"
}

// explainAt is the instant an explanation evaluates.
func (ti *tenantIndex) explainAt(in ExplainInput) time.Time {
	if !in.At.IsZero() {
		return in.At.Time
	}
	return ti.t.Now()
}
