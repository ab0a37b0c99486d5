package radiusd

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// TestSendQueueDeliversEveryAnswer: answers sent by concurrent workers,
// combined into batches, each reach their own destination exactly once;
// a destination the kernel refuses is reported and skipped, and the
// answers around it still go out.
func TestSendQueueDeliversEveryAnswer(t *testing.T) {
	t.Parallel()
	srv, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var recv [3]net.PacketConn
	var dsts [3]netip.AddrPort
	for i := range recv {
		if recv[i], err = net.ListenPacket("udp4", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		defer recv[i].Close()
		dsts[i] = recv[i].LocalAddr().(*net.UDPAddr).AddrPort()
	}
	var mu sync.Mutex
	var refused []netip.AddrPort
	q := newSendQueue(newBatchConn(srv.(*net.UDPConn)), func(dst netip.AddrPort, err error) {
		mu.Lock()
		refused = append(refused, dst)
		mu.Unlock()
	})
	const workers, each = 8, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := new(sendList)
			for i := range each {
				b := []byte(fmt.Sprintf("w%d-%d", w, i))
				if i%2 == 0 {
					q.send(b, dsts[(w+i)%3])
				} else { // a worker's list, as after a batch of its queue
					l.add(b, dsts[(w+i)%3])
					q.sendList(l)
					l.reset()
				}
			}
		}()
	}
	wg.Wait()
	bad := netip.MustParseAddrPort("[2001:db8::1]:1812") // not reachable from an IPv4 socket
	q.sendAll(func(add func([]byte, netip.AddrPort)) {
		add([]byte("before"), dsts[0])
		add([]byte("refused"), bad)
		add([]byte("after"), dsts[0])
	})
	want := map[string]int{"before": 0, "after": 0}
	for w := range workers {
		for i := range each {
			want[fmt.Sprintf("w%d-%d", w, i)] = (w + i) % 3
		}
	}
	buf := make([]byte, 64)
	for i, c := range recv {
		for {
			c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				break
			}
			got := string(buf[:n])
			if r, ok := want[got]; !ok || r != i {
				t.Fatalf("receiver %d got %q (unknown, duplicate or misrouted)", i, got)
			}
			delete(want, got)
		}
	}
	if len(want) > 0 {
		t.Fatalf("%d answers never arrived: %v", len(want), want)
	}
	if len(refused) != 1 || refused[0] != bad {
		t.Fatalf("refused %v, want only %v", refused, bad)
	}
}
