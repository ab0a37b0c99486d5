// Package selfservice is what a subscriber changes about its own service
// from the portal: plan changes and quotes, extensions on credit,
// automatic renewal, the order of its quota buckets, speed boosts.
package selfservice

import "xr/app"

// Module is the self-service area.
var Module = app.Module{Name: "selfservice"}
