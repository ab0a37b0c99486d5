package probes_test

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

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
	r := probes.Echo(ctx, probes.Target{Addr: netip.MustParseAddr("127.0.0.1"), Port: port}, time.Second)
	if !r.OK || r.Method != probes.MethodTCP {
		t.Fatalf("tcp echo to a listener: %+v", r)
	}
	ln.Close()
	r = probes.Echo(ctx, probes.Target{Addr: netip.MustParseAddr("127.0.0.1"), Port: port}, time.Second)
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
	r := probes.Echo(ctx, probes.Target{Addr: netip.MustParseAddr("127.0.0.1")}, 2*time.Second)
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

func TestGuard(t *testing.T) {
	t.Parallel()
	r, err := probes.ParseRanges("10.0.0.0/8, 192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	g := &probes.Guard{Ranges: r, NAS: map[netip.Addr]bool{netip.MustParseAddr("203.0.113.1"): true}}
	for addr, want := range map[string]bool{"10.1.1.1": true, "192.0.2.7": true, "192.0.2.8": false, "203.0.113.1": true,
		"127.0.0.1": false, "169.254.169.254": false, "0.0.0.0": false, "255.255.255.255": false, "224.0.0.1": false, "::ffff:10.0.0.1": true} {
		if got := g.Allow(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Allow(%s) = %v, want %v", addr, got, want)
		}
	}
	if _, err := probes.ParseRanges("10.0.0.0/33"); err == nil {
		t.Fatal("a bad range parsed")
	}
}
