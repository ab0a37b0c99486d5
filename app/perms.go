package app

import "slices"

// Perm is a permission code of the catalogue. Code names a permission by
// its constant (PermUsersIndex, never the bare "prm_users_index"), so a
// misspelt code does not compile; strings from storage or a request become
// a Perm only after KnownPermission accepts them.
type Perm string

// The catalogue's codes, one constant each, named from the code: drop
// "prm_", CamelCase the rest, prefix Perm. TestPermConstantsMatchCatalogue
// holds this list and Permissions to each other.
const (
	PermAddonsIndex                  Perm = "prm_addons_index"
	PermAddonsManage                 Perm = "prm_addons_manage"
	PermCardsChangeExpiry            Perm = "prm_cards_change_expiry"
	PermCardsDelete                  Perm = "prm_cards_delete"
	PermCardsDesigner                Perm = "prm_cards_designer"
	PermCardsDownload                Perm = "prm_cards_download"
	PermCardsGenerateUser            Perm = "prm_cards_generate_user"
	PermCardsList                    Perm = "prm_cards_list"
	PermCardsSuspendRelease          Perm = "prm_cards_suspend_release"
	PermCardsVerify                  Perm = "prm_cards_verify"
	PermFormsManage                  Perm = "prm_forms_manage"
	PermGroupsAssign                 Perm = "prm_groups_assign"
	PermGroupsManage                 Perm = "prm_groups_manage"
	PermHotspotManage                Perm = "prm_hotspot_manage"
	PermJobsView                     Perm = "prm_jobs_view"
	PermLicenseView                  Perm = "prm_license_view"
	PermManagersCreate               Perm = "prm_managers_create"
	PermManagersDelete               Perm = "prm_managers_delete"
	PermManagersDeposit              Perm = "prm_managers_deposit"
	PermManagersIndex                Perm = "prm_managers_index"
	PermManagersInvoices             Perm = "prm_managers_invoices"
	PermManagersJournal              Perm = "prm_managers_journal"
	PermManagersLoginAs              Perm = "prm_managers_login_as"
	PermManagersReceipts             Perm = "prm_managers_receipts"
	PermManagersRewardPoints         Perm = "prm_managers_reward_points"
	PermManagersSelfDeposit          Perm = "prm_managers_self_deposit"
	PermManagersUpdate               Perm = "prm_managers_update"
	PermManagersWithdraw             Perm = "prm_managers_withdraw"
	PermMapEdit                      Perm = "prm_map_edit"
	PermMapView                      Perm = "prm_map_view"
	PermMonitoringAck                Perm = "prm_monitoring_ack"
	PermMonitoringManage             Perm = "prm_monitoring_manage"
	PermMonitoringView               Perm = "prm_monitoring_view"
	PermNasDevicesRemote             Perm = "prm_nas_devices_remote"
	PermNasIndex                     Perm = "prm_nas_index"
	PermNasManage                    Perm = "prm_nas_manage"
	PermNasRemote                    Perm = "prm_nas_remote"
	PermNotificationsManage          Perm = "prm_notifications_manage"
	PermPosSell                      Perm = "prm_pos_sell"
	PermPosVoid                      Perm = "prm_pos_void"
	PermProfilesIndex                Perm = "prm_profiles_index"
	PermProfilesManage               Perm = "prm_profiles_manage"
	PermReportActivationStats        Perm = "prm_report_activation_stats"
	PermReportActivations            Perm = "prm_report_activations"
	PermReportCardsLog               Perm = "prm_report_cards_log"
	PermReportCardsUsage             Perm = "prm_report_cards_usage"
	PermReportDebts                  Perm = "prm_report_debts"
	PermReportGatewayTransactions    Perm = "prm_report_gateway_transactions"
	PermReportGatewayTransactionsAll Perm = "prm_report_gateway_transactions_all"
	PermReportMoneyTransfer          Perm = "prm_report_money_transfer"
	PermReportProfits                Perm = "prm_report_profits"
	PermReportSessions               Perm = "prm_report_sessions"
	PermReportSuspicious             Perm = "prm_report_suspicious"
	PermReportTraffic                Perm = "prm_report_traffic"
	PermReportUsers                  Perm = "prm_report_users"
	PermRolesManage                  Perm = "prm_roles_manage"
	PermSettings                     Perm = "prm_settings"
	PermShopBuyerContact             Perm = "prm_shop_buyer_contact"
	PermShopIndex                    Perm = "prm_shop_index"
	PermShopPublish                  Perm = "prm_shop_publish"
	PermShopSales                    Perm = "prm_shop_sales"
	PermShopSalesAll                 Perm = "prm_shop_sales_all"
	PermStudioDelete                 Perm = "prm_studio_delete"
	PermStudioEdit                   Perm = "prm_studio_edit"
	PermStudioIndex                  Perm = "prm_studio_index"
	PermStudioPublish                Perm = "prm_studio_publish"
	PermTicketsAssign                Perm = "prm_tickets_assign"
	PermTicketsConfig                Perm = "prm_tickets_config"
	PermTicketsReply                 Perm = "prm_tickets_reply"
	PermTicketsView                  Perm = "prm_tickets_view"
	PermToolsAnnouncements           Perm = "prm_tools_announcements"
	PermToolsBackup                  Perm = "prm_tools_backup"
	PermToolsBandwidthControl        Perm = "prm_tools_bandwidth_control"
	PermToolsBulkChanges             Perm = "prm_tools_bulk_changes"
	PermToolsDashboardManager        Perm = "prm_tools_dashboard_manager"
	PermToolsFactoryReset            Perm = "prm_tools_factory_reset"
	PermToolsImport                  Perm = "prm_tools_import"
	PermToolsLegacyExport            Perm = "prm_tools_legacy_export"
	PermToolsLegacyImport            Perm = "prm_tools_legacy_import"
	PermUsersActivate                Perm = "prm_users_activate"
	PermUsersAddTraffic              Perm = "prm_users_add_traffic"
	PermUsersAddon                   Perm = "prm_users_addon"
	PermUsersChangeParent            Perm = "prm_users_change_parent"
	PermUsersChangeProfile           Perm = "prm_users_change_profile"
	PermUsersCreate                  Perm = "prm_users_create"
	PermUsersDelete                  Perm = "prm_users_delete"
	PermUsersDeposit                 Perm = "prm_users_deposit"
	PermUsersEnableDisable           Perm = "prm_users_enable_disable"
	PermUsersExport                  Perm = "prm_users_export"
	PermUsersExtend                  Perm = "prm_users_extend"
	PermUsersIndex                   Perm = "prm_users_index"
	PermUsersLiveTraffic             Perm = "prm_users_live_traffic"
	PermUsersLoginAs                 Perm = "prm_users_login_as"
	PermUsersMacLock                 Perm = "prm_users_mac_lock"
	PermUsersPing                    Perm = "prm_users_ping"
	PermUsersPoints                  Perm = "prm_users_points"
	PermUsersRefund                  Perm = "prm_users_refund"
	PermUsersResetQuota              Perm = "prm_users_reset_quota"
	PermUsersUpdate                  Perm = "prm_users_update"
	PermUsersWithdrawal              Perm = "prm_users_withdrawal"
)

