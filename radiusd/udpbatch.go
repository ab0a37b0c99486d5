package radiusd

import (
	"errors"
	"net"
	"net/netip"
	"sync"

	"golang.org/x/net/ipv4"
)

// UDP in batches: on Linux one recvmmsg takes every datagram waiting on a
// socket and one sendmmsg sends every answer ready, so a busy listener
// pays one system call per batch instead of one per packet (the profile
// of a loopback load showed send and receive calls at half of the
// server's CPU). Elsewhere x/net falls back to one datagram per call.

// batchMax is the most datagrams one call moves.
const batchMax = 32

// batchConn is the batch interface of x/net's ipv4 and ipv6 PacketConn
// (ipv4.Message and ipv6.Message are the same type).
type batchConn interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

func newBatchConn(c *net.UDPConn) batchConn { return ipv4.NewPacketConn(c) }

// sendQueue combines the answers of concurrent workers into batches: a
// worker appends its answer and, when no other worker is sending, sends
// everything pending, including what others append meanwhile. Nobody
// waits for a batch to fill: a lone answer goes out at once.
type sendQueue struct {
	conn batchConn
	mu   sync.Mutex
	busy bool      // a worker is sending
	cur  *sendList // appended to
	free *sendList // the other list, reused
	fail func(dst netip.AddrPort, err error)
}

// sendList is answers copied into one arena (the caller's buffer may be
// worker scratch), with their destinations.
type sendList struct {
	arena []byte
	ends  []int
	dsts  []netip.AddrPort
	msgs  []ipv4.Message
	addrs []net.UDPAddr
	bufs  [][1][]byte
}

func newSendQueue(c batchConn, fail func(netip.AddrPort, error)) *sendQueue {
	return &sendQueue{conn: c, cur: new(sendList), free: new(sendList), fail: fail}
}

// send sends b to dst, in a batch with whatever else is pending.
func (q *sendQueue) send(b []byte, dst netip.AddrPort) {
	q.mu.Lock()
	q.cur.add(b, dst)
	q.flushLocked()
}

// sendAll sends the answers fill adds, in batches with whatever else is
// pending.
func (q *sendQueue) sendAll(fill func(add func([]byte, netip.AddrPort))) {
	q.mu.Lock()
	fill(q.cur.add)
	q.flushLocked()
}

// flushLocked sends until nothing is pending, unless another worker is
// already doing so; it unlocks q.mu.
func (q *sendQueue) flushLocked() {
	if q.busy {
		q.mu.Unlock()
		return
	}
	q.busy = true
	for len(q.cur.ends) > 0 {
		out := q.cur
		q.cur, q.free = q.free, nil
		q.mu.Unlock()
		out.write(q.conn, q.fail)
		out.reset()
		q.mu.Lock()
		q.free = out
	}
	q.busy = false
	q.mu.Unlock()
}

// sendList sends a worker's answers, in batches with whatever else is
// pending.
func (q *sendQueue) sendList(o *sendList) {
	q.mu.Lock()
	base := len(q.cur.arena)
	q.cur.arena = append(q.cur.arena, o.arena...)
	for _, end := range o.ends {
		q.cur.ends = append(q.cur.ends, base+end)
	}
	q.cur.dsts = append(q.cur.dsts, o.dsts...)
	q.flushLocked()
}

func (l *sendList) add(b []byte, dst netip.AddrPort) {
	l.arena = append(l.arena, b...)
	l.ends = append(l.ends, len(l.arena))
	l.dsts = append(l.dsts, dst)
}

func (l *sendList) reset() {
	l.arena, l.ends, l.dsts = l.arena[:0], l.ends[:0], l.dsts[:0]
}

// write sends the list in calls of at most batchMax datagrams; a datagram
// the kernel refuses is reported and skipped.
func (l *sendList) write(c batchConn, fail func(netip.AddrPort, error)) {
	for len(l.msgs) < len(l.ends) {
		l.msgs = append(l.msgs, ipv4.Message{})
		l.addrs = append(l.addrs, net.UDPAddr{IP: make(net.IP, 0, net.IPv6len)})
		l.bufs = append(l.bufs, [1][]byte{})
	}
	start := 0
	for i, end := range l.ends {
		l.bufs[i][0] = l.arena[start:end]
		start = end
		a := &l.addrs[i]
		ip := l.dsts[i].Addr()
		if ip.Is4() {
			v4 := ip.As4()
			a.IP = append(a.IP[:0], v4[:]...)
		} else {
			v6 := ip.As16()
			a.IP = append(a.IP[:0], v6[:]...)
		}
		a.Port, a.Zone = int(l.dsts[i].Port()), ip.Zone()
		l.msgs[i] = ipv4.Message{Buffers: l.bufs[i][:], Addr: a}
	}
	ms := l.msgs[:len(l.ends)]
	for first := 0; first < len(ms); {
		n, err := c.WriteBatch(ms[first:min(len(ms), first+batchMax)], 0)
		if n <= 0 { // refused before anything was sent: skip the first datagram
			if err == nil {
				err = errNothingSent
			}
			fail(l.dsts[first], err)
			n = 1
		}
		first += n
	}
}

// errNothingSent reports a sendmmsg that sent nothing and said no more.
var errNothingSent = errors.New("sendmmsg sent nothing")
