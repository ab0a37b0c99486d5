package radiusd

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/tls"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the RADIUS authentication and accounting server.
//
// It reads each socket itself instead of using layeh's radius.PacketServer,
// which starts one goroutine per datagram without bound and keeps no reply
// cache. Here one reader per socket validates, dispatches by source address
// and de-duplicates, then hands the packet to a bounded queue served by a
// fixed worker pool; a full queue drops the packet (the NAS retransmits).
// Authentication and accounting have separate queues and workers so that a
// slow accounting commit never delays an Access-Request.
type Server struct {
	Directory  Directory
	Authorizer Authorizer
	Accounter  Accounter
	Logger     *slog.Logger
	// Metrics receives the counters; one is created when nil.
	Metrics *Metrics

	Workers   int // workers per listener; default 4×GOMAXPROCS, at least 8
	QueueSize int // queued packets per listener; default 4096
	BatchMax  int // accounting records per commit; default 256
	// Committers is how many batches may be committing at once; default 2,
	// so one batch's fsync overlaps the next batch's transaction.
	Committers int
	BatchWait  time.Duration // linger after the first record of a batch; default 2 ms, <0 = none
	// BatchIdle ends the linger early when no record arrived for this long
	// (the burst is over); default BatchWait/4.
	BatchIdle time.Duration
	// DedupTTL is how long a reply stays cached for retransmissions
	// (RFC 5080 suggests a few seconds); default 8 s.
	DedupTTL time.Duration
	// DedupMax bounds the reply cache; default 131072 entries.
	DedupMax int
	// CommitTimeout bounds one RecordAccounting call; default 15 s.
	CommitTimeout time.Duration

	// EAPTLS configures PEAP and TTLS: its certificate is the one the
	// server shows in their TLS handshake. Nil offers EAP-MSCHAPv2 only.
	EAPTLS *tls.Config
	// EAPMaxSessions bounds the EAP conversations in progress (half of it
	// for one NAS); default 4096. EAPIdle bounds the wait between two
	// round trips (default 60 s), EAPLifetime a whole conversation
	// (default 180 s).
	EAPMaxSessions int
	EAPIdle        time.Duration
	EAPLifetime    time.Duration

	// RadSec configures RADIUS over TLS; needed for Listeners.RadSec.
	RadSec *RadSecConfig

	mu        sync.Mutex
	running   bool
	closing   atomic.Bool
	listeners []*listener
	batchIn   chan acctItem
	batchDone chan struct{}
	dedup     *dedupCache
	ctx       context.Context // handed to the backend; cancelled on forced stop
	cancel    context.CancelFunc
	done      chan struct{} // closed when Serve's resources are released
	serveErr  error
	warnAt    atomic.Int64 // rate limit for backend warnings
	pool      sync.Pool
	batches   sync.Pool    // *acctBatch
	forming   atomic.Int64 // records of the batch waiting for a committer

	rs         *radsecState // nil without a RadSec listener
	eap        *eapStore
	eapTLS     *tls.Config // EAPTLS as PEAP and TTLS use it
	eapMethods []byte      // offered, preferred first
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("radiusd: server closed")

type listenerKind uint8

const (
	kindAuth listenerKind = iota + 1
	kindAcct
)

func (k listenerKind) String() string {
	if k == kindAuth {
		return "auth"
	}
	return "acct"
}

type listener struct {
	kind    listenerKind
	conn    net.PacketConn
	udp     *net.UDPConn // fast path without address allocations
	queue   chan *packetBuf
	readers sync.WaitGroup
	workers sync.WaitGroup
}

// packetBuf is one received datagram and everything the reader learnt
// about it. Buffers are pooled: the reader takes one, a worker returns it.
type packetBuf struct {
	buf   [maxPacketLen + 1]byte // one spare octet detects oversize datagrams
	pkt   []byte                 // buf cut to the Length field
	idx   attrIndex
	src   netip.AddrPort
	nas   *NAS
	stats *nasStats
	recv  time.Time
	key   dedupKey
	dedup bool // registered in the reply cache
	// stream is the RadSec connection the packet came on (nil: UDP); its
	// answer goes back there. handedOff: the accounting batcher owns the
	// connection's in-flight slot now (radsec.go).
	stream    *radsecConn
	handedOff bool
	// dropped and dropWhy tell observe how a worker disposed of the packet.
	dropped bool
	dropWhy dropReason
}

func (s *Server) defaults() {
	if s.Logger == nil {
		s.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if s.Metrics == nil {
		s.Metrics = NewMetrics()
	}
	if s.Workers <= 0 {
		s.Workers = max(8, 4*runtime.GOMAXPROCS(0))
	}
	if s.QueueSize <= 0 {
		s.QueueSize = 4096
	}
	if s.Committers <= 0 {
		s.Committers = 2
	}
	if s.BatchMax <= 0 {
		s.BatchMax = 256
	}
	if s.BatchWait == 0 {
		s.BatchWait = 2 * time.Millisecond
	}
	if s.BatchIdle <= 0 {
		s.BatchIdle = s.BatchWait / 4
	}
	if s.DedupTTL <= 0 {
		s.DedupTTL = 8 * time.Second
	}
	if s.DedupMax <= 0 {
		s.DedupMax = 131072
	}
	if s.CommitTimeout <= 0 {
		s.CommitTimeout = 15 * time.Second
	}
}

// prepare sets defaults and the state shared by readers and workers.
func (s *Server) prepare() {
	s.defaults()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.dedup = newDedupCache(int64(s.DedupTTL), s.DedupMax)
	s.pool.New = func() any { return new(packetBuf) }
	s.batches.New = func() any {
		return &acctBatch{items: make([]acctItem, 0, s.BatchMax), recs: make([]AcctRecord, 0, s.BatchMax)}
	}
	s.prepareEAP()
}

// ListenAndServe opens UDP sockets on authAddr and acctAddr (either may be
// empty to skip it) and serves until ctx is cancelled, then shuts down
// gracefully (giving the drain up to 10 s). It returns nil after a
// ctx-initiated shutdown.
func (s *Server) ListenAndServe(ctx context.Context, authAddr, acctAddr string) error {
	var auth, acct net.PacketConn
	var err error
	if authAddr != "" {
		if auth, err = net.ListenPacket("udp", authAddr); err != nil {
			return fmt.Errorf("radius auth listener: %w", err)
		}
	}
	if acctAddr != "" {
		if acct, err = net.ListenPacket("udp", acctAddr); err != nil {
			err = fmt.Errorf("radius accounting listener: %w", err)
			if auth != nil {
				err = errors.Join(err, auth.Close())
			}
			return err
		}
	}
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Serve still returns once the forced close is done; the caller
		// asked to stop, so the cut-short drain is logged, not returned.
		if err := s.Shutdown(sctx); err != nil {
			s.Logger.Error("radius: shutdown cut the drain short", "err", err)
		}
	})
	defer stop()
	err = s.Serve(auth, acct)
	if errors.Is(err, ErrServerClosed) && ctx.Err() != nil {
		return nil
	}
	return err
}

