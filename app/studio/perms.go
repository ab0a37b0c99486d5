package studio

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermStudioDelete  app.Perm = "prm_studio_delete"
	PermStudioEdit    app.Perm = "prm_studio_edit"
	PermStudioIndex   app.Perm = "prm_studio_index"
	PermStudioPublish app.Perm = "prm_studio_publish"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("studio", PermStudioDelete, PermStudioEdit, PermStudioIndex,
	PermStudioPublish)
