package cli

import (
	"context"
	"fmt"
	"strings"

	"xr/app/monitoring"
)

// demoNetDevice is one monitored device of the demo's network; parent is
// the index of its uplink (-1: the core, -2: the Tower North NAS, -3: the
// Downtown BNG).
type demoNetDevice struct {
	name, typ, addr string
	port            int // 0: liveness probe; a closed port: a device that is down
	parent          int
	lat, lon        float64
	users           int // subscribers attached and placed around it
}

// The devices live on loopback addresses (declared as the demo's network
// range), so the poller finds them up on any machine; one sector probes a
// closed port and goes down, giving the map an incident and its impact.
var demoNetwork = []demoNetDevice{
	{"Core router (CCR1036)", "router", "127.0.1.1", 0, 0, 33.5138, 36.2765, 0},
	{"North sector A (60°)", "ap", "127.0.1.11", 0, -2, 33.5402, 36.2690, 40},
	{"North sector B (180°)", "ap", "127.0.1.12", 0, -2, 33.5330, 36.2855, 40},
	{"North sector C (300°)", "ap", "127.0.1.13", 9, -2, 33.5461, 36.2931, 30},
	{"Downtown OLT", "olt", "127.0.1.21", 0, -3, 33.5102, 36.2958, 0},
	{"Cabinet 1 (Al-Hamra St)", "switch", "127.0.1.22", 0, 4, 33.5076, 36.2990, 50},
	{"Cabinet 2 (Baghdad St)", "switch", "127.0.1.23", 0, 4, 33.5167, 36.3042, 50},
}

// seedDemoNetwork declares loopback as the demo's network, adds the
// devices with coordinates, links them into a tree under the core (the two
// towers' NAS in between), and attaches and places subscribers.
func seedDemoNetwork(ctx context.Context, d *demoSeed) error {
	if _, err := monitoring.UpdateSettings(ctx, d.sys, monitoring.SettingsInput{NetworkRanges: &[]string{"127.0.0.0/8"}}); err != nil {
		return err
	}
	nasDev := make([]int64, len(d.nas))
	for i, n := range d.nas {
		dev, err := monitoring.GetDevice(ctx, d.sys, monitoring.KindNAS, n)
		if err != nil {
			return fmt.Errorf("NAS %d as a device: %w", n, err)
		}
		nasDev[i] = dev.ID
	}
	ids := make([]int64, len(demoNetwork))
	var geo strings.Builder
	geo.WriteString("kind,ref,lat,lon\n")
	for i, nd := range demoNetwork {
		dev, err := monitoring.CreateDevice(ctx, d.sys, monitoring.DeviceInput{Name: nd.name, Address: nd.addr, Type: nd.typ, ProbePort: nd.port})
		if err != nil {
			return fmt.Errorf("device %s: %w", nd.name, err)
		}
		ids[i] = dev.ID
		fmt.Fprintf(&geo, "device,%d,%.4f,%.4f\n", dev.ID, nd.lat, nd.lon)
	}
	// The towers' NAS sit between the core and their sectors.
	fmt.Fprintf(&geo, "nas,%d,33.5380,36.2800\nnas,%d,33.5120,36.2890\n", d.nas[1], d.nas[2])
	for i, nd := range demoNetwork {
		if i == 0 {
			continue
		}
		from := map[int]int64{-1: ids[0], -2: nasDev[1], -3: nasDev[2]}[nd.parent]
		if nd.parent >= 0 {
			from = ids[nd.parent]
		}
		if _, err := monitoring.CreateLink(ctx, d.sys, monitoring.LinkInput{FromID: from, ToID: ids[i]}); err != nil {
			return fmt.Errorf("link to %s: %w", nd.name, err)
		}
	}
	for _, nas := range nasDev[1:] {
		if _, err := monitoring.CreateLink(ctx, d.sys, monitoring.LinkInput{FromID: ids[0], ToID: nas}); err != nil {
			return fmt.Errorf("link to a NAS: %w", err)
		}
	}
	// Subscribers beyond the reserved ones, in order, around their device.
	next := demoReserved
	for i, nd := range demoNetwork {
		var attached []int64
		for j := 0; j < nd.users && next < len(d.users); j++ {
			u := d.users[next]
			next++
			attached = append(attached, u.id)
			fmt.Fprintf(&geo, "user,%d,%.5f,%.5f\n", u.id, nd.lat+(d.rng.Float64()-0.5)*0.012, nd.lon+(d.rng.Float64()-0.5)*0.012)
		}
		if len(attached) == 0 {
			continue
		}
		if _, err := monitoring.SetUsers(ctx, d.sys, monitoring.KindDevice, ids[i], monitoring.UsersInput{UserIDs: attached}); err != nil {
			return fmt.Errorf("attach to %s: %w", nd.name, err)
		}
	}
	res, err := monitoring.ImportGeo(ctx, d.sys, monitoring.ImportInput{Format: "csv", Data: geo.String()})
	if err != nil {
		return err
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("coordinates: %+v", res.Errors[0])
	}
	return nil
}
