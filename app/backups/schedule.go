package backups

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"xr/app"
)

// ScheduleConfig is GET|PUT /admin/tools/backup/schedule: a daily or weekly
// backup at a time of day in the tenant time zone, its retention and the
// destinations each scheduled backup is copied to. It is kept in the
// tenant file (the kernel's schedules), so a restore brings back the
// schedule of the restored backup and a factory reset keeps it.
type ScheduleConfig struct {
	Enabled               bool     `json:"enabled"`
	Frequency             string   `json:"frequency"` // daily | weekly
	Weekdays              []string `json:"weekdays"`  // weekly: sun..sat
	Time                  string   `json:"time"`      // HH:MM
	KeepDaily             int      `json:"keep_daily"`
	KeepWeekly            int      `json:"keep_weekly"`
	DestinationIDs        []int64  `json:"destination_ids"`
	ExcludeClosedSessions bool     `json:"exclude_closed_sessions"`
}

// ScheduleView is the schedule with when it runs next.
type ScheduleView struct {
	ScheduleConfig
	Timezone  string   `json:"timezone"`
	NextRunAt app.Time `json:"next_run_at"`
	LastRunAt app.Time `json:"last_run_at"`
}

// MaxKeep bounds each retention count.
const MaxKeep = 366

// GetSchedule is GET /admin/tools/backup/schedule (disabled defaults when
// none was set).
func GetSchedule(ctx context.Context, act *app.Actor) (*ScheduleView, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return nil, err
	}
	return readSchedule(ctx, act.Tenant.DB.R)
}

func readSchedule(ctx context.Context, q app.Querier) (*ScheduleView, error) {
	s, err := app.GetSchedule(ctx, q, ScheduleKey)
	if ae := app.AsError(err); err != nil && ae != nil && ae.Status == 404 {
		return &ScheduleView{ScheduleConfig: ScheduleConfig{Frequency: "daily", Time: "03:00", Weekdays: []string{}, KeepDaily: 7,
			KeepWeekly: 4, DestinationIDs: []int64{}}, Timezone: app.SettingTimezone.GetOr(ctx, q)}, nil
	}
	if err != nil {
		return nil, err
	}
	var p runPayload
	if err := json.Unmarshal(s.Payload, &p); err != nil {
		return nil, err
	}
	if p.DestinationIDs == nil {
		p.DestinationIDs = []int64{}
	}
	return &ScheduleView{ScheduleConfig: ScheduleConfig{Enabled: s.Enabled, Frequency: s.Frequency, Weekdays: s.Weekdays, Time: s.Time,
		KeepDaily: p.KeepDaily, KeepWeekly: p.KeepWeekly, DestinationIDs: p.DestinationIDs, ExcludeClosedSessions: p.ExcludeClosedSessions},
		Timezone: s.Timezone, NextRunAt: s.NextRunAt, LastRunAt: s.LastRunAt}, nil
}

// PutSchedule is PUT /admin/tools/backup/schedule.
func PutSchedule(ctx context.Context, act *app.Actor, in ScheduleConfig) (*ScheduleView, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return nil, err
	}
	return putSchedule(ctx, act.Tenant, in, app.ScheduleNow(act.Tenant.App))
}

func putSchedule(ctx context.Context, t *app.Tenant, in ScheduleConfig, now time.Time) (*ScheduleView, error) {
	if in.KeepDaily < 0 || in.KeepDaily > MaxKeep {
		return nil, app.ErrValidation("invalid_retention", "keep_daily").With("max", MaxKeep)
	}
	if in.KeepWeekly < 0 || in.KeepWeekly > MaxKeep {
		return nil, app.ErrValidation("invalid_retention", "keep_weekly").With("max", MaxKeep)
	}
	if in.Enabled && in.KeepDaily+in.KeepWeekly == 0 {
		return nil, app.ErrValidation("invalid_retention", "keep_daily")
	}
	if err := checkDestinations(ctx, t, in.DestinationIDs); err != nil {
		return nil, err
	}
	spec := app.ScheduleSpec{Key: ScheduleKey, Kind: ScheduledKind, Frequency: in.Frequency, Weekdays: in.Weekdays, Time: in.Time,
		Enabled: in.Enabled, Payload: runPayload{Kind: KindScheduled, ExcludeClosedSessions: in.ExcludeClosedSessions,
			DestinationIDs: in.DestinationIDs, KeepDaily: in.KeepDaily, KeepWeekly: in.KeepWeekly}}
	var out *ScheduleView
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := app.SetSchedule(ctx, tx, spec, now); err != nil {
			return err
		}
		var err error
		out, err = readSchedule(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkDestinations refuses ids that are not destinations of t.
func checkDestinations(ctx context.Context, t *app.Tenant, ids []int64) error {
	for _, id := range ids {
		var n int
		if err := t.App.Inst.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM backup_destinations WHERE id = ? AND tenant_id = ?`, id, t.ID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return app.ErrValidation("backup_destination_unknown", "destination_ids").With("id", id)
		}
	}
	return nil
}

// Prune applies the retention of scheduled backups: the newest backup of
// each of the keepDaily most recent days that have one, and the newest of
// each of the keepWeekly most recent ISO weeks, are kept (days and weeks
// in the tenant time zone); other scheduled backups are deleted. Manual,
// uploaded and safety backups are never pruned. It returns how many went.
func Prune(ctx context.Context, t *app.Tenant, keepDaily, keepWeekly int) (int, error) {
	if keepDaily+keepWeekly == 0 {
		return 0, nil
	}
	list, err := listBackups(ctx, t)
	if err != nil {
		return 0, err
	}
	loc := app.TenantLocation(ctx, t.DB.R)
	var sched []*Backup
	for _, b := range list {
		if b.Kind == KindScheduled && b.Verification.State == "ok" {
			sched = append(sched, b)
		}
	}
	sort.SliceStable(sched, func(i, j int) bool { return sched[i].CreatedAt.After(sched[j].CreatedAt.Time) })
	keep := map[int64]bool{}
	days, weeks := map[string]bool{}, map[string]bool{}
	for _, b := range sched {
		l := b.CreatedAt.In(loc)
		day := l.Format("2006-01-02")
		y, w := l.ISOWeek()
		week := fmt.Sprintf("%d-%02d", y, w)
		if !days[day] && len(days) < keepDaily {
			days[day] = true
			keep[b.ID] = true
		}
		if !weeks[week] && len(weeks) < keepWeekly {
			weeks[week] = true
			keep[b.ID] = true
		}
	}
	n := 0
	var errs []error
	for _, b := range sched {
		if keep[b.ID] {
			continue
		}
		if err := deleteBackup(ctx, t, b.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
