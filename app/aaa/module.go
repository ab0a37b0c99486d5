package aaa

import "xr/app"

// Module is what the RADIUS data side contributes to an instance: the
// session archive job, the NAS permissions and the RADIUS settings, the
// session events. The RADIUS service itself is built by aaa.New where it
// serves (xr serve), and attaches itself to its App there.
var Module = app.Module{
	Name:        "aaa",
	Jobs:        map[string]app.JobHandler{app.SessionArchiveJob: runArchive},
	Permissions: permCatalogue,
	Settings:    settingDecls,
	Events: []app.EventType{
		{Key: "user.disconnected", Category: "lifecycle"},
		{Key: "usage.threshold", Category: "usage"},
		{Key: "session.started", Category: "usage"},
		{Key: "session.ended", Category: "usage"},
	},
	SealedColumns: []app.SealedColumn{{Table: "nas", Column: "secret_sealed"}},
}
