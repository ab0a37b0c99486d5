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
		{M: "GET", P: "/users", Access: Staff, Perms: []app.Perm{app.PermUsersIndex}, Buckets: []string{"user_list"},
			H: listCall(subs.UserListSpec(), subs.ListUsers), Resp: subs.User{}, List: true,
			Summary: "subscribers of the caller's subtree; q: username, email, first/last name, phone, contract id, national id, static IP, exact id; filter[enabled|expired|online|profile_id|parent_id|username_exact|expiring_within_days|created_from|created_to|group_id|deleted]; sort id (default), username, created_at, expiration, balance, updated_at"},
		{M: "POST", P: "/users", Access: Staff, Perms: []app.Perm{app.PermUsersCreate}, H: s.createUser, Req: subs.CreateInput{}, Resp: subs.Created{},
			Summary: "create a subscriber (identity only: no money, quota or activation); 201"},
		{M: "GET", P: "/users/owner-context", Access: Staff, Perms: []app.Perm{app.PermUsersCreate}, H: actorCall(subs.GetOwnerContext), Resp: subs.OwnerContext{}},
		{M: "GET", P: "/users/resolve", Access: Staff, Perms: []app.Perm{app.PermUsersIndex}, Buckets: []string{"user_resolve"}, H: s.resolveUser, Resp: subs.UserDetail{},
			Summary: "the subscriber of a scan token: query code (the QR payload without xr:u:)"},
		{M: "GET", P: "/users/summary", Access: Staff, Perms: []app.Perm{app.PermUsersIndex}, H: actorCall(subs.UserSummary), Resp: subs.Summary{}},
		{M: "GET", P: "/users/{id}", Access: Staff, Perms: []app.Perm{app.PermUsersIndex}, H: idCall(subs.GetUser), Resp: subs.UserDetail{}},
		{M: "GET", P: "/users/{id}/sessions", Access: Staff, Perms: []app.Perm{app.PermUsersIndex}, H: idListCall(aaa.UserSessionSpec, aaa.ListUserSessions),
			Resp: aaa.ClosedSession{}, List: true,
			Summary: "the subscriber's closed RADIUS sessions, newest first (order=asc: oldest first), with stop_cause, terminate_cause and close_reason; keyset: pass meta.next_cursor back as cursor"},
		{M: "GET", P: "/users/{id}/usage", Access: Staff, Perms: []app.Perm{app.PermUsersIndex}, H: idListCall(aaa.UsageSpec, aaa.UserUsage),
			Resp: aaa.UsageBucket{}, List: true,
			Summary: "the subscriber's usage from the rollups: granularity hour|day|month (default day), from, to (UTC; default the last 24 hours, 30 days or 12 months); every bucket of the range, totals in meta.aggregates"},
		{M: "POST", P: "/users/bulk-add-days", Access: Staff, Perms: []app.Perm{app.PermUsersExtend}, H: bodyCall(subs.BulkAddDays), Req: subs.BulkDaysInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-add-hours", Access: Staff, Perms: []app.Perm{app.PermUsersExtend}, H: bodyCall(subs.BulkAddHours), Req: subs.BulkHoursInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-add-traffic", Access: Staff, Perms: []app.Perm{app.PermUsersAddTraffic}, H: bodyCall(subs.BulkAddTraffic), Req: subs.BulkTrafficInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-delete", Access: Staff, Perms: []app.Perm{app.PermUsersDelete}, H: bodyCall(subs.BulkDelete), Req: app.BulkIDs{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-deposit", Access: Staff, Perms: []app.Perm{app.PermUsersDeposit}, H: bodyCall(subs.BulkDeposit), Req: subs.BulkMoneyInput{}, Resp: bulk,
			Summary: "credit each subscriber; request_id required, idempotent per row"},
		{M: "POST", P: "/users/bulk-deposit/preview", Access: Staff, Perms: []app.Perm{app.PermUsersDeposit}, H: bodyCall(subs.PreviewDeposit), Req: subs.BulkPreviewInput{}, Resp: subs.BulkPreview{}},
		{M: "POST", P: "/users/bulk-disable", Access: Staff, Perms: []app.Perm{app.PermUsersEnableDisable}, H: bodyCall(subs.BulkDisable), Req: app.BulkIDs{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-disconnect", Access: Staff, Perms: []app.Perm{app.PermUsersLiveTraffic}, H: bodyCall(subs.BulkDisconnect), Req: app.BulkIDs{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-enable", Access: Staff, Perms: []app.Perm{app.PermUsersEnableDisable}, H: bodyCall(subs.BulkEnable), Req: app.BulkIDs{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-extend", Access: Staff, Perms: []app.Perm{app.PermUsersActivate, app.PermUsersExtend}, H: bodyCall(subs.BulkExtend), Req: subs.BulkExtendInput{}, Resp: bulk,
			Summary: "activate each subscriber's plan (charged like one activation); request_id required, idempotent per row"},
		{M: "POST", P: "/users/bulk-extend/preview", Access: Staff, Perms: []app.Perm{app.PermUsersActivate, app.PermUsersExtend}, H: bodyCall(subs.PreviewExtend), Req: subs.BulkPreviewInput{}, Resp: subs.BulkPreview{}},
		{M: "POST", P: "/users/bulk-reset-balance", Access: Staff, Perms: []app.Perm{app.PermUsersWithdrawal}, H: bodyCall(subs.BulkResetBalance), Req: subs.BulkResetBalanceInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-reset-quota", Access: Staff, Perms: []app.Perm{app.PermUsersResetQuota}, H: bodyCall(subs.BulkResetQuota), Req: app.BulkIDs{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-set-expiration", Access: Staff, Perms: []app.Perm{app.PermUsersExtend}, H: bodyCall(subs.BulkSetExpiration), Req: subs.BulkExpirationInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-set-group", Access: Staff, Perms: []app.Perm{app.PermGroupsAssign}, H: bodyCall(subs.BulkSetGroup), Req: subs.BulkGroupInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-set-parent", Access: Staff, Perms: []app.Perm{app.PermUsersChangeParent}, H: bodyCall(subs.BulkSetParent), Req: subs.BulkParentInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-set-profile", Access: Staff, Perms: []app.Perm{app.PermUsersChangeProfile}, H: bodyCall(subs.BulkSetProfile), Req: subs.BulkProfileInput{}, Resp: bulk},
		{M: "POST", P: "/users/bulk-withdraw", Access: Staff, Perms: []app.Perm{app.PermUsersWithdrawal}, H: bodyCall(subs.BulkWithdraw), Req: subs.BulkMoneyInput{}, Resp: bulk,
			Summary: "debit each subscriber, never below zero; request_id required, idempotent per row"},
		{M: "POST", P: "/users/bulk-withdraw/preview", Access: Staff, Perms: []app.Perm{app.PermUsersWithdrawal}, H: bodyCall(subs.PreviewWithdraw), Req: subs.BulkPreviewInput{}, Resp: subs.BulkPreview{}},
		{M: "PATCH", P: "/users/{id}", Access: Staff, Perms: []app.Perm{app.PermUsersUpdate}, H: idBodyCall(subs.UpdateUser), Req: subs.UserPatch{}, Resp: subs.UserDetail{}},
		{M: "POST", P: "/users/{id}/deposit", Access: Staff, Perms: []app.Perm{app.PermUsersDeposit}, H: idBodyCall(subs.Deposit), Req: subs.DepositInput{}, Resp: subs.MoneyResult{}},
		{M: "POST", P: "/users/{id}/withdraw", Access: Staff, Perms: []app.Perm{app.PermUsersWithdrawal}, H: idBodyCall(subs.Withdraw), Req: subs.WithdrawInput{}, Resp: subs.MoneyResult{}},
		{M: "POST", P: "/users/{id}/pay-debt", Access: Staff, Perms: []app.Perm{app.PermUsersDeposit}, H: idBodyCall(subs.PayDebt), Req: subs.PayDebtInput{}, Resp: subs.MoneyResult{}},
		{M: "POST", P: "/users/{id}/activation", Access: Staff, Perms: []app.Perm{app.PermUsersActivate}, H: idBodyCall(subs.Activate), Req: subs.ActivationInput{}, Resp: subs.ActivationResult{}},
		{M: "POST", P: "/users/{id}/addons", Access: Staff, Perms: []app.Perm{app.PermUsersAddon}, H: idBodyCall(subs.BuyAddon), Req: subs.AddonPurchaseInput{}, Resp: subs.AddonPurchaseResult{}},
		{M: "POST", P: "/users/{id}/redeem-points", Access: Staff, Perms: []app.Perm{app.PermUsersPoints}, H: idBodyCall(subs.RedeemPoints), Req: subs.RedeemPointsInput{}, Resp: subs.PointsResult{}},
		{M: "POST", P: "/users/{id}/refund-activation", Access: Staff, Perms: []app.Perm{app.PermUsersRefund}, H: idBodyCall(subs.RefundActivation), Req: subs.RefundInput{}, Resp: subs.RefundResult{}},
		{M: "POST", P: "/users/{id}/login-as", Access: Staff, Perms: []app.Perm{app.PermUsersLoginAs}, Buckets: []string{"user_login_as"}, H: s.loginAsSubscriber, Resp: portal.Session{}},
		// Rows an operator needs beyond the spec's listed ones.
		{M: "DELETE", P: "/users/{id}", Access: Staff, Perms: []app.Perm{app.PermUsersDelete}, H: idAction(subs.DeleteUser),
			Summary: "soft-delete a subscriber (leaves lists and the licence count; keeps ledger and username)"},
		{M: "POST", P: "/users/{id}/enable", Access: Staff, Perms: []app.Perm{app.PermUsersEnableDisable}, H: idCall(subs.EnableUser), Resp: subs.UserDetail{}},
		{M: "POST", P: "/users/{id}/disable", Access: Staff, Perms: []app.Perm{app.PermUsersEnableDisable}, H: idCall(subs.DisableUser), Resp: subs.UserDetail{}},
		{M: "GET", P: "/admin/user-groups", Access: Staff, Perms: []app.Perm{app.PermGroupsAssign, app.PermGroupsManage}, H: allCall(subs.ListGroups), Resp: subs.Group{}, List: true,
			Summary: "subscriber groups (one page)"},
		{M: "POST", P: "/admin/user-groups", Access: Staff, Perms: []app.Perm{app.PermGroupsManage}, H: s.createGroup, Req: subs.GroupInput{}, Resp: subs.Group{}},
		{M: "PATCH", P: "/admin/user-groups/{id}", Access: Staff, Perms: []app.Perm{app.PermGroupsManage}, H: idBodyCall(subs.UpdateGroup), Req: subs.GroupInput{}, Resp: subs.Group{}},
		{M: "DELETE", P: "/admin/user-groups/{id}", Access: Staff, Perms: []app.Perm{app.PermGroupsManage}, H: idAction(subs.DeleteGroup)},
		// Add-ons
		{M: "GET", P: "/addons", Access: Staff, Perms: []app.Perm{app.PermUsersAddon}, H: s.purchasableAddons, Resp: subs.Addon{}, List: true,
			Summary: "enabled add-ons; with user_id, those allowed on that subscriber's plan"},
		{M: "GET", P: "/admin/addons", Access: Staff, Perms: []app.Perm{app.PermAddonsIndex}, H: allCall(subs.ListAddons), Resp: subs.Addon{}, List: true},
		{M: "POST", P: "/admin/addons", Access: Staff, Perms: []app.Perm{app.PermAddonsManage}, H: s.createAddon, Req: subs.AddonInput{}, Resp: subs.Addon{}},
		{M: "POST", P: "/admin/addons/bulk-delete", Access: Staff, Perms: []app.Perm{app.PermAddonsManage}, H: bodyCall(subs.BulkDeleteAddons), Req: app.BulkIDs{}, Resp: bulk},
		{M: "DELETE", P: "/admin/addons/{id}", Access: Staff, Perms: []app.Perm{app.PermAddonsManage}, H: idAction(subs.DeleteAddon)},
		{M: "PATCH", P: "/admin/addons/{id}", Access: Staff, Perms: []app.Perm{app.PermAddonsManage}, H: idBodyCall(subs.UpdateAddon), Req: subs.AddonInput{}, Resp: subs.Addon{}},
		{M: "GET", P: "/admin/addons/{id}/allowed-profiles", Access: Staff, Perms: []app.Perm{app.PermAddonsIndex}, H: idCall(subs.GetAllowedProfiles), Resp: subs.AllowedProfiles{}},
		{M: "PUT", P: "/admin/addons/{id}/allowed-profiles", Access: Staff, Perms: []app.Perm{app.PermAddonsManage}, H: idBodyCall(subs.SetAllowedProfiles), Req: subs.AllowedProfilesInput{}, Resp: subs.AllowedProfiles{}},
		// Forms (custom fields)
		{M: "GET", P: "/admin/forms", Access: Staff, Perms: []app.Perm{app.PermFormsManage}, H: s.listForms, Resp: subs.FormField{}, List: true,
			Summary: "custom field definitions of the user and manager forms; filter[form_name]"},
		{M: "POST", P: "/admin/forms", Access: Staff, Perms: []app.Perm{app.PermFormsManage}, H: s.createFormField, Req: subs.FormFieldInput{}, Resp: subs.FormField{}},
		{M: "POST", P: "/admin/forms/bulk-delete", Access: Staff, Perms: []app.Perm{app.PermFormsManage}, H: bodyCall(subs.BulkDeleteFormFields), Req: app.BulkIDs{}, Resp: bulk},
		{M: "GET", P: "/admin/forms/manifest", Access: Staff, Perms: []app.Perm{app.PermUsersCreate}, H: actorCall(subs.FormManifest), Resp: subs.FormInfo{}},
		{M: "POST", P: "/admin/forms/reorder", Access: Staff, Perms: []app.Perm{app.PermFormsManage}, H: bodyCall(subs.ReorderFormFields), Req: subs.ReorderInput{}, Resp: subs.FormField{}},
		{M: "GET", P: "/admin/forms/{form_name}/schema", Access: Staff, Perms: []app.Perm{app.PermUsersCreate}, H: s.formSchema, Resp: subs.FormSchema{}},
		{M: "DELETE", P: "/admin/forms/{id}", Access: Staff, Perms: []app.Perm{app.PermFormsManage}, H: idAction(subs.DeleteFormField)},
		{M: "PATCH", P: "/admin/forms/{id}", Access: Staff, Perms: []app.Perm{app.PermFormsManage}, H: idBodyCall(subs.UpdateFormField), Req: subs.FormFieldInput{}, Resp: subs.FormField{}},
		// Bulk export
		{M: "POST", P: "/exports", Access: Staff, Perms: []app.Perm{app.PermUsersExport}, Buckets: []string{"t_heavy"}, H: s.createExport, Req: subs.ExportInput{}, Resp: subs.ExportJob{},
			Summary: "queue a CSV or XLSX of every subscriber the caller could list with these filters (no offset cap); 202, 200 on replay"},
		{M: "GET", P: "/exports/{id}/download", Access: Staff, File: true, Perms: []app.Perm{app.PermUsersExport}, H: s.downloadExport,
			Summary: "the export's file (creator or tenant-wide callers); 409 export_not_ready while running"},
	}
}
