package reports

import "xr/app"

// Module is the reporting area: its permission codes.
var Module = app.Module{
	Name:        "reports",
	Permissions: permCatalogue,
	RoleGrants:  roleGrants,
}
