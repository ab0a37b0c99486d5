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
	"xr/app/outbox"
	"xr/app/subs"
	"xr/app/tickets"
	"xr/app/tools"
	"xr/app/webhooks"
)

// All are the areas' modules, in install order.
func All() []app.Module {
	return []app.Module{subs.Module, cards.Module, webhooks.Module, aaa.Module, outbox.Module, backups.Module, tickets.Module, bandwidth.Module, dashboards.Module, tools.Module}
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