// Serve serves Access-Requests on auth and Accounting-Requests on acct
// (either may be nil) until Shutdown, then returns ErrServerClosed. It
// takes ownership of the connections and closes them on return.
func (s *Server) Serve(auth, acct net.PacketConn) error {
	return s.ServeListeners(Listeners{Auth: auth, Acct: acct})
}

// Listeners are the sockets a Server serves.
type Listeners struct {
	Auth, Acct net.PacketConn // UDP authentication and accounting
	// RadSec accepts RADIUS over TLS (RFC 6614) connections: Access,
	// Accounting, Status-Server and, from the server, CoA on each; it needs
	// Server.RadSec.
	RadSec net.Listener
}

// ServeListeners serves the given sockets (any of them may be nil) until
// Shutdown, then returns ErrServerClosed. It takes ownership of them and
// closes them on return.
func (s *Server) ServeListeners(ls Listeners) error {
	auth, acct := ls.Auth, ls.Acct
	if auth == nil && acct == nil && ls.RadSec == nil {
		return errors.New("radiusd: no listener")
	}
	radsec := ls.RadSec != nil
	if s.Directory == nil || ((auth != nil || radsec) && s.Authorizer == nil) || ((acct != nil || radsec) && s.Accounter == nil) {
		return errors.New("radiusd: Directory, Authorizer and Accounter are required")
	}
	if radsec && (s.RadSec == nil || s.RadSec.TLS == nil || s.RadSec.Directory == nil) {
		return errors.New("radiusd: a RadSec listener needs Server.RadSec with TLS and Directory")
	}
	s.mu.Lock()
	if s.running || s.closing.Load() {
		s.mu.Unlock()
		for _, c := range []net.PacketConn{auth, acct} {
			if c != nil {
				_ = c.Close() // never served: a UDP socket holds nothing to lose
			}
		}
		if radsec {
			_ = ls.RadSec.Close() // never served: nothing accepted yet
		}
		return ErrServerClosed
	}
	s.prepare()
	if wa, ok := s.Directory.(wireAttacher); ok { // ports and per-NAS health for app/aaa
		wa.attachWire(s, ls)
	}
	s.running = true
	s.done = make(chan struct{})
	for _, c := range []struct {
		conn net.PacketConn
		kind listenerKind
	}{{auth, kindAuth}, {acct, kindAcct}} {
		if c.conn == nil && !radsec {
			continue
		}
		// Without a UDP socket the listener is a queue and its workers,
		// fed by RadSec connections only.
		l := &listener{kind: c.kind, conn: c.conn, queue: make(chan *packetBuf, s.QueueSize)}
		l.udp, _ = c.conn.(*net.UDPConn)
		s.listeners = append(s.listeners, l)
		s.Metrics.setGauge("radius_queue_length_"+c.kind.String(), "Packets waiting in the "+c.kind.String()+" queue.", func() float64 { return float64(len(l.queue)) })
	}
	s.Metrics.setGauge("radius_reply_cache_entries", "Answers kept to replay duplicate requests.", func() float64 { return float64(s.dedup.len()) })
	go s.sweepEAP()
	if s.Accounter != nil && (acct != nil || radsec) {
		s.batchIn = make(chan acctItem, s.QueueSize)
		s.batchDone = make(chan struct{})
		go s.runBatcher()
	}
	for _, l := range s.listeners {
		for range s.Workers {
			l.workers.Add(1)
			go s.worker(l)
		}
		if l.conn != nil {
			l.readers.Add(1)
			go s.readLoop(l)
		}
	}
	if radsec {
		s.startRadSec(ls.RadSec)
	}
	s.mu.Unlock()

	<-s.done
	if s.serveErr != nil {
		return s.serveErr
	}
	return ErrServerClosed
}

