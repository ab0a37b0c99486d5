package radiusd

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"errors"
	"fmt"
	"hash"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc3576"
)

// CoA outcomes.
const (
	OutcomeOK          = "ok"          // Disconnect-ACK / CoA-ACK
	OutcomeNAK         = "nak"         // Disconnect-NAK / CoA-NAK; see ErrorCause
	OutcomeUnreachable = "unreachable" // no valid answer before the tries or ctx ran out
)

// ErrorCauseSessionNotFound is RFC 5176 Error-Cause 503 "Session Context
// Not Found": the session is already gone, which for a Disconnect is the
// result the caller wanted.
const ErrorCauseSessionNotFound = uint32(rfc3576.ErrorCause_Value_SessionContextNotFound)

// CoAClient sends RFC 5176 Disconnect-Request and CoA-Request packets to a
// NAS's CoA port. The zero value is ready to use.
type CoAClient struct {
	// InitialTimeout is the first retransmission timer (RFC 5080 IRT);
	// default 1 s. It doubles per try, ±10 % jitter, up to MaxTimeout.
	InitialTimeout time.Duration
	MaxTimeout     time.Duration // default 4 s
	MaxAttempts    int           // transmissions including the first; default 3
	Metrics        *Metrics      // optional
	// Refusal, when set, is the egress guard of the NAS address (app/egress,
	// policy Device): a packet to an address it refuses is not sent (a
	// NAS's own RadSec connection is not an outbound address).
	Refusal func(netip.Addr) string

	// streams is the server serving RadSec, while it does: a NAS with a
	// connection gets its requests there.
	streams atomic.Pointer[Server]
}

// DisconnectRequest identifies the session to act on; set at least one
// field. It is used by ChangeRate as well.
type DisconnectRequest struct {
	Username      string
	AcctSessionID string
	FramedIP      netip.Addr
}

// CoAResult is the outcome of one Disconnect or CoA exchange.
type CoAResult struct {
	Outcome    string        `json:"outcome"`
	ErrorCause uint32        `json:"error_cause,omitempty"` // from a NAK, 0 if absent
	Attempts   int           `json:"attempts"`              // transmissions made
	RTT        time.Duration `json:"rtt"`                   // first send to answer
}

// SessionGone reports a NAK with Error-Cause 503: nothing left to act on.
func (r CoAResult) SessionGone() bool {
	return r.Outcome == OutcomeNAK && r.ErrorCause == ErrorCauseSessionNotFound
}

var (
	errCoANAS     = errors.New("radiusd: NAS has no address or secret")
	errCoASession = errors.New("radiusd: no session identification (username, session id or framed IP)")
)

// Disconnect asks the NAS to end a session (Disconnect-Request). The error
// is non-nil only when nothing could be sent (or awaited: a socket error)
// or the caller cancelled ctx;
// silence ends as Outcome "unreachable" with a nil error.
func (c *CoAClient) Disconnect(ctx context.Context, nas *NAS, req DisconnectRequest) (CoAResult, error) {
	return c.exchange(ctx, "disconnect", nas, codeDisconnectRequest, req, nil)
}

// ChangeRate changes a live session's rate limit (CoA-Request) using the
// same NAS-specific attributes as Access-Accept (see addRateLimit).
func (c *CoAClient) ChangeRate(ctx context.Context, nas *NAS, req DisconnectRequest, downKbps, upKbps int64) (CoAResult, error) {
	return c.exchange(ctx, "coa", nas, codeCoARequest, req, func(w *packetWriter) {
		addRateLimit(w, nas.Type, downKbps, upKbps)
	})
}

