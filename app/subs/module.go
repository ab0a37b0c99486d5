package subs

import "xr/app"

// Module is what the subscribers area contributes to an instance.
var Module = app.Module{
	Name:        "subs",
	Jobs:        map[string]app.JobHandler{ExportKind: runExport},
	ManagerRefs: []string{`SELECT COUNT(*) FROM users WHERE parent_id = ?`},
	Permissions: permCatalogue,
	RoleGrants:  roleGrants,
	Settings:    settingDecls,
	Events: []app.EventType{
		{Key: "user.created", Category: "lifecycle"},
		{Key: "user.updated", Category: "lifecycle"},
		{Key: "user.deleted", Category: "lifecycle"},
		{Key: "user.enabled", Category: "lifecycle"},
		{Key: "user.disabled", Category: "lifecycle"},
		{Key: "user.activated", Category: "lifecycle"},
		{Key: "user.expired", Category: "lifecycle"},
		{Key: "payment.deposit", Category: "billing"},
		{Key: "payment.withdraw", Category: "billing"},
	},
	Buckets: map[string]app.BucketDef{
		"user_list":     {Scope: app.ScopeOperator, Limit: 240},
		"user_resolve":  {Scope: app.ScopeOperator, Limit: 120},
		"user_login_as": {Scope: app.ScopeOperator, Limit: 30},
	},
	SealedColumns: []app.SealedColumn{{Table: "users", Column: "password_sealed"}},
}
