package backups

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermToolsBackup       app.Perm = "prm_tools_backup"
	PermToolsFactoryReset app.Perm = "prm_tools_factory_reset"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("tools", PermToolsBackup, PermToolsFactoryReset)
