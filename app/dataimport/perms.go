package dataimport

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermToolsImport       app.Perm = "prm_tools_import"
	PermToolsLegacyExport app.Perm = "prm_tools_legacy_export"
	PermToolsLegacyImport app.Perm = "prm_tools_legacy_import"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("tools", PermToolsImport, PermToolsLegacyExport, PermToolsLegacyImport)
