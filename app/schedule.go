package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Schedules: per-tenant recurring runs of a job kind (backups, and later
// bandwidth windows, auto-renew, archives...). A schedule is one row of the
// tenant's schedules table, named by its owner's key. It always has exactly
// one queued job for its next run (job_id); the job runner runs that job
// when due, and the job, wrapped by Scheduled, first queues the following
// run. A run missed while the server was down is a queued job in the past:
// the runner runs it at start, once, and the next run is computed from the
// clock, so missed slots in between are skipped rather than replayed.
//
// Time comes from the schedule clock of the App (SetScheduleClock, tests)
// or from the now each call is given; nothing reads a package global.

// Weekdays are the names of time.Weekday 0..6 in the API.
var Weekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// Schedule is one recurring schedule.
type Schedule struct {
	ID        int64           `json:"id"`
	Key       string          `json:"key"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	Frequency string          `json:"frequency"` // daily|weekly
	Weekdays  []string        `json:"weekdays"`  // weekly: sun..sat
	Time      string          `json:"time"`      // HH:MM in the tenant time zone
	Enabled   bool            `json:"enabled"`
	Timezone  string          `json:"timezone"`
	NextRunAt Time            `json:"next_run_at"`
	LastRunAt Time            `json:"last_run_at"`
	JobID     *int64          `json:"job_id"`
}

// ScheduleSpec is what an owner sets.
type ScheduleSpec struct {
	Key, Kind string
	Payload   any
	Frequency string   // daily|weekly
	Weekdays  []string // weekly: at least one of Weekdays
	Time      string   // HH:MM
	Enabled   bool
}

type scheduleClockKey struct{}

// SetScheduleClock replaces the clock schedules read on this App (tests).
func SetScheduleClock(a *App, now func() time.Time) { a.SetValue(scheduleClockKey{}, now) }

// ScheduleNow is the schedule clock of a: the one SetScheduleClock gave,
// else the App's clock.
func ScheduleNow(a *App) time.Time {
	if fn, ok := a.Value(scheduleClockKey{}).(func() time.Time); ok && fn != nil {
		return fn().UTC()
	}
	return a.Now()
}

var hhmm = regexp.MustCompile(`^([01][0-9]|2[0-3]):([0-5][0-9])$`)

// ParseTimeOfDay reads "HH:MM" into minutes after midnight (400 invalid_time).
func ParseTimeOfDay(s, field string) (int, error) {
	m := hhmm.FindStringSubmatch(s)
	if m == nil {
		return 0, ErrValidation("invalid_time_of_day", field)
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	return h*60 + mi, nil
}

func weekdayMask(days []string, field string) (int, error) {
	mask := 0
	for _, d := range days {
		i := -1
		for k, w := range Weekdays {
			if strings.EqualFold(d, w) {
				i = k
			}
		}
		if i < 0 {
			return 0, ErrValidation("invalid_weekday", field).With("value", d)
		}
		mask |= 1 << i
	}
	return mask, nil
}

func maskWeekdays(mask int) []string {
	out := []string{}
	for i, w := range Weekdays {
		if mask&(1<<i) != 0 {
			out = append(out, w)
		}
	}
	return out
}

// ValidateSchedule checks the user-facing fields of a spec.
func ValidateSchedule(s ScheduleSpec) error {
	if s.Frequency != "daily" && s.Frequency != "weekly" {
		return ErrValidation("invalid_enum", "frequency").With("allowed", []string{"daily", "weekly"})
	}
	if _, err := ParseTimeOfDay(s.Time, "time"); err != nil {
		return err
	}
	mask, err := weekdayMask(s.Weekdays, "weekdays")
	if err != nil {
		return err
	}
	if s.Frequency == "weekly" && mask == 0 {
		return ErrValidation("weekdays_required", "weekdays")
	}
	return nil
}

// NextRun is the first slot strictly after `after`: minute of day in loc,
// every day (mask 0) or on the weekdays of mask. A local time skipped by a
// daylight-saving change runs at the instant Go normalises it to.
func NextRun(after time.Time, loc *time.Location, minuteOfDay, mask int) time.Time {
	l := after.In(loc)
	for d := 0; d <= 8; d++ {
		day := time.Date(l.Year(), l.Month(), l.Day()+d, minuteOfDay/60, minuteOfDay%60, 0, 0, loc)
		if !day.After(after) {
			continue
		}
		if mask == 0 || mask&(1<<int(day.Weekday())) != 0 {
			return day.UTC()
		}
	}
	return after.Add(24 * time.Hour).UTC() // unreachable with a non-empty mask
}

// TenantLocation is the tenant's time zone (UTC when unset or unknown).
func TenantLocation(ctx context.Context, q Querier) *time.Location {
	if loc, err := time.LoadLocation(SettingTimezone.GetOr(ctx, q)); err == nil {
		return loc
	}
	return time.UTC
}

// SetSchedule creates or replaces the schedule spec.Key in tx: its queued
// job is cancelled and, when enabled, the next run is queued from now (the
// runner learns of it when tx commits).
func SetSchedule(ctx context.Context, tx *sql.Tx, spec ScheduleSpec, now time.Time) (*Schedule, error) {
	if err := ValidateSchedule(spec); err != nil {
		return nil, err
	}
	mod, _ := ParseTimeOfDay(spec.Time, "time")
	mask, _ := weekdayMask(spec.Weekdays, "weekdays")
	if spec.Frequency == "daily" {
		mask = 0
	}
	payload, err := json.Marshal(spec.Payload)
	if err != nil {
		return nil, err
	}
	if spec.Payload == nil {
		payload = []byte("{}")
	}
	nowText := FormatTime(now)
	if _, err := tx.ExecContext(ctx, `INSERT INTO schedules(key, kind, payload, frequency, weekdays, minute_of_day, enabled, created_at, updated_at)
		VALUES (?,?,?,?,?,?,?,?,?)
		ON CONFLICT(key) DO UPDATE SET kind = excluded.kind, payload = excluded.payload, frequency = excluded.frequency,
		  weekdays = excluded.weekdays, minute_of_day = excluded.minute_of_day, enabled = excluded.enabled, updated_at = excluded.updated_at`,
		spec.Key, spec.Kind, string(payload), spec.Frequency, mask, mod, spec.Enabled, nowText, nowText); err != nil {
		return nil, err
	}
	if err := armSchedule(ctx, tx, spec.Key, now, time.Time{}); err != nil {
		return nil, err
	}
	return GetSchedule(ctx, tx, spec.Key)
}

// armSchedule cancels the schedule's queued job and, when enabled, queues
// the run of the first slot after max(now, notBefore).
func armSchedule(ctx context.Context, tx *sql.Tx, key string, now, notBefore time.Time) error {
	var id int64
	var kind, payload string
	var mod, mask int
	var enabled bool
	var jobID sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT id, kind, payload, minute_of_day, weekdays, enabled, job_id FROM schedules WHERE key = ?`, key).
		Scan(&id, &kind, &payload, &mod, &mask, &enabled, &jobID)
	if err != nil {
		return err
	}
	if jobID.Valid {
		if err := CancelQueued(ctx, tx, now, "schedule changed", jobID.Int64); err != nil {
			return err
		}
	}
	if !enabled {
		_, err := tx.ExecContext(ctx, `UPDATE schedules SET next_run_at = NULL, job_id = NULL WHERE id = ?`, id)
		return err
	}
	after := now
	if notBefore.After(after) {
		after = notBefore
	}
	next := NextRun(after, TenantLocation(ctx, tx), mod, mask)
	job, err := EnqueueJob(ctx, tx, kind, json.RawMessage(payload), next, 0, 3)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE schedules SET next_run_at = ?, job_id = ? WHERE id = ?`, FormatTime(next), job, id)
	return err
}

// DeleteSchedules removes the schedules keys and cancels their queued
// runs, recording reason.
func DeleteSchedules(ctx context.Context, tx *sql.Tx, now time.Time, reason string, keys ...string) error {
	for _, key := range keys {
		var jobID sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT job_id FROM schedules WHERE key = ?`, key).Scan(&jobID)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		if jobID.Valid {
			if err := CancelQueued(ctx, tx, now, reason, jobID.Int64); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM schedules WHERE key = ?`, key); err != nil {
			return err
		}
	}
	return nil
}

// RearmSchedules queues the next run of every enabled schedule again (after
// a factory reset emptied the jobs table).
func RearmSchedules(ctx context.Context, tx *sql.Tx, now time.Time) error {
	keys, err := queryStrings(ctx, tx, `SELECT key FROM schedules ORDER BY id`)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := armSchedule(ctx, tx, k, now, time.Time{}); err != nil {
			return err
		}
	}
	return nil
}

func queryStrings(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// NotifySchedule tells the runner about the earliest queued job of t, for
// jobs that arrived without EnqueueJob (a restored tenant file brings its
// schedules' queued runs). SetSchedule and RearmSchedules need no call:
// their EnqueueJob tells the runner after the commit.
func NotifySchedule(ctx context.Context, t *Tenant) {
	var next sql.NullString
	if err := t.DB.R.QueryRowContext(ctx, `SELECT MIN(run_at) FROM jobs WHERE state = 'queued'`).Scan(&next); err != nil || !next.Valid {
		return
	}
	if at, err := ParseTime(next.String, false); err == nil {
		t.App.Jobs.Notify(t.Slug, at)
	}
}

// GetSchedule reads one schedule (404 when unset).
func GetSchedule(ctx context.Context, q Querier, key string) (*Schedule, error) {
	s := &Schedule{}
	var payload string
	var mod, mask int
	err := q.QueryRowContext(ctx, `SELECT id, key, kind, payload, frequency, weekdays, minute_of_day, enabled, next_run_at, last_run_at, job_id FROM schedules WHERE key = ?`, key).
		Scan(&s.ID, &s.Key, &s.Kind, &payload, &s.Frequency, &mask, &mod, &s.Enabled, &s.NextRunAt, &s.LastRunAt, &s.JobID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	s.Payload = json.RawMessage(payload)
	s.Weekdays = maskWeekdays(mask)
	s.Time = fmt.Sprintf("%02d:%02d", mod/60, mod%60)
	s.Timezone = SettingTimezone.GetOr(ctx, q)
	return s, nil
}

// ScheduledRun is what Scheduled tells the wrapped handler.
type scheduledRunKey struct{}

// IsScheduledRun reports whether the job running under ctx was queued by a
// schedule (set by Scheduled).
func IsScheduledRun(ctx context.Context) bool { v, _ := ctx.Value(scheduledRunKey{}).(bool); return v }

// Scheduled wraps the handler of a job kind that schedules enqueue. When
// the job is its schedule's queued run, it first records the run and
// queues the next one (one transaction), so the chain goes on whatever the
// handler does; a retry of the same job only runs the handler. Jobs of the
// kind queued otherwise (a manual run) just run the handler.
func Scheduled(h JobHandler) JobHandler {
	return func(ctx context.Context, jc *JobContext) (any, error) {
		t := jc.Tenant
		now := ScheduleNow(t.App)
		scheduled := false
		err := t.Write(ctx, func(tx *sql.Tx) error {
			var key, next string
			err := tx.QueryRowContext(ctx, `SELECT key, COALESCE(next_run_at, '') FROM schedules WHERE job_id = ?`, jc.Job.ID).Scan(&key, &next)
			if errors.Is(err, sql.ErrNoRows) {
				scheduled = jc.Job.CreatedBy == nil && lastRunOf(ctx, tx, jc.Job.ID)
				return nil
			}
			if err != nil {
				return err
			}
			scheduled = true
			slot, _ := ParseTime(next, false)
			if _, err := tx.ExecContext(ctx, `UPDATE schedules SET last_run_at = ?, job_id = NULL, updated_at = ? WHERE key = ?`,
				FormatTime(now), FormatTime(now), key); err != nil {
				return err
			}
			if err := markScheduledRun(ctx, tx, jc.Job.ID, key); err != nil {
				return err
			}
			// The next slot after this one and after now: the slots
			// missed while the server was down are not replayed.
			return armSchedule(ctx, tx, key, now, slot)
		})
		if err != nil {
			return nil, err
		}
		return h(context.WithValue(ctx, scheduledRunKey{}, scheduled), jc)
	}
}

// lastRunOf tells whether job was a schedule's run (a retry of it: its
// result was marked when the next run was queued).
func lastRunOf(ctx context.Context, tx *sql.Tx, jobID int64) bool {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE id = ? AND json_extract(result, '$.schedule') IS NOT NULL`, jobID).Scan(&n)
	return err == nil && n > 0
}

// RunDue runs, one after the other and in this goroutine, every queued job
// of a tenant due at now, as the runner would (a fake clock in tests, a
// command-line process). It returns how many ran.
func (r *Runner) RunDue(ctx context.Context, slug string, now time.Time) (int, error) {
	t, release, err := r.app.Acquire(slug)
	if err != nil {
		return 0, err
	}
	var ids []int64
	err = t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		ids, err = claimDue(ctx, tx, now, r.Lease, -1)
		return err
	})
	release()
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		r.runOne(ctx, claimed{slug, id})
	}
	return len(ids), nil
}
