package radiusd

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
)

func TestProxyStateEchoed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "pw"})
	for _, pw := range []string{"pw", "wrong"} {
		p := radius.New(radius.CodeAccessRequest, []byte(testSecret))
		rfc2865.UserName_SetString(p, "alice")
		rfc2865.UserPassword_SetString(p, pw)
		rfc2865.ProxyState_Add(p, []byte("hop-1"))
		rfc2865.ProxyState_Add(p, []byte("hop-2"))
		req := encodeRequest(t, p, true)
		resp := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req)
		ps, _ := rfc2865.ProxyState_Gets(resp)
		if len(ps) != 2 || string(ps[0]) != "hop-1" || string(ps[1]) != "hop-2" {
			t.Errorf("%v: Proxy-State %q", resp.Code, ps)
		}
	}
	req := acctRequest(t, testSecret, acctFields{status: 7})
	p, _ := radius.Parse(req, []byte(testSecret))
	rfc2865.ProxyState_Add(p, []byte("acct-hop"))
	req = encodeAcct(t, p)
	resp := checkResponse(t, exchange(t, e.acctAddr, req, answerWait), req)
	if v := rfc2865.ProxyState_Get(resp); string(v) != "acct-hop" {
		t.Errorf("accounting Proxy-State %q", v)
	}
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := &fakeDirectory{byIP: map[netip.Addr]*NAS{}}
	newSrv := func() *Server {
		return &Server{Directory: dir, Authorizer: &fakeAuthorizer{}, Accounter: &fakeAccounter{}, Logger: quiet}
	}

	// ListenAndServe returns nil once its context ends.
	s := newSrv()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(ctx, "127.0.0.1:0", "127.0.0.1:0") }()
	waitRunning(t, s)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ListenAndServe: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ListenAndServe did not return")
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}

	// Shutdown before Serve: Serve refuses and closes the connection.
	s = newSrv()
	s.Shutdown(context.Background())
	c, _ := net.ListenPacket("udp", "127.0.0.1:0")
	if err := s.Serve(c, nil); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
	if _, err := c.WriteTo([]byte{1}, c.LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Fatal("connection left open")
	}

	// Missing pieces are refused up front.
	if err := (&Server{}).Serve(nil, nil); err == nil {
		t.Fatal("Serve without listeners")
	}
	c, _ = net.ListenPacket("udp", "127.0.0.1:0")
	defer c.Close()
	if err := (&Server{Directory: dir}).Serve(c, nil); err == nil {
		t.Fatal("Serve without Authorizer")
	}
	// A busy address is reported.
	if err := newSrv().ListenAndServe(context.Background(), c.LocalAddr().String(), ""); err == nil {
		t.Fatal("listening on a busy port succeeded")
	}
}
