// Package modules is the one list of xr's areas. Open builds an App with
// every area installed; adding an area is one line here.
package modules

import (
	"xr/app"
	"xr/app/aaa"
	"xr/app/backups"
	"xr/app/bandwidth"
	"xr/app/cards"
	"xr/app/dashboards"
	"xr/app/dataimport"
	"xr/app/devgw"
	"xr/app/hotspot"
	"xr/app/identity"
	"xr/app/monitoring"
	"xr/app/outbox"
	"xr/app/parental"
	"xr/app/payments"
	"xr/app/portal"
	"xr/app/portalentry"
	"xr/app/pos"
	"xr/app/replica"
	"xr/app/reports"
	"xr/app/selfservice"
	"xr/app/shop"
	"xr/app/studio"
	"xr/app/subs"
	"xr/app/tickets"
	"xr/app/tools"
	"xr/app/webhooks"
)

// All are the areas' modules, in install order.
func All() []app.Module {
	return []app.Module{identity.Module, subs.Module, cards.Module, webhooks.Module, aaa.Module, outbox.Module, backups.Module, tickets.Module, bandwidth.Module, dashboards.Module, tools.Module,
		payments.Module, pos.Module, shop.Module, selfservice.Module, parental.Module, portalentry.Module, dataimport.Module,
		monitoring.Module, studio.Module, hotspot.Module, devgw.Module, portal.Module, reports.Module, replica.Module}
}

// Open opens the data directory and installs every module.
func Open(cfg app.Config) (*app.App, error) {
	a, err := app.Open(cfg)
	if err != nil {
		return nil, err
	}
	a.Use(All()...)
	return a, nil
}
