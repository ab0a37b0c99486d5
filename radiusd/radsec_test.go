package radiusd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
)

// fakeRadSecDirectory binds certificates (by fingerprint) to NAS.
type fakeRadSecDirectory struct {
	mu    sync.Mutex
	bound map[[32]byte]*NAS
}

func (d *fakeRadSecDirectory) LookupRadSecNAS(fp [32]byte) (*NAS, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, ok := d.bound[fp]
	return n, ok
}

func (d *fakeRadSecDirectory) bind(c tls.Certificate, n *NAS) {
	d.mu.Lock()
	d.bound[sha256.Sum256(c.Certificate[0])] = n
	d.mu.Unlock()
}

func (d *fakeRadSecDirectory) unbind(c tls.Certificate) {
	d.mu.Lock()
	delete(d.bound, sha256.Sum256(c.Certificate[0]))
	d.mu.Unlock()
}

type radsecEnv struct {
	*testEnv
	pki    *testPKI
	rsdir  *fakeRadSecDirectory
	rsAddr string
	rsNAS  *NAS
	client tls.Certificate // bound to rsNAS
}

// newRadSecEnv serves UDP and RadSec; the RadSec NAS (id 8, IP 192.0.2.8,
// never the source) is bound to env.client.
func newRadSecEnv(t *testing.T, mod func(*RadSecConfig)) *radsecEnv {
	t.Helper()
	pki := newTestPKI(t)
	e := &radsecEnv{pki: pki, rsdir: &fakeRadSecDirectory{bound: map[[32]byte]*NAS{}}}
	e.rsNAS = &NAS{TenantSlug: "acme", ID: 8, Name: "tower-1", IP: netip.MustParseAddr("192.0.2.8"),
		Secret: []byte(RadSecSecret), Type: NASTypeMikrotik, RequireMessageAuthenticator: true}
	e.client = pki.newClientCert(t, "tower-1")
	e.rsdir.bind(e.client, e.rsNAS)
	pool := x509.NewCertPool()
	pool.AddCert(pki.ca)
	cfg := &RadSecConfig{TLS: &tls.Config{Certificates: []tls.Certificate{pki.server}, ClientCAs: pool}, Directory: e.rsdir}
	if mod != nil {
		mod(cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.rsAddr = ln.Addr().String()
	e.testEnv = newEnvWith(t, NASTypeMikrotik, true, func(s *Server) { s.RadSec = cfg }, ln)
	return e
}

func (p *testPKI) newClientCert(t testing.TB, cn string) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return p.issue(t, key, &key.PublicKey, cn, x509.ExtKeyUsageClientAuth)
}

// dial opens a RadSec connection with a client certificate.
func (e *radsecEnv) dial(t *testing.T, cert tls.Certificate, mod func(*tls.Config)) (*tls.Conn, error) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(e.pki.ca)
	cfg := &tls.Config{RootCAs: pool, ServerName: "radius.test", Certificates: []tls.Certificate{cert}}
	if mod != nil {
		mod(cfg)
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", e.rsAddr, cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	// TLS 1.3 sends the client's certificate after the client's Finished:
	// a refusal shows at the first read.
	return c, nil
}

// roundTrip writes a packet and reads one answer (nil on EOF or timeout).
func roundTrip(t *testing.T, c net.Conn, b []byte) []byte {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		return nil
	}
	return readPacket(c, 5*time.Second)
}

func readPacket(c net.Conn, wait time.Duration) []byte {
	c.SetReadDeadline(time.Now().Add(wait))
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil
	}
	n := int(binary.BigEndian.Uint16(hdr[2:]))
	b := make([]byte, n)
	copy(b, hdr[:])
	if _, err := io.ReadFull(c, b[4:]); err != nil {
		return nil
	}
	return b
}

func radsecPAP(t *testing.T, user, pass string) ([]byte, *radius.Packet) {
	p := radius.New(radius.CodeAccessRequest, []byte(RadSecSecret))
	rfc2865.UserName_SetString(p, user)
	rfc2865.UserPassword_SetString(p, pass)
	return encodeRequest(t, p, true), p
}

