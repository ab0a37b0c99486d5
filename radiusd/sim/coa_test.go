package sim

import (
	"context"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc3576"
	"layeh.com/radius/vendors/mikrotik"
)

// The simulated NAS's CoA port: ACK for a session it holds (a Disconnect
// ends it, a CoA records the new rate), NAK with Error-Cause 503 for any
// other, silence for a wrong secret.
func TestCoAListener(t *testing.T) {
	t.Parallel()
	reg, live := newRegistry(), &liveCounters{}
	s := &liveSession{sid: "abcd00000001", user: "user00001", ip: [4]byte{100, 64, 0, 1}, end: make(chan struct{})}
	reg.add(s)
	l, err := listenCoA("127.0.0.1:0", "coa-secret", reg, live)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	exchange := func(code radius.Code, secret string, set func(p *radius.Packet)) (*radius.Packet, error) {
		p := radius.New(code, []byte(secret))
		set(p)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return radius.Exchange(ctx, p, l.Addr())
	}

	// CoA-Request by user name with a Mikrotik rate: ACK, rate recorded.
	r, err := exchange(radius.CodeCoARequest, "coa-secret", func(p *radius.Packet) {
		rfc2865.UserName_SetString(p, "USER00001")
		mikrotik.MikrotikRateLimit_SetString(p, "512k/1024k")
	})
	if err != nil || r.Code != radius.CodeCoAACK || s.rateDown.Load() != 1024 || live.rateChanges.Load() != 1 {
		t.Fatalf("CoA: %v %v rate %d", err, r, s.rateDown.Load())
	}
	// Disconnect-Request for an unknown session: NAK 503.
	r, err = exchange(radius.CodeDisconnectRequest, "coa-secret", func(p *radius.Packet) { rfc2866.AcctSessionID_SetString(p, "nope") })
	if err != nil || r.Code != radius.CodeDisconnectNAK || rfc3576.ErrorCause_Get(r) != rfc3576.ErrorCause_Value_SessionContextNotFound {
		t.Fatalf("unknown session: %v %v", err, r)
	}
	// A wrong secret is not answered.
	if _, err := exchange(radius.CodeDisconnectRequest, "wrong", func(p *radius.Packet) { rfc2866.AcctSessionID_SetString(p, s.sid) }); err == nil {
		t.Fatal("a Disconnect-Request with a wrong secret was answered")
	}
	// Disconnect-Request by session id: ACK, the session ends.
	r, err = exchange(radius.CodeDisconnectRequest, "coa-secret", func(p *radius.Packet) { rfc2866.AcctSessionID_SetString(p, s.sid) })
	if err != nil || r.Code != radius.CodeDisconnectACK || live.disconnects.Load() != 1 {
		t.Fatalf("disconnect: %v %v", err, r)
	}
	select {
	case <-s.end:
	default:
		t.Fatal("the ACKed session was not ended")
	}
	if live.coaNAKs.Load() != 1 {
		t.Fatalf("%d NAKs", live.coaNAKs.Load())
	}
}

func TestParseMixAndRates(t *testing.T) {
	t.Parallel()
	m, err := ParseMix("session=60, auth=30,interim=10,wrong=5,think=50ms")
	if err != nil || m != (Mix{Session: 60, Auth: 30, Interim: 10, WrongPassword: 5, Think: 50 * time.Millisecond}) {
		t.Fatalf("%+v %v", m, err)
	}
	if m, err := ParseMix(""); err != nil || m != DefaultMix {
		t.Fatalf("empty mix: %+v %v", m, err)
	}
	for _, bad := range []string{"session", "session=x", "session=101", "bogus=1", "think=soon", "session=0,auth=0,interim=0"} {
		if _, err := ParseMix(bad); err == nil {
			t.Errorf("ParseMix(%q) accepted", bad)
		}
	}
	for in, want := range map[string]int64{"512k/1024k": 1024, "1M/2M 4M/8M": 2000, "256000/512000": 512} {
		if _, down, ok := cutRate(in); !ok || down != want {
			t.Errorf("cutRate(%q) = %d %v", in, down, ok)
		}
	}
	if _, _, ok := cutRate("fast"); ok {
		t.Error("cutRate accepted garbage")
	}
	var c Config
	c.Mode, c.Secret, c.AuthAddr, c.AcctAddr, c.CoAListen = ModeAuth, "s", "a", "b", "127.0.0.1:0"
	if err := c.defaults(); err == nil {
		t.Error("--coa-listen accepted in auth mode")
	}
	c = Config{Mode: ModeSession, Secret: "s", AuthAddr: "a", AcctAddr: "b", AuthMethod: "eap"}
	if err := c.defaults(); err == nil {
		t.Error("an unknown auth method accepted")
	}
}
