// Code first generated from the spec tables; maintained by hand since.

package web

func (s *Server) managersRoutes() []Route {
	return []Route{
		// Managers group
		{M: "POST", P: "/admin/managers/bulk-group", Access: Staff, Perms: []string{"prm_groups_assign"}},
		{M: "POST", P: "/admin/managers/{id}/group", Access: Staff, Perms: []string{"prm_groups_assign"}},
		{M: "GET", P: "/managers", Access: Staff, Perms: []string{"prm_managers_index"}},
		{M: "POST", P: "/managers", Access: Staff, Perms: []string{"prm_managers_create"}},
		{M: "GET", P: "/managers/all", Access: Staff, Perms: []string{"prm_managers_index"}},
		{M: "POST", P: "/managers/bulk-activate", Access: Staff, Perms: []string{"prm_managers_update"}},
		{M: "POST", P: "/managers/bulk-delete", Access: Staff, Perms: []string{"prm_managers_delete"}},
		{M: "POST", P: "/managers/bulk-suspend", Access: Staff, Perms: []string{"prm_managers_update"}},
		{M: "DELETE", P: "/managers/{id}", Access: Staff, Perms: []string{"prm_managers_delete"}},
		{M: "GET", P: "/managers/{id}", Access: Staff, Perms: []string{"prm_managers_index"}},
		{M: "PATCH", P: "/managers/{id}", Access: Staff, Perms: []string{"prm_managers_update"}},
		{M: "POST", P: "/managers/{id}/2fa/reset", Access: Staff, Perms: []string{"prm_managers_update"}, SessionOnly: true},
		{M: "POST", P: "/managers/{id}/activate", Access: Staff, Perms: []string{"prm_managers_update"}},
		{M: "GET", P: "/managers/{id}/debt", Access: Staff, Perms: []string{"prm_managers_journal"}},
		{M: "GET", P: "/managers/{id}/invoices", Access: Staff, Perms: []string{"prm_managers_invoices"}},
		{M: "GET", P: "/managers/{id}/journal", Access: Staff, Perms: []string{"prm_managers_journal"}},
		{M: "GET", P: "/managers/{id}/loans", Access: Staff, Perms: []string{"prm_managers_journal"}},
		{M: "POST", P: "/managers/{id}/login-as", Access: Staff, Perms: []string{"prm_managers_login_as"}, SessionOnly: true},
		{M: "GET", P: "/managers/{id}/overview", Access: Staff, Perms: []string{"prm_managers_index"}},
		{M: "GET", P: "/managers/{id}/payments", Access: Staff, Perms: []string{"prm_managers_receipts"}},
		{M: "POST", P: "/managers/{id}/points/add", Access: Staff, Perms: []string{"prm_managers_reward_points"}},
		{M: "POST", P: "/managers/{id}/points/deduct", Access: Staff, Perms: []string{"prm_managers_reward_points"}},
		{M: "GET", P: "/managers/{id}/profile", Access: Staff, Perms: []string{"prm_managers_index"}},
		{M: "GET", P: "/managers/{id}/receipts", Access: Staff, Perms: []string{"prm_managers_receipts"}},
		{M: "POST", P: "/managers/{id}/reset-password", Access: Staff, Perms: []string{"prm_managers_update"}},
		{M: "GET", P: "/managers/{id}/roles", Access: Staff, Perms: []string{"prm_managers_index"}},
		{M: "PUT", P: "/managers/{id}/roles", Access: Staff, Perms: []string{"prm_roles_manage"}},
		{M: "POST", P: "/managers/{id}/suspend", Access: Staff, Perms: []string{"prm_managers_update"}},
		{M: "POST", P: "/managers/{id}/wallet/deposit", Access: Staff, Perms: []string{"prm_managers_deposit"}},
		// Roles group
		{M: "GET", P: "/roles", Access: Staff, Perms: []string{"prm_roles_manage"}},
		{M: "POST", P: "/roles", Access: Staff, Perms: []string{"prm_roles_manage"}},
		{M: "POST", P: "/roles/bulk-delete", Access: Staff, Perms: []string{"prm_roles_manage"}},
		{M: "GET", P: "/roles/{id}", Access: Staff, Perms: []string{"prm_roles_manage"}},
		{M: "PATCH", P: "/roles/{id}", Access: Staff, Perms: []string{"prm_roles_manage"}},
		{M: "DELETE", P: "/roles/{id}", Access: Staff, Perms: []string{"prm_roles_manage"}},
		{M: "PUT", P: "/roles/{id}/portal-permissions", Access: Staff, Perms: []string{"prm_roles_manage"}},
		// Managers group (named by the idempotency rule)
		{M: "POST", P: "/managers/{id}/wallet/withdraw", Access: Staff, Perms: []string{"prm_managers_withdraw"}},
		{M: "POST", P: "/managers/{id}/wallet/pay-debt", Access: Staff, Perms: []string{"prm_managers_deposit"}},
		{M: "POST", P: "/managers/{id}/wallet/topup", Access: Staff, Perms: []string{"prm_managers_deposit"}},
	}
}
