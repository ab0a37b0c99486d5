// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app"
	"xr/app/identity"
)

func (s *Server) managersRoutes() []Route {
	mgr := identity.Manager{}
	return []Route{
		// Managers group
		{M: "POST", P: "/admin/managers/bulk-group", Access: Staff, Perms: []app.Perm{app.PermGroupsAssign}, H: s.managersBulkGroup, Req: groupReq{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/admin/managers/{id}/group", Access: Staff, Perms: []app.Perm{app.PermGroupsAssign}, H: s.managerGroup, Req: groupReq{}},
		{M: "GET", P: "/managers", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: s.listManagers, List: true, Resp: identity.ManagerRow{}},
		{M: "POST", P: "/managers", Access: Staff, Perms: []app.Perm{app.PermManagersCreate}, H: s.createManager, Req: identity.ManagerInput{}, Resp: mgr},
		{M: "GET", P: "/managers/all", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: allCall(identity.AllManagers), Resp: identity.ManagerName{}, List: true},
		{M: "POST", P: "/managers/bulk-activate", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: bulkCall(managerStatus("active")), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/managers/bulk-delete", Access: Staff, Perms: []app.Perm{app.PermManagersDelete}, H: bulkCall(identity.DeleteManager), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/managers/bulk-suspend", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: bulkCall(managerStatus("suspended")), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "DELETE", P: "/managers/{id}", Access: Staff, Perms: []app.Perm{app.PermManagersDelete}, H: idAction(identity.DeleteManager)},
		{M: "GET", P: "/managers/{id}", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: idCall(identity.GetManager), Resp: mgr},
		{M: "PATCH", P: "/managers/{id}", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: idBodyCall(identity.UpdateManager), Req: identity.ManagerInput{}, Resp: mgr},
		{M: "POST", P: "/managers/{id}/2fa/reset", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, SessionOnly: true, H: idAction(identity.ResetManager2FA)},
		{M: "POST", P: "/managers/{id}/activate", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: idAction(managerStatus("active"))},
		{M: "GET", P: "/managers/{id}/debt", Access: Staff, Perms: []app.Perm{app.PermManagersJournal}, H: idCall(identity.ManagerDebt), Resp: identity.DebtInfo{}},
		{M: "GET", P: "/managers/{id}/invoices", Access: Staff, Perms: []app.Perm{app.PermManagersInvoices}, H: idListCall(identity.LoanSpec, documents("invoice")), List: true, Resp: identity.Document{}},
		{M: "GET", P: "/managers/{id}/journal", Access: Staff, Perms: []app.Perm{app.PermManagersJournal}, H: idListCall(identity.JournalSpec, identity.ManagerJournal), List: true, Resp: identity.JournalEntry{}},
		{M: "GET", P: "/managers/{id}/loans", Access: Staff, Perms: []app.Perm{app.PermManagersJournal}, H: idListCall(identity.LoanSpec, loans("")), List: true, Resp: identity.LoanEntry{}},
		{M: "POST", P: "/managers/{id}/login-as", Access: Staff, Perms: []app.Perm{app.PermManagersLoginAs}, SessionOnly: true, H: s.loginAsManager, Resp: identity.LoginResult{}},
		{M: "GET", P: "/managers/{id}/overview", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: idCall(identity.ManagerOverview), Resp: identity.Overview{}},
		{M: "GET", P: "/managers/{id}/payments", Access: Staff, Perms: []app.Perm{app.PermManagersReceipts}, H: idListCall(identity.LoanSpec, loans("repayment")), List: true, Resp: identity.LoanEntry{}},
		{M: "POST", P: "/managers/{id}/points/add", Access: Staff, Perms: []app.Perm{app.PermManagersRewardPoints}, H: idBodyCall(points(1)), Req: identity.PointsInput{}},
		{M: "POST", P: "/managers/{id}/points/deduct", Access: Staff, Perms: []app.Perm{app.PermManagersRewardPoints}, H: idBodyCall(points(-1)), Req: identity.PointsInput{}},
		{M: "GET", P: "/managers/{id}/profile", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: idCall(identity.ManagerProfile), Resp: identity.Profile{}},
		{M: "GET", P: "/managers/{id}/receipts", Access: Staff, Perms: []app.Perm{app.PermManagersReceipts}, H: idListCall(identity.LoanSpec, documents("receipt")), List: true, Resp: identity.Document{}},
		{M: "POST", P: "/managers/{id}/reset-password", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, NoImpersonation: true, H: s.resetManagerPassword, Req: resetPasswordReq{}},
		{M: "GET", P: "/managers/{id}/roles", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: idAllCall(identity.ManagerRoles), List: true, Resp: identity.Role{}},
		{M: "PUT", P: "/managers/{id}/roles", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, NoImpersonation: true, H: s.putManagerRoles, Req: rolesReq{}, List: true, Resp: identity.Role{}},
		{M: "POST", P: "/managers/{id}/suspend", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: idAction(managerStatus("suspended"))},
		{M: "POST", P: "/managers/{id}/wallet/deposit", Access: Staff, Perms: []app.Perm{app.PermManagersDeposit}, H: idBodyCall(wallet(identity.WalletDeposit)), Req: identity.WalletInput{}, Resp: identity.WalletResult{}},
		// Roles group
		{M: "GET", P: "/roles", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: allCall(identity.ListRoles), List: true, Resp: identity.Role{}},
		{M: "POST", P: "/roles", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: s.createRole, Req: identity.RoleInput{}, Resp: identity.Role{}},
		{M: "POST", P: "/roles/bulk-delete", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: bulkCall(identity.DeleteRole), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "GET", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: idCall(identity.GetRole), Resp: identity.Role{}},
		{M: "PATCH", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: idBodyCall(identity.UpdateRole), Req: identity.RoleInput{}, Resp: identity.Role{}},
		{M: "DELETE", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: idAction(identity.DeleteRole)},
		{M: "PUT", P: "/roles/{id}/portal-permissions", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: s.portalPermissions, Req: portalPermsReq{}, Resp: identity.Role{}},
		// Managers group (named by the idempotency rule)
		{M: "POST", P: "/managers/{id}/wallet/withdraw", Access: Staff, Perms: []app.Perm{app.PermManagersWithdraw}, H: idBodyCall(wallet(identity.WalletWithdraw)), Req: identity.WalletInput{}, Resp: identity.WalletResult{}},
		{M: "POST", P: "/managers/{id}/wallet/pay-debt", Access: Staff, Perms: []app.Perm{app.PermManagersDeposit}, H: idBodyCall(wallet(identity.WalletPayDebt)), Req: identity.WalletInput{}, Resp: identity.WalletResult{}},
		{M: "POST", P: "/managers/{id}/wallet/topup", Access: Staff, Perms: []app.Perm{app.PermManagersDeposit}, H: idBodyCall(wallet(identity.WalletTopup)), Req: identity.WalletInput{}, Resp: identity.WalletResult{}},
	}
}
