package cli

import (
	"context"
	"time"

	"xr/app"
)

// xr serve probes every database file that refused a write for lack of
// space, so /readyz and /metrics clear once space is freed even when no
// write arrives to prove it.
func init() {
	backgroundServices = append(backgroundServices, func(ctx context.Context, a *app.App) { a.RunStorageProbe(ctx, 5*time.Second) })
}
