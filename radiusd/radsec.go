package radiusd

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// RadSec: RADIUS over TLS (RFC 6614). A NAS connects with a client
// certificate of the instance CA; the certificate (by its SHA-256
// fingerprint) is bound to one NAS, which is how its packets reach their
// tenant, whatever its source address. The packets are the usual ones
// with the shared secret "radsec" (section 2.3), read one after another
// from the stream by one goroutine per connection and answered on it by
// the same workers as UDP (in any order: RADIUS matches answers by
// Identifier). Answers to the server's own CoA and Disconnect requests
// come back on the same connection.
//
// Bounds: connections (all, and per NAS), requests in flight per
// connection (the reader stops reading at the limit, so TCP pushes back),
// a handshake timeout, an idle timeout (Status-Server keeps a quiet
// connection alive), a write timeout. A packet whose Length is out of
// range ends the connection: the stream cannot be resynchronised.

// RadSecSecret is the shared secret of RADIUS over TLS (RFC 6614 section 2.3).
const RadSecSecret = "radsec"

// DefaultRadSecPort is RadSec's TCP port (RFC 6614 section 2.1).
const DefaultRadSecPort = 2083

// RadSecConfig configures RADIUS over TLS.
type RadSecConfig struct {
	// TLS holds the server certificate and, in ClientCAs, the CA client
	// certificates must chain to. radiusd requires a verified client
	// certificate and TLS 1.2 or later whatever it says.
	TLS *tls.Config
	// Directory binds a client certificate to its NAS.
	Directory RadSecDirectory
	// MaxConns bounds the connections (handshaking included); default 1024.
	// MaxConnsPerNAS bounds those of one NAS; default 16.
	MaxConns       int
	MaxConnsPerNAS int
	// MaxInFlight bounds the unanswered requests of one connection;
	// default 256 (the Identifier space).
	MaxInFlight int
	// IdleTimeout closes a connection that sent nothing for so long;
	// default 5 minutes. HandshakeTimeout bounds the TLS handshake,
	// WriteTimeout one answer; defaults 10 s.
	IdleTimeout      time.Duration
	HandshakeTimeout time.Duration
	WriteTimeout     time.Duration
}

// RadSecDirectory resolves a client certificate, by the SHA-256 of its
// DER encoding, to the NAS it is bound to; false for a certificate bound
// to none (never issued, revoked, re-issued, its NAS deleted). The NAS's
// Secret must be RadSecSecret. It is called for the handshake and for
// every packet (a revocation ends the connection at its next packet), so
// it must be fast.
type RadSecDirectory interface {
	LookupRadSecNAS(fingerprint [32]byte) (*NAS, bool)
}

var (
	errRadSecUnbound = errors.New("radsec: client certificate is bound to no NAS")
	errRadSecTooMany = errors.New("radsec: too many connections for this NAS")
)

// radsecState is the server's RadSec side.
type radsecState struct {
	cfg     RadSecConfig
	tls     *tls.Config
	ln      net.Listener
	readers sync.WaitGroup
	stop    chan struct{} // closed when readers must stop (drain)
	count   atomic.Int64  // connections, handshaking included

	mu    sync.Mutex
	conns map[*radsecConn]struct{}
	raws  map[net.Conn]struct{} // accepted, not yet past the handshake
	byNAS map[nasRef][]*radsecConn

	handshakeFailures atomic.Uint64
	refused           atomic.Uint64
}

// radsecConn is one NAS connection.
type radsecConn struct {
	s     *Server
	raw   net.Conn
	tc    *tls.Conn
	fp    [32]byte
	nas   nasRef
	src   netip.AddrPort
	slots chan struct{} // in-flight requests
	done  chan struct{}
	once  sync.Once
	wmu   sync.Mutex

	pmu     sync.Mutex
	pending map[byte]chan []byte // the server's CoA requests awaiting an answer
}

func (s *Server) startRadSec(ln net.Listener) {
	cfg := *s.RadSec
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 1024
	}
	if cfg.MaxConnsPerNAS <= 0 {
		cfg.MaxConnsPerNAS = 16
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 256
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 5 * time.Minute
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	tc := cfg.TLS.Clone()
	tc.MinVersion = max(tc.MinVersion, tls.VersionTLS12)
	tc.ClientAuth = tls.RequireAndVerifyClientCert
	next := tc.VerifyConnection
	tc.VerifyConnection = func(cs tls.ConnectionState) error {
		if next != nil {
			if err := next(cs); err != nil {
				return err
			}
		}
		if len(cs.PeerCertificates) == 0 {
			return errRadSecUnbound
		}
		if _, ok := cfg.Directory.LookupRadSecNAS(sha256.Sum256(cs.PeerCertificates[0].Raw)); !ok {
			return errRadSecUnbound
		}
		return nil
	}
	rs := &radsecState{cfg: cfg, tls: tc, ln: ln, stop: make(chan struct{}),
		conns: map[*radsecConn]struct{}{}, raws: map[net.Conn]struct{}{}, byNAS: map[nasRef][]*radsecConn{}}
	s.rs = rs
	s.Metrics.setGauge("radius_radsec_connections", "RadSec connections open (handshaking included).", func() float64 { return float64(rs.count.Load()) })
	s.Metrics.radsec.Store(rs)
	rs.readers.Add(1)
	go s.acceptRadSec(rs)
}