// Permission is one code of the catalogue and the area it belongs to.
type Permission struct {
	Code Perm   `json:"code"`
	Area string `json:"area"`
}

// Permissions is the full permission catalogue: every prm_* code the spec
// names plus those xr's own routes need. It is the only list; roles, scopes
// and the route table are validated against it.
var Permissions = []Permission{
	{PermAddonsIndex, "addons"},
	{PermAddonsManage, "addons"},
	{PermCardsChangeExpiry, "cards"},
	{PermCardsDelete, "cards"},
	{PermCardsDesigner, "cards"},
	{PermCardsDownload, "cards"},
	{PermCardsGenerateUser, "cards"},
	{PermCardsList, "cards"},
	{PermCardsSuspendRelease, "cards"},
	{PermCardsVerify, "cards"},
	{PermFormsManage, "forms"},
	{PermGroupsAssign, "groups"},
	{PermGroupsManage, "groups"},
	{PermHotspotManage, "hotspot"},
	{PermJobsView, "jobs"},
	{PermLicenseView, "license"},
	{PermManagersCreate, "managers"},
	{PermManagersDelete, "managers"},
	{PermManagersDeposit, "managers"},
	{PermManagersIndex, "managers"},
	{PermManagersInvoices, "managers"},
	{PermManagersJournal, "managers"},
	{PermManagersLoginAs, "managers"},
	{PermManagersReceipts, "managers"},
	{PermManagersRewardPoints, "managers"},
	{PermManagersSelfDeposit, "managers"},
	{PermManagersUpdate, "managers"},
	{PermManagersWithdraw, "managers"},
	{PermMapEdit, "map"},
	{PermMapView, "map"},
	{PermMonitoringAck, "monitoring"},
	{PermMonitoringManage, "monitoring"},
	{PermMonitoringView, "monitoring"},
	{PermNasDevicesRemote, "nas"},
	{PermNasIndex, "nas"},
	{PermNasManage, "nas"},
	{PermNasRemote, "nas"},
	{PermNotificationsManage, "notifications"},
	{PermPosSell, "pos"},
	{PermPosVoid, "pos"},
	{PermProfilesIndex, "profiles"},
	{PermProfilesManage, "profiles"},
	{PermReportActivationStats, "report"},
	{PermReportActivations, "report"},
	{PermReportCardsLog, "report"},
	{PermReportCardsUsage, "report"},
	{PermReportDebts, "report"},
	{PermReportGatewayTransactions, "report"},
	{PermReportGatewayTransactionsAll, "report"},
	{PermReportMoneyTransfer, "report"},
	{PermReportProfits, "report"},
	{PermReportSessions, "report"},
	{PermReportSuspicious, "report"},
	{PermReportTraffic, "report"},
	{PermReportUsers, "report"},
	{PermRolesManage, "roles"},
	{PermSettings, "settings"},
	{PermShopBuyerContact, "shop"},
	{PermShopIndex, "shop"},
	{PermShopPublish, "shop"},
	{PermShopSales, "shop"},
	{PermShopSalesAll, "shop"},
	{PermStudioDelete, "studio"},
	{PermStudioEdit, "studio"},
	{PermStudioIndex, "studio"},
	{PermStudioPublish, "studio"},
	{PermTicketsAssign, "tickets"},
	{PermTicketsConfig, "tickets"},
	{PermTicketsReply, "tickets"},
	{PermTicketsView, "tickets"},
	{PermToolsAnnouncements, "tools"},
	{PermToolsBackup, "tools"},
	{PermToolsBandwidthControl, "tools"},
	{PermToolsBulkChanges, "tools"},
	{PermToolsDashboardManager, "tools"},
	{PermToolsFactoryReset, "tools"},
	{PermToolsImport, "tools"},
	{PermToolsLegacyExport, "tools"},
	{PermToolsLegacyImport, "tools"},
	{PermUsersActivate, "users"},
	{PermUsersAddTraffic, "users"},
	{PermUsersAddon, "users"},
	{PermUsersChangeParent, "users"},
	{PermUsersChangeProfile, "users"},
	{PermUsersCreate, "users"},
	{PermUsersDelete, "users"},
	{PermUsersDeposit, "users"},
	{PermUsersEnableDisable, "users"},
	{PermUsersExport, "users"},
	{PermUsersExtend, "users"},
	{PermUsersIndex, "users"},
	{PermUsersLiveTraffic, "users"},
	{PermUsersLoginAs, "users"},
	{PermUsersMacLock, "users"},
	{PermUsersPing, "users"},
	{PermUsersPoints, "users"},
	{PermUsersRefund, "users"},
	{PermUsersResetQuota, "users"},
	{PermUsersUpdate, "users"},
	{PermUsersWithdrawal, "users"},
}

