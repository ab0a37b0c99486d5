package probes

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"xr/app/egress"
)

// A refused connection is a live host for the liveness fallback (the host
// answered with a reset) but a failed service check on a named port.
func TestTCPEchoRefusedMeansAliveOnlyWithoutAPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there now: a connect is refused
	lo := netip.MustParseAddr("127.0.0.1")
	for _, c := range []struct {
		refusedIsAlive, ok bool
	}{{true, true}, {false, false}} {
		r := tcpEcho(t.Context(), Target{Addr: lo, Egress: egress.Guard{Policy: egress.Device, AllowPrivate: true}}, []int{closed}, c.refusedIsAlive, 2*time.Second)
		if r.OK != c.ok || r.Method != MethodTCP {
			t.Fatalf("refusedIsAlive=%v: %+v", c.refusedIsAlive, r)
		}
	}
}
