package main

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"layeh.com/radius"
)

// radiusServer answers every Access-Request with an Access-Accept on a
// loopback port until the test ends.
func radiusServer(t *testing.T) string {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &radius.PacketServer{SecretSource: radius.StaticSecretSource([]byte(nasSecret)),
		Handler: radius.HandlerFunc(func(w radius.ResponseWriter, r *radius.Request) {
			_ = w.Write(r.Response(radius.CodeAccessAccept))
		})}
	go func() { _ = srv.Serve(conn) }()
	t.Cleanup(func() { _ = conn.Close() })
	return conn.LocalAddr().String()
}

// deadServer is a loopback port nobody listens on.
func deadServer(t *testing.T) string {
	t.Helper()
	addr, err := freeAddr(true)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestNASFailsOverAndCountsTheLost(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	up, down := radiusServer(t), deadServer(t)
	for _, c := range []struct {
		name     string
		servers  []string
		answerBy int
		minWait  time.Duration
	}{
		{"the first server answers", []string{up, down}, 0, 0},
		{"the first is down: the second answers after the timeout", []string{down, up}, 1, timeout},
		{"both down: lost after every round", []string{down, down}, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n := &nas{servers: c.servers, timeout: timeout, rounds: 2, from: netip.MustParseAddr(nasIP)}
			stop := make(chan struct{})
			time.AfterFunc(200*time.Millisecond, func() { close(stop) })
			res := n.run(20, stop)
			if res.Sent == 0 {
				t.Fatal("nothing sent")
			}
			if c.answerBy < 0 {
				if res.Lost != res.Sent || res.ByServer[0]+res.ByServer[1] != 0 {
					t.Fatalf("%+v: want every request lost", res)
				}
				return
			}
			if res.Lost != 0 || res.ByServer[c.answerBy] != res.Sent {
				t.Fatalf("%+v: want all %d answered by server %d", res, res.Sent, c.answerBy)
			}
			if res.MaxWait < c.minWait {
				t.Fatalf("longest wait %s, want at least the timeout %s (a refused server is waited out)", res.MaxWait, c.minWait)
			}
		})
	}
}

func TestLagsAndQuantiles(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// Three acknowledged, two seen; the second poll answered before its
	// acknowledgement reached the client: lag 0, not negative.
	lags := lagsOf([]time.Time{at(0), at(500), at(900)}, []time.Time{at(1200), at(400)})
	if len(lags) != 2 || lags[0] != 1200*time.Millisecond || lags[1] != 0 {
		t.Fatalf("lags %v", lags)
	}
	ds := sorted([]time.Duration{5, 1, 4, 2, 3})
	for q, want := range map[float64]time.Duration{0.5: 3, 0.99: 5, 1: 5, 0: 1} {
		if got := quantile(ds, q); got != want {
			t.Errorf("quantile %v = %v, want %v", q, got, want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("quantile of nothing")
	}
}
