package cli

import (
	"context"
	"fmt"

	"xr/app"
	"xr/app/aaa"
)

// DemoNASSecret is the shared secret of the demo's loopback NAS.
const DemoNASSecret = "demo-radius-secret"

// seedDemoNAS adds three NAS: the loopback one xr simulate and radclient
// use (its CoA port is where the demo's simulator answers), and two towers
// the history's sessions came through.
func seedDemoNAS(ctx context.Context, d *demoSeed) error {
	for _, n := range []aaa.NASInput{
		{Name: optS("loopback (xr simulate, radclient)"), IP: optS("127.0.0.1"), Secret: optS(DemoNASSecret),
			Type: app.Opt[aaa.NASType]{Set: true, V: "mikrotik"}, Description: optS("the demo's NAS simulator")},
		{Name: optS("Tower North (CCR2004)"), IP: optS("10.20.0.1"), Secret: optS("tower-north-secret-2026"),
			Type: app.Opt[aaa.NASType]{Set: true, V: "mikrotik"}, Description: optS("Hilltop site, 3 sectors")},
		{Name: optS("Downtown BNG"), IP: optS("10.30.0.1"), Secret: optS("downtown-bng-secret-2026"),
			Type: app.Opt[aaa.NASType]{Set: true, V: "cisco"}, Description: optS("PPPoE concentrator, fibre customers")},
	} {
		r, err := aaa.CreateNAS(ctx, d.sys, n)
		if err != nil {
			return fmt.Errorf("NAS %s: %w", n.Name.V, err)
		}
		d.nas = append(d.nas, r.ID)
	}
	return nil
}
