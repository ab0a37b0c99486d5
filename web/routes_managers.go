// Code first generated from the spec tables; maintained by hand since.

package web

import "xr/app"

func (s *Server) managersRoutes() []Route {
	mgr := app.Manager{}
	return []Route{
		// Managers group
		{M: "POST", P: "/admin/managers/bulk-group", Access: Staff, Perms: []app.Perm{app.PermGroupsAssign}, H: s.managersBulkGroup, Req: groupReq{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/admin/managers/{id}/group", Access: Staff, Perms: []app.Perm{app.PermGroupsAssign}, H: s.managerGroup, Req: groupReq{}},
		{M: "GET", P: "/managers", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: s.listManagers, List: true, Resp: app.ManagerRow{}},
		{M: "POST", P: "/managers", Access: Staff, Perms: []app.Perm{app.PermManagersCreate}, H: s.createManager, Req: app.ManagerInput{}, Resp: mgr},
		{M: "GET", P: "/managers/all", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: allCall(app.AllManagers), Resp: app.ManagerName{}, List: true},
		{M: "POST", P: "/managers/bulk-activate", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: bulkCall(managerStatus("active")), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/managers/bulk-delete", Access: Staff, Perms: []app.Perm{app.PermManagersDelete}, H: bulkCall(app.DeleteManager), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/managers/bulk-suspend", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: bulkCall(managerStatus("suspended")), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "DELETE", P: "/managers/{id}", Access: Staff, Perms: []app.Perm{app.PermManagersDelete}, H: idAction(app.DeleteManager)},
		{M: "GET", P: "/managers/{id}", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: idCall(app.GetManager), Resp: mgr},
		{M: "PATCH", P: "/managers/{id}", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: idBodyCall(app.UpdateManager), Req: app.ManagerInput{}, Resp: mgr},
		{M: "POST", P: "/managers/{id}/2fa/reset", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, SessionOnly: true, H: idAction(app.ResetManager2FA)},
		{M: "POST", P: "/managers/{id}/activate", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: idAction(managerStatus("active"))},
		{M: "GET", P: "/managers/{id}/debt", Access: Staff, Perms: []app.Perm{app.PermManagersJournal}, H: idCall(app.ManagerDebt), Resp: app.DebtInfo{}},
		{M: "GET", P: "/managers/{id}/invoices", Access: Staff, Perms: []app.Perm{app.PermManagersInvoices}, H: idListCall(app.LoanSpec, documents("invoice")), List: true, Resp: app.Document{}},
		{M: "GET", P: "/managers/{id}/journal", Access: Staff, Perms: []app.Perm{app.PermManagersJournal}, H: idListCall(app.JournalSpec, app.ManagerJournal), List: true, Resp: app.JournalEntry{}},
		{M: "GET", P: "/managers/{id}/loans", Access: Staff, Perms: []app.Perm{app.PermManagersJournal}, H: idListCall(app.LoanSpec, loans("")), List: true, Resp: app.LoanEntry{}},
		{M: "POST", P: "/managers/{id}/login-as", Access: Staff, Perms: []app.Perm{app.PermManagersLoginAs}, SessionOnly: true, H: s.loginAsManager, Resp: app.LoginResult{}},
		{M: "GET", P: "/managers/{id}/overview", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: idCall(app.ManagerOverview), Resp: app.Overview{}},
		{M: "GET", P: "/managers/{id}/payments", Access: Staff, Perms: []app.Perm{app.PermManagersReceipts}, H: idListCall(app.LoanSpec, loans("repayment")), List: true, Resp: app.LoanEntry{}},
		{M: "POST", P: "/managers/{id}/points/add", Access: Staff, Perms: []app.Perm{app.PermManagersRewardPoints}, H: idBodyCall(points(1)), Req: app.PointsInput{}},
		{M: "POST", P: "/managers/{id}/points/deduct", Access: Staff, Perms: []app.Perm{app.PermManagersRewardPoints}, H: idBodyCall(points(-1)), Req: app.PointsInput{}},
		{M: "GET", P: "/managers/{id}/profile", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: idCall(app.ManagerProfile), Resp: app.Profile{}},
		{M: "GET", P: "/managers/{id}/receipts", Access: Staff, Perms: []app.Perm{app.PermManagersReceipts}, H: idListCall(app.LoanSpec, documents("receipt")), List: true, Resp: app.Document{}},
		{M: "POST", P: "/managers/{id}/reset-password", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, NoImpersonation: true, H: s.resetManagerPassword, Req: resetPasswordReq{}},
		{M: "GET", P: "/managers/{id}/roles", Access: Staff, Perms: []app.Perm{app.PermManagersIndex}, H: idAllCall(app.ManagerRoles), List: true, Resp: app.Role{}},
		{M: "PUT", P: "/managers/{id}/roles", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, NoImpersonation: true, H: s.putManagerRoles, Req: rolesReq{}, List: true, Resp: app.Role{}},
		{M: "POST", P: "/managers/{id}/suspend", Access: Staff, Perms: []app.Perm{app.PermManagersUpdate}, H: idAction(managerStatus("suspended"))},
		{M: "POST", P: "/managers/{id}/wallet/deposit", Access: Staff, Perms: []app.Perm{app.PermManagersDeposit}, H: idBodyCall(wallet(app.WalletDeposit)), Req: app.WalletInput{}, Resp: app.WalletResult{}},
		// Roles group
		{M: "GET", P: "/roles", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: allCall(app.ListRoles), List: true, Resp: app.Role{}},
		{M: "POST", P: "/roles", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: s.createRole, Req: app.RoleInput{}, Resp: app.Role{}},
		{M: "POST", P: "/roles/bulk-delete", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: bulkCall(app.DeleteRole), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "GET", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: idCall(app.GetRole), Resp: app.Role{}},
		{M: "PATCH", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: idBodyCall(app.UpdateRole), Req: app.RoleInput{}, Resp: app.Role{}},
		{M: "DELETE", P: "/roles/{id}", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: idAction(app.DeleteRole)},
		{M: "PUT", P: "/roles/{id}/portal-permissions", Access: Staff, Perms: []app.Perm{app.PermRolesManage}, H: s.portalPermissions, Req: portalPermsReq{}, Resp: app.Role{}},
		// Managers group (named by the idempotency rule)
		{M: "POST", P: "/managers/{id}/wallet/withdraw", Access: Staff, Perms: []app.Perm{app.PermManagersWithdraw}, H: idBodyCall(wallet(app.WalletWithdraw)), Req: app.WalletInput{}, Resp: app.WalletResult{}},
		{M: "POST", P: "/managers/{id}/wallet/pay-debt", Access: Staff, Perms: []app.Perm{app.PermManagersDeposit}, H: idBodyCall(wallet(app.WalletPayDebt)), Req: app.WalletInput{}, Resp: app.WalletResult{}},
		{M: "POST", P: "/managers/{id}/wallet/topup", Access: Staff, Perms: []app.Perm{app.PermManagersDeposit}, H: idBodyCall(wallet(app.WalletTopup)), Req: app.WalletInput{}, Resp: app.WalletResult{}},
	}
}
