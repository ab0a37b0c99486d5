package radiusd

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// The TLS side of PEAP and TTLS: crypto/tls runs the server end of a TLS
// session whose records travel inside EAP packets. crypto/tls wants a
// net.Conn it can block on, so each conversation has one goroutine running
// the session over an in-memory pipe; the RADIUS worker feeds it the
// records of one EAP round trip and waits until it asks for more input
// (or fails), then sends what it wrote. Nothing in this file parses TLS:
// only the EAP-TLS framing around it (RFC 5216 section 3.1, which PEAP and
// TTLS share: flags L, M, S and the version bits; fragments and their
// acknowledgements).

// EAP-TLS flags.
const (
	tlsFlagLength  = 0x80 // L: a 4-octet TLS Message Length follows
	tlsFlagMore    = 0x40 // M: more fragments follow
	tlsFlagStart   = 0x20 // S: start (server to peer)
	tlsVersionBits = 0x07
)

const (
	// tlsFragment is how many TLS octets one EAP-Request carries
	// (FreeRADIUS' default fragment_size), so that an Access-Challenge
	// stays within a common MTU.
	tlsFragment = 1024
	// maxTLSMessage bounds a reassembled message from the peer: its TLS
	// flights (no client certificate for PEAP and TTLS) and tunnelled
	// credentials are a few kilobytes.
	maxTLSMessage = 64 << 10
	// tunnelStepTimeout bounds how long a worker waits for the session
	// goroutine to consume one round trip's records.
	tunnelStepTimeout = 5 * time.Second
)

var (
	errTLSFraming  = errors.New("eap-tls: bad fragment (flags, length or size)")
	errTLSTooLarge = errors.New("eap-tls: TLS message over the size limit")
	errTunnelStuck = errors.New("eap-tls: TLS session did not answer in time")
	errTunnelEnded = errors.New("eap-tls: TLS session ended")
)

// tlsFrame is one EAP-TLS-style packet's data (after the EAP type octet).
type tlsFrame struct {
	flags byte
	total int // TLS Message Length when L is set, else -1
	data  []byte
}

// parseTLSFrame reads the flags, the optional length and the TLS data of a
// PEAP/TTLS packet (RFC 5216 section 3.2 format).
func parseTLSFrame(b []byte) (tlsFrame, error) {
	f := tlsFrame{total: -1}
	if len(b) < 1 {
		return f, errTLSFraming
	}
	f.flags, b = b[0], b[1:]
	if f.flags&tlsFlagLength != 0 {
		if len(b) < 4 {
			return f, errTLSFraming
		}
		n := binary.BigEndian.Uint32(b)
		if n > maxTLSMessage {
			return f, errTLSTooLarge
		}
		f.total, b = int(n), b[4:]
	}
	f.data = b
	return f, nil
}

// tlsReassembly collects the fragments of one TLS message from the peer.
type tlsReassembly struct {
	buf   []byte
	total int // announced length, -1 when none was
}

// add takes one fragment. It reports whether the message is complete.
func (r *tlsReassembly) add(f tlsFrame) (bool, error) {
	if len(r.buf) == 0 && r.total <= 0 {
		r.total = f.total
	} else if f.total >= 0 && f.total != r.total {
		return false, errTLSFraming // a later fragment may repeat L, not change it
	}
	if len(r.buf)+len(f.data) > maxTLSMessage || r.total >= 0 && len(r.buf)+len(f.data) > r.total {
		return false, errTLSTooLarge
	}
	r.buf = append(r.buf, f.data...)
	if f.flags&tlsFlagMore != 0 {
		if len(f.data) == 0 {
			return false, errTLSFraming // a fragment must carry data
		}
		return false, nil
	}
	if r.total >= 0 && len(r.buf) != r.total {
		return false, errTLSFraming
	}
	return true, nil
}

func (r *tlsReassembly) take() []byte {
	b := r.buf
	r.buf, r.total = nil, -1
	return b
}

