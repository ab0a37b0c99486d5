// Package payments is the one payment mechanism: providers (manual, stripe)
// behind one interface, payments as state machines credited exactly once.
package payments

import "xr/app"

// Module is the payments area.
var Module = app.Module{
	Name: "payments",
	Jobs: map[string]app.JobHandler{jobExpire: expireJob},
}
