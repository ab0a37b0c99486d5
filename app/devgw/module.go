// Package devgw is the device gateway: single-use tickets, SSH to a NAS or a
// monitored device relayed over a WebSocket, host keys, limits, and the
// console sessions it records.
package devgw

import "xr/app"

// Module is the devgw area.
var Module = app.Module{Name: "devgw"}