func (s *Server) acceptRadSec(rs *radsecState) {
	defer rs.readers.Done()
	for {
		raw, err := rs.ln.Accept()
		if err != nil {
			if s.closing.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond) // EMFILE and the like: back off
			continue
		}
		if rs.count.Add(1) > int64(rs.cfg.MaxConns) {
			rs.count.Add(-1)
			rs.refused.Add(1)
			_ = raw.Close() // over the cap: nothing was read or written
			continue
		}
		rs.mu.Lock()
		rs.raws[raw] = struct{}{}
		rs.mu.Unlock()
		rs.readers.Add(1)
		go s.serveRadSecConn(rs, raw)
	}
}

// serveRadSecConn handshakes, binds the connection to its NAS and reads
// its packets until it ends.
func (s *Server) serveRadSecConn(rs *radsecState, raw net.Conn) {
	defer rs.readers.Done()
	rc, err := s.radsecHandshake(rs, raw)
	rs.mu.Lock()
	delete(rs.raws, raw)
	rs.mu.Unlock()
	if err != nil {
		rs.count.Add(-1)
		_ = raw.Close()                                             // refused: nothing to deliver
		if !s.closing.Load() && !errors.Is(err, errRadSecTooMany) { // that one is counted as refused
			rs.handshakeFailures.Add(1)
			s.debug("radsec handshake failed", "src", raw.RemoteAddr(), "err", err)
		}
		return
	}
	s.readRadSec(rs, rc)
}

func (s *Server) radsecHandshake(rs *radsecState, raw net.Conn) (*radsecConn, error) {
	tc := tls.Server(raw, rs.tls)
	if err := raw.SetDeadline(time.Now().Add(rs.cfg.HandshakeTimeout)); err != nil {
		return nil, err
	}
	if s.closing.Load() {
		return nil, ErrServerClosed
	}
	if err := tc.HandshakeContext(s.ctx); err != nil {
		return nil, err
	}
	if err := raw.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	fp := sha256.Sum256(tc.ConnectionState().PeerCertificates[0].Raw)
	nas, ok := rs.cfg.Directory.LookupRadSecNAS(fp)
	if !ok {
		return nil, errRadSecUnbound
	}
	rc := &radsecConn{s: s, raw: raw, tc: tc, fp: fp, nas: nasRef{nas.TenantSlug, nas.ID},
		slots: make(chan struct{}, rs.cfg.MaxInFlight), done: make(chan struct{}), pending: map[byte]chan []byte{}}
	if a, ok := raw.RemoteAddr().(*net.TCPAddr); ok {
		ap := a.AddrPort()
		rc.src = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.byNAS[rc.nas]) >= rs.cfg.MaxConnsPerNAS {
		rs.refused.Add(1)
		return nil, errRadSecTooMany
	}
	rs.conns[rc] = struct{}{}
	rs.byNAS[rc.nas] = append(rs.byNAS[rc.nas], rc)
	return rc, nil
}

func (s *Server) readRadSec(rs *radsecState, rc *radsecConn) {
	var hdr [4]byte
	for {
		if err := rc.tc.SetReadDeadline(time.Now().Add(rs.cfg.IdleTimeout)); err != nil || s.closing.Load() {
			break // the drain set its deadline first or after: either way, stop
		}
		if _, err := io.ReadFull(rc.tc, hdr[:]); err != nil {
			break
		}
		n := int(binary.BigEndian.Uint16(hdr[2:4]))
		if n < headerLen || n > maxPacketLen {
			s.Metrics.drop(hdr[0], dropMalformed, nil)
			break // the stream cannot be resynchronised
		}
		if err := rc.tc.SetReadDeadline(time.Now().Add(rs.cfg.HandshakeTimeout)); err != nil {
			break
		}
		pb := s.pool.Get().(*packetBuf)
		copy(pb.buf[:4], hdr[:])
		if _, err := io.ReadFull(rc.tc, pb.buf[4:n]); err != nil {
			s.pool.Put(pb)
			break
		}
		// The binding is checked on every packet: a revoked or re-issued
		// certificate ends the connection.
		nas, ok := rs.cfg.Directory.LookupRadSecNAS(rc.fp)
		if !ok {
			s.pool.Put(pb)
			s.Metrics.drop(hdr[0], dropUnknownSource, nil)
			break
		}
		switch hdr[0] {
		case codeDisconnectACK, codeDisconnectNAK, codeCoAACK, codeCoANAK:
			rc.deliver(pb.buf[:n])
			s.pool.Put(pb)
			continue
		}
		select {
		case rc.slots <- struct{}{}:
		case <-rs.stop:
			s.pool.Put(pb)
			return
		}
		pb.stream, pb.src = rc, rc.src
		if !s.admitFrom(s.listenerFor(hdr[0]), pb, n, nas) {
			rc.release()
			s.pool.Put(pb)
		}
	}
	if !s.closing.Load() {
		rc.close()
	}
}

