package subs

import "xr/app"

// Module is what the subscribers area contributes to an instance.
var Module = app.Module{
	Name:        "subs",
	Jobs:        map[string]app.JobHandler{ExportKind: runExport},
	ManagerRefs: []string{`SELECT COUNT(*) FROM users WHERE parent_id = ?`},
}
