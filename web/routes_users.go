// Code first generated from the spec tables; maintained by hand since.

package web

func (s *Server) usersRoutes() []Route {
	return []Route{
		// Subscribers (users) group
		{M: "GET", P: "/users", Access: Staff, Perms: []string{"prm_users_index"}, Buckets: []string{"user_list"}},
		{M: "POST", P: "/users", Access: Staff, Perms: []string{"prm_users_create"}},
		{M: "GET", P: "/users/owner-context", Access: Staff, Perms: []string{"prm_users_create"}},
		{M: "GET", P: "/users/resolve", Access: Staff, Perms: []string{"prm_users_index"}, Buckets: []string{"user_resolve"}},
		{M: "GET", P: "/users/summary", Access: Staff, Perms: []string{"prm_users_index"}},
		{M: "GET", P: "/users/{id}", Access: Staff, Perms: []string{"prm_users_index"}},
		{M: "POST", P: "/users/bulk-add-days", Access: Staff, Perms: []string{"prm_users_extend"}},
		{M: "POST", P: "/users/bulk-add-hours", Access: Staff, Perms: []string{"prm_users_extend"}},
		{M: "POST", P: "/users/bulk-add-traffic", Access: Staff, Perms: []string{"prm_users_add_traffic"}},
		{M: "POST", P: "/users/bulk-delete", Access: Staff, Perms: []string{"prm_users_delete"}},
		{M: "POST", P: "/users/bulk-deposit", Access: Staff, Perms: []string{"prm_users_deposit"}},
		{M: "POST", P: "/users/bulk-deposit/preview", Access: Staff, Perms: []string{"prm_users_deposit"}},
		{M: "POST", P: "/users/bulk-disable", Access: Staff, Perms: []string{"prm_users_enable_disable"}},
		{M: "POST", P: "/users/bulk-disconnect", Access: Staff, Perms: []string{"prm_users_live_traffic"}},
		{M: "POST", P: "/users/bulk-enable", Access: Staff, Perms: []string{"prm_users_enable_disable"}},
		{M: "POST", P: "/users/bulk-extend", Access: Staff, Perms: []string{"prm_users_activate", "prm_users_extend"}},
		{M: "POST", P: "/users/bulk-extend/preview", Access: Staff, Perms: []string{"prm_users_activate", "prm_users_extend"}},
		{M: "POST", P: "/users/bulk-reset-balance", Access: Staff, Perms: []string{"prm_users_withdrawal"}},
		{M: "POST", P: "/users/bulk-reset-quota", Access: Staff, Perms: []string{"prm_users_reset_quota"}},
		{M: "POST", P: "/users/bulk-set-expiration", Access: Staff, Perms: []string{"prm_users_extend"}},
		{M: "POST", P: "/users/bulk-set-group", Access: Staff, Perms: []string{"prm_groups_assign"}},
		{M: "POST", P: "/users/bulk-set-parent", Access: Staff, Perms: []string{"prm_users_change_parent"}},
		{M: "POST", P: "/users/bulk-set-profile", Access: Staff, Perms: []string{"prm_users_change_profile"}},
		{M: "POST", P: "/users/bulk-withdraw", Access: Staff, Perms: []string{"prm_users_withdrawal"}},
		{M: "POST", P: "/users/bulk-withdraw/preview", Access: Staff, Perms: []string{"prm_users_withdrawal"}},
		{M: "PATCH", P: "/users/{id}", Access: Staff, Perms: []string{"prm_users_update"}},
		{M: "POST", P: "/users/{id}/deposit", Access: Staff, Perms: []string{"prm_users_deposit"}},
		{M: "POST", P: "/users/{id}/withdraw", Access: Staff, Perms: []string{"prm_users_withdrawal"}},
		{M: "POST", P: "/users/{id}/pay-debt", Access: Staff, Perms: []string{"prm_users_deposit"}},
		{M: "POST", P: "/users/{id}/activation", Access: Staff, Perms: []string{"prm_users_activate"}},
		{M: "POST", P: "/users/{id}/addons", Access: Staff, Perms: []string{"prm_users_addon"}},
		{M: "POST", P: "/users/{id}/redeem-points", Access: Staff, Perms: []string{"prm_users_points"}},
		{M: "POST", P: "/users/{id}/refund-activation", Access: Staff, Perms: []string{"prm_users_refund"}},
		{M: "POST", P: "/users/{id}/login-as", Access: Staff, Perms: []string{"prm_users_login_as"}, Buckets: []string{"user_login_as"}},
		// Add-ons
		{M: "GET", P: "/addons", Access: Staff, Perms: []string{"prm_users_addon"}},
		{M: "GET", P: "/admin/addons", Access: Staff, Perms: []string{"prm_addons_index"}},
		{M: "POST", P: "/admin/addons", Access: Staff, Perms: []string{"prm_addons_manage"}},
		{M: "POST", P: "/admin/addons/bulk-delete", Access: Staff, Perms: []string{"prm_addons_manage"}},
		{M: "DELETE", P: "/admin/addons/{id}", Access: Staff, Perms: []string{"prm_addons_manage"}},
		{M: "PATCH", P: "/admin/addons/{id}", Access: Staff, Perms: []string{"prm_addons_manage"}},
		{M: "GET", P: "/admin/addons/{id}/allowed-profiles", Access: Staff, Perms: []string{"prm_addons_index"}},
		{M: "PUT", P: "/admin/addons/{id}/allowed-profiles", Access: Staff, Perms: []string{"prm_addons_manage"}},
		// Forms (custom fields)
		{M: "GET", P: "/admin/forms", Access: Staff, Perms: []string{"prm_forms_manage"}},
		{M: "POST", P: "/admin/forms", Access: Staff, Perms: []string{"prm_forms_manage"}},
		{M: "POST", P: "/admin/forms/bulk-delete", Access: Staff, Perms: []string{"prm_forms_manage"}},
		{M: "GET", P: "/admin/forms/manifest", Access: Staff, Perms: []string{"prm_users_create"}},
		{M: "POST", P: "/admin/forms/reorder", Access: Staff, Perms: []string{"prm_forms_manage"}},
		{M: "GET", P: "/admin/forms/{form_name}/schema", Access: Staff, Perms: []string{"prm_users_create"}},
		{M: "DELETE", P: "/admin/forms/{id}", Access: Staff, Perms: []string{"prm_forms_manage"}},
		{M: "PATCH", P: "/admin/forms/{id}", Access: Staff, Perms: []string{"prm_forms_manage"}},
		// Bulk export
		{M: "POST", P: "/exports", Access: Staff, Perms: []string{"prm_users_export"}, Buckets: []string{"t_heavy"}},
		{M: "GET", P: "/exports/{id}/download", Access: Staff, Perms: []string{"prm_users_export"}},
	}
}