var permSet = func() map[Perm]bool {
	m := map[Perm]bool{}
	for _, p := range Permissions {
		m[p.Code] = true
	}
	return m
}()

// KnownPermission reports whether code is in the catalogue. It is the
// boundary check for codes that arrive as strings (role storage, request
// bodies, token scopes) before they are used as a Perm.
func KnownPermission(code string) bool { return permSet[Perm(code)] }

// AllPerms lists every code of the catalogue, sorted.
func AllPerms() []Perm {
	out := make([]Perm, 0, len(Permissions))
	for _, p := range Permissions {
		out = append(out, p.Code)
	}
	slices.Sort(out)
	return out
}

// AllPermissionCodes lists every code as a string, sorted (for responses
// and role storage).
func AllPermissionCodes() []string {
	out := make([]string, 0, len(Permissions))
	for _, p := range AllPerms() {
		out = append(out, string(p))
	}
	return out
}

// PortalPermissions is the separate catalogue of subscriber-portal
// capabilities a role can carry; it has no effect on the admin API. Its
// codes are stored and validated as strings only: no code checks them, so
// they have no Perm constants.
var PortalPermissions = []string{
	"portal_view_usage", "portal_view_invoices", "portal_renew", "portal_change_profile",
	"portal_deposit", "portal_redeem_cards", "portal_tickets", "portal_speed", "portal_parental",
}
