// Package portalentry is every way into the portal besides a password:
// self sign-up, invite codes, one-time code exchange, tunnel identification,
// the messenger link, and the captcha they share.
package portalentry

import (
	"xr/app"
	"xr/app/outbox"
)

// Module is the portal-entry area.
var Module = app.Module{
	Name: "portalentry",
	Init: func(a *app.App) {
		outbox.Register(a, outbox.Template{Key: signupTemplate, Subject: "Your sign-up code",
			Body: "Your sign-up code is {code}. It expires in 15 minutes.", Vars: []string{"code"}})
	},
	Settings: settingDecls,
	Buckets: map[string]app.BucketDef{
		"portal_captcha":            {Scope: app.ScopeIP, Limit: 20},
		"portal_exchange":           {Scope: app.ScopeIP, Limit: 120},
		"portal_messenger_exchange": {Scope: app.ScopeIP, Limit: 120},
		"portal_join":               {Scope: app.ScopeIP, Limit: 20},
		"portal_signup":             {Scope: app.ScopeIP, Limit: 20},
		"portal_tunnel_identify":    {Scope: app.ScopeIP, Limit: 120},
		"portal_tunnel_tenant":      {Scope: app.ScopeIP, Limit: 120},
	},
	SealedColumns: []app.SealedColumn{
		{Table: "messenger_secret", Column: "secret_sealed"},
		{Table: "portal_signups", Column: "payload_sealed"},
	},
}
