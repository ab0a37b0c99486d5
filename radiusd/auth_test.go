package radiusd

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2869"
	"layeh.com/radius/vendors/microsoft"
	"layeh.com/radius/vendors/mikrotik"
	"layeh.com/radius/vendors/wispr"
)

const (
	answerWait = 2 * time.Second
	silentWait = 150 * time.Millisecond // how long a dropped request is waited for
)

func papRequest(t *testing.T, user, pass string, withMA bool) []byte {
	t.Helper()
	p := radius.New(radius.CodeAccessRequest, []byte(testSecret))
	rfc2865.UserName_SetString(p, user)
	if err := rfc2865.UserPassword_SetString(p, pass); err != nil {
		t.Fatal(err)
	}
	rfc2865.CallingStationID_SetString(p, "AA:BB:CC:DD:EE:FF")
	rfc2869.NASPortID_SetString(p, "ether1")
	return encodeRequest(t, p, withMA)
}

func chapRequest(t *testing.T, user, pass string, challenge []byte) []byte {
	t.Helper()
	p := radius.New(radius.CodeAccessRequest, []byte(testSecret))
	rfc2865.UserName_SetString(p, user)
	ch := p.Authenticator[:]
	if challenge != nil {
		rfc2865.CHAPChallenge_Set(p, challenge)
		ch = challenge
	}
	const id = 42
	h := md5.New()
	h.Write([]byte{id})
	h.Write([]byte(pass))
	h.Write(ch)
	rfc2865.CHAPPassword_Set(p, append([]byte{id}, h.Sum(nil)...))
	return encodeRequest(t, p, true)
}

func TestPAP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	long := strings.Repeat("pässwörd-", 5) // 55 octets: four 16-octet blocks
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland"})
	e.authz.setUser("bob", Authorization{Found: true, Password: long})
	e.authz.setUser("carol", Authorization{Found: true, Password: "exactly16octets!"})

	for _, tc := range []struct {
		user, pass string
		want       byte
	}{
		{"alice", "wonderland", codeAccessAccept},
		{"bob", long, codeAccessAccept},
		{"carol", "exactly16octets!", codeAccessAccept},
		{"alice", "wonderlan", codeAccessReject},
		{"alice", "wonderland!", codeAccessReject},
		{"bob", long[:len(long)-1], codeAccessReject},
		{"mallory", "wonderland", codeAccessReject},
	} {
		req := papRequest(t, tc.user, tc.pass, true)
		p := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req)
		if byte(p.Code) != tc.want {
			t.Errorf("%s/%q: got %v", tc.user, tc.pass, p.Code)
		}
		if tc.want == codeAccessReject {
			if msg := rfc2865.ReplyMessage_GetString(p); msg != msgBadCredentials {
				t.Errorf("%s: Reply-Message %q", tc.user, msg)
			}
		}
	}
	if got := e.srv.Metrics.Rejects(ReasonBadCredentials); got != 4 {
		t.Errorf("bad_credentials rejects = %d, want 4 (unknown user counted the same)", got)
	}
	if a := e.authz.lastRequest(); a.Username != "mallory" || a.Method != MethodPAP || a.CallingStationID != "AA:BB:CC:DD:EE:FF" || a.NASPortID != "ether1" || a.NAS != e.nas {
		t.Errorf("AuthRequest = %+v", a)
	}
}

func TestCHAP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeGeneric, true, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland"})
	for _, tc := range []struct {
		name      string
		pass      string
		challenge []byte
		want      byte
	}{
		{"authenticator as challenge", "wonderland", nil, codeAccessAccept},
		{"CHAP-Challenge", "wonderland", []byte("0123456789abcdef0123"), codeAccessAccept},
		{"wrong password", "wonder", nil, codeAccessReject},
		{"wrong password with challenge", "Wonderland", []byte("abcdefgh"), codeAccessReject},
	} {
		req := chapRequest(t, "alice", tc.pass, tc.challenge)
		p := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req)
		if byte(p.Code) != tc.want {
			t.Errorf("%s: got %v", tc.name, p.Code)
		}
	}
	if m := e.authz.lastRequest().Method; m != MethodCHAP {
		t.Errorf("method %q", m)
	}
}

