package cli

import (
	"context"

	"xr/app"
	"xr/app/aaa"
)

// DemoNASSecret is the shared secret of the demo's loopback NAS.
const DemoNASSecret = "demo-radius-secret"

// seedDemoNAS adds the loopback NAS that xr simulate and radclient use.
func seedDemoNAS(ctx context.Context, a *app.App, t *app.Tenant) error {
	_, err := aaa.CreateNAS(ctx, a, t, aaa.NASInput{
		Name: app.Opt[string]{Set: true, V: "loopback (xr simulate, radclient)"}, IP: app.Opt[string]{Set: true, V: "127.0.0.1"},
		Secret: app.Opt[string]{Set: true, V: DemoNASSecret}, Type: app.Opt[aaa.NASType]{Set: true, V: "mikrotik"},
	})
	return err
}
