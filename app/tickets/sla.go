package tickets

import (
	"sort"
	"time"

	"xr/app"
)

// SLA due times are counted in business time: the minutes that fall
// inside a calendar's business hours (per weekday, in its time zone) on
// days that are not holidays. A policy without a calendar counts every
// minute. The functions here are pure: they take the instant to start
// from, so they are tested without a clock.

// Interval is one span of business hours, "09:00" to "17:00" (end after start).
type Interval struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// Weekdays are the keys of Calendar.Hours.
var Weekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Calendar is a set of business hours.
type Calendar struct {
	ID        int64                 `json:"id"`
	Name      string                `json:"name"`
	Timezone  string                `json:"timezone"`
	Hours     map[string][]Interval `json:"hours"`
	Holidays  []string              `json:"holidays"`
	CreatedAt app.Time              `json:"created_at"`
	UpdatedAt app.Time              `json:"updated_at"`
}

func clock(s string) (int, bool) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		if s == "24:00" {
			return 24 * 60, true
		}
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}

// Validate checks a calendar: known zone, weekday keys, HH:MM spans that
// do not overlap, at least one span, holidays as yyyy-MM-dd.
func (c *Calendar) Validate() error {
	if c.Name == "" || len(c.Name) > 128 {
		return app.ErrValidation("name_required", "name")
	}
	if c.Timezone == "" {
		c.Timezone = "UTC"
	}
	if _, err := time.LoadLocation(c.Timezone); err != nil {
		return app.ErrValidation("invalid_timezone", "timezone")
	}
	known := map[string]bool{}
	for _, d := range Weekdays {
		known[d] = true
	}
	spans := 0
	for day, ivs := range c.Hours {
		if !known[day] {
			return app.ErrValidation("invalid_weekday", "hours."+day)
		}
		sort.Slice(ivs, func(i, j int) bool { return ivs[i].Start < ivs[j].Start })
		prev := -1
		for _, iv := range ivs {
			s, ok1 := clock(iv.Start)
			e, ok2 := clock(iv.End)
			if !ok1 || !ok2 || e <= s || s < prev {
				return app.ErrValidation("invalid_hours", "hours."+day)
			}
			prev = e
			spans++
		}
	}
	if spans == 0 {
		return app.ErrValidation("hours_required", "hours")
	}
	if c.Holidays == nil {
		c.Holidays = []string{}
	}
	for _, h := range c.Holidays {
		if _, err := time.Parse(time.DateOnly, h); err != nil {
			return app.ErrValidation("invalid_holiday", "holidays")
		}
	}
	return nil
}

// AddBusiness returns the instant that is minutes of business time after
// start on calendar c (nil: around the clock). minutes <= 0 returns start.
func AddBusiness(c *Calendar, start time.Time, minutes int) time.Time {
	if minutes <= 0 {
		return start
	}
	if c == nil {
		return start.Add(time.Duration(minutes) * time.Minute)
	}
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil {
		loc = time.UTC
	}
	holidays := map[string]bool{}
	for _, h := range c.Holidays {
		holidays[h] = true
	}
	remaining := time.Duration(minutes) * time.Minute
	t := start.In(loc)
	// A calendar has at least one span a week, so ten years of days is
	// never reached unless every day is a holiday.
	for range 3660 {
		y, mo, d := t.Date()
		if !holidays[t.Format(time.DateOnly)] {
			for _, iv := range c.Hours[Weekdays[t.Weekday()]] {
				s, _ := clock(iv.Start)
				e, _ := clock(iv.End)
				from := time.Date(y, mo, d, s/60, s%60, 0, 0, loc)
				to := time.Date(y, mo, d, e/60, e%60, 0, 0, loc)
				if !t.Before(to) {
					continue
				}
				if t.Before(from) {
					t = from
				}
				if avail := to.Sub(t); remaining <= avail {
					return t.Add(remaining).UTC()
				} else {
					remaining -= avail
				}
				t = to
			}
		}
		t = time.Date(y, mo, d+1, 0, 0, 0, 0, loc)
	}
	return t.UTC()
}

// Policy is an SLA target for tickets of a priority and/or category.
type Policy struct {
	ID                   int64    `json:"id"`
	Name                 string   `json:"name"`
	Priority             *string  `json:"priority"`
	CategoryID           *int64   `json:"category_id"`
	CalendarID           *int64   `json:"calendar_id"`
	FirstResponseMinutes int      `json:"first_response_minutes"`
	ResolutionMinutes    int      `json:"resolution_minutes"`
	CreatedAt            app.Time `json:"created_at"`
	UpdatedAt            app.Time `json:"updated_at"`
}

// PickPolicy chooses the most specific policy for a ticket: category and
// priority, then category, then priority, then one for any (lowest id
// among equals); nil when none applies.
func PickPolicy(ps []Policy, priority string, categoryID int64) *Policy {
	var best *Policy
	bestScore := -1
	for i := range ps {
		p := &ps[i]
		score := 0
		if p.CategoryID != nil {
			if *p.CategoryID != categoryID {
				continue
			}
			score += 2
		}
		if p.Priority != nil {
			if *p.Priority != priority {
				continue
			}
			score++
		}
		if score > bestScore || score == bestScore && p.ID < best.ID {
			best, bestScore = p, score
		}
	}
	return best
}

// DueTimes computes the first-response and resolution due times of a
// ticket created at created under policy p on calendar c (zero when the
// policy sets no target).
func DueTimes(p *Policy, c *Calendar, created time.Time) (first, resolution time.Time) {
	if p == nil {
		return
	}
	if p.FirstResponseMinutes > 0 {
		first = AddBusiness(c, created, p.FirstResponseMinutes)
	}
	if p.ResolutionMinutes > 0 {
		resolution = AddBusiness(c, created, p.ResolutionMinutes)
	}
	return
}