// RFC 2759 section 9.2 exchange, sent through the server: the Success
// authenticator and MPPE send key must be the RFC's (RFC 3079 3.5.3).
var (
	rfcAuthChallenge = mustHex("5B5D7C7D7B3F2F3E3C2C602132262628")
	rfcPeerChallenge = mustHex("21402324255E262A28295F2B3A337C7E")
	rfcNTResponse    = mustHex("82309ECD8D708B5EA08FAA3981CD83544233114A3D85D6DF")
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func mschapRequest(t *testing.T, user string, nt []byte) (*radius.Packet, []byte) {
	t.Helper()
	p := radius.New(radius.CodeAccessRequest, []byte(testSecret))
	rfc2865.UserName_SetString(p, user)
	microsoft.MSCHAPChallenge_Add(p, rfcAuthChallenge)
	resp := make([]byte, 50)
	resp[0] = 0x17 // ident
	copy(resp[2:18], rfcPeerChallenge)
	copy(resp[26:], nt)
	if err := microsoft.MSCHAP2Response_Add(p, resp); err != nil {
		t.Fatal(err)
	}
	b := encodeRequest(t, p, true)
	q, err := radius.Parse(b, []byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return q, b
}

func TestMSCHAPv2(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	e.authz.setUser("User", Authorization{Found: true, Password: "clientPass", RateDownKbps: 2048, RateUpKbps: 512})
	e.authz.setUser(`CORP\User`, Authorization{Found: true, Password: "clientPass"})
	e.authz.setUser("Other", Authorization{Found: true, Password: "somethingElse"})

	for _, user := range []string{"User", `CORP\User`} {
		q, req := mschapRequest(t, user, rfcNTResponse)
		p := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req)
		if p.Code != radius.CodeAccessAccept {
			t.Fatalf("%s: got %v", user, p.Code)
		}
		succ := microsoft.MSCHAP2Success_Get(p)
		if want := "\x17S=407A5589115FD0D6209F510FE9C04566932CDA56"; string(succ) != want {
			t.Errorf("%s: MS-CHAP2-Success %q, want %q", user, succ, want)
		}
		send := microsoft.MSMPPESendKey_Get(p, q)
		if !bytes.Equal(send, mustHex("8B7CDC149B993A1BA118CB153F56DCCB")) {
			t.Errorf("%s: MS-MPPE-Send-Key %X", user, send)
		}
		recv := microsoft.MSMPPERecvKey_Get(p, q)
		if len(recv) != 16 || bytes.Equal(recv, send) {
			t.Errorf("%s: MS-MPPE-Recv-Key %X", user, recv)
		}
	}

	q, req := mschapRequest(t, "Other", rfcNTResponse)
	_ = q
	p := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req)
	if p.Code != radius.CodeAccessReject {
		t.Fatalf("wrong password: got %v", p.Code)
	}
	if errText := microsoft.MSCHAPError_Get(p); len(errText) < 2 || errText[0] != 0x17 || !bytes.HasPrefix(errText[1:], []byte("E=691 R=0 C=")) {
		t.Errorf("MS-CHAP-Error %q", errText)
	}
	if e.authz.lastRequest().Method != MethodMSCHAPv2 {
		t.Errorf("method %q", e.authz.lastRequest().Method)
	}
}

