// Package portalentry is every way into the portal besides a password:
// self sign-up, invite codes, one-time code exchange, tunnel identification,
// the messenger link, and the captcha they share.
package portalentry

import "xr/app"

// Module is the portal-entry area.
var Module = app.Module{Name: "portalentry"}