// listenerFor is the listener whose queue serves a code (RadSec carries
// every code on one connection).
func (s *Server) listenerFor(code byte) *listener {
	want := kindAuth
	if code == codeAccountingRequest {
		want = kindAcct
	}
	for _, l := range s.listeners {
		if l.kind == want {
			return l
		}
	}
	return nil
}

// Shutdown stops reading, lets the workers drain the queues, flushes the
// pending accounting batch (sending its responses after the commit) and
// closes the sockets. If ctx ends first the backend context is cancelled
// and the sockets are closed at once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	first := s.closing.CompareAndSwap(false, true)
	running, done := s.running, s.done
	s.mu.Unlock()
	if !running {
		return nil
	}
	if first {
		go s.drain()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.cancel()
		for _, l := range s.listeners {
			// Forced close to unblock the drain: a UDP socket holds no
			// unsent data, and drain closing it too is expected.
			if l.conn != nil {
				_ = l.conn.Close()
			}
		}
		s.closeRadSec()
		return ctx.Err()
	}
}

// drain runs the graceful stop sequence in dependency order: readers, then
// workers (they feed the batcher), then the batcher (it writes replies),
// then the sockets.
func (s *Server) drain() {
	s.stopRadSecReaders() // no new requests; the connections stay open for the answers
	for _, l := range s.listeners {
		if l.conn == nil {
			continue
		}
		// The deadline unblocks ReadFrom; should it fail, closing the
		// socket does (replies still pending are then lost and the NAS
		// retransmits, as after any restart).
		if err := l.conn.SetReadDeadline(time.Now()); err != nil {
			s.Logger.Error("radius: unblock reader", "listener", l.kind.String(), "err", err)
			_ = l.conn.Close() // best effort: the error that matters is logged above
		}
	}
	for _, l := range s.listeners {
		l.readers.Wait()
		close(l.queue)
	}
	for _, l := range s.listeners {
		l.workers.Wait()
	}
	s.eap.closeAll()
	if s.batchIn != nil {
		close(s.batchIn)
		<-s.batchDone
	}
	for _, l := range s.listeners {
		// Every reply is written: a UDP socket holds no unsent data, and
		// a forced Shutdown may have closed it already.
		if l.conn != nil {
			_ = l.conn.Close()
		}
	}
	s.closeRadSec()
	s.cancel()
	close(s.done)
}

// fatal records a socket error that ends serving.
func (s *Server) fatal(err error) {
	s.mu.Lock()
	if s.serveErr == nil {
		s.serveErr = err
	}
	s.mu.Unlock()
	if s.closing.CompareAndSwap(false, true) {
		go s.drain()
	}
}

