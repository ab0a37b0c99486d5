// Package studio is the design studio: a tenant's designs (versioned JSON documents
// rendered by app/studio/render) with their images, and the instance-wide
// design store where tenants publish, review and import designs.
package studio

import "xr/app"

// Module is the studio area.
var Module = app.Module{Name: "studio"}