func TestRadSecAuthAcctStatus(t *testing.T) {
	t.Parallel()
	e := newRadSecEnv(t, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland", SessionTimeout: 60})
	c, err := e.dial(t, e.client, nil)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte(RadSecSecret)
	for _, tc := range []struct {
		name, pass string
		want       radius.Code
	}{{"accept", "wonderland", radius.CodeAccessAccept}, {"reject", "nope", radius.CodeAccessReject}} {
		req, _ := radsecPAP(t, "alice", tc.pass)
		resp := roundTrip(t, c, req)
		if resp == nil || !radius.IsAuthenticResponse(resp, req, secret) || radius.Code(resp[0]) != tc.want {
			t.Fatalf("%s: answer % x", tc.name, resp)
		}
	}
	if last := e.authz.lastRequest(); last.NAS != e.rsNAS {
		t.Errorf("request dispatched to %+v, want the certificate's NAS", last.NAS)
	}
	// Accounting on the same connection: answered after the commit.
	acct := radius.New(radius.CodeAccountingRequest, secret)
	rfc2866.AcctStatusType_Set(acct, rfc2866.AcctStatusType_Value_Start)
	rfc2866.AcctSessionID_SetString(acct, "rs-1")
	rfc2865.UserName_SetString(acct, "alice")
	b := encodeAcct(t, acct)
	if resp := roundTrip(t, c, b); resp == nil || radius.Code(resp[0]) != radius.CodeAccountingResponse || !radius.IsAuthenticResponse(resp, b, secret) {
		t.Fatalf("accounting answer % x", resp)
	}
	if recs := e.acct.records(); len(recs) != 1 || recs[0].NAS != e.rsNAS || recs[0].SessionID != "rs-1" {
		t.Fatalf("records %+v", recs)
	}
	// Status-Server (RFC 5997) keep-alive.
	st := radius.New(radius.CodeStatusServer, secret)
	sb := encodeRequest(t, st, true)
	if resp := roundTrip(t, c, sb); resp == nil || radius.Code(resp[0]) != radius.CodeAccessAccept {
		t.Fatalf("status answer % x", resp)
	}
}

// TestRadSecPipelined sends many requests before reading: each is
// answered, in whatever order, on the one connection.
func TestRadSecPipelined(t *testing.T) {
	t.Parallel()
	e := newRadSecEnv(t, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland"})
	c, err := e.dial(t, e.client, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	reqs := map[byte][]byte{}
	var all []byte
	for i := range n {
		req, _ := radsecPAP(t, "alice", "wonderland")
		req[1] = byte(i)
		signMA(clearMA(req), []byte(RadSecSecret))
		reqs[byte(i)] = req
		all = append(all, req...)
	}
	if _, err := c.Write(all); err != nil {
		t.Fatal(err)
	}
	for range n {
		resp := readPacket(c, 10*time.Second)
		if resp == nil {
			t.Fatal("missing answer")
		}
		req := reqs[resp[1]]
		if req == nil || radius.Code(resp[0]) != radius.CodeAccessAccept || !radius.IsAuthenticResponse(resp, req, []byte(RadSecSecret)) {
			t.Fatalf("answer % x", resp[:20])
		}
		delete(reqs, resp[1])
	}
}

// TestRadSecRefusals: what the server refuses before a packet is answered.
func TestRadSecRefusals(t *testing.T) {
	t.Parallel()
	e := newRadSecEnv(t, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland"})
	other := newTestPKI(t)
	unbound := e.pki.newClientCert(t, "stranger")
	for _, tc := range []struct {
		name string
		cert tls.Certificate
		mod  func(*tls.Config)
	}{
		{"no client certificate", tls.Certificate{}, nil},
		{"certificate of another CA", other.newClientCert(t, "tower-1"), nil},
		{"certificate bound to no NAS", unbound, nil},
		{"TLS 1.1", e.client, func(c *tls.Config) { c.MaxVersion = tls.VersionTLS11 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := e.dial(t, tc.cert, tc.mod)
			if err != nil {
				return // refused in the handshake
			}
			req, _ := radsecPAP(t, "alice", "wonderland")
			if resp := roundTrip(t, c, req); resp != nil {
				t.Fatalf("answered % x", resp)
			}
		})
	}
	// The server counts a refusal when its side of the handshake ends,
	// which may be after the client's.
	waitFor(t, "4 handshake failures counted", func() bool { return e.srv.Metrics.radsec.Load().handshakeFailures.Load() == 4 })
}

// TestRadSecRevokedMidConnection: a certificate unbound while connected
// ends the connection at its next packet, unanswered.
func TestRadSecRevokedMidConnection(t *testing.T) {
	t.Parallel()
	e := newRadSecEnv(t, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland"})
	c, err := e.dial(t, e.client, nil)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := radsecPAP(t, "alice", "wonderland")
	if resp := roundTrip(t, c, req); resp == nil {
		t.Fatal("no answer before revocation")
	}
	e.rsdir.unbind(e.client)
	req2, _ := radsecPAP(t, "alice", "wonderland")
	if resp := roundTrip(t, c, req2); resp != nil {
		t.Fatalf("answered after revocation: % x", resp)
	}
}

// TestRadSecMalformedLength: a Length outside 20..4096 ends the
// connection (the stream cannot be resynchronised).
func TestRadSecMalformedLength(t *testing.T) {
	t.Parallel()
	e := newRadSecEnv(t, nil)
	c, err := e.dial(t, e.client, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte{1, 1, 0xff, 0xff}); err != nil {
		t.Fatal(err)
	}
	wantClosed(t, c, "after a bad Length")
}

// wantClosed asserts the server closes the connection within 5 s.
func wantClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 10)); err == nil {
		t.Fatalf("connection still open %s", what)
	} else if ne := (net.Error)(nil); errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection not closed %s", what)
	}
}

// TestRadSecLimits: connections beyond the per-NAS cap are refused; a
// connection idle past the timeout is closed.
func TestRadSecLimits(t *testing.T) {
	t.Parallel()
	// The cap, with an idle timeout no slow handshake reaches: the first
	// connection is still open when the second arrives.
	e := newRadSecEnv(t, func(c *RadSecConfig) { c.MaxConnsPerNAS = 1; c.IdleTimeout = time.Minute })
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland"})
	c1, err := e.dial(t, e.client, func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 })
	if err != nil {
		t.Fatal(err)
	}
	// Served, so the server has counted it (it counts a connection after
	// its handshake, before reading from it): the second one is refused.
	req1, _ := radsecPAP(t, "alice", "wonderland")
	if resp := roundTrip(t, c1, req1); resp == nil {
		t.Fatal("first connection of the NAS not served")
	}
	c2, err := e.dial(t, e.client, func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 })
	if err == nil {
		req, _ := radsecPAP(t, "alice", "wonderland")
		if resp := roundTrip(t, c2, req); resp != nil {
			t.Fatal("second connection of the NAS served")
		}
	}
	idle := newRadSecEnv(t, func(c *RadSecConfig) { c.IdleTimeout = 300 * time.Millisecond })
	c3, err := idle.dial(t, idle.client, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantClosed(t, c3, "past its idle time")
}

