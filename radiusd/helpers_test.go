package radiusd

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2869"
)

// Test doubles for the app layer and a raw UDP client built on layeh's
// packet encoding, so that the server is checked against an independent
// implementation of the wire format.

const testSecret = "s3cret-shared-key"

var loopback = netip.MustParseAddr("127.0.0.1")

type fakeDirectory struct {
	mu   sync.RWMutex
	byIP map[netip.Addr]*NAS
}

func (d *fakeDirectory) LookupNAS(ip netip.Addr) (*NAS, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	n, ok := d.byIP[ip]
	return n, ok
}

// fakeAuthorizer is an in-memory user table. Everything it shares with the
// test goroutine is behind mu: packets over loopback are no happens-before
// edge for the race detector.
type fakeAuthorizer struct {
	mu      sync.Mutex
	users   map[string]Authorization
	calls   map[string]int
	last    AuthRequest
	gate    chan struct{} // when non-nil, Authorize waits for a value
	err     error
	waiting atomic.Int32
}

func (a *fakeAuthorizer) setUser(name string, az Authorization) {
	a.mu.Lock()
	a.users[name] = az
	a.mu.Unlock()
}

func (a *fakeAuthorizer) setGate(g chan struct{}) {
	a.mu.Lock()
	a.gate = g
	a.mu.Unlock()
}

func (a *fakeAuthorizer) setErr(err error) {
	a.mu.Lock()
	a.err = err
	a.mu.Unlock()
}

func (a *fakeAuthorizer) lastRequest() AuthRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

func (a *fakeAuthorizer) Authorize(ctx context.Context, req *AuthRequest) (Authorization, error) {
	a.mu.Lock()
	gate := a.gate
	a.mu.Unlock()
	if gate != nil {
		a.waiting.Add(1)
		select {
		case <-gate:
		case <-ctx.Done():
			return Authorization{}, ctx.Err()
		}
		a.waiting.Add(-1)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.calls == nil {
		a.calls = map[string]int{}
	}
	a.calls[req.Username]++
	a.last = *req
	if a.err != nil {
		return Authorization{}, a.err
	}
	return a.users[req.Username], nil
}

func (a *fakeAuthorizer) callCount(user string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[user]
}

type fakeAccounter struct {
	mu      sync.Mutex
	recs    []AcctRecord
	batches []int
	gate    chan struct{} // when non-nil, each commit waits for a value
	fail    atomic.Bool
	calls   atomic.Int32
}

func (a *fakeAccounter) setGate(g chan struct{}) {
	a.mu.Lock()
	a.gate = g
	a.mu.Unlock()
}

func (a *fakeAccounter) RecordAccounting(ctx context.Context, recs []AcctRecord) error {
	a.calls.Add(1)
	a.mu.Lock()
	gate := a.gate
	a.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if a.fail.Load() {
		return errors.New("database is locked")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, recs...)
	a.batches = append(a.batches, len(recs))
	return nil
}

func (a *fakeAccounter) records() []AcctRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]AcctRecord(nil), a.recs...)
}

type testEnv struct {
	srv      *Server
	dir      *fakeDirectory
	authz    *fakeAuthorizer
	acct     *fakeAccounter
	nas      *NAS
	authAddr string
	acctAddr string
}

// newEnv starts a server on loopback with one NAS (127.0.0.1) of the given
// type; mod may adjust the server before it starts.
func newEnv(t *testing.T, nasType string, requireMA bool, mod func(*Server)) *testEnv {
	t.Helper()
	return newEnvWith(t, nasType, requireMA, mod, nil)
}

