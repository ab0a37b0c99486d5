// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app"
	"xr/app/aaa"
	"xr/app/portal"
	"xr/app/subs"
)

func (s *Server) usersRoutes() []Route {
	bulk := app.BulkResult{}
	return []Route{
		// Subscribers (users) group
		{M: "GET", P: "/users", Access: Staff, Perms: []string{"prm_users_index"}, Buckets: []string{"user_list"},
			H: listCall(subs.UserListSpec(), subs.ListUsers), Resp: subs.User{}, List: true,
			Summary: "subscribers of the caller's subtree; q: username, email, first/last name, phone, contract id, national id, static IP, exact id; filter[enabled|expired|online|profile_id|parent_id|username_exact|expiring_within_days|created_from|created_to|group_id|deleted]; sort id (default), username, created_at, expiration, balance, updated_at"},
		{M: "POST", P: "/users", Access: Staff, Perms: []string{"prm_users_create"}, H: s.createUser, Req: subs.CreateInput{}, Resp: subs.Created{},
			Summary: "create a subscriber (identity only: no money, quota or activation); 201"},
		{M: "GET", P: "/users/owner-context", Access: Staff, Perms: []string{"prm_users_create"}, H: actorCall(subs.GetOwnerContext), Resp: subs.OwnerContext{}},
		{M: "GET", P: "/users/resolve", Access: Staff, Perms: []string{"prm_users_index"}, Buckets: []string{"user_resolve"}, H: s.resolveUser, Resp: subs.UserDetail{},
			Summary: "the subscriber of a scan token: query code (the QR payload without xr:u:)"},
		{M: "GET", P: "/users/summary", Access: Staff, Perms: []string{"prm_users_index"}, H: actorCall(subs.UserSummary), Resp: subs.Summary{}},
		{M: "GET", P: "/users/{id}", Access: Staff, Perms: []string{"prm_users_index"}, H: idCall(subs.GetUser), Resp: subs.UserDetail{}},
		{M: "GET", P: "/users/{id}/sessions", Access: Staff, Perms: []string{"prm_users_index"}, H: idListCall(aaa.UserSessionSpec, aaa.ListUserSessions),
			Resp: aaa.ClosedSession{}, List: true,
			Summary: "the subscriber's closed RADIUS sessions, newest first (order=asc: oldest first), with stop_cause, terminate_cause and close_reason; keyset: pass meta.next_cursor back as cursor"},
		{M: "GET", P: "/users/{id}/usage", Access: Staff, Perms: []string{"prm_users_index"}, H: idListCall(aaa.UsageSpec, aaa.UserUsage),
			Resp: aaa.UsageBucket{}, List: true,
			Summary: "the subscriber's usage from the rollups: granularity hour|day|month (default day), from, to (UTC; default the last 24 hours, 30 days or 12 months); every bucket of the range, totals in meta.aggregates"},
		{M: "POST", P: "/users/bulk-add-days", Access: Staff, Perms: []string{"prm_users_extend"}, H: bodyCall(subs.BulkAddDays), Req: subs.BulkDaysInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-add-hours", Access: Staff, Perms: []string{"prm_users_extend"}, H: bodyCall(subs.BulkAddHours), Req: subs.BulkHoursInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-add-traffic", Access: Staff, Perms: []string{"prm_users_add_traffic"}, H: bodyCall(subs.BulkAddTraffic), Req: subs.BulkTrafficInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-delete", Access: Staff, Perms: []string{"prm_users_delete"}, H: bodyCall(subs.BulkDelete), Req: app.BulkIDs{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-deposit", Access: Staff, Perms: []string{"prm_users_deposit"}, H: bodyCall(subs.BulkDeposit), Req: subs.BulkMoneyInput{}, Resp: bulk,
			Summary: "credit each subscriber; request_id required, idempotent per row"},
		{M: "POST", P: "/users/bulk-deposit/preview", Access: Staff, Perms: []string{"prm_users_deposit"}, H: bodyCall(subs.PreviewDeposit), Req: subs.BulkPreviewInput{}, Resp: subs.BulkPreview{}},
		{M: "POST", P: "/users/bulk-disable", Access: Staff, Perms: []string{"prm_users_enable_disable"}, H: bodyCall(subs.BulkDisable), Req: app.BulkIDs{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-disconnect", Access: Staff, Perms: []string{"prm_users_live_traffic"}, H: bodyCall(subs.BulkDisconnect), Req: app.BulkIDs{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-enable", Access: Staff, Perms: []string{"prm_users_enable_disable"}, H: bodyCall(subs.BulkEnable), Req: app.BulkIDs{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-extend", Access: Staff, Perms: []string{"prm_users_activate", "prm_users_extend"}, H: bodyCall(subs.BulkExtend), Req: subs.BulkExtendInput{}, Resp: bulk,
			Summary: "activate each subscriber's plan (charged like one activation); request_id required, idempotent per row"},
		{M: "POST", P: "/users/bulk-extend/preview", Access: Staff, Perms: []string{"prm_users_activate", "prm_users_extend"}, H: bodyCall(subs.PreviewExtend), Req: subs.BulkPreviewInput{}, Resp: subs.BulkPreview{}},
		{M: "POST", P: "/users/bulk-reset-balance", Access: Staff, Perms: []string{"prm_users_withdrawal"}, H: bodyCall(subs.BulkResetBalance), Req: subs.BulkResetBalanceInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-reset-quota", Access: Staff, Perms: []string{"prm_users_reset_quota"}, H: bodyCall(subs.BulkResetQuota), Req: app.BulkIDs{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-set-expiration", Access: Staff, Perms: []string{"prm_users_extend"}, H: bodyCall(subs.BulkSetExpiration), Req: subs.BulkExpirationInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-set-group", Access: Staff, Perms: []string{"prm_groups_assign"}, H: bodyCall(subs.BulkSetGroup), Req: subs.BulkGroupInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-set-parent", Access: Staff, Perms: []string{"prm_users_change_parent"}, H: bodyCall(subs.BulkSetParent), Req: subs.BulkParentInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-set-profile", Access: Staff, Perms: []string{"prm_users_change_profile"}, H: bodyCall(subs.BulkSetProfile), Req: subs.BulkProfileInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-withdraw", Access: Staff, Perms: []string{"prm_users_withdrawal"}, H: bodyCall(subs.BulkWithdraw), Req: subs.BulkMoneyInput{}, Resp: bulk,
			Summary: "debit each subscriber, never below zero; request_id required, idempotent per row"},
		{M: "POST", P: "/users/bulk-withdraw/preview", Access: Staff, Perms: []string{"prm_users_withdrawal"}, H: bodyCall(subs.PreviewWithdraw), Req: subs.BulkPreviewInput{}, Resp: subs.BulkPreview{}},
		{M: "PATCH", P: "/users/{id}", Access: Staff, Perms: []string{"prm_users_update"}, H: idBodyCall(subs.UpdateUser), Req: subs.UserPatch{}, Resp: subs.UserDetail{}},
		{M: "POST", P: "/users/{id}/deposit", Access: Staff, Perms: []string{"prm_users_deposit"}, H: idBodyCall(subs.Deposit), Req: subs.DepositInput{}, Resp: subs.MoneyResult{}},
		{M: "POST", P: "/users/{id}/withdraw", Access: Staff, Perms: []string{"prm_users_withdrawal"}, H: idBodyCall(subs.Withdraw), Req: subs.WithdrawInput{}, Resp: subs.MoneyResult{}},
		{M: "POST", P: "/users/{id}/pay-debt", Access: Staff, Perms: []string{"prm_users_deposit"}, H: idBodyCall(subs.PayDebt), Req: subs.PayDebtInput{}, Resp: subs.MoneyResult{}},
		{M: "POST", P: "/users/{id}/activation", Access: Staff, Perms: []string{"prm_users_activate"}, H: idBodyCall(subs.Activate), Req: subs.ActivationInput{}, Resp: subs.ActivationResult{}},
		{M: "POST", P: "/users/{id}/addons", Access: Staff, Perms: []string{"prm_users_addon"}, H: idBodyCall(subs.BuyAddon), Req: subs.AddonPurchaseInput{}, Resp: subs.AddonPurchaseResult{}},
		{M: "POST", P: "/users/{id}/redeem-points", Access: Staff, Perms: []string{"prm_users_points"}, H: idBodyCall(subs.RedeemPoints), Req: subs.RedeemPointsInput{}, Resp: subs.PointsResult{}},
		{M: "POST", P: "/users/{id}/refund-activation", Access: Staff, Perms: []string{"prm_users_refund"}, H: idBodyCall(subs.RefundActivation), Req: subs.RefundInput{}, Resp: subs.RefundResult{}},
		{M: "POST", P: "/users/{id}/login-as", Access: Staff, Perms: []string{"prm_users_login_as"}, Buckets: []string{"user_login_as"}, H: s.loginAsSubscriber, Resp: portal.Session{}},
		// Rows an operator needs beyond the spec's listed ones.
		{M: "DELETE", P: "/users/{id}", Access: Staff, Perms: []string{"prm_users_delete"}, H: idAction(subs.DeleteUser),
			Summary: "soft-delete a subscriber (leaves lists and the licence count; keeps ledger and username)"},
		{M: "POST", P: "/users/{id}/enable", Access: Staff, Perms: []string{"prm_users_enable_disable"}, H: idCall(subs.EnableUser), Resp: subs.UserDetail{}},
		{M: "POST", P: "/users/{id}/disable", Access: Staff, Perms: []string{"prm_users_enable_disable"}, H: idCall(subs.DisableUser), Resp: subs.UserDetail{}},
		{M: "GET", P: "/admin/user-groups", Access: Staff, Perms: []string{"prm_groups_assign", "prm_groups_manage"}, H: allCall(subs.ListGroups), Resp: subs.Group{}, List: true,
			Summary: "subscriber groups (one page)"},
		{M: "POST", P: "/admin/user-groups", Access: Staff, Perms: []string{"prm_groups_manage"}, H: s.createGroup, Req: subs.GroupInput{}, Resp: subs.Group{}},
		{M: "PATCH", P: "/admin/user-groups/{id}", Access: Staff, Perms: []string{"prm_groups_manage"}, H: idBodyCall(subs.UpdateGroup), Req: subs.GroupInput{}, Resp: subs.Group{}},
		{M: "DELETE", P: "/admin/user-groups/{id}", Access: Staff, Perms: []string{"prm_groups_manage"}, H: idAction(subs.DeleteGroup)},
		// Add-ons
		{M: "GET", P: "/addons", Access: Staff, Perms: []string{"prm_users_addon"}, H: s.purchasableAddons, Resp: subs.Addon{}, List: true,
			Summary: "enabled add-ons; with user_id, those allowed on that subscriber's plan"},
		{M: "GET", P: "/admin/addons", Access: Staff, Perms: []string{"prm_addons_index"}, H: allCall(subs.ListAddons), Resp: subs.Addon{}, List: true},
		{M: "POST", P: "/admin/addons", Access: Staff, Perms: []string{"prm_addons_manage"}, H: s.createAddon, Req: subs.AddonInput{}, Resp: subs.Addon{}},
		{M: "POST", P: "/admin/addons/bulk-delete", Access: Staff, Perms: []string{"prm_addons_manage"}, H: bodyCall(subs.BulkDeleteAddons), Req: app.BulkIDs{}, Resp: bulk},
		{M: "DELETE", P: "/admin/addons/{id}", Access: Staff, Perms: []string{"prm_addons_manage"}, H: idAction(subs.DeleteAddon)},
		{M: "PATCH", P: "/admin/addons/{id}", Access: Staff, Perms: []string{"prm_addons_manage"}, H: idBodyCall(subs.UpdateAddon), Req: subs.AddonInput{}, Resp: subs.Addon{}},
		{M: "GET", P: "/admin/addons/{id}/allowed-profiles", Access: Staff, Perms: []string{"prm_addons_index"}, H: idCall(subs.GetAllowedProfiles), Resp: subs.AllowedProfiles{}},
		{M: "PUT", P: "/admin/addons/{id}/allowed-profiles", Access: Staff, Perms: []string{"prm_addons_manage"}, H: idBodyCall(subs.SetAllowedProfiles), Req: subs.AllowedProfilesInput{}, Resp: subs.AllowedProfiles{}},
		// Forms (custom fields)
		{M: "GET", P: "/admin/forms", Access: Staff, Perms: []string{"prm_forms_manage"}, H: s.listForms, Resp: subs.FormField{}, List: true,
			Summary: "custom field definitions of the user and manager forms; filter[form_name]"},
		{M: "POST", P: "/admin/forms", Access: Staff, Perms: []string{"prm_forms_manage"}, H: s.createFormField, Req: subs.FormFieldInput{}, Resp: subs.FormField{}},
		{M: "POST", P: "/admin/forms/bulk-delete", Access: Staff, Perms: []string{"prm_forms_manage"}, H: bodyCall(subs.BulkDeleteFormFields), Req: app.BulkIDs{}, Resp: bulk},
		{M: "GET", P: "/admin/forms/manifest", Access: Staff, Perms: []string{"prm_users_create"}, H: actorCall(subs.FormManifest), Resp: subs.FormInfo{}},
		{M: "POST", P: "/admin/forms/reorder", Access: Staff, Perms: []string{"prm_forms_manage"}, H: bodyCall(subs.ReorderFormFields), Req: subs.ReorderInput{}, Resp: subs.FormField{}},
		{M: "GET", P: "/admin/forms/{form_name}/schema", Access: Staff, Perms: []string{"prm_users_create"}, H: s.formSchema, Resp: subs.FormSchema{}},
		{M: "DELETE", P: "/admin/forms/{id}", Access: Staff, Perms: []string{"prm_forms_manage"}, H: idAction(subs.DeleteFormField)},
		{M: "PATCH", P: "/admin/forms/{id}", Access: Staff, Perms: []string{"prm_forms_manage"}, H: idBodyCall(subs.UpdateFormField), Req: subs.FormFieldInput{}, Resp: subs.FormField{}},
		// Bulk export
		{M: "POST", P: "/exports", Access: Staff, Perms: []string{"prm_users_export"}, Buckets: []string{"t_heavy"}, H: s.createExport, Req: subs.ExportInput{}, Resp: subs.ExportJob{},
			Summary: "queue a CSV or XLSX of every subscriber the caller could list with these filters (no offset cap); 202, 200 on replay"},
		{M: "GET", P: "/exports/{id}/download", Access: Staff, File: true, Perms: []string{"prm_users_export"}, H: s.downloadExport,
			Summary: "the export's file (creator or tenant-wide callers); 409 export_not_ready while running"},
	}
}
