package aaa

import "xr/app"

// Module is what the RADIUS data side contributes to an instance: the
// session archive job. The RADIUS service itself is built by aaa.New where
// it serves (xr serve), and attaches itself to its App there.
var Module = app.Module{
	Name: "aaa",
	Jobs: map[string]app.JobHandler{app.SessionArchiveJob: runArchive},
}
