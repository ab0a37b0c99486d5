package tickets

import (
	"errors"
	"testing"
	"time"

	"xr/app"
)

func TestStateMachine(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	recent := Move{Now: now, ClosedAt: now.Add(-2 * 24 * time.Hour), ReopenDays: 7}
	old := Move{Now: now, ClosedAt: now.Add(-8 * 24 * time.Hour), ReopenDays: 7}
	cases := []struct {
		from, action string
		m            Move
		to, reason   string
	}{
		{StateNew, ActOpen, Move{}, StateOpen, ""},
		{StatePending, ActOpen, Move{}, StateOpen, ""},
		{StateResolved, ActOpen, Move{}, "", "invalid_transition"},
		{StateOpen, ActPend, Move{}, StatePending, ""},
		{StateResolved, ActPend, Move{}, "", "invalid_transition"},
		{StateNew, ActSnooze, Move{}, StateSnoozed, ""},
		{StateResolved, ActSnooze, Move{}, "", "invalid_transition"},
		{StateSnoozed, ActWake, Move{}, StateOpen, ""},
		{StateOpen, ActWake, Move{}, "", "invalid_transition"},
		{StatePending, ActResolve, Move{}, StateResolved, ""},
		{StateResolved, ActResolve, Move{}, "", "invalid_transition"},
		{StateResolved, ActClose, Move{}, StateClosed, ""},
		{StateNew, ActClose, Move{}, StateClosed, ""},
		{StateResolved, ActReopen, Move{}, StateOpen, ""},
		{StateOpen, ActReopen, Move{}, "", "invalid_transition"},
		{StateClosed, ActReopen, recent, "", "ticket_closed"},
		{StateClosed, ActBulkReopen, recent, StateOpen, ""},
		{StateClosed, ActBulkReopen, old, "", "reopen_window_passed"},
		{StateClosed, ActBulkReopen, Move{Now: now, ReopenDays: 7}, "", "reopen_window_passed"},
		{StateResolved, ActBulkReopen, old, StateOpen, ""},
		{StateOpen, ActBulkReopen, recent, "", "invalid_transition"},
		{StateNew, ActStaffReply, Move{}, StatePending, ""},
		{StateSnoozed, ActStaffReply, Move{}, StatePending, ""},
		{StateResolved, ActStaffReply, Move{}, StateResolved, ""},
		{StateClosed, ActStaffReply, Move{}, "", "ticket_closed"},
		{StateOpen, ActStaffNote, Move{}, StateOpen, ""},
		{StateClosed, ActStaffNote, Move{}, "", "ticket_closed"},
		{StateNew, ActRequesterReply, Move{}, StateNew, ""},
		{StatePending, ActRequesterReply, Move{}, StateOpen, ""},
		{StateResolved, ActRequesterReply, Move{}, StateOpen, ""},
		{StateClosed, ActRequesterReply, Move{}, "", "ticket_closed"},
		{StateClosed, ActClose, Move{}, "", "ticket_closed"},
	}
	for _, c := range cases {
		to, err := Transition(c.from, c.action, c.m)
		if c.reason == "" {
			if err != nil || to != c.to {
				t.Errorf("%s --%s--> %q %v, want %s", c.from, c.action, to, err, c.to)
			}
			continue
		}
		var ae *app.Error
		if !errors.As(err, &ae) || ae.Status != 409 || ae.Reason != c.reason {
			t.Errorf("%s --%s--> %q %v, want 409 %s", c.from, c.action, to, err, c.reason)
		}
	}
}

func TestWakeDue(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		state string
		until time.Time
		now   time.Time
		want  bool
	}{
		{StateSnoozed, at, at.Add(-time.Second), false},
		{StateSnoozed, at, at, true},
		{StateSnoozed, at, at.Add(time.Hour), true},
		{StateOpen, at, at.Add(time.Hour), false},
		{StateSnoozed, time.Time{}, at, false},
	} {
		if got := WakeDue(c.state, c.until, c.now); got != c.want {
			t.Errorf("WakeDue(%s, %v, %v) = %v", c.state, c.until, c.now, got)
		}
	}
}

