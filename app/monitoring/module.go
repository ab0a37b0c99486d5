// Package monitoring is network monitoring and the map (issue 18): devices
// addressed as {kind}/{ref} (every NAS, plus routers, switches, OLTs...
// added by staff), the poller that probes them through app/probes in the
// job runner's process and keeps samples with an hourly rollup, alert rules
// with their deliveries through the outbox and webhook events, and the
// map: coordinates, links forming a tree, attached subscribers, impact and
// incidents.
package monitoring

import (
	"context"
	"database/sql"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/outbox"
	"xr/app/probes"
)

// Module is the monitoring area: the poller (a tenant task), the alert
// templates, its permissions and settings, the device events and the
// sealed SNMP credentials. Devices a manager created lose their creator on
// its deletion (ON DELETE SET NULL), so none blocks it.
var Module = app.Module{
	Name: "monitoring",
	Init: func(a *app.App) {
		a.SetValue(poolKey{}, probes.NewPool(MaxConcurrentProbes))
		outbox.Register(a, templates...)
	},
	TenantTasks: []app.TenantTask{{Name: PollTask, Every: PollEvery, Run: poll}},
	// A NAS is a monitored device from its creation (a trigger adds its
	// row): the poller learns of it in the NAS's transaction.
	Extensions:  []app.Extension{aaa.NASChangedExtension("monitoring", devicesChanged)},
	Permissions: permCatalogue,
	Settings:    settingDecls,
	Events: []app.EventType{
		{Key: "device.down", Category: "monitoring"},
		{Key: "device.up", Category: "monitoring"},
	},
	SealedColumns: []app.SealedColumn{{Table: "mon_devices", Column: "snmp_sealed"}},
}

// MaxConcurrentProbes bounds the probes one App runs at once (poller and
// on-demand rows together).
const MaxConcurrentProbes = 64

// ProbeTimeout is how long one echo or SNMP request waits.
const ProbeTimeout = 2 * time.Second

type poolKey struct{}

func pool(a *app.App) *probes.Pool {
	if p, ok := a.Value(poolKey{}).(*probes.Pool); ok {
		return p
	}
	return probes.NewPool(MaxConcurrentProbes)
}

// wide is a tenant-wide reader for the area's own re-reads after a checked
// write and for the poller.
func wide(t *app.Tenant) *app.Actor { return &app.Actor{Tenant: t, TenantWide: true} }

var templates = []outbox.Template{
	{Key: "device.down", Subject: "Device down: {device}", Body: "{device} ({address}) is down since {at}.", Vars: []string{"device", "address", "at"}},
	{Key: "device.up", Subject: "Device up: {device}", Body: "{device} ({address}) is up again at {at}.", Vars: []string{"device", "address", "at"}},
	{Key: "device.alert", Subject: "{device}: {message}", Body: "{device} ({address}): {message} at {at}.", Vars: []string{"device", "address", "message", "at"}},
}

// poll is the monitoring.poll tenant task: it probes the tenant's due
// devices and answers when the next one is due (zero: the tenant monitors
// nothing, and its files need not open for the poller until a device or a
// NAS is added: devicesChanged).
func poll(ctx context.Context, t *app.Tenant) (time.Time, error) {
	if _, err := PollDue(ctx, t, t.Now()); err != nil {
		return time.Time{}, err
	}
	return nextProbe(ctx, t.DB.R, t.Now())
}

// nextProbe is when the tenant's next device is due (now for a device
// never probed; zero without devices).
func nextProbe(ctx context.Context, q app.Querier, now time.Time) (time.Time, error) {
	var never bool
	var next sql.NullString
	if err := q.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM mon_devices WHERE next_probe IS NULL), MIN(next_probe) FROM mon_devices`).Scan(&never, &next); err != nil {
		return time.Time{}, err
	}
	if never {
		return now, nil
	}
	if !next.Valid {
		return time.Time{}, nil
	}
	return app.ParseTime(next.String, false)
}

// devicesChanged tells the scheduler, in the transaction that adds or
// changes a device (or a NAS), that the poller has work now.
func devicesChanged(_ context.Context, tx *sql.Tx, t *app.Tenant) {
	app.TaskDue(tx, PollTask, t.Now())
}

// PollTask is the poller's tenant task; PollEvery is how soon it runs
// again after a failed pass.
const (
	PollTask  = "monitoring.poll"
	PollEvery = time.Second
)