// TestRadSecCoA: a Disconnect-Request to a NAS connected by RadSec goes
// over its connection, and its answer comes back there.
func TestRadSecCoA(t *testing.T) {
	t.Parallel()
	e := newRadSecEnv(t, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland"})
	c, err := e.dial(t, e.client, nil)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := radsecPAP(t, "alice", "wonderland")
	if resp := roundTrip(t, c, req); resp == nil {
		t.Fatal("no answer")
	}
	coa := &CoAClient{InitialTimeout: 2 * time.Second}
	coa.streams.Store(e.srv)
	// The NAS side: answer the Disconnect-Request with a signed ACK.
	got := make(chan *radius.Packet, 1)
	go func() {
		b := readPacket(c, 10*time.Second)
		if b == nil {
			got <- nil
			return
		}
		p, err := radius.Parse(b, []byte(RadSecSecret))
		if err != nil || !radius.IsAuthenticRequest(b, []byte(RadSecSecret)) {
			got <- nil
			return
		}
		got <- p
		ack := p.Response(radius.CodeDisconnectACK)
		out, _ := ack.Encode()
		c.Write(out)
	}()
	res, err := coa.Disconnect(context.Background(), e.rsNAS, DisconnectRequest{Username: "alice", AcctSessionID: "rs-1"})
	if err != nil || res.Outcome != OutcomeOK {
		t.Fatalf("disconnect %+v %v", res, err)
	}
	if p := <-got; p == nil || rfc2865.UserName_GetString(p) != "alice" {
		t.Fatalf("the NAS got %+v", p)
	}
}
