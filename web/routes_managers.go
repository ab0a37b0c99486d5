// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app"
	"xr/app/identity"
	"xr/app/subs"
)

func (s *Server) managersRoutes() []Route {
	mgr := identity.Manager{}
	return []Route{
		// Managers group
		{M: "POST", P: "/admin/managers/bulk-group", Access: Staff, Perms: []app.Perm{subs.PermGroupsAssign}, H: s.managersBulkGroup, Req: groupReq{}, Resp: app.BulkResult{},
			Summary: "set the group of several managers"},
		{M: "POST", P: "/admin/managers/{id}/group", Access: Staff, Perms: []app.Perm{subs.PermGroupsAssign}, H: s.managerGroup, Req: groupReq{},
			Summary: "set the group of a manager"},
		{M: "GET", P: "/managers", Access: Staff, Perms: []app.Perm{identity.PermManagersIndex}, H: s.listManagers, List: true, Resp: identity.ManagerRow{},
			Summary: "managers of the caller's subtree"},
		{M: "POST", P: "/managers", Status: 201, Access: Staff, Perms: []app.Perm{identity.PermManagersCreate}, H: createCall(identity.CreateManager), Req: identity.ManagerInput{}, Resp: mgr,
			Summary: "create a manager under the caller (or a given parent); 201"},
		{M: "GET", P: "/managers/all", Access: Staff, Perms: []app.Perm{identity.PermManagersIndex}, H: allCall(identity.AllManagers), Resp: identity.ManagerName{}, List: true,
			Summary: "every manager of the caller's subtree in one un-paginated list (pickers)"},
		{M: "POST", P: "/managers/bulk-activate", Access: Staff, Perms: []app.Perm{identity.PermManagersUpdate}, H: bulkCall(managerStatus("active")), Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Summary: "reactivate several suspended managers"},
		{M: "POST", P: "/managers/bulk-delete", Access: Staff, Perms: []app.Perm{identity.PermManagersDelete}, H: bulkCall(identity.DeleteManager), Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Summary: "delete several managers (refused while they own subscribers, cards or managers)"},
		{M: "POST", P: "/managers/bulk-suspend", Access: Staff, Perms: []app.Perm{identity.PermManagersUpdate}, H: bulkCall(managerStatus("suspended")), Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Summary: "suspend several managers"},
		{M: "DELETE", P: "/managers/{id}", Access: Staff, Perms: []app.Perm{identity.PermManagersDelete}, H: idAction(identity.DeleteManager),
			Summary: "delete a manager (refused while it owns subscribers, cards or managers)"},
		{M: "GET", P: "/managers/{id}", Access: Staff, Perms: []app.Perm{identity.PermManagersIndex}, H: idCall(identity.GetManager), Resp: mgr, Summary: "one manager"},
		{M: "PATCH", P: "/managers/{id}", Access: Staff, Perms: []app.Perm{identity.PermManagersUpdate}, H: idBodyCall(identity.UpdateManager), Req: identity.ManagerInput{}, Resp: mgr,
			Summary: "update a manager's fields"},
		{M: "POST", P: "/managers/{id}/2fa/reset", Access: Staff, Perms: []app.Perm{identity.PermManagersUpdate}, SessionOnly: true, H: idAction(identity.ResetManager2FA),
			Summary: "turn off a manager's two-factor sign-in (lost device)"},
		{M: "POST", P: "/managers/{id}/activate", Access: Staff, Perms: []app.Perm{identity.PermManagersUpdate}, H: idAction(managerStatus("active")),
			Summary: "reactivate a suspended manager"},
		{M: "GET", P: "/managers/{id}/debt", Access: Staff, Perms: []app.Perm{identity.PermManagersJournal}, H: idCall(identity.ManagerDebt), Resp: identity.DebtInfo{},
			Summary: "a manager's wallet debt and its limit"},
		{M: "GET", P: "/managers/{id}/invoices", Access: Staff, Perms: []app.Perm{identity.PermManagersInvoices}, H: idListCall(identity.LoanSpec, documents("invoice")), List: true, Resp: identity.Document{},
			Summary: "a manager's invoices"},
		{M: "GET", P: "/managers/{id}/journal", Access: Staff, Perms: []app.Perm{identity.PermManagersJournal}, H: idListCall(identity.JournalSpec, identity.ManagerJournal), List: true, Resp: identity.JournalEntry{},
			Summary: "a manager's wallet journal (every movement)"},
		{M: "GET", P: "/managers/{id}/loans", Access: Staff, Perms: []app.Perm{identity.PermManagersJournal}, H: idListCall(identity.LoanSpec, loans("")), List: true, Resp: identity.LoanEntry{},
			Summary: "a manager's outstanding loans"},
		{M: "POST", P: "/managers/{id}/login-as", Access: Staff, Perms: []app.Perm{identity.PermManagersLoginAs}, SessionOnly: true, H: s.loginAsManager, Resp: identity.LoginResult{},
			Summary: "act as a manager of the subtree (a session token for it)"},
		{M: "GET", P: "/managers/{id}/overview", Access: Staff, Perms: []app.Perm{identity.PermManagersIndex}, H: idCall(identity.ManagerOverview), Resp: identity.Overview{},
			Summary: "a manager's dashboard: wallet, counts of subscribers and cards"},
		{M: "GET", P: "/managers/{id}/payments", Access: Staff, Perms: []app.Perm{identity.PermManagersReceipts}, H: idListCall(identity.LoanSpec, loans("repayment")), List: true, Resp: identity.LoanEntry{},
			Summary: "a manager's loan repayments"},
		{M: "POST", P: "/managers/{id}/points/add", Access: Staff, Perms: []app.Perm{identity.PermManagersRewardPoints}, H: idBodyCall(points(1)), Req: identity.PointsInput{},
			Summary: "add reward points to a manager"},
		{M: "POST", P: "/managers/{id}/points/deduct", Access: Staff, Perms: []app.Perm{identity.PermManagersRewardPoints}, H: idBodyCall(points(-1)), Req: identity.PointsInput{},
			Summary: "deduct reward points from a manager"},
		{M: "GET", P: "/managers/{id}/profile", Access: Staff, Perms: []app.Perm{identity.PermManagersIndex}, H: idCall(identity.ManagerProfile), Resp: identity.Profile{},
			Summary: "a manager with its roles and permissions"},
		{M: "GET", P: "/managers/{id}/receipts", Access: Staff, Perms: []app.Perm{identity.PermManagersReceipts}, H: idListCall(identity.LoanSpec, documents("receipt")), List: true, Resp: identity.Document{},
			Summary: "a manager's receipts (payments received)"},
		{M: "POST", P: "/managers/{id}/reset-password", Access: Staff, Perms: []app.Perm{identity.PermManagersUpdate}, NoImpersonation: true, H: s.resetManagerPassword, Req: resetPasswordReq{},
			Summary: "set a new password for a manager"},
		{M: "GET", P: "/managers/{id}/roles", Access: Staff, Perms: []app.Perm{identity.PermManagersIndex}, H: idAllCall(identity.ManagerRoles), List: true, Resp: identity.Role{},
			Summary: "the roles granted to a manager"},
		{M: "PUT", P: "/managers/{id}/roles", Access: Staff, Perms: []app.Perm{identity.PermRolesManage}, NoImpersonation: true, H: s.putManagerRoles, Req: rolesReq{}, List: true, Resp: identity.Role{},
			Summary: "replace the roles granted to a manager"},
		{M: "POST", P: "/managers/{id}/suspend", Access: Staff, Perms: []app.Perm{identity.PermManagersUpdate}, H: idAction(managerStatus("suspended")),
			Summary: "suspend a manager (its sessions and tokens stop working)"},
		{M: "POST", P: "/managers/{id}/wallet/deposit", Access: Staff, Perms: []app.Perm{identity.PermManagersDeposit}, H: idBodyCall(wallet(identity.WalletDeposit)), Req: identity.WalletInput{}, Resp: identity.WalletResult{},
			Summary: "credit a manager's wallet; request_id required"},
		// Roles group
		{M: "GET", P: "/roles", Access: Staff, Perms: []app.Perm{identity.PermRolesManage}, H: allCall(identity.ListRoles), List: true, Resp: identity.Role{},
			Summary: "roles of the tenant"},
		{M: "POST", P: "/roles", Status: 201, Access: Staff, Perms: []app.Perm{identity.PermRolesManage}, H: createCall(identity.CreateRole), Req: identity.RoleInput{}, Resp: identity.Role{},
			Summary: "create a role with a set of permissions; 201"},
		{M: "POST", P: "/roles/bulk-delete", Access: Staff, Perms: []app.Perm{identity.PermRolesManage}, H: bulkCall(identity.DeleteRole), Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Summary: "delete several roles"},
		{M: "GET", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{identity.PermRolesManage}, H: idCall(identity.GetRole), Resp: identity.Role{},
			Summary: "one role with its permissions"},
		{M: "PATCH", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{identity.PermRolesManage}, H: idBodyCall(identity.UpdateRole), Req: identity.RoleInput{}, Resp: identity.Role{},
			Summary: "update a role's name or permissions"},
		{M: "DELETE", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{identity.PermRolesManage}, H: idAction(identity.DeleteRole), Summary: "delete a role"},
		{M: "PUT", P: "/roles/{id}/portal-permissions", Access: Staff, Perms: []app.Perm{identity.PermRolesManage}, H: s.portalPermissions, Req: portalPermsReq{}, Resp: identity.Role{},
			Summary: "replace what subscribers of a role's managers may do in the portal"},
		// Managers group (named by the idempotency rule)
		{M: "POST", P: "/managers/{id}/wallet/withdraw", Access: Staff, Perms: []app.Perm{identity.PermManagersWithdraw}, H: idBodyCall(wallet(identity.WalletWithdraw)), Req: identity.WalletInput{}, Resp: identity.WalletResult{},
			Summary: "debit a manager's wallet; request_id required"},
		{M: "POST", P: "/managers/{id}/wallet/pay-debt", Access: Staff, Perms: []app.Perm{identity.PermManagersDeposit}, H: idBodyCall(wallet(identity.WalletPayDebt)), Req: identity.WalletInput{}, Resp: identity.WalletResult{},
			Summary: "pay off a manager's wallet debt; request_id required"},
		{M: "POST", P: "/managers/{id}/wallet/topup", Access: Staff, Perms: []app.Perm{identity.PermManagersDeposit}, H: idBodyCall(wallet(identity.WalletTopup)), Req: identity.WalletInput{}, Resp: identity.WalletResult{},
			Summary: "move money from the caller's wallet to a sub-manager's (a loan when the caller allows debt); request_id required"},
	}
}