func TestSLADueBusinessTime(t *testing.T) {
	t.Parallel()
	nine := []Interval{{"09:00", "17:00"}}
	cal := &Calendar{Name: "office", Timezone: "Asia/Baghdad", // UTC+3, no DST
		Hours:    map[string][]Interval{"mon": nine, "tue": nine, "wed": nine, "thu": nine, "sun": {{"09:00", "12:00"}, {"13:00", "17:00"}}},
		Holidays: []string{"2026-03-17"}} // a Tuesday
	if err := cal.Validate(); err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation("Asia/Baghdad")
	at := func(d, hh, mm int) time.Time { return time.Date(2026, 3, d, hh, mm, 0, 0, loc) }
	cases := []struct {
		name    string
		start   time.Time
		minutes int
		want    time.Time
	}{
		{"inside the day", at(16, 10, 0), 60, at(16, 11, 0)},          // Monday
		{"before opening", at(16, 7, 30), 30, at(16, 9, 30)},          // counts from 09:00
		{"spills to next day", at(16, 16, 0), 120, at(18, 10, 0)},     // Mon 16:00 +1h, Tue is a holiday, Wed 09:00 +1h
		{"after closing", at(16, 18, 0), 30, at(18, 9, 30)},           // Tue holiday
		{"across the weekend", at(19, 16, 30), 90, at(22, 10, 0)},     // Thu 16:30 +30m; Fri, Sat closed; Sun 09:00 +60m
		{"lunch break on sunday", at(22, 11, 30), 60, at(22, 13, 30)}, // 11:30-12:00, then 13:00-13:30
		{"weekend start", at(20, 10, 0), 8 * 60, at(23, 10, 0)},       // Fri: Sun 09-12 (3h) + 13-17 (4h) = 7h, Mon 09:00 +1h
		{"zero minutes", at(20, 10, 0), 0, at(20, 10, 0)},
	}
	for _, c := range cases {
		got := AddBusiness(cal, c.start, c.minutes)
		if !got.Equal(c.want) {
			t.Errorf("%s: %v + %d min = %v, want %v", c.name, c.start, c.minutes, got.In(loc), c.want)
		}
	}
	// No calendar: around the clock.
	if got := AddBusiness(nil, at(20, 10, 0), 90); !got.Equal(at(20, 11, 30)) {
		t.Errorf("24x7: %v", got)
	}
}

func TestSLAPolicyPick(t *testing.T) {
	t.Parallel()
	high, cat := "high", int64(5)
	other := int64(6)
	ps := []Policy{
		{ID: 1, Name: "any"},
		{ID: 2, Name: "high", Priority: &high},
		{ID: 3, Name: "cat", CategoryID: &cat},
		{ID: 4, Name: "cat+high", CategoryID: &cat, Priority: &high},
		{ID: 5, Name: "other cat", CategoryID: &other},
	}
	for _, c := range []struct {
		prio string
		cat  int64
		want int64
	}{{"high", 5, 4}, {"low", 5, 3}, {"high", 0, 2}, {"low", 0, 1}, {"low", 6, 5}} {
		if p := PickPolicy(ps, c.prio, c.cat); p == nil || p.ID != c.want {
			t.Errorf("PickPolicy(%s, %d) = %+v, want %d", c.prio, c.cat, p, c.want)
		}
	}
	if PickPolicy(nil, "low", 0) != nil {
		t.Error("no policies: want nil")
	}
	first, res := DueTimes(&Policy{FirstResponseMinutes: 30}, nil, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if !first.Equal(time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)) || !res.IsZero() {
		t.Errorf("DueTimes: %v %v", first, res)
	}
}

func TestCalendarValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cal    Calendar
		reason string
	}{
		{Calendar{Name: "x", Timezone: "Mars/Base", Hours: map[string][]Interval{"mon": {{"09:00", "17:00"}}}}, "invalid_timezone"},
		{Calendar{Name: "x", Hours: map[string][]Interval{"monday": {{"09:00", "17:00"}}}}, "invalid_weekday"},
		{Calendar{Name: "x", Hours: map[string][]Interval{"mon": {{"17:00", "09:00"}}}}, "invalid_hours"},
		{Calendar{Name: "x", Hours: map[string][]Interval{"mon": {{"09:00", "13:00"}, {"12:00", "17:00"}}}}, "invalid_hours"},
		{Calendar{Name: "x", Hours: map[string][]Interval{}}, "hours_required"},
		{Calendar{Name: "x", Hours: map[string][]Interval{"mon": {{"09:00", "17:00"}}}, Holidays: []string{"25/12"}}, "invalid_holiday"},
		{Calendar{Name: "x", Hours: map[string][]Interval{"mon": {{"00:00", "24:00"}}}}, ""},
	} {
		err := c.cal.Validate()
		var ae *app.Error
		if c.reason == "" && err != nil || c.reason != "" && (!errors.As(err, &ae) || ae.Reason != c.reason) {
			t.Errorf("%+v: %v, want %q", c.cal, err, c.reason)
		}
	}
}

func TestRenderVariables(t *testing.T) {
	t.Parallel()
	k := Ticket{ID: 42, Subject: "No internet", Requester: Requester{Name: "Alice"}}
	got := Render("Hi {requester}, about {ticket_number} ({subject}) -- {agent} {unknown}", vars(k, "Bob"))
	if got != "Hi Alice, about T-000042 (No internet) -- Bob {unknown}" {
		t.Errorf("Render: %q", got)
	}
	var ae *app.Error
	if err := CheckVariables("Hello {requester} {nope}", "body"); !errors.As(err, &ae) || ae.Reason != "unknown_variable" || ae.Details["variable"] != "nope" {
		t.Errorf("CheckVariables: %v", err)
	}
}
