// Package hotspot is the MikroTik hotspot page sets a tenant serves to guests
// before login: shipped templates, the tenant's own pages (sanitized),
// preview and the RouterOS zip.
package hotspot

import "xr/app"

// Module is the hotspot area.
var Module = app.Module{Name: "hotspot"}
