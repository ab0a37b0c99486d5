package aaa

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermNasIndex  app.Perm = "prm_nas_index"
	PermNasManage app.Perm = "prm_nas_manage"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("nas", PermNasIndex, PermNasManage)
