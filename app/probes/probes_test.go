package probes_test

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"xr/app/egress"
	"xr/app/probes"
)

var ctx = context.Background()

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return ln
}

func TestTCPEcho(t *testing.T) {
	t.Parallel()
	ln := listen(t)
	port := ln.Addr().(*net.TCPAddr).Port
	r := probes.Echo(ctx, probes.Target{Addr: netip.MustParseAddr("127.0.0.1"), Port: port, Egress: lab}, time.Second)
	if !r.OK || r.Method != probes.MethodTCP {
		t.Fatalf("tcp echo to a listener: %+v", r)
	}
	ln.Close()
	r = probes.Echo(ctx, probes.Target{Addr: netip.MustParseAddr("127.0.0.1"), Port: port, Egress: lab}, time.Second)
	if r.OK || r.Method != probes.MethodTCP || r.Error == "" {
		t.Fatalf("tcp echo to a closed port: %+v", r)
	}
}

func TestICMPEchoLoopback(t *testing.T) {
	t.Parallel()
	network, ok := probes.ICMPAvailable()
	if !ok {
		t.Skip("SKIPPED LOUDLY: this sandbox allows no ICMP socket (neither unprivileged nor raw); the TCP fallback is tested by TestTCPEcho")
	}
	r := probes.Echo(ctx, probes.Target{Addr: netip.MustParseAddr("127.0.0.1"), Egress: lab}, 2*time.Second)
	if !r.OK || r.Method != probes.MethodICMP {
		t.Fatalf("icmp echo over %s: %+v", network, r)
	}
}

func TestCounterDeltaWraps(t *testing.T) {
	t.Parallel()
	if d := probes.CounterDelta(4294967000, 200, false); d != 496 {
		t.Fatalf("32-bit wrap: %d", d)
	}
	if d := probes.CounterDelta(^uint64(0)-9, 5, true); d != 15 {
		t.Fatalf("64-bit wrap: %d", d)
	}
	if d := probes.CounterDelta(100, 150, true); d != 50 {
		t.Fatalf("no wrap: %d", d)
	}
}

// lab is the egress guard of an instance run with --allow-private-egress
// (the tests' loopback targets).
var lab = egress.Guard{Policy: egress.Device, AllowPrivate: true}

// A target must be a NAS or in the declared ranges, and pass the egress
// guard whatever they say: a NAS row or a declared range on loopback or
// link-local (169.254.169.254) is not probed without private egress.
func TestGuard(t *testing.T) {
	t.Parallel()
	r, err := probes.ParseRanges("10.0.0.0/8, 192.0.2.7, 127.0.0.0/8, 169.254.0.0/16, 240.0.0.0/4")
	if err != nil {
		t.Fatal(err)
	}
	nas := map[netip.Addr]bool{netip.MustParseAddr("93.184.216.34"): true, netip.MustParseAddr("127.0.0.1"): true, netip.MustParseAddr("169.254.169.254"): true}
	g := &probes.Guard{Ranges: r, NAS: nas, Egress: egress.Guard{Policy: egress.Device}}
	for addr, want := range map[string]bool{"10.1.1.1": true, "192.0.2.7": true, "192.0.2.8": false, "240.0.0.7": false, "93.184.216.34": true, "93.184.216.35": false,
		"127.0.0.1": false, "127.0.0.2": false, "169.254.169.254": false, "0.0.0.0": false, "255.255.255.255": false, "224.0.0.1": false, "::ffff:10.0.0.1": true} {
		if got := g.Allow(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Allow(%s) = %v, want %v", addr, got, want)
		}
	}
	g.Egress.AllowPrivate = true
	for _, addr := range []string{"127.0.0.1", "169.254.169.254"} {
		if !g.Allow(netip.MustParseAddr(addr)) {
			t.Errorf("with private egress: Allow(%s) = false", addr)
		}
	}
	if _, err := probes.ParseRanges("10.0.0.0/33"); err == nil {
		t.Fatal("a bad range parsed")
	}
}

// Probes check the egress guard again as they connect: an echo to a
// loopback listener without private egress is refused before any packet.
func TestProbesRefusedAtConnect(t *testing.T) {
	t.Parallel()
	ln := listen(t)
	port := ln.Addr().(*net.TCPAddr).Port
	strict := egress.Guard{Policy: egress.Device}
	r := probes.Echo(ctx, probes.Target{Addr: netip.MustParseAddr("127.0.0.1"), Port: port, Egress: strict}, time.Second)
	if r.OK || r.Error != "refused: loopback address" {
		t.Fatalf("%+v", r)
	}
	r = probes.Echo(ctx, probes.Target{Addr: netip.MustParseAddr("169.254.169.254"), Egress: strict}, time.Second)
	if r.OK || !strings.HasPrefix(r.Error, "refused: link_local") {
		t.Fatalf("%+v", r)
	}
	if _, err := probes.SysUpTime(ctx, probes.Target{Addr: netip.MustParseAddr("127.0.0.1"), Egress: strict}, probes.SNMPCred{Version: "v2c", Community: "x", Port: port}, time.Second); err == nil {
		t.Fatal("SNMP to loopback was sent")
	}
}