// tlsOutbound hands the server's TLS output to the peer in fragments.
type tlsOutbound struct {
	buf  []byte
	sent int
}

func (o *tlsOutbound) pending() bool { return o.sent < len(o.buf) }

// next writes the next fragment's EAP data (flags, length, TLS octets).
// The first fragment of a fragmented message carries L (RFC 5216 section
// 2.1.5), every one but the last M.
func (o *tlsOutbound) next(version byte) []byte {
	rest := o.buf[o.sent:]
	n := min(len(rest), tlsFragment)
	flags := version
	var hdr [5]byte
	h := hdr[:1]
	if o.sent == 0 && n < len(rest) {
		flags |= tlsFlagLength
		h = binary.BigEndian.AppendUint32(h, uint32(len(o.buf)))
	}
	if n < len(rest) {
		flags |= tlsFlagMore
	}
	h[0] = flags
	out := make([]byte, 0, len(h)+n)
	out = append(append(out, h...), rest[:n]...)
	o.sent += n
	if o.sent == len(o.buf) {
		o.buf, o.sent = nil, 0
	}
	return out
}

// tunnelEvent is what the session goroutine reports, in order.
type tunnelEvent struct {
	kind int
	data []byte // evAppData: decrypted application data
	err  error  // evFailed
}

const (
	evNeedInput     = iota + 1 // blocked reading: the round trip is consumed
	evHandshakeDone            // the handshake completed
	evAppData                  // application data from the peer
	evFailed                   // the session ended (handshake failure, alert, close)
)

// tlsTunnel is the server end of one TLS session over EAP.
type tlsTunnel struct {
	conn   *tls.Conn
	pipe   *eapPipe
	events chan tunnelEvent
	closed chan struct{}
	once   sync.Once
	up     bool // the handshake completed (worker side)
}

// newTLSTunnel starts a session and waits until it blocks reading the
// ClientHello: between round trips the goroutine always waits on the pipe,
// which is what feed relies on.
func newTLSTunnel(cfg *tls.Config) (*tlsTunnel, error) {
	t, _, err := startTunnel(func(c net.Conn) *tls.Conn { return tls.Server(c, cfg) })
	return t, err
}

// startTunnel runs a session (the server's; tests run a client's) and
// waits until it first blocks reading; out is what it wrote before (a
// client's ClientHello).
func startTunnel(side func(net.Conn) *tls.Conn) (*tlsTunnel, []byte, error) {
	t := &tlsTunnel{events: make(chan tunnelEvent), closed: make(chan struct{})}
	t.pipe = &eapPipe{t: t, in: make(chan []byte)}
	t.conn = side(t.pipe)
	go t.run()
	st, err := t.feed(nil)
	if err != nil {
		t.close()
		return nil, nil, err
	}
	return t, st.out, nil
}

func (t *tlsTunnel) run() {
	if err := t.conn.Handshake(); err != nil {
		t.emit(tunnelEvent{kind: evFailed, err: err})
		return
	}
	if !t.emit(tunnelEvent{kind: evHandshakeDone}) {
		return
	}
	buf := make([]byte, 16<<10)
	for {
		n, err := t.conn.Read(buf)
		if n > 0 && !t.emit(tunnelEvent{kind: evAppData, data: append([]byte(nil), buf[:n]...)}) {
			return
		}
		if err != nil {
			t.emit(tunnelEvent{kind: evFailed, err: err})
			return
		}
	}
}

// emit hands an event to the worker; false once the tunnel is closed.
func (t *tlsTunnel) emit(ev tunnelEvent) bool {
	select {
	case t.events <- ev:
		return true
	case <-t.closed:
		return false
	}
}

// close ends the session goroutine (its pending Read returns EOF).
func (t *tlsTunnel) close() { t.once.Do(func() { close(t.closed) }) }