func TestRefusalReasons(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	reasons := map[string]string{
		"disabled":         "Your account is disabled",
		"deleted":          "",
		"expired":          "Your subscription expired on 2024-01-31",
		"quota_exhausted":  "You have used all of your data",
		"mac_not_allowed":  "This device is not registered",
		"simultaneous_use": "Already online from another device",
		"card_revoked":     "This card was revoked",
		"card_expired":     "",
	}
	for r, msg := range reasons {
		e.authz.setUser("u-"+r, Authorization{Found: true, Password: "pw", Refusal: r, ReplyMessage: msg})
	}
	for r, msg := range reasons {
		req := papRequest(t, "u-"+r, "pw", true)
		p := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req)
		if p.Code != radius.CodeAccessReject {
			t.Errorf("%s: got %v", r, p.Code)
			continue
		}
		want := replyMessageFor(r, msg)
		if got := rfc2865.ReplyMessage_GetString(p); got != want || got == "" {
			t.Errorf("%s: Reply-Message %q, want %q", r, got, want)
		}
		if n := e.srv.Metrics.Rejects(r); n != 1 {
			t.Errorf("%s: counted %d", r, n)
		}
	}
	// A refused user with a wrong password learns nothing about the refusal.
	req := papRequest(t, "u-disabled", "nope", true)
	p := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req)
	if got := rfc2865.ReplyMessage_GetString(p); got != msgBadCredentials {
		t.Errorf("wrong password on refused account: %q", got)
	}
}

func vsas(p *radius.Packet, vendor uint32, typ byte) [][]byte {
	var out [][]byte
	for _, avp := range p.Attributes {
		if avp.Type != rfc2865.VendorSpecific_Type {
			continue
		}
		id, v, err := radius.VendorSpecific(avp.Attribute)
		if err != nil || id != vendor || len(v) < 2 || v[0] != typ {
			continue
		}
		out = append(out, v[2:v[1]])
	}
	return out
}

func TestAcceptAttributes(t *testing.T) {
	t.Parallel()
	az := Authorization{Found: true, Password: "pw", SessionTimeout: 3600, InterimInterval: 300,
		RateDownKbps: 10240, RateUpKbps: 2048, FramedIP: netip.MustParseAddr("100.64.1.2"),
		FramedPool: "expired_pool", Class: bytes.Repeat([]byte("c"), 300)}
	for _, typ := range []string{NASTypeMikrotik, NASTypeCisco, NASTypeGeneric} {
		t.Run(typ, func(t *testing.T) {
			e := newEnv(t, typ, true, nil)
			e.authz.setUser("alice", az)
			req := papRequest(t, "alice", "pw", true)
			p := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req)
			if p.Code != radius.CodeAccessAccept {
				t.Fatalf("got %v", p.Code)
			}
			if v := rfc2865.SessionTimeout_Get(p); v != 3600 {
				t.Errorf("Session-Timeout %d", v)
			}
			if v := rfc2869.AcctInterimInterval_Get(p); v != 300 {
				t.Errorf("Acct-Interim-Interval %d", v)
			}
			if v := rfc2865.FramedIPAddress_Get(p); !v.Equal(net.IPv4(100, 64, 1, 2)) {
				t.Errorf("Framed-IP-Address %v", v)
			}
			if v := rfc2869.FramedPool_GetString(p); v != "expired_pool" {
				t.Errorf("Framed-Pool %q", v)
			}
			cls, _ := rfc2865.Class_Gets(p)
			if len(cls) != 2 || !bytes.Equal(bytes.Join(cls, nil), az.Class) {
				t.Errorf("Class split wrong: %d parts", len(cls))
			}
			switch typ {
			case NASTypeMikrotik:
				if v := mikrotik.MikrotikRateLimit_GetString(p); v != "2048k/10240k" {
					t.Errorf("Mikrotik-Rate-Limit %q", v)
				}
			case NASTypeCisco:
				pairs := vsas(p, vendorCisco, ciscoAVPair)
				if len(pairs) != 2 ||
					string(pairs[0]) != "lcp:interface-config#1=rate-limit input 2048000 384000 768000 conform-action transmit exceed-action drop" ||
					!strings.HasPrefix(string(pairs[1]), "lcp:interface-config#2=rate-limit output 10240000 ") {
					t.Errorf("Cisco-AVPair %q", pairs)
				}
			default:
				if up, down := wispr.WISPrBandwidthMaxUp_Get(p), wispr.WISPrBandwidthMaxDown_Get(p); up != 2048000 || down != 10240000 {
					t.Errorf("WISPr up %d down %d", up, down)
				}
			}
		})
	}
}

