// Package devgw is the device gateway: single-use tickets, SSH to a NAS or a
// monitored device relayed over a WebSocket, host keys, limits, and the
// console sessions it records.
package devgw

import (
	"context"

	"xr/app"
)

// Module is the devgw area: at start-up it ends the console rows a
// stopped process left live (reason server_restart). Its rows keep their
// manager as SET NULL on delete, so none blocks a manager's deletion.
var Module = app.Module{
	Name:     "devgw",
	Services: []func(ctx context.Context, a *app.App){recoverAll},
}

// recoverAll runs Recover on every tenant once, when xr serve starts.
func recoverAll(ctx context.Context, a *app.App) {
	for _, slug := range a.TenantSlugs() {
		if ctx.Err() != nil {
			return
		}
		t, release, err := a.Acquire(slug)
		if err != nil {
			continue
		}
		if n, err := Recover(ctx, t); err != nil {
			a.Log.Error("devgw: end consoles left live", "tenant", slug, "err", err)
		} else if n > 0 {
			a.Log.Info("devgw: consoles left live ended", "tenant", slug, "count", n)
		}
		release()
	}
}
