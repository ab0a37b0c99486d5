// Package pos is the point of sale: a cashier's shifts and till sales of
// cards, renewals, add-ons and wallet top-ups.
package pos

import "xr/app"

// Module is the point-of-sale area. A manager who kept a till (a shift)
// cannot be deleted: its sales name it.
var Module = app.Module{
	Name:        "pos",
	ManagerRefs: []string{`SELECT COUNT(*) FROM pos_shifts WHERE cashier_id = ?`},
	Permissions: permCatalogue,
	RoleGrants:  roleGrants,
}
