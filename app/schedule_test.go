package app_test

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"xr/app"
	"xr/internal/xrtest"
)

func schedModule(runs *atomic.Int32, scheduled *atomic.Int32) app.Module {
	return app.Module{Name: "schedtest", Jobs: map[string]app.JobHandler{
		"test.tick": app.Scheduled(func(ctx context.Context, jc *app.JobContext) (any, error) {
			runs.Add(1)
			if app.IsScheduledRun(ctx) {
				scheduled.Add(1)
			}
			return nil, nil
		}),
	}}
}

func setSched(t *testing.T, ten *app.Tenant, spec app.ScheduleSpec, now time.Time) *app.Schedule {
	t.Helper()
	var s *app.Schedule
	err := ten.Write(context.Background(), func(tx *sql.Tx) error {
		var err error
		s, err = app.SetSchedule(context.Background(), tx, spec, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := app.ParseTime(s, false)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A daily schedule at 03:00 in the tenant's zone fires at its slot with a
// fake clock; after the server was down across four slots, the run missed
// runs once at start and the next one is the next slot after the clock.
func TestScheduleFiresAndMissedRunRunsOnce(t *testing.T) {
	t.Parallel()
	var runs, scheduled atomic.Int32
	a := xrtest.App(t, schedModule(&runs, &scheduled))
	xrtest.Tenant(t, a, "acme")
	ten := xrtest.Acquire(t, a, "acme")
	xrtest.Exec(t, ten, `UPDATE settings SET value = ? WHERE key = 'timezone'`, `"Asia/Baghdad"`) // UTC+3, no DST
	now := mustTime(t, "2026-03-02 10:00:00")
	app.SetScheduleClock(a, func() time.Time { return now })
	ctx := context.Background()

	s := setSched(t, ten, app.ScheduleSpec{Key: "tick", Kind: "test.tick", Frequency: "daily", Time: "03:00", Enabled: true,
		Payload: map[string]int{"n": 1}}, now)
	if got := app.FormatTime(s.NextRunAt.Time); got != "2026-03-03 00:00:00" || s.Timezone != "Asia/Baghdad" || s.Time != "03:00" {
		t.Fatalf("next run %s (%s %s)", got, s.Timezone, s.Time)
	}
	if n, err := a.Jobs.RunDue(ctx, "acme", now); err != nil || n != 0 || runs.Load() != 0 {
		t.Fatalf("ran %d before its time (%v)", n, err)
	}
	now = mustTime(t, "2026-03-03 00:00:30")
	if n, err := a.Jobs.RunDue(ctx, "acme", now); err != nil || n != 1 || runs.Load() != 1 || scheduled.Load() != 1 {
		t.Fatalf("ran %d/%d at its time (%v)", n, runs.Load(), err)
	}
	s, _ = app.GetSchedule(ctx, ten.DB.R, "tick")
	if app.FormatTime(s.NextRunAt.Time) != "2026-03-04 00:00:00" || app.FormatTime(s.LastRunAt.Time) != "2026-03-03 00:00:30" {
		t.Fatalf("after a run: next %v last %v", s.NextRunAt, s.LastRunAt)
	}
	if p := xrtest.Scalar(t, ten, `SELECT json_extract(payload, '$.n') FROM jobs WHERE id = ?`, *s.JobID); p != 1 {
		t.Fatalf("payload %d", p)
	}

	// The server is down from the 3rd to the 7th: four slots pass.
	now = mustTime(t, "2026-03-07 05:00:00")
	if err := a.Jobs.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := a.Jobs.RunDue(ctx, "acme", now); err != nil || n != 1 || runs.Load() != 2 {
		t.Fatalf("missed runs: ran %d (total %d, %v), want once", n, runs.Load(), err)
	}
	if n, _ := a.Jobs.RunDue(ctx, "acme", now); n != 0 {
		t.Fatalf("ran %d more", n)
	}
	s, _ = app.GetSchedule(ctx, ten.DB.R, "tick")
	if app.FormatTime(s.NextRunAt.Time) != "2026-03-08 00:00:00" {
		t.Fatalf("next after the outage %v", s.NextRunAt)
	}
	if q := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM jobs WHERE kind = 'test.tick' AND state = 'queued'`); q != 1 {
		t.Fatalf("%d queued runs", q)
	}

	// A manual job of the kind is not a scheduled run and queues nothing.
	err := ten.Write(ctx, func(tx *sql.Tx) error {
		_, err := app.EnqueueJob(ctx, tx, "test.tick", map[string]any{}, now, 1, 1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := a.Jobs.RunDue(ctx, "acme", now); n != 1 || runs.Load() != 3 || scheduled.Load() != 2 {
		t.Fatalf("manual run: %d %d %d", n, runs.Load(), scheduled.Load())
	}

	// Disabled: the queued run is cancelled, nothing is queued.
	setSched(t, ten, app.ScheduleSpec{Key: "tick", Kind: "test.tick", Frequency: "daily", Time: "03:00", Enabled: false}, now)
	if q := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM jobs WHERE kind = 'test.tick' AND state = 'queued'`); q != 0 {
		t.Fatalf("%d queued runs of a disabled schedule", q)
	}
	if n, _ := a.Jobs.RunDue(ctx, "acme", mustTime(t, "2026-04-01 00:00:00")); n != 0 {
		t.Fatalf("a disabled schedule ran %d", n)
	}
}

// With the real runner and the real clock: a schedule whose next run was
// due days ago (the server was down) runs once when the runner starts.
func TestScheduleMissedRunWithRunner(t *testing.T) {
	t.Parallel()
	var runs, scheduled atomic.Int32
	a := xrtest.App(t, schedModule(&runs, &scheduled))
	xrtest.Tenant(t, a, "acme")
	ten := xrtest.Acquire(t, a, "acme")
	past := time.Now().UTC().Add(-72 * time.Hour)
	setSched(t, ten, app.ScheduleSpec{Key: "tick", Kind: "test.tick", Frequency: "weekly", Weekdays: app.Weekdays, Time: "00:00", Enabled: true}, past)

	ctx, cancel := context.WithCancel(context.Background())
	if err := a.Jobs.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { a.Jobs.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	xrtest.Eventually(t, "the missed run", func() bool {
		return xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM jobs WHERE kind = 'test.tick' AND state = 'done'`) == 1 &&
			xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM jobs WHERE kind = 'test.tick' AND state = 'queued'`) == 1
	})
	s, err := app.GetSchedule(ctx, ten.DB.R, "tick")
	if err != nil || !s.NextRunAt.After(time.Now().Add(-time.Minute)) || runs.Load() != 1 || scheduled.Load() != 1 {
		t.Fatalf("after start: %d runs, next %v (%v)", runs.Load(), s.NextRunAt, err)
	}
}

func TestNextRunAndValidation(t *testing.T) {
	t.Parallel()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip(err)
	}
	mon := 1 << int(time.Monday)
	thu := 1 << int(time.Thursday)
	after := mustTime(t, "2026-03-03 12:00:00") // a Tuesday
	if got := app.FormatTime(app.NextRun(after, loc, 2*60+30, mon|thu)); got != "2026-03-05 01:30:00" {
		t.Fatalf("weekly: %s", got)
	}
	// Across the spring change (29 March 2026, 02:00 → 03:00): 03:30 local.
	if got := app.FormatTime(app.NextRun(mustTime(t, "2026-03-28 12:00:00"), loc, 3*60+30, 0)); got != "2026-03-29 01:30:00" {
		t.Fatalf("dst: %s", got)
	}
	for _, c := range []struct {
		spec   app.ScheduleSpec
		reason string
	}{
		{app.ScheduleSpec{Frequency: "hourly", Time: "03:00"}, "invalid_enum"},
		{app.ScheduleSpec{Frequency: "daily", Time: "3:00"}, "invalid_time_of_day"},
		{app.ScheduleSpec{Frequency: "weekly", Time: "03:00"}, "weekdays_required"},
		{app.ScheduleSpec{Frequency: "weekly", Time: "03:00", Weekdays: []string{"funday"}}, "invalid_weekday"},
	} {
		xrtest.WantReason(t, app.ValidateSchedule(c.spec), 400, c.reason)
	}
}

// TestDeleteSchedules: the schedule is gone and its queued run cancelled
// with the reason; a key that has no schedule is nothing to do.
func TestDeleteSchedules(t *testing.T) {
	t.Parallel()
	var runs, scheduled atomic.Int32
	a := xrtest.App(t, schedModule(&runs, &scheduled))
	xrtest.Tenant(t, a, "acme")
	ten := xrtest.Acquire(t, a, "acme")
	now := mustTime(t, "2026-03-02 10:00:00")
	s := setSched(t, ten, app.ScheduleSpec{Key: "tick", Kind: "test.tick", Frequency: "daily", Time: "03:00", Enabled: true}, now)
	err := ten.Write(context.Background(), func(tx *sql.Tx) error {
		return app.DeleteSchedules(context.Background(), tx, now, "schedule deleted", "tick", "never-made")
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM schedules`); n != 0 {
		t.Fatalf("%d schedules left", n)
	}
	j, err := app.GetJob(context.Background(), ten.DB.R, *s.JobID)
	if err != nil || j.State != "cancelled" || j.Error != "schedule deleted" {
		t.Fatalf("its run: %+v (%v)", j, err)
	}
}
