// Package portalentry is every way into the portal besides a password:
// self sign-up, invite codes, one-time code exchange, tunnel identification,
// the messenger link, and the captcha they share.
package portalentry

import (
	"xr/app"
	"xr/app/outbox"
)

// Module is the portal-entry area.
var Module = app.Module{Name: "portalentry", Init: func(a *app.App) {
	outbox.Register(a, outbox.Template{Key: signupTemplate, Subject: "Your sign-up code",
		Body: "Your sign-up code is {code}. It expires in 15 minutes.", Vars: []string{"code"}})
}}
