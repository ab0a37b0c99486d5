// Package pos is the point of sale: a cashier's shifts and till sales of
// cards, renewals, add-ons and wallet top-ups.
package pos

import "xr/app"

// Module is the point-of-sale area.
var Module = app.Module{Name: "pos"}
