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
		// Not at start: let serve settle.
		{Name: "kernel.maintain", Every: time.Hour, After: time.Minute, Run: maintainTask},
	},
}

// maintainTask is Maintain as a tenant task, logging what it removed.
func maintainTask(ctx context.Context, t *Tenant) error {
	r, err := Maintain(ctx, t)
	if err != nil {
		return err
	}
	if r != (MaintenanceResult{}) {
		t.App.Log.Info("maintenance", "tenant", t.Slug, "idempotency", r.Idempotency, "events", r.Events, "jobs", r.Jobs,
			"sessions", r.Sessions, "authz_changes", r.AuthzChanges, "auth_log", r.AuthLog)
	}
	return nil
}
