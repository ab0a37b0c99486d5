package app

import (
	"context"
	"slices"
	"time"
)

// kernelModule is what the kernel declares itself, installed by Open
// before any area: its permission codes (the jobs view, the licence page,
// tenant settings), the tenant-wide settings (currency, time zone,
// language) and those its housekeeping reads, the buckets the route
// middleware applies itself, and the hourly housekeeping.
var kernelModule = Module{
	Name:        "kernel",
	Permissions: slices.Concat(PermGroup("jobs", PermJobsView), PermGroup("license", PermLicenseView), PermGroup("settings", PermSettings)),
	Settings: []Setting{SettingCurrency, SettingTimezone, SettingDefaultLanguage,
		SettingRadiusAuthLogDays, SettingRadiusSessionRetention},
	Buckets: kernelBuckets,
	TenantTasks: []TenantTask{
		{Name: JobsRecoverTask, Run: func(ctx context.Context, t *Tenant) (time.Time, error) { return recoverJobs(ctx, t) }},
		{Name: JobsTask, Every: time.Second, Run: func(ctx context.Context, t *Tenant) (time.Time, error) { return t.App.Jobs.claimTask(ctx, t) }},
		// Not at once: let an opening settle.
		{Name: "kernel.maintain", Every: time.Hour, After: time.Minute, Run: maintainTask},
	},
}

// How often housekeeping runs: hourly while it finds rows to remove, daily
// when it found none (an idle tenant's rows age slowly, and a closed
// tenant opens for it once a day at most).
const (
	maintainBusyEvery = time.Hour
	maintainIdleEvery = 24 * time.Hour
)

// maintainTask is Maintain as a tenant task, logging what it removed.
func maintainTask(ctx context.Context, t *Tenant) (time.Time, error) {
	r, err := Maintain(ctx, t)
	if err != nil {
		return time.Time{}, err
	}
	if r == (MaintenanceResult{}) {
		return t.Now().Add(maintainIdleEvery), nil
	}
	t.App.Log.Info("maintenance", "tenant", t.Slug, "idempotency", r.Idempotency, "events", r.Events, "jobs", r.Jobs,
		"sessions", r.Sessions, "authz_changes", r.AuthzChanges, "auth_log", r.AuthLog)
	return t.Now().Add(maintainBusyEvery), nil
}