func (s *Server) readLoop(l *listener) {
	defer l.readers.Done()
	var errStreak int
	for {
		pb := s.pool.Get().(*packetBuf)
		var n int
		var src netip.AddrPort
		var err error
		if l.udp != nil {
			n, src, err = l.udp.ReadFromUDPAddrPort(pb.buf[:])
		} else {
			var a net.Addr
			n, a, err = l.conn.ReadFrom(pb.buf[:])
			if ua, ok := a.(*net.UDPAddr); ok {
				src = ua.AddrPort()
			}
		}
		if err != nil {
			s.pool.Put(pb)
			if s.closing.Load() {
				return
			}
			var ne net.Error
			if errors.Is(err, net.ErrClosed) {
				s.fatal(fmt.Errorf("radius %s listener: %w", l.kind, err))
				return
			}
			// Transient errors (ICMP feedback, buffer pressure): back off a
			// little, give up if they never stop.
			if errStreak++; errStreak > 1000 && !(errors.As(err, &ne) && ne.Timeout()) {
				s.fatal(fmt.Errorf("radius %s listener: %w", l.kind, err))
				return
			}
			time.Sleep(time.Millisecond)
			continue
		}
		errStreak = 0
		if s.admit(l, pb, n, src) {
			continue
		}
		s.pool.Put(pb)
	}
}

// admit does the cheap checks on the reader goroutine so that garbage,
// strangers and retransmissions never occupy the queue. It reports whether
// the buffer was handed to a worker.
func (s *Server) admit(l *listener, pb *packetBuf, n int, src netip.AddrPort) bool {
	var code byte
	if n > 0 {
		code = pb.buf[0]
	}
	pb.src = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
	pb.stream = nil
	nas, ok := s.Directory.LookupNAS(pb.src.Addr())
	if !ok || nas == nil || len(nas.Secret) == 0 {
		s.Metrics.drop(code, dropUnknownSource, nil)
		s.debug("drop: unknown source", "src", src)
		return false
	}
	return s.admitFrom(l, pb, n, nas)
}

// admitFrom admits a packet of a known NAS (by source address, or by the
// certificate of its RadSec connection).
func (s *Server) admitFrom(l *listener, pb *packetBuf, n int, nas *NAS) bool {
	m := s.Metrics
	var code byte
	if n > 0 {
		code = pb.buf[0]
	}
	pb.recv = time.Now()
	pb.dedup, pb.dropped, pb.handedOff = false, false, false
	pb.nas = nas
	pb.stats = m.nasFor(nas)
	p, err := parsePacket(pb.buf[:n], &pb.idx)
	if err != nil {
		m.drop(code, dropMalformed, pb.stats)
		s.debug("drop: malformed", "src", pb.src, "nas", nas.Name, "err", err)
		return false
	}
	pb.pkt = p
	switch {
	case l.kind == kindAuth && code == codeAccessRequest,
		l.kind == kindAcct && code == codeAccountingRequest:
	case code == codeStatusServer: // RFC 5997; never cached
	default:
		m.drop(code, dropUnknownCode, pb.stats)
		return false
	}
	if code != codeStatusServer {
		pb.key = newDedupKey(pb.src, l.kind, p)
		reply, st := s.dedup.begin(pb.key, pb.recv.UnixNano())
		switch st {
		case dedupCached:
			m.packet(code, resReplayed)
			pb.stats.replay.Add(1)
			s.write(l, pb.stream, reply, pb.src)
			return false
		case dedupInFlight:
			m.drop(code, dropDuplicate, pb.stats)
			return false
		}
		pb.dedup = true
	}
	select {
	case l.queue <- pb:
		return true
	default:
		if pb.dedup {
			s.dedup.abort(pb.key)
		}
		m.drop(code, dropQueueFull, pb.stats)
		return false
	}
}

// write sends an answer: on its RadSec connection, else by UDP.
func (s *Server) write(l *listener, rc *radsecConn, b []byte, dst netip.AddrPort) {
	if rc != nil {
		rc.write(b)
		return
	}
	var err error
	if l.udp != nil {
		_, err = l.udp.WriteToUDPAddrPort(b, dst)
	} else {
		_, err = l.conn.WriteTo(b, net.UDPAddrFromAddrPort(dst))
	}
	if err != nil && !s.closing.Load() {
		s.debug("write failed", "dst", dst, "err", err)
	}
}

// workerState is per-goroutine scratch: hashes are reused rather than
// allocated per packet, HMACs are keyed once per NAS secret.
type workerState struct {
	md5  hash.Hash
	macs map[string]hash.Hash
	buf  [maxPacketLen]byte // replies are built here, then copied out exactly
	eap  []byte             // an Access-Request's EAP-Message, reassembled
}