// release frees an in-flight slot (the request was answered or dropped).
func (rc *radsecConn) release() { <-rc.slots }

// write sends one answer; a connection that cannot take it is closed.
func (rc *radsecConn) write(b []byte) {
	rc.wmu.Lock()
	defer rc.wmu.Unlock()
	select {
	case <-rc.done:
		return
	default:
	}
	err := rc.tc.SetWriteDeadline(time.Now().Add(rc.s.rs.cfg.WriteTimeout))
	if err == nil {
		_, err = rc.tc.Write(b)
	}
	if err != nil {
		rc.s.debug("radsec write failed", "src", rc.src, "err", err)
		rc.close()
	}
}

// close ends the connection (without close_notify: the NAS reconnects).
func (rc *radsecConn) close() {
	rc.once.Do(func() {
		close(rc.done)
		_ = rc.raw.Close() // nothing left to deliver
		rs := rc.s.rs
		rs.mu.Lock()
		if _, ok := rs.conns[rc]; ok {
			delete(rs.conns, rc)
			rs.count.Add(-1)
			list := rs.byNAS[rc.nas]
			for i, c := range list {
				if c == rc {
					list = append(list[:i], list[i+1:]...)
					break
				}
			}
			if len(list) == 0 {
				delete(rs.byNAS, rc.nas)
			} else {
				rs.byNAS[rc.nas] = list
			}
		}
		rs.mu.Unlock()
	})
}

// stopRadSecReaders stops accepting and reading (the drain's first step);
// the connections stay open for the answers still to come.
func (s *Server) stopRadSecReaders() {
	rs := s.rs
	if rs == nil {
		return
	}
	close(rs.stop)
	_ = rs.ln.Close() // stops Accept; nothing is lost
	now := time.Now()
	rs.mu.Lock()
	for raw := range rs.raws {
		_ = raw.SetDeadline(now) // ends handshakes in progress
	}
	for rc := range rs.conns {
		_ = rc.tc.SetReadDeadline(now)
	}
	rs.mu.Unlock()
	rs.readers.Wait()
}

// closeRadSec closes every connection (after the drain, or forced).
func (s *Server) closeRadSec() {
	rs := s.rs
	if rs == nil {
		return
	}
	_ = rs.ln.Close() // may be closed already
	rs.mu.Lock()
	list := make([]*radsecConn, 0, len(rs.conns))
	for rc := range rs.conns {
		list = append(list, rc)
	}
	for raw := range rs.raws {
		_ = raw.Close() // handshaking: nothing to deliver
	}
	rs.mu.Unlock()
	for _, rc := range list {
		rc.close()
	}
}

// radsecConnFor is a live connection of a NAS, the newest, or nil.
func (s *Server) radsecConnFor(nas *NAS) *radsecConn {
	rs := s.rs
	if rs == nil || nas == nil {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	list := rs.byNAS[nasRef{nas.TenantSlug, nas.ID}]
	if len(list) == 0 {
		return nil
	}
	return list[len(list)-1]
}

// reserve picks an Identifier no CoA request of the connection uses.
func (rc *radsecConn) reserve(start byte) (byte, chan []byte, bool) {
	rc.pmu.Lock()
	defer rc.pmu.Unlock()
	for i := 0; i < 256; i++ {
		id := start + byte(i)
		if _, used := rc.pending[id]; !used {
			ch := make(chan []byte, 1)
			rc.pending[id] = ch
			return id, ch, true
		}
	}
	return 0, nil, false
}

func (rc *radsecConn) unreserve(id byte) {
	rc.pmu.Lock()
	delete(rc.pending, id)
	rc.pmu.Unlock()
}

// deliver hands an answer to the CoA request waiting for its Identifier.
func (rc *radsecConn) deliver(b []byte) {
	rc.pmu.Lock()
	ch := rc.pending[b[1]]
	rc.pmu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- append([]byte(nil), b...):
	default: // a second answer for the same request
	}
}

// exchangeStream sends a CoA or Disconnect request built for an
// Identifier over the connection and waits for its answer until wait or
// ctx ends; ok is false when nothing came (the caller falls back to UDP).
func (rc *radsecConn) exchangeStream(ctx context.Context, build func(id byte) ([]byte, error), wait time.Duration) (req, resp []byte, err error) {
	var r [1]byte
	rand.Read(r[:])
	id, ch, ok := rc.reserve(r[0])
	if !ok {
		return nil, nil, nil
	}
	defer rc.unreserve(id)
	if req, err = build(id); err != nil {
		return nil, nil, err
	}
	rc.write(req)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case resp = <-ch:
		return req, resp, nil
	case <-rc.done:
	case <-t.C:
	case <-ctx.Done():
		return req, nil, ctx.Err()
	}
	return req, nil, nil
}