func TestMessageAuthenticator(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "pw"})

	// Required and absent: dropped silently.
	if resp := exchange(t, e.authAddr, papRequest(t, "alice", "pw", false), silentWait); resp != nil {
		t.Fatal("answered a request without Message-Authenticator")
	}
	// Present but wrong (for example a wrong secret): dropped.
	bad := papRequest(t, "alice", "pw", true)
	bad[len(bad)-1] ^= 0xff // corrupt the last attribute after signing
	if resp := exchange(t, e.authAddr, bad, silentWait); resp != nil {
		t.Fatal("answered a request with a wrong Message-Authenticator")
	}
	waitFor(t, "drop counters", func() bool {
		return e.srv.Metrics.Drops("missing_message_authenticator") == 1 && e.srv.Metrics.Drops("bad_authenticator") == 1
	})
	if e.authz.callCount("alice") != 0 {
		t.Fatal("backend consulted for a dropped request")
	}

	// A NAS that does not require it: accepted with or without, and still
	// verified when present.
	e.dir.mu.Lock()
	e.nas.RequireMessageAuthenticator = false
	e.dir.mu.Unlock()
	for _, withMA := range []bool{true, false} {
		req := papRequest(t, "alice", "pw", withMA)
		if p := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req); p.Code != radius.CodeAccessAccept {
			t.Fatalf("withMA=%v: %v", withMA, p.Code)
		}
	}
	if resp := exchange(t, e.authAddr, bad, silentWait); resp != nil {
		t.Fatal("wrong Message-Authenticator accepted on a NAS that does not require it")
	}
	// A wrong secret on a request without MA is a wrong password (PAP).
	p := radius.New(radius.CodeAccessRequest, []byte("other-secret"))
	rfc2865.UserName_SetString(p, "alice")
	rfc2865.UserPassword_SetString(p, "pw")
	req := encodeRequest(t, p, false)
	if resp := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req); resp.Code != radius.CodeAccessReject {
		t.Fatalf("got %v", resp.Code)
	}
}

func TestDuplicateRetransmission(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "pw", SessionTimeout: 60})
	c, err := net.Dial("udp", e.authAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := papRequest(t, "alice", "pw", true)
	first := exchangeOn(t, c, req, answerWait)
	checkResponse(t, first, req)
	second := exchangeOn(t, c, req, answerWait)
	if !bytes.Equal(first, second) {
		t.Fatal("retransmission got a different answer")
	}
	if n := e.authz.callCount("alice"); n != 1 {
		t.Fatalf("Authorizer called %d times", n)
	}
	// Another source port is another request (RFC 5080 key includes the port).
	if resp := exchange(t, e.authAddr, req, answerWait); resp == nil {
		t.Fatal("no answer from a second socket")
	}
	if n := e.authz.callCount("alice"); n != 2 {
		t.Fatalf("Authorizer called %d times, want 2", n)
	}

	// In-flight duplicate: dropped while the first copy is being processed.
	gate := make(chan struct{})
	e.authz.setGate(gate)
	req2 := papRequest(t, "alice", "pw", true)
	c.Write(req2)
	waitFor(t, "first copy in the backend", func() bool { return e.authz.waiting.Load() == 1 })
	c.Write(req2)
	waitFor(t, "duplicate drop", func() bool { return e.srv.Metrics.Drops("duplicate") == 1 })
	close(gate)
	checkResponse(t, readAnswer(c, answerWait), req2)
	if extra := readAnswer(c, silentWait); extra != nil {
		t.Fatal("in-flight duplicate was answered twice")
	}
}

