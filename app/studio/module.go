// Package studio is the design studio: a tenant's designs (versioned JSON documents
// rendered by app/studio/render) with their images, and the instance-wide
// design store where tenants publish, review and import designs.
package studio

import (
	"context"

	"xr/app"
)

// Module is the studio area: the thumbnail cache and the store list cache
// are per App (Init), and a timer refreshes the store list while xr serve
// runs.
var Module = app.Module{
	Name: "studio",
	Init: func(a *app.App) {
		thumbs(a)
		cacheOf(a)
	},
	Services:    []func(ctx context.Context, a *app.App){storeService},
	Permissions: permCatalogue,
}
