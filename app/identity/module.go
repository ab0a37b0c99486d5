package identity

import "xr/app"

// Module is what the identity area declares: the managers' and roles'
// permission codes, the session and branding settings, the manager
// events, the sign-in and registration buckets, and the sealed token and
// two-factor columns.
var Module = app.Module{
	Name:        "identity",
	Permissions: permCatalogue,
	RoleGrants:  roleGrants,
	Settings:    settingDecls,
	Events: []app.EventType{
		{Key: "manager.created", Category: "lifecycle"},
		{Key: "manager.suspended", Category: "lifecycle"},
	},
	Buckets: map[string]app.BucketDef{
		"account_reauth":    {Scope: app.ScopeOperator, Limit: 10},
		"api_token_reveal":  {Scope: app.ScopeOperator, Limit: 10},
		"login":             {Scope: app.ScopeIP, Limit: 20},
		"refresh":           {Scope: app.ScopeIP, Limit: 60},
		"register_start":    {Scope: app.ScopeIP, Limit: 10},
		"register_verify":   {Scope: app.ScopeIP, Limit: 10},
		"register_resend":   {Scope: app.ScopeIP, Limit: 10},
		"register_complete": {Scope: app.ScopeIP, Limit: 10},
	},
	SealedColumns: []app.SealedColumn{
		{Table: "api_tokens", Column: "token_sealed"},
		{Table: "managers", Column: "totp_secret"},
		{Table: "managers", Column: "totp_pending"},
	},
}

// PortalPermissions is the separate catalogue of subscriber-portal
// capabilities a role can carry; it has no effect on the admin API. Its
// codes are stored and validated as strings only: no code checks them, so
// they have no Perm constants.
var PortalPermissions = []string{
	"portal_view_usage", "portal_view_invoices", "portal_renew", "portal_change_profile",
	"portal_deposit", "portal_redeem_cards", "portal_tickets", "portal_speed", "portal_parental",
}
