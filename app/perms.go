package app

import "sort"

// Permission is one code of the catalogue and the area it belongs to.
type Permission struct {
	Code string `json:"code"`
	Area string `json:"area"`
}

// Permissions is the full permission catalogue: every prm_* code the spec
// names plus those xr's own routes need. It is the only list; roles, scopes
// and the route table are validated against it.
var Permissions = []Permission{
	{"prm_addons_index", "addons"},
	{"prm_addons_manage", "addons"},
	{"prm_cards_change_expiry", "cards"},
	{"prm_cards_delete", "cards"},
	{"prm_cards_designer", "cards"},
	{"prm_cards_download", "cards"},
	{"prm_cards_generate_user", "cards"},
	{"prm_cards_list", "cards"},
	{"prm_cards_suspend_release", "cards"},
	{"prm_cards_verify", "cards"},
	{"prm_forms_manage", "forms"},
	{"prm_groups_assign", "groups"},
	{"prm_groups_manage", "groups"},
	{"prm_hotspot_manage", "hotspot"},
	{"prm_jobs_view", "jobs"},
	{"prm_license_view", "license"},
	{"prm_managers_create", "managers"},
	{"prm_managers_delete", "managers"},
	{"prm_managers_deposit", "managers"},
	{"prm_managers_index", "managers"},
	{"prm_managers_invoices", "managers"},
	{"prm_managers_journal", "managers"},
	{"prm_managers_login_as", "managers"},
	{"prm_managers_receipts", "managers"},
	{"prm_managers_reward_points", "managers"},
	{"prm_managers_self_deposit", "managers"},
	{"prm_managers_update", "managers"},
	{"prm_managers_withdraw", "managers"},
	{"prm_map_edit", "map"},
	{"prm_map_view", "map"},
	{"prm_monitoring_ack", "monitoring"},
	{"prm_monitoring_manage", "monitoring"},
	{"prm_monitoring_view", "monitoring"},
	{"prm_nas_devices_remote", "nas"},
	{"prm_nas_index", "nas"},
	{"prm_nas_manage", "nas"},
	{"prm_nas_remote", "nas"},
	{"prm_notifications_manage", "notifications"},
	{"prm_pos_sell", "pos"},
	{"prm_pos_void", "pos"},
	{"prm_profiles_index", "profiles"},
	{"prm_profiles_manage", "profiles"},
	{"prm_report_activation_stats", "report"},
	{"prm_report_activations", "report"},
	{"prm_report_cards_log", "report"},
	{"prm_report_cards_usage", "report"},
	{"prm_report_debts", "report"},
	{"prm_report_gateway_transactions", "report"},
	{"prm_report_gateway_transactions_all", "report"},
	{"prm_report_money_transfer", "report"},
	{"prm_report_profits", "report"},
	{"prm_report_sessions", "report"},
	{"prm_report_suspicious", "report"},
	{"prm_report_traffic", "report"},
	{"prm_report_users", "report"},
	{"prm_roles_manage", "roles"},
	{"prm_settings", "settings"},
	{"prm_shop_buyer_contact", "shop"},
	{"prm_shop_index", "shop"},
	{"prm_shop_publish", "shop"},
	{"prm_shop_sales", "shop"},
	{"prm_shop_sales_all", "shop"},
	{"prm_studio_delete", "studio"},
	{"prm_studio_edit", "studio"},
	{"prm_studio_index", "studio"},
	{"prm_studio_publish", "studio"},
	{"prm_tickets_assign", "tickets"},
	{"prm_tickets_config", "tickets"},
	{"prm_tickets_reply", "tickets"},
	{"prm_tickets_view", "tickets"},
	{"prm_tools_announcements", "tools"},
	{"prm_tools_backup", "tools"},
	{"prm_tools_bandwidth_control", "tools"},
	{"prm_tools_bulk_changes", "tools"},
	{"prm_tools_dashboard_manager", "tools"},
	{"prm_tools_factory_reset", "tools"},
	{"prm_tools_import", "tools"},
	{"prm_tools_legacy_export", "tools"},
	{"prm_tools_legacy_import", "tools"},
	{"prm_users_activate", "users"},
	{"prm_users_add_traffic", "users"},
	{"prm_users_addon", "users"},
	{"prm_users_change_parent", "users"},
	{"prm_users_change_profile", "users"},
	{"prm_users_create", "users"},
	{"prm_users_delete", "users"},
	{"prm_users_deposit", "users"},
	{"prm_users_enable_disable", "users"},
	{"prm_users_export", "users"},
	{"prm_users_extend", "users"},
	{"prm_users_index", "users"},
	{"prm_users_live_traffic", "users"},
	{"prm_users_login_as", "users"},
	{"prm_users_mac_lock", "users"},
	{"prm_users_ping", "users"},
	{"prm_users_points", "users"},
	{"prm_users_refund", "users"},
	{"prm_users_reset_quota", "users"},
	{"prm_users_update", "users"},
	{"prm_users_withdrawal", "users"},
}

var permSet = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range Permissions {
		m[p.Code] = true
	}
	return m
}()

// KnownPermission reports whether code is in the catalogue.
func KnownPermission(code string) bool { return permSet[code] }

// AllPermissionCodes lists every code, sorted.
func AllPermissionCodes() []string {
	out := make([]string, 0, len(Permissions))
	for _, p := range Permissions {
		out = append(out, p.Code)
	}
	sort.Strings(out)
	return out
}

// PortalPermissions is the separate catalogue of subscriber-portal
// capabilities a role can carry; it has no effect on the admin API.
var PortalPermissions = []string{
	"portal_view_usage", "portal_view_invoices", "portal_renew", "portal_change_profile",
	"portal_deposit", "portal_redeem_cards", "portal_tickets", "portal_speed", "portal_parental",
}