func TestUnknownSourceAndMalformed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "pw"})
	good := papRequest(t, "alice", "pw", true)

	mk := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	malformed := map[string][]byte{
		"short":              good[:19],
		"length > datagram":  mk(func(b []byte) []byte { binary.BigEndian.PutUint16(b[2:], uint16(len(b)+1)); return b }),
		"length < 20":        mk(func(b []byte) []byte { binary.BigEndian.PutUint16(b[2:], 19); return b }),
		"attribute type 0":   mk(func(b []byte) []byte { b[20+18] = 0; return b }), // the attribute after MA
		"attribute length 1": mk(func(b []byte) []byte { b[20+18+1] = 1; return b }),
		"attribute overruns": mk(func(b []byte) []byte { b[20+18+1] = 250; return b }),
		"oversize datagram":  append(mk(func(b []byte) []byte { return b }), make([]byte, 4100)...),
		"too many attributes": func() []byte {
			b := append([]byte(nil), good...)
			for range MaxAttributes {
				b = append(b, byte(rfc2865.ReplyMessage_Type), 2)
			}
			binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
			return b
		}(),
		"two Message-Authenticators": func() []byte {
			b := append(append([]byte(nil), good...), good[20:38]...)
			binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
			return b
		}(),
	}
	for name, b := range malformed {
		if resp := exchange(t, e.authAddr, b, 50*time.Millisecond); resp != nil {
			t.Errorf("%s: answered", name)
		}
	}
	waitFor(t, "malformed drops", func() bool { return e.srv.Metrics.Drops("malformed") == uint64(len(malformed)) })

	// Padding after the Length field is ignored (RFC 2865 section 3).
	padded := append(append([]byte(nil), good...), 0, 0, 0)
	if resp := exchange(t, e.authAddr, padded, answerWait); resp == nil {
		t.Error("padded packet not answered")
	}

	// Unknown source: the directory no longer knows 127.0.0.1.
	e.dir.mu.Lock()
	delete(e.dir.byIP, loopback)
	e.dir.mu.Unlock()
	if resp := exchange(t, e.authAddr, papRequest(t, "alice", "pw", true), silentWait); resp != nil {
		t.Fatal("answered an unknown source")
	}
	waitFor(t, "unknown source drop", func() bool { return e.srv.Metrics.Drops("unknown_source") == 1 })
}

func TestQueueFullAndBackendError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, func(s *Server) { s.Workers, s.QueueSize = 1, 1 })
	e.authz.setUser("alice", Authorization{Found: true, Password: "pw"})
	gate := make(chan struct{})
	e.authz.setGate(gate)
	c, _ := net.Dial("udp", e.authAddr)
	defer c.Close()
	c.Write(papRequest(t, "alice", "pw", true))
	waitFor(t, "worker busy", func() bool { return e.authz.waiting.Load() == 1 })
	for range 3 { // one queued, two dropped
		c.Write(papRequest(t, "alice", "pw", true))
	}
	waitFor(t, "queue_full drops", func() bool { return e.srv.Metrics.Drops("queue_full") == 2 })
	close(gate)
	for range 2 {
		if readAnswer(c, answerWait) == nil {
			t.Fatal("queued request not answered")
		}
	}
	e.authz.setGate(nil)
	e.authz.setErr(context.DeadlineExceeded)
	if resp := exchange(t, e.authAddr, papRequest(t, "alice", "pw", true), silentWait); resp != nil {
		t.Fatal("answered although the backend failed")
	}
	waitFor(t, "backend_error drop", func() bool { return e.srv.Metrics.Drops("backend_error") == 1 })
}

func TestStatusServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	p := radius.New(radius.CodeStatusServer, []byte(testSecret))
	req := encodeRequest(t, p, true)
	resp := checkResponse(t, exchange(t, e.authAddr, req, answerWait), req)
	if resp.Code != radius.CodeAccessAccept {
		t.Fatalf("got %v", resp.Code)
	}
	if r := exchange(t, e.authAddr, encodeRequest(t, radius.New(radius.CodeStatusServer, []byte(testSecret)), false), silentWait); r != nil {
		t.Fatal("Status-Server without Message-Authenticator answered")
	}
}
