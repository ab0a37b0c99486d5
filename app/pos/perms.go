package pos

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermPosSell app.Perm = "prm_pos_sell"
	PermPosVoid app.Perm = "prm_pos_void"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("pos", PermPosSell, PermPosVoid)

// roleGrants are the area's codes the system role templates get.
var roleGrants = map[string][]app.Perm{
	"cashier":  {PermPosSell},
	"reseller": {PermPosSell}, // a reseller sells the cards it holds at its own till
}
