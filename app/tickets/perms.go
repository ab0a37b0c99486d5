package tickets

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermTicketsAssign app.Perm = "prm_tickets_assign"
	PermTicketsConfig app.Perm = "prm_tickets_config"
	PermTicketsReply  app.Perm = "prm_tickets_reply"
	PermTicketsView   app.Perm = "prm_tickets_view"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("tickets", PermTicketsAssign, PermTicketsConfig, PermTicketsReply,
	PermTicketsView)

// roleGrants are the area's codes the system role templates get.
var roleGrants = map[string][]app.Perm{
	"support": {PermTicketsView, PermTicketsReply},
}