// tunnelStep is what one round trip produced.
type tunnelStep struct {
	handshakeDone bool     // completed during this step
	appData       [][]byte // decrypted records, in order
	out           []byte   // TLS octets to send to the peer
}

// feed gives the session the records of one round trip and waits until it
// consumed them and blocks reading again. An empty in only waits (the
// start, until the session reads its ClientHello).
func (t *tlsTunnel) feed(in []byte) (tunnelStep, error) {
	var st tunnelStep
	timer := time.NewTimer(tunnelStepTimeout)
	defer timer.Stop()
	if len(in) > 0 {
		select {
		case t.pipe.in <- in:
		case <-t.closed:
			return st, errTunnelEnded
		case <-timer.C:
			return st, errTunnelStuck
		}
	}
	for {
		select {
		case ev := <-t.events:
			switch ev.kind {
			case evNeedInput:
				st.out = t.pipe.takeOut()
				return st, nil
			case evHandshakeDone:
				st.handshakeDone, t.up = true, true
			case evAppData:
				st.appData = append(st.appData, ev.data)
			case evFailed:
				st.out = t.pipe.takeOut() // an alert, if TLS wrote one
				return st, ev.err
			}
		case <-t.closed:
			return st, errTunnelEnded
		case <-timer.C:
			return st, errTunnelStuck
		}
	}
}

// write encrypts application data for the peer; the records are in the
// pipe's output afterwards (takeOut). Only after the handshake.
func (t *tlsTunnel) write(b []byte) ([]byte, error) {
	if _, err := t.conn.Write(b); err != nil {
		return nil, err
	}
	return t.pipe.takeOut(), nil
}

// exportKey is the TLS exporter (RFC 5705) over the session: with TLS 1.2,
// the PRF over the master secret and both randoms, which is how PEAP
// ("client EAP encryption") and TTLS ("ttls keying material", "ttls
// challenge") derive their keys.
func (t *tlsTunnel) exportKey(label string, n int) ([]byte, error) {
	cs := t.conn.ConnectionState()
	return cs.ExportKeyingMaterial(label, nil, n)
}

// eapPipe is the net.Conn the TLS session runs over.
type eapPipe struct {
	t   *tlsTunnel
	in  chan []byte
	cur []byte
	mu  sync.Mutex
	out []byte
}

func (p *eapPipe) Read(b []byte) (int, error) {
	if len(p.cur) == 0 {
		// Nothing left of this round trip: tell the worker, then wait for
		// the next one.
		if !p.t.emit(tunnelEvent{kind: evNeedInput}) {
			return 0, io.EOF
		}
		select {
		case p.cur = <-p.in:
		case <-p.t.closed:
			return 0, io.EOF
		}
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

func (p *eapPipe) Write(b []byte) (int, error) {
	select {
	case <-p.t.closed:
		return 0, net.ErrClosed
	default:
	}
	p.mu.Lock()
	if len(p.out)+len(b) > maxTLSMessage {
		p.mu.Unlock()
		return 0, errTLSTooLarge
	}
	p.out = append(p.out, b...)
	p.mu.Unlock()
	return len(b), nil
}

func (p *eapPipe) takeOut() []byte {
	p.mu.Lock()
	b := p.out
	p.out = nil
	p.mu.Unlock()
	return b
}

func (p *eapPipe) Close() error                     { p.t.close(); return nil }
func (p *eapPipe) LocalAddr() net.Addr              { return eapAddr{} }
func (p *eapPipe) RemoteAddr() net.Addr             { return eapAddr{} }
func (p *eapPipe) SetDeadline(time.Time) error      { return nil }
func (p *eapPipe) SetReadDeadline(time.Time) error  { return nil }
func (p *eapPipe) SetWriteDeadline(time.Time) error { return nil }

type eapAddr struct{}

func (eapAddr) Network() string { return "eap" }
func (eapAddr) String() string  { return "eap" }