// newEnvWith is newEnv serving a RadSec listener as well (when not nil).
func newEnvWith(t *testing.T, nasType string, requireMA bool, mod func(*Server), radsec net.Listener) *testEnv {
	t.Helper()
	nas := &NAS{TenantSlug: "acme", ID: 7, Name: "core-1", IP: loopback, Secret: []byte(testSecret),
		Type: nasType, CoAPort: 3799, RequireMessageAuthenticator: requireMA}
	e := &testEnv{
		dir:   &fakeDirectory{byIP: map[netip.Addr]*NAS{loopback: nas}},
		authz: &fakeAuthorizer{users: map[string]Authorization{}},
		acct:  &fakeAccounter{},
		nas:   nas,
	}
	e.srv = &Server{Directory: e.dir, Authorizer: e.authz, Accounter: e.acct,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), BatchWait: time.Millisecond}
	if mod != nil {
		mod(e.srv)
	}
	ac, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.authAddr, e.acctAddr = ac.LocalAddr().String(), cc.LocalAddr().String()
	served := make(chan error, 1)
	go func() { served <- e.srv.ServeListeners(Listeners{Auth: ac, Acct: cc, RadSec: radsec}) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	waitRunning(t, e.srv)
	return e
}

func waitRunning(t *testing.T, s *Server) {
	t.Helper()
	for i := 0; i < 200; i++ {
		s.mu.Lock()
		ok := s.running
		s.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("server did not start")
}

// encodeRequest encodes an Access-Request built with layeh and, when withMA,
// adds a Message-Authenticator computed per RFC 3579.
func encodeRequest(t *testing.T, p *radius.Packet, withMA bool) []byte {
	t.Helper()
	if withMA { // first, as BlastRADIUS-hardened NAS software sends it
		p.Attributes = append(radius.Attributes{{Type: rfc2869.MessageAuthenticator_Type, Attribute: make([]byte, 16)}}, p.Attributes...)
	}
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if withMA {
		signMA(b, p.Secret)
	}
	return b
}

// signMA fills in the (zeroed) Message-Authenticator of an encoded packet.
func signMA(b, secret []byte) {
	for off := 20; off < len(b); off += int(b[off+1]) {
		if b[off] == attrMessageAuth {
			m := hmac.New(md5.New, secret)
			m.Write(b)
			copy(b[off+2:off+18], m.Sum(nil))
			return
		}
	}
}

// encodeAcct encodes an Accounting-Request with its RFC 2866 authenticator.
func encodeAcct(t *testing.T, p *radius.Packet) []byte {
	t.Helper()
	p.Code = radius.CodeAccountingRequest
	b, err := p.Encode() // layeh computes the Request Authenticator
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exchange sends b from a fresh socket and returns the answer, or nil when
// none arrives within wait.
func exchange(t *testing.T, addr string, b []byte, wait time.Duration) []byte {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return exchangeOn(t, c, b, wait)
}

func exchangeOn(t *testing.T, c net.Conn, b []byte, wait time.Duration) []byte {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	return readAnswer(c, wait)
}

func readAnswer(c net.Conn, wait time.Duration) []byte {
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

// checkResponse verifies what every answer must satisfy: a valid Response
// Authenticator (layeh's check) and, for Access-* answers, a valid
// Message-Authenticator as the first attribute.
func checkResponse(t *testing.T, resp, req []byte) *radius.Packet {
	t.Helper()
	if resp == nil {
		t.Fatal("no response")
	}
	if !radius.IsAuthenticResponse(resp, req, []byte(testSecret)) {
		t.Fatal("bad Response Authenticator")
	}
	code := resp[0]
	if code == codeAccessAccept || code == codeAccessReject {
		if len(resp) < 38 || resp[20] != attrMessageAuth || resp[21] != 18 {
			t.Fatalf("Message-Authenticator is not the first attribute: % x", resp[20:min(len(resp), 40)])
		}
		cp := append([]byte(nil), resp...)
		copy(cp[4:20], req[4:20])
		clear(cp[22:38])
		m := hmac.New(md5.New, []byte(testSecret))
		m.Write(cp)
		if !hmac.Equal(m.Sum(nil), resp[22:38]) {
			t.Fatal("bad Message-Authenticator in response")
		}
	}
	p, err := radius.Parse(resp, []byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor polls cond for up to 2 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 400; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
