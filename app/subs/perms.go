package subs

import (
	"slices"

	"xr/app"
)

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermAddonsIndex        app.Perm = "prm_addons_index"
	PermAddonsManage       app.Perm = "prm_addons_manage"
	PermFormsManage        app.Perm = "prm_forms_manage"
	PermGroupsAssign       app.Perm = "prm_groups_assign"
	PermGroupsManage       app.Perm = "prm_groups_manage"
	PermProfilesIndex      app.Perm = "prm_profiles_index"
	PermProfilesManage     app.Perm = "prm_profiles_manage"
	PermUsersActivate      app.Perm = "prm_users_activate"
	PermUsersAddTraffic    app.Perm = "prm_users_add_traffic"
	PermUsersAddon         app.Perm = "prm_users_addon"
	PermUsersChangeParent  app.Perm = "prm_users_change_parent"
	PermUsersChangeProfile app.Perm = "prm_users_change_profile"
	PermUsersCreate        app.Perm = "prm_users_create"
	PermUsersDelete        app.Perm = "prm_users_delete"
	PermUsersDeposit       app.Perm = "prm_users_deposit"
	PermUsersEnableDisable app.Perm = "prm_users_enable_disable"
	PermUsersExport        app.Perm = "prm_users_export"
	PermUsersExtend        app.Perm = "prm_users_extend"
	PermUsersIndex         app.Perm = "prm_users_index"
	PermUsersLiveTraffic   app.Perm = "prm_users_live_traffic"
	PermUsersLoginAs       app.Perm = "prm_users_login_as"
	PermUsersMacLock       app.Perm = "prm_users_mac_lock"
	PermUsersPing          app.Perm = "prm_users_ping"
	PermUsersPoints        app.Perm = "prm_users_points"
	PermUsersRefund        app.Perm = "prm_users_refund"
	PermUsersResetQuota    app.Perm = "prm_users_reset_quota"
	PermUsersUpdate        app.Perm = "prm_users_update"
	PermUsersWithdrawal    app.Perm = "prm_users_withdrawal"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = slices.Concat(
	app.PermGroup("addons", PermAddonsIndex, PermAddonsManage),
	app.PermGroup("forms", PermFormsManage),
	app.PermGroup("groups", PermGroupsAssign, PermGroupsManage),
	app.PermGroup("profiles", PermProfilesIndex, PermProfilesManage),
	app.PermGroup("users", PermUsersActivate, PermUsersAddTraffic, PermUsersAddon,
		PermUsersChangeParent, PermUsersChangeProfile, PermUsersCreate, PermUsersDelete, PermUsersDeposit,
		PermUsersEnableDisable, PermUsersExport, PermUsersExtend, PermUsersIndex, PermUsersLiveTraffic,
		PermUsersLoginAs, PermUsersMacLock, PermUsersPing, PermUsersPoints, PermUsersRefund,
		PermUsersResetQuota, PermUsersUpdate, PermUsersWithdrawal),
)

// roleGrants are the area's codes the system role templates get.
var roleGrants = map[string][]app.Perm{
	"reseller": {PermUsersIndex, PermUsersCreate, PermUsersUpdate, PermUsersActivate, PermUsersExtend,
		PermUsersDeposit, PermUsersEnableDisable, PermUsersLiveTraffic, PermProfilesIndex},
	"support": {PermUsersIndex, PermUsersUpdate, PermUsersResetQuota, PermUsersLiveTraffic,
		PermUsersMacLock, PermUsersPing, PermProfilesIndex},
	"cashier": {PermUsersIndex, PermUsersDeposit, PermUsersActivate, PermProfilesIndex},
}
