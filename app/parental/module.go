// Package parental is parental control (blocked windows, pause, PIN) and
// guest access on a subscriber's account, enforced by RADIUS.
package parental

import "xr/app"

// Module is the parental-control and guest area: its job is the
// Disconnect at a block start (parental.edge).
var Module = app.Module{
	Name: "parental",
	Jobs: map[string]app.JobHandler{EdgeJob: runEdge},
	Buckets: map[string]app.BucketDef{
		"portal_parental_unlock": {Scope: app.ScopeIP, Limit: 20},
		"portal_guest":           {Scope: app.ScopeSubscriber, Limit: 20},
	},
	SealedColumns: []app.SealedColumn{{Table: "guest_accesses", Column: "password_sealed"}},
}
