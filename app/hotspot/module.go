// Package hotspot is the MikroTik hotspot page sets a tenant serves to guests
// before login: shipped templates, the tenant's own pages (sanitized),
// preview and the RouterOS zip.
package hotspot

import "xr/app"

// Module is the hotspot area: a manager who owns page sets cannot be
// deleted.
var Module = app.Module{
	Name:        "hotspot",
	ManagerRefs: []string{`SELECT COUNT(*) FROM hotspot_pages WHERE manager_id = ?`},
	Permissions: permCatalogue,
}
