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
	"time"

	"xr/app"
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
	TenantTasks: []app.TenantTask{{Name: "monitoring.poll", Every: PollEvery, Run: poll}},
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
// devices, every PollEvery.
func poll(ctx context.Context, t *app.Tenant) error {
	_, err := PollDue(ctx, t, t.Now())
	return err
}

// PollEvery is how often the poller looks for due devices.
const PollEvery = time.Second
