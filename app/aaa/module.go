package aaa

import (
	"context"
	"time"

	"xr/app"
)

// Module is what the RADIUS data side contributes to an instance: the
// session archive job, the session sweep (a tenant task), the NAS
// permissions and the RADIUS settings, the session events, the sealed NAS
// secrets (the tenant's and the instance directory's copy). The RADIUS
// service itself is built by aaa.New where it serves (xr serve), and
// attaches itself to its App there.
var Module = app.Module{
	Name:        "aaa",
	Jobs:        map[string]app.JobHandler{app.SessionArchiveJob: runArchive},
	TenantTasks: []app.TenantTask{{Name: SweepTask, Every: SweepEvery, Run: sweepTask}},
	Permissions: permCatalogue,
	Settings:    settingDecls,
	Events: []app.EventType{
		{Key: "user.disconnected", Category: "lifecycle"},
		{Key: "usage.threshold", Category: "usage"},
		{Key: "session.started", Category: "usage"},
		{Key: "session.ended", Category: "usage"},
	},
	SealedColumns: []app.SealedColumn{{Table: "nas", Column: "secret_sealed"}},
	// The NAS directory's secrets, the instance CA and the RadSec/EAP
	// certificates' keys.
	InstanceSealedColumns: []app.SealedColumn{{Table: "nas_index", Column: "secret_sealed"}, {Table: "radsec_ca", Column: "key_sealed"},
		{Table: "radsec_server_certs", Column: "key_sealed"}, {Table: "radsec_certs", Column: "key_sealed"}},
}

// SweepTask is the session sweep (Sweep) as a tenant task: every
// SweepEvery while the tenant has open sessions; a tenant with none is not
// swept (accounting makes it due again when a session opens).
const (
	SweepTask  = "aaa.sweep"
	SweepEvery = 30 * time.Second
)

func sweepTask(ctx context.Context, t *app.Tenant) (time.Time, error) {
	s := ServiceOf(t.App)
	if s == nil {
		return time.Time{}, nil // no RADIUS service in this process
	}
	// No open session: nothing to sweep, and the tenant's RADIUS index
	// need not load for it.
	open := func() (bool, error) {
		var open bool
		err := t.DB.R.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM radius_sessions WHERE stop_time IS NULL)`).Scan(&open)
		return open, err
	}
	if ok, err := open(); err != nil || !ok {
		return time.Time{}, err
	}
	if _, err := s.Sweep(ctx, t.Slug); err != nil {
		return time.Time{}, err
	}
	if ok, err := open(); err != nil || !ok {
		return time.Time{}, err
	}
	return t.Now().Add(SweepEvery), nil
}
