// Code first generated from the spec tables; maintained by hand since.

package web

import "xr/app"

func (s *Server) managersRoutes() []Route {
	mgr := app.Manager{}
	return []Route{
		// Managers group
		{M: "POST", P: "/admin/managers/bulk-group", Access: Staff, Perms: []string{"prm_groups_assign"}, H: s.managersBulkGroup, Req: groupReq{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/admin/managers/{id}/group", Access: Staff, Perms: []string{"prm_groups_assign"}, H: s.managerGroup, Req: groupReq{}},
		{M: "GET", P: "/managers", Access: Staff, Perms: []string{"prm_managers_index"}, H: s.listManagers, List: true, Resp: app.ManagerRow{}},
		{M: "POST", P: "/managers", Access: Staff, Perms: []string{"prm_managers_create"}, H: s.createManager, Req: app.ManagerInput{}, Resp: mgr},
		{M: "GET", P: "/managers/all", Access: Staff, Perms: []string{"prm_managers_index"}, H: allCall(app.AllManagers), Resp: app.ManagerName{}, List: true},
		{M: "POST", P: "/managers/bulk-activate", Access: Staff, Perms: []string{"prm_managers_update"}, H: bulkCall(managerStatus("active")), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/managers/bulk-delete", Access: Staff, Perms: []string{"prm_managers_delete"}, H: bulkCall(app.DeleteManager), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "POST", P: "/managers/bulk-suspend", Access: Staff, Perms: []string{"prm_managers_update"}, H: bulkCall(managerStatus("suspended")), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "DELETE", P: "/managers/{id}", Access: Staff, Perms: []string{"prm_managers_delete"}, H: idAction(app.DeleteManager)},
		{M: "GET", P: "/managers/{id}", Access: Staff, Perms: []string{"prm_managers_index"}, H: idCall(app.GetManager), Resp: mgr},
		{M: "PATCH", P: "/managers/{id}", Access: Staff, Perms: []string{"prm_managers_update"}, H: idBodyCall(app.UpdateManager), Req: app.ManagerInput{}, Resp: mgr},
		{M: "POST", P: "/managers/{id}/2fa/reset", Access: Staff, Perms: []string{"prm_managers_update"}, SessionOnly: true, H: idAction(app.ResetManager2FA)},
		{M: "POST", P: "/managers/{id}/activate", Access: Staff, Perms: []string{"prm_managers_update"}, H: idAction(managerStatus("active"))},
		{M: "GET", P: "/managers/{id}/debt", Access: Staff, Perms: []string{"prm_managers_journal"}, H: idCall(app.ManagerDebt), Resp: app.DebtInfo{}},
		{M: "GET", P: "/managers/{id}/invoices", Access: Staff, Perms: []string{"prm_managers_invoices"}, H: idListCall(app.LoanSpec, documents("invoice")), List: true, Resp: app.Document{}},
		{M: "GET", P: "/managers/{id}/journal", Access: Staff, Perms: []string{"prm_managers_journal"}, H: idListCall(app.JournalSpec, app.ManagerJournal), List: true, Resp: app.JournalEntry{}},
		{M: "GET", P: "/managers/{id}/loans", Access: Staff, Perms: []string{"prm_managers_journal"}, H: idListCall(app.LoanSpec, loans("")), List: true, Resp: app.LoanEntry{}},
		{M: "POST", P: "/managers/{id}/login-as", Access: Staff, Perms: []string{"prm_managers_login_as"}, SessionOnly: true, H: s.loginAsManager, Resp: app.LoginResult{}},
		{M: "GET", P: "/managers/{id}/overview", Access: Staff, Perms: []string{"prm_managers_index"}, H: idCall(app.ManagerOverview), Resp: app.Overview{}},
		{M: "GET", P: "/managers/{id}/payments", Access: Staff, Perms: []string{"prm_managers_receipts"}, H: idListCall(app.LoanSpec, loans("repayment")), List: true, Resp: app.LoanEntry{}},
		{M: "POST", P: "/managers/{id}/points/add", Access: Staff, Perms: []string{"prm_managers_reward_points"}, H: idBodyCall(points(1)), Req: app.PointsInput{}},
		{M: "POST", P: "/managers/{id}/points/deduct", Access: Staff, Perms: []string{"prm_managers_reward_points"}, H: idBodyCall(points(-1)), Req: app.PointsInput{}},
		{M: "GET", P: "/managers/{id}/profile", Access: Staff, Perms: []string{"prm_managers_index"}, H: idCall(app.ManagerProfile), Resp: app.Profile{}},
		{M: "GET", P: "/managers/{id}/receipts", Access: Staff, Perms: []string{"prm_managers_receipts"}, H: idListCall(app.LoanSpec, documents("receipt")), List: true, Resp: app.Document{}},
		{M: "POST", P: "/managers/{id}/reset-password", Access: Staff, Perms: []string{"prm_managers_update"}, NoImpersonation: true, H: s.resetManagerPassword, Req: resetPasswordReq{}},
		{M: "GET", P: "/managers/{id}/roles", Access: Staff, Perms: []string{"prm_managers_index"}, H: idAllCall(app.ManagerRoles), List: true, Resp: app.Role{}},
		{M: "PUT", P: "/managers/{id}/roles", Access: Staff, Perms: []string{"prm_roles_manage"}, NoImpersonation: true, H: s.putManagerRoles, Req: rolesReq{}, List: true, Resp: app.Role{}},
		{M: "POST", P: "/managers/{id}/suspend", Access: Staff, Perms: []string{"prm_managers_update"}, H: idAction(managerStatus("suspended"))},
		{M: "POST", P: "/managers/{id}/wallet/deposit", Access: Staff, Perms: []string{"prm_managers_deposit"}, H: idBodyCall(wallet(app.WalletDeposit)), Req: app.WalletInput{}, Resp: app.WalletResult{}},
		// Roles group
		{M: "GET", P: "/roles", Access: Staff, Perms: []string{"prm_roles_manage"}, H: allCall(app.ListRoles), List: true, Resp: app.Role{}},
		{M: "POST", P: "/roles", Access: Staff, Perms: []string{"prm_roles_manage"}, H: s.createRole, Req: app.RoleInput{}, Resp: app.Role{}},
		{M: "POST", P: "/roles/bulk-delete", Access: Staff, Perms: []string{"prm_roles_manage"}, H: bulkCall(app.DeleteRole), Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "GET", P: "/roles/{id}", Access: Staff, Perms: []string{"prm_roles_manage"}, H: idCall(app.GetRole), Resp: app.Role{}},
		{M: "PATCH", P: "/roles/{id}", Access: Staff, Perms: []string{"prm_roles_manage"}, H: idBodyCall(app.UpdateRole), Req: app.RoleInput{}, Resp: app.Role{}},
		{M: "DELETE", P: "/roles/{id}", Access: Staff, Perms: []string{"prm_roles_manage"}, H: idAction(app.DeleteRole)},
		{M: "PUT", P: "/roles/{id}/portal-permissions", Access: Staff, Perms: []string{"prm_roles_manage"}, H: s.portalPermissions, Req: portalPermsReq{}, Resp: app.Role{}},
		// Managers group (named by the idempotency rule)
		{M: "POST", P: "/managers/{id}/wallet/withdraw", Access: Staff, Perms: []string{"prm_managers_withdraw"}, H: idBodyCall(wallet(app.WalletWithdraw)), Req: app.WalletInput{}, Resp: app.WalletResult{}},
		{M: "POST", P: "/managers/{id}/wallet/pay-debt", Access: Staff, Perms: []string{"prm_managers_deposit"}, H: idBodyCall(wallet(app.WalletPayDebt)), Req: app.WalletInput{}, Resp: app.WalletResult{}},
		{M: "POST", P: "/managers/{id}/wallet/topup", Access: Staff, Perms: []string{"prm_managers_deposit"}, H: idBodyCall(wallet(app.WalletTopup)), Req: app.WalletInput{}, Resp: app.WalletResult{}},
	}
}