func newWorkerState() *workerState {
	return &workerState{md5: md5.New(), macs: map[string]hash.Hash{}}
}

// mac returns a reset HMAC-MD5 keyed with secret.
func (ws *workerState) mac(secret []byte) hash.Hash {
	h, ok := ws.macs[string(secret)]
	if !ok {
		if len(ws.macs) >= 4096 { // secrets rotate; keep the map bounded
			clear(ws.macs)
		}
		h = hmac.New(md5.New, secret)
		ws.macs[string(secret)] = h
	}
	h.Reset()
	return h
}

func (s *Server) worker(l *listener) {
	defer l.workers.Done()
	ws := newWorkerState()
	for pb := range l.queue {
		s.handle(ws, l, pb)
		if pb.stream != nil && !pb.handedOff {
			pb.stream.release()
		}
		pb.nas, pb.stats, pb.pkt, pb.stream = nil, nil, nil, nil
		s.pool.Put(pb)
	}
}

func (s *Server) handle(ws *workerState, l *listener, pb *packetBuf) {
	defer func() {
		// A backend panic must not take the RADIUS service down.
		if r := recover(); r != nil {
			s.Logger.Error("radius: panic while handling packet", "panic", r, "nas", pb.nas.Name)
			s.dropPacket(pb, dropBackendError)
		}
	}()
	switch pb.pkt[0] {
	case codeAccessRequest:
		s.handleAccessRequest(ws, l, pb)
	case codeAccountingRequest:
		s.handleAccountingRequest(ws, l, pb)
	case codeStatusServer:
		s.handleStatusServer(ws, l, pb)
	}
	s.observe(pb) // per-NAS health, health.go
}

// dropPacket counts a drop decided by a worker and releases the request's
// reply-cache slot.
func (s *Server) dropPacket(pb *packetBuf, why dropReason) {
	if pb.dedup {
		s.dedup.abort(pb.key)
	}
	pb.dropped, pb.dropWhy = true, why
	if why == dropBadAuthenticator && pb.stats != nil {
		pb.stats.health.badAuth.add(pb.recv)
	}
	s.Metrics.drop(pb.pkt[0], why, pb.stats)
	s.debug("drop", "reason", dropNames[why], "src", pb.src, "nas", pb.nas.Name)
}

// reply caches and sends a finished response. b may be worker scratch:
// the cache keeps an exact-size copy.
func (s *Server) reply(l *listener, pb *packetBuf, b []byte) {
	if pb.dedup {
		b = ownBytes(b)
		s.dedup.complete(pb.key, b, time.Now().UnixNano())
	}
	s.write(l, pb.stream, b, pb.src)
}

// handleStatusServer answers RFC 5997 keep-alives, which must carry a
// valid Message-Authenticator, with Access-Accept or Accounting-Response.
func (s *Server) handleStatusServer(ws *workerState, l *listener, pb *packetBuf) {
	p, nas := pb.pkt, pb.nas
	if pb.idx.ma < 0 {
		s.dropPacket(pb, dropMissingMA)
		return
	}
	if !messageAuthenticatorOK(ws.mac(nas.Secret), p, pb.idx.ma, false) {
		s.dropPacket(pb, dropBadAuthenticator)
		return
	}
	code := codeAccessAccept
	if l.kind == kindAcct {
		code = codeAccountingResponse
	}
	w := newPacket(ws.buf[:0], code, p[1], p[4:20], true)
	w.copyProxyState(&pb.idx, p)
	b, err := w.finishResponse(ws.mac(nas.Secret), ws.md5, nas.Secret)
	if err != nil {
		s.dropPacket(pb, dropMalformed)
		return
	}
	s.Metrics.packet(codeStatusServer, resResponse)
	s.reply(l, pb, b)
}

func ownBytes(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

func (s *Server) debug(msg string, args ...any) {
	if s.Logger.Enabled(context.Background(), slog.LevelDebug) {
		s.Logger.Debug("radius: "+msg, args...)
	}
}

// warn logs at most one warning per second: a dead database must not turn
// into a log flood at 20,000 packets per second.
func (s *Server) warn(msg string, args ...any) {
	now := time.Now().UnixNano()
	last := s.warnAt.Load()
	if now-last < int64(time.Second) || !s.warnAt.CompareAndSwap(last, now) {
		return
	}
	s.Logger.Warn("radius: "+msg, args...)
}
