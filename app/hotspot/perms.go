package hotspot

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermHotspotManage app.Perm = "prm_hotspot_manage"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("hotspot", PermHotspotManage)
