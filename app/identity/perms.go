package identity

import (
	"slices"

	"xr/app"
)

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermManagersCreate       app.Perm = "prm_managers_create"
	PermManagersDelete       app.Perm = "prm_managers_delete"
	PermManagersDeposit      app.Perm = "prm_managers_deposit"
	PermManagersIndex        app.Perm = "prm_managers_index"
	PermManagersInvoices     app.Perm = "prm_managers_invoices"
	PermManagersJournal      app.Perm = "prm_managers_journal"
	PermManagersLoginAs      app.Perm = "prm_managers_login_as"
	PermManagersReceipts     app.Perm = "prm_managers_receipts"
	PermManagersRewardPoints app.Perm = "prm_managers_reward_points"
	PermManagersSelfDeposit  app.Perm = "prm_managers_self_deposit"
	PermManagersUpdate       app.Perm = "prm_managers_update"
	PermManagersWithdraw     app.Perm = "prm_managers_withdraw"
	PermRolesManage          app.Perm = "prm_roles_manage"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = slices.Concat(
	app.PermGroup("managers", PermManagersCreate, PermManagersDelete, PermManagersDeposit,
		PermManagersIndex, PermManagersInvoices, PermManagersJournal, PermManagersLoginAs,
		PermManagersReceipts, PermManagersRewardPoints, PermManagersSelfDeposit, PermManagersUpdate,
		PermManagersWithdraw),
	app.PermGroup("roles", PermRolesManage),
)

// roleGrants are the area's codes the system role templates get.
var roleGrants = map[string][]app.Perm{
	"reseller": {PermManagersIndex, PermManagersCreate, PermManagersUpdate, PermManagersDeposit,
		PermManagersJournal, PermManagersSelfDeposit},
}
