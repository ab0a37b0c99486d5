package cards

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermCardsChangeExpiry   app.Perm = "prm_cards_change_expiry"
	PermCardsDelete         app.Perm = "prm_cards_delete"
	PermCardsDesigner       app.Perm = "prm_cards_designer"
	PermCardsDownload       app.Perm = "prm_cards_download"
	PermCardsGenerateUser   app.Perm = "prm_cards_generate_user"
	PermCardsList           app.Perm = "prm_cards_list"
	PermCardsSuspendRelease app.Perm = "prm_cards_suspend_release"
	PermCardsVerify         app.Perm = "prm_cards_verify"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("cards", PermCardsChangeExpiry, PermCardsDelete, PermCardsDesigner,
	PermCardsDownload, PermCardsGenerateUser, PermCardsList, PermCardsSuspendRelease, PermCardsVerify)

// roleGrants are the area's codes the system role templates get.
var roleGrants = map[string][]app.Perm{
	"reseller": {PermCardsList, PermCardsVerify, PermCardsGenerateUser, PermCardsDownload},
	"support":  {PermCardsList},
	"cashier":  {PermCardsVerify},
}