func (c *CoAClient) exchange(ctx context.Context, kind string, nas *NAS, code byte, req DisconnectRequest, extra func(*packetWriter)) (res CoAResult, err error) {
	res.Outcome = OutcomeUnreachable
	defer func() {
		if c.Metrics != nil {
			o := res.Outcome
			if err != nil {
				o = "error"
			}
			c.Metrics.coaOutcome(kind, o)
		}
	}()
	if nas == nil || !nas.IP.IsValid() || len(nas.Secret) == 0 {
		return res, errCoANAS
	}
	if req.Username == "" && req.AcctSessionID == "" && !req.FramedIP.IsValid() {
		return res, errCoASession
	}
	ack, nak := codeDisconnectACK, codeDisconnectNAK
	if code == codeCoARequest {
		ack, nak = codeCoAACK, codeCoANAK
	}
	// build writes the request for an Identifier, signed with a secret.
	build := func(id byte, secret []byte) ([]byte, hash.Hash, error) {
		var zero [16]byte
		w := newPacket(make([]byte, 0, 256), code, id, zero[:], true)
		if req.Username != "" {
			w.addString(attrUserName, req.Username)
		}
		if req.AcctSessionID != "" {
			w.addString(byte(rfc2866.AcctSessionID_Type), req.AcctSessionID)
		}
		if req.FramedIP.Is4() || req.FramedIP.Is4In6() {
			ip := req.FramedIP.Unmap().As4()
			w.add(attrFramedIP, ip[:])
		}
		// RFC 5176 section 3.3: Event-Timestamp lets the NAS refuse replays.
		w.addUint32(attrEventTimestamp, uint32(time.Now().Unix()))
		if extra != nil {
			extra(&w)
		}
		mac := hmac.New(md5.New, secret)
		pkt, err := w.finishRequest(mac, md5.New(), secret)
		return pkt, mac, err
	}
	// A NAS on RadSec gets it on its connection (RFC 6614 section 2.4);
	// one that does not answer there in time gets it by UDP as usual.
	if srv := c.streams.Load(); srv != nil {
		if rc := srv.radsecConnFor(nas); rc != nil {
			start := time.Now()
			var mac hash.Hash
			pkt, resp, err := rc.exchangeStream(ctx, func(id byte) ([]byte, error) {
				p, m, err := build(id, []byte(RadSecSecret))
				mac = m
				return p, err
			}, 2*c.initial())
			if err != nil {
				return res, err
			}
			res.Attempts = 1
			var ix attrIndex
			if resp != nil && c.answer(resp, pkt, []byte(RadSecSecret), mac, &ix, ack, nak, &res) {
				res.RTT = time.Since(start)
				return res, nil
			}
		}
	}
	if c.Refusal != nil {
		if class := c.Refusal(nas.IP); class != "" {
			return res, fmt.Errorf("radiusd: CoA to %s refused: %s address (allowed only with --allow-private-egress)", nas.IP, class)
		}
	}
	port := nas.CoAPort
	if port <= 0 || port > 65535 {
		port = DefaultCoAPort
	}
	// A connected socket: the kernel filters answers from other addresses.
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(nas.IP.Unmap(), uint16(port))))
	if err != nil {
		return res, err
	}
	defer func() { _ = conn.Close() }() // a UDP socket holds no unsent data

	var id [1]byte
	rand.Read(id[:])
	pkt, mac, err := build(id[0], nas.Secret)
	if err != nil {
		return res, err
	}

	// Cancellation cuts the wait short. Should the deadline fail, the read
	// still ends at its own deadline set below, so it is safe to ignore.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
	defer stop()

	initial, maxRT, tries := c.initial(), c.MaxTimeout, c.MaxAttempts
	if maxRT <= 0 {
		maxRT = 4 * time.Second
	}
	if tries <= 0 {
		tries = 3
	}
	buf := make([]byte, maxPacketLen+1)
	var ix attrIndex
	start := time.Now()
	rt := initial
	for attempt := 1; attempt <= tries && ctx.Err() == nil; attempt++ {
		// Retransmissions repeat the packet byte for byte: same Identifier
		// and Request Authenticator, so the NAS can detect the duplicate.
		res.Attempts = attempt
		sent := time.Now()
		if _, err := conn.Write(pkt); err != nil && !errors.Is(err, syscall.ECONNREFUSED) {
			return res, err
		}
		deadline := sent.Add(time.Duration(float64(rt) * (0.9 + 0.2*mrand.Float64())))
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		// Without the deadline the read below could wait forever.
		if err := conn.SetReadDeadline(deadline); err != nil {
			return res, err
		}
		if ctx.Err() != nil { // AfterFunc may have fired before the line above
			break
		}
		for {
			n, rerr := conn.Read(buf)
			if rerr != nil {
				if errors.Is(rerr, syscall.ECONNREFUSED) && time.Now().Before(deadline) {
					continue // ICMP port unreachable: keep listening until the timer
				}
				break
			}
			if c.answer(buf[:n], pkt, nas.Secret, mac, &ix, ack, nak, &res) {
				res.RTT = time.Since(start)
				return res, nil
			}
		}
		rt = min(2*rt, maxRT)
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return res, err
	}
	return res, nil
}

func (c *CoAClient) initial() time.Duration {
	if c.InitialTimeout <= 0 {
		return time.Second
	}
	return c.InitialTimeout
}

// answer checks that b answers the request pkt (Identifier, code,
// Response Authenticator, Message-Authenticator if present) and records
// its outcome in res.
func (c *CoAClient) answer(b, pkt, secret []byte, mac hash.Hash, ix *attrIndex, ack, nak byte, res *CoAResult) bool {
	resp, err := parsePacket(b, ix)
	if err != nil || resp[1] != pkt[1] || (resp[0] != ack && resp[0] != nak) {
		return false
	}
	if !radius.IsAuthenticResponse(resp, pkt, secret) {
		return false
	}
	if ix.ma >= 0 && !responseMAOK(mac, resp, ix.ma, pkt[4:20]) {
		return false
	}
	if resp[0] == ack {
		res.Outcome = OutcomeOK
		return true
	}
	res.Outcome = OutcomeNAK
	if v, _, err := ix.uint32(resp, byte(rfc3576.ErrorCause_Type)); err == nil {
		res.ErrorCause = v
	}
	return true
}

// responseMAOK verifies a response's Message-Authenticator, which is
// computed with the Request Authenticator in the authenticator field.
func responseMAOK(mac hash.Hash, resp []byte, maOff int, reqAuth []byte) bool {
	var saved [16]byte
	copy(saved[:], resp[4:20])
	copy(resp[4:20], reqAuth)
	ok := messageAuthenticatorOK(mac, resp, maOff, false)
	copy(resp[4:20], saved[:])
	return ok
}
