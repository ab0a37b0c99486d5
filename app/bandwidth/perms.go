package bandwidth

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermToolsBandwidthControl app.Perm = "prm_tools_bandwidth_control"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("tools", PermToolsBandwidthControl)
