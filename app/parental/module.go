// Package parental is parental control (blocked windows, pause, PIN) and
// guest access on a subscriber's account, enforced by RADIUS.
package parental

import "xr/app"

// Module is the parental-control and guest area.
var Module = app.Module{Name: "parental"}
