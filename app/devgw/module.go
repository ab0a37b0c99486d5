// Package devgw is the device gateway: single-use tickets, SSH to a NAS or a
// monitored device relayed over a WebSocket, host keys, limits, and the
// console sessions it records.
package devgw

import (
	"context"
	"time"

	"xr/app"
)

// Module is the devgw area: at start-up it ends the console rows a
// stopped process left live (reason server_restart, the devgw.recover
// tenant task). Its rows keep their manager as SET NULL on delete, so none
// blocks a manager's deletion.
var Module = app.Module{
	Name:        "devgw",
	TenantTasks: []app.TenantTask{{Name: "devgw.recover", Run: recoverTenant}},
	Permissions: permCatalogue,
	Settings:    settingDecls,
	Events: []app.EventType{
		{Key: "console.opened", Category: "console"},
		{Key: "console.closed", Category: "console"},
	},
	SealedColumns: []app.SealedColumn{
		{Table: "devgw_credentials", Column: "password_sealed"},
		{Table: "devgw_credentials", Column: "key_sealed"},
	},
}

// recoverTenant runs Recover when the tenant opens in xr serve (a
// tenant's consoles hold it open, so none of this process is lost).
func recoverTenant(ctx context.Context, t *app.Tenant) (time.Time, error) {
	var live bool
	if err := t.DB.R.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM devgw_sessions WHERE state = 'live')`).Scan(&live); err != nil || !live {
		return time.Time{}, err
	}
	n, err := Recover(ctx, t)
	if err == nil && n > 0 {
		t.App.Log.Info("devgw: consoles left live ended", "tenant", t.Slug, "count", n)
	}
	return time.Time{}, err
}
