package tools

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermToolsAnnouncements app.Perm = "prm_tools_announcements"
	PermToolsBulkChanges   app.Perm = "prm_tools_bulk_changes"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("tools", PermToolsAnnouncements, PermToolsBulkChanges)
