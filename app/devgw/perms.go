package devgw

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermNasDevicesRemote app.Perm = "prm_nas_devices_remote"
	PermNasRemote        app.Perm = "prm_nas_remote"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("nas", PermNasDevicesRemote, PermNasRemote)
