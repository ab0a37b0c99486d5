package radiusd

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/vendors/microsoft"
)

// A peer written here for what eapol_test does not do: fragments its own
// TLS messages, Naks a method, misuses State and Identifiers. It speaks
// through the real UDP socket.

type eapPeer struct {
	t     *testing.T
	conn  net.Conn
	state []byte
	user  string
	last  []byte        // the last Access-Request
	wait  time.Duration // for an answer; default 3 s
	// challenge is the server's last EAP Request.
	challenge eapPacket
}

// mschapv2 answers an EAP-MSCHAPv2 Challenge (RFC 2759 through the same
// layeh functions the server uses), acknowledges the Success-Request and
// returns the final answer, checking the authenticator response and the
// MPPE keys (RFC 3079) on an Accept.
func (p *eapPeer) mschapv2(ch eapPacket, password string) *radius.Packet {
	t := p.t
	t.Helper()
	if ch.typ != eapTypeMSCHAPv2 || len(ch.data) < 21 || ch.data[0] != msOpChallenge || ch.data[4] != 16 {
		t.Fatalf("not a Challenge: %+v", ch)
	}
	auth := ch.data[5:21]
	peer := bytes.Repeat([]byte{0x5a}, 16)
	nt := generateNTResponse(auth, peer, p.user, ntPasswordHash(password))
	body := []byte{msOpResponse, ch.data[1], 0, 0, 49}
	body = append(append(append(append(body, peer...), make([]byte, 8)...), nt[:]...), 0)
	body = append(body, p.user...)
	binary.BigEndian.PutUint16(body[2:4], uint16(len(body)))
	rp := p.send(eapBuild(eapResponse, ch.id, eapTypeMSCHAPv2, body))
	next := eapOf(t, rp)
	if next.typ != eapTypeMSCHAPv2 || len(next.data) < 1 {
		t.Fatalf("after the Response: %+v", next)
	}
	op := next.data[0]
	if op == msOpSuccess {
		want, _ := authenticatorResponse(password, nt[:], peer, auth, p.user)
		if !bytes.Contains(next.data, []byte(want)) {
			t.Fatalf("Success-Request %q lacks %s", next.data, want)
		}
	}
	final := p.send(eapBuild(eapResponse, next.id, eapTypeMSCHAPv2, []byte{op}))
	if final.Code == radius.CodeAccessAccept {
		send, recv, _ := mppeKeys(password, nt[:])
		req := &radius.Packet{}
		copy(req.Authenticator[:], p.last[4:20])
		if !bytes.Equal(microsoft.MSMPPERecvKey_Get(final, req), recv) || !bytes.Equal(microsoft.MSMPPESendKey_Get(final, req), send) {
			t.Fatal("MPPE keys are not RFC 3079's")
		}
	}
	return final
}

func newEAPPeer(t *testing.T, e *testEnv, user string) *eapPeer {
	c, err := net.Dial("udp", e.authAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &eapPeer{t: t, conn: c, user: user}
}

// send wraps an EAP packet in an Access-Request (with the State of the
// last Challenge) and returns the answer (nil when none).
func (p *eapPeer) send(eap []byte) *radius.Packet {
	p.t.Helper()
	req := radius.New(radius.CodeAccessRequest, []byte(testSecret))
	rfc2865.UserName_SetString(req, p.user)
	for rest := eap; len(rest) > 0; {
		n := min(len(rest), 253)
		req.Add(radius.Type(attrEAPMessage), rest[:n])
		rest = rest[n:]
	}
	if p.state != nil {
		req.Add(radius.Type(attrState), p.state)
	}
	b := encodeRequest(p.t, req, true)
	p.last = b
	wait := p.wait
	if wait == 0 {
		wait = 3 * time.Second
	}
	resp := exchangeOn(p.t, p.conn, b, wait)
	if resp == nil {
		return nil
	}
	rp := checkResponse(p.t, resp, b)
	if s, ok := rp.Attributes.Lookup(radius.Type(attrState)); ok {
		p.state = s
	}
	return rp
}

// eapOf is the EAP packet of an answer.
func eapOf(t *testing.T, rp *radius.Packet) eapPacket {
	t.Helper()
	var b []byte
	for _, a := range rp.Attributes {
		if a.Type == radius.Type(attrEAPMessage) {
			b = append(b, a.Attribute...)
		}
	}
	p, err := parseEAP(b)
	if err != nil {
		t.Fatalf("answer's EAP: %v (% x)", err, b)
	}
	return p
}

// ttlsPAP signs in by TTLS with PAP inside, fragmenting its own messages
// at frag octets, after Nak-ing the server's first proposal. It returns
// the final answer and the peer's TLS session (for the keys).
func (p *eapPeer) ttlsPAP(ca *x509.CertPool, password string, frag int) (*radius.Packet, *tlsTunnel) {
	t := p.t
	rp := p.send(eapBuild(eapResponse, 0, eapTypeIdentity, []byte(p.user)))
	req := eapOf(t, rp)
	if req.typ != eapTypePEAP || len(req.data) != 1 || req.data[0] != tlsFlagStart {
		t.Fatalf("first proposal %+v", req)
	}
	rp = p.send(eapBuild(eapResponse, req.id, eapTypeNak, []byte{eapTypeTTLS}))
	req = eapOf(t, rp)
	if req.typ != eapTypeTTLS || req.data[0] != tlsFlagStart {
		t.Fatalf("after the Nak %+v", req)
	}
	tun, out, err := startTunnel(func(c net.Conn) *tls.Conn { // out: the ClientHello
		return tls.Client(c, &tls.Config{RootCAs: ca, ServerName: "radius.test", MaxVersion: tls.VersionTLS12})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tun.close)
	sentAVPs := false
	for round := 0; round < 40; round++ {
		// Send our message in fragments; the server acknowledges each.
		var in []byte
		for off := 0; ; {
			n := min(frag, len(out)-off)
			flags := byte(0)
			var hdr []byte
			if off == 0 && n < len(out) {
				flags |= tlsFlagLength
				hdr = binary.BigEndian.AppendUint32(nil, uint32(len(out)))
			}
			if off+n < len(out) {
				flags |= tlsFlagMore
			}
			rp = p.send(eapBuild(eapResponse, req.id, eapTypeTTLS, []byte{flags}, hdr, out[off:off+n]))
			if rp == nil {
				t.Fatal("no answer to a fragment")
			}
			if rp.Code != radius.CodeAccessChallenge {
				return rp, tun
			}
			req = eapOf(t, rp)
			off += n
			if off == len(out) {
				break
			}
			if len(req.data) != 1 || req.data[0] != 0 {
				t.Fatalf("fragment not acknowledged: % x", req.data)
			}
		}
		// Collect the server's message, acknowledging its fragments.
		for {
			f, err := parseTLSFrame(req.data)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, f.data...)
			if f.flags&tlsFlagMore == 0 {
				break
			}
			rp = p.send(eapBuild(eapResponse, req.id, eapTypeTTLS, []byte{0}))
			req = eapOf(t, rp)
		}
		st, err := tun.feed(in)
		if err != nil {
			t.Fatalf("client TLS: %v", err)
		}
		out = st.out
		if tun.up && !sentAVPs {
			pw := []byte(password)
			pw = append(pw, make([]byte, (16-len(pw)%16)%16)...)
			avps := appendAVP(appendAVP(nil, avpUserName, 0, []byte(p.user)), avpUserPassword, 0, pw)
			rec, err := tun.write(avps)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rec...)
			sentAVPs = true
		}
	}
	t.Fatal("no end after 40 rounds")
	return nil, nil
}

func TestEAPTTLSFragmentedPeer(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	e := newEnv(t, NASTypeMikrotik, true, func(s *Server) {
		s.EAPTLS = &tls.Config{Certificates: []tls.Certificate{pki.server}}
	})
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland", SessionTimeout: 3600})
	pool := x509.NewCertPool()
	pool.AddCert(pki.ca)
	for _, tc := range []struct {
		name, password string
		frag           int
		want           radius.Code
	}{
		{"accept, 100-octet fragments", "wonderland", 100, radius.CodeAccessAccept},
		{"reject", "nope", 300, radius.CodeAccessReject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newEAPPeer(t, e.testEnvFor(t), "alice")
			rp, tun := p.ttlsPAP(pool, tc.password, tc.frag)
			if rp.Code != tc.want {
				t.Fatalf("answer %v", rp.Code)
			}
			final := eapOf(t, rp)
			if tc.want == radius.CodeAccessReject {
				if final.code != eapFailure || rfc2865.ReplyMessage_GetString(rp) != msgBadCredentials {
					t.Fatalf("reject %+v %q", final, rfc2865.ReplyMessage_GetString(rp))
				}
				return
			}
			if final.code != eapSuccess || rfc2865.SessionTimeout_Get(rp) != 3600 {
				t.Fatalf("accept %+v", final)
			}
			// The keys are the TLS exporter's, as the peer computes them.
			k, err := tun.exportKey(ttlsKeyLabel, 64)
			if err != nil {
				t.Fatal(err)
			}
			req := &radius.Packet{}
			copy(req.Authenticator[:], p.last[4:20])
			if recv := microsoft.MSMPPERecvKey_Get(rp, req); !bytes.Equal(recv, k[:32]) {
				t.Fatalf("MS-MPPE-Recv-Key % x, want % x", recv, k[:32])
			}
			if send := microsoft.MSMPPESendKey_Get(rp, req); !bytes.Equal(send, k[32:]) {
				t.Fatalf("MS-MPPE-Send-Key % x, want % x", send, k[32:])
			}
		})
	}
}

// testEnvFor keeps the helper's signature readable in subtests.
func (e *testEnv) testEnvFor(*testing.T) *testEnv { return e }

// TestEAPRefusals: misuse of the conversation.
func TestEAPRefusals(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	e := newEnv(t, NASTypeMikrotik, true, func(s *Server) {
		s.EAPTLS = &tls.Config{Certificates: []tls.Certificate{pki.server}}
	})
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland"})
	reject := func(t *testing.T, rp *radius.Packet, reason string) {
		t.Helper()
		if rp == nil || rp.Code != radius.CodeAccessReject || eapOf(t, rp).code != eapFailure {
			t.Fatalf("answer %+v, want Access-Reject with EAP-Failure", rp)
		}
		if n := e.srv.Metrics.Rejects(reason); n == 0 {
			t.Fatalf("reject reason %s not counted", reason)
		}
	}
	t.Run("unknown State", func(t *testing.T) {
		p := newEAPPeer(t, e, "alice")
		p.state = bytes.Repeat([]byte{7}, 16)
		reject(t, p.send(eapBuild(eapResponse, 3, eapTypePEAP, []byte{0})), ReasonEAPSessionUnknown)
	})
	t.Run("no Identity first", func(t *testing.T) {
		p := newEAPPeer(t, e, "alice")
		reject(t, p.send(eapBuild(eapResponse, 3, eapTypeMSCHAPv2, []byte{2})), ReasonEAPProtocol)
	})
	t.Run("Nak of every method", func(t *testing.T) {
		p := newEAPPeer(t, e, "alice")
		req := eapOf(t, p.send(eapBuild(eapResponse, 0, eapTypeIdentity, []byte("alice"))))
		reject(t, p.send(eapBuild(eapResponse, req.id, eapTypeNak, []byte{4, 6})), ReasonEAPMethodUnsupported)
	})
	t.Run("TLS message over the limit", func(t *testing.T) {
		p := newEAPPeer(t, e, "alice")
		req := eapOf(t, p.send(eapBuild(eapResponse, 0, eapTypeIdentity, []byte("alice"))))
		big := binary.BigEndian.AppendUint32(nil, maxTLSMessage+1)
		reject(t, p.send(eapBuild(eapResponse, req.id, eapTypePEAP, []byte{tlsFlagLength | tlsFlagMore}, big, []byte{22, 3, 1})), ReasonEAPProtocol)
	})
	t.Run("not a TLS handshake", func(t *testing.T) {
		p := newEAPPeer(t, e, "alice")
		req := eapOf(t, p.send(eapBuild(eapResponse, 0, eapTypeIdentity, []byte("alice"))))
		reject(t, p.send(eapBuild(eapResponse, req.id, eapTypePEAP, []byte{0}, []byte("GET / HTTP/1.1\r\n\r\n"))), ReasonEAPTLSFailed)
	})
	t.Run("Response to an old Request", func(t *testing.T) {
		p := newEAPPeer(t, e, "alice")
		req := eapOf(t, p.send(eapBuild(eapResponse, 0, eapTypeIdentity, []byte("alice"))))
		before := e.srv.Metrics.Drops("eap_out_of_step")
		p.wait = 300 * time.Millisecond // silence is expected: the counter below is the proof
		if rp := p.send(eapBuild(eapResponse, req.id-1, eapTypePEAP, []byte{0})); rp != nil {
			t.Fatalf("answered %v", rp.Code)
		}
		waitFor(t, "the drop counted", func() bool { return e.srv.Metrics.Drops("eap_out_of_step") == before+1 })
	})
}

// TestEAPSessionCaps: new conversations beyond the caps are dropped;
// those in progress go on.
func TestEAPSessionCaps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, func(s *Server) { s.EAPMaxSessions = 4 }) // 2 per NAS
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland"})
	var peers []*eapPeer
	for range 2 {
		p := newEAPPeer(t, e, "alice")
		rp := p.send(eapBuild(eapResponse, 0, eapTypeIdentity, []byte("alice")))
		if rp == nil || rp.Code != radius.CodeAccessChallenge {
			t.Fatal("conversation not started")
		}
		p.challenge = eapOf(t, rp)
		peers = append(peers, p)
	}
	p := newEAPPeer(t, e, "alice")
	p.wait = 300 * time.Millisecond // silence is expected: the counter below is the proof
	if rp := p.send(eapBuild(eapResponse, 0, eapTypeIdentity, []byte("alice"))); rp != nil {
		t.Fatalf("a third conversation of the NAS answered %v", rp.Code)
	}
	waitFor(t, "the drop counted", func() bool { return e.srv.Metrics.Drops("eap_sessions_full") == 1 })
	// The ones in progress go on (without TLS configured the method is
	// EAP-MSCHAPv2).
	for _, p := range peers {
		if rp := p.mschapv2(p.challenge, "wonderland"); rp.Code != radius.CodeAccessAccept {
			t.Fatalf("conversation in progress answered %v", rp.Code)
		}
	}
}

// TestEAPStoreBounds: the store's caps and time limits, with explicit
// clocks.
func TestEAPStoreBounds(t *testing.T) {
	t.Parallel()
	st := newEAPStore(4, time.Minute, 3*time.Minute)
	t0 := time.Unix(1_700_000_000, 0)
	a := &NAS{TenantSlug: "x", ID: 1}
	b := &NAS{TenantSlug: "x", ID: 2}
	s1, s2 := st.create(a, t0), st.create(a, t0)
	if s1 == nil || s2 == nil || st.create(a, t0) != nil {
		t.Fatal("per-NAS cap of 2 not applied")
	}
	b1, b2, b3 := st.create(b, t0), st.create(b, t0), st.create(b, t0)
	if b1 == nil || b2 == nil || b3 != nil {
		t.Fatal("second NAS not capped at 2")
	}
	if st.get(s1.key[:], b, t0) != nil {
		t.Fatal("a State answered for another NAS")
	}
	// Touched within the idle time: alive; past it: gone, and its place free.
	if st.get(s1.key[:], a, t0.Add(50*time.Second)) != s1 {
		t.Fatal("conversation lost within its idle time")
	}
	if st.get(s2.key[:], a, t0.Add(61*time.Second)) != nil {
		t.Fatal("idle conversation kept")
	}
	if st.create(a, t0.Add(61*time.Second)) == nil {
		t.Fatal("expired conversation's place not freed")
	}
	// Lifetime: even a busy conversation ends.
	for m := time.Duration(1); m <= 3; m++ {
		st.get(s1.key[:], a, t0.Add(m*50*time.Second))
	}
	if st.get(s1.key[:], a, t0.Add(181*time.Second)) != nil {
		t.Fatal("conversation past its lifetime kept")
	}
	st.expire(t0.Add(time.Hour))
	if st.len() != 0 {
		t.Fatalf("%d conversations after expiry", st.len())
	}
}

// TestEAPMSCHAPv2RFCVectors runs the EAP-MSCHAPv2 state machine on RFC
// 2759 section 9.2's exchange (user "User", password "clientPass"): the
// Response checks, the Success-Request carries the RFC's authenticator
// response, the keys are RFC 3079's for that NT-Response, and a Response
// to another challenge is refused.
func TestEAPMSCHAPv2RFCVectors(t *testing.T) {
	t.Parallel()
	check := func(in *authInput) verdict {
		ws := newWorkerState()
		if !verifyPassword(ws, in, "User", "clientPass", ntPasswordHash("clientPass")) {
			return verdict{reason: ReasonBadCredentials}
		}
		return verdict{az: Authorization{Found: true, Password: "clientPass"}}
	}
	response := func(id byte) []byte {
		b := []byte{msOpResponse, id, 0, 0, 49}
		b = append(append(append(append(b, rfcPeerChallenge...), make([]byte, 8)...), rfcNTResponse...), 0)
		b = append(b, "User"...)
		binary.BigEndian.PutUint16(b[2:4], uint16(len(b)))
		return b
	}
	var m eapMSCHAPv2
	m.start(9)
	copy(m.challenge[:], rfcAuthChallenge)
	out, err := m.process(response(9), check)
	if err != nil || m.verdict.reason != "" || !bytes.Contains(out.reply, []byte("S=407A5589115FD0D6209F510FE9C04566932CDA56")) {
		t.Fatalf("success %q %v %+v", out.reply, err, m.verdict)
	}
	send, recv, _ := mppeKeys("clientPass", rfcNTResponse)
	if !bytes.Equal(m.send, send) || !bytes.Equal(m.recv, recv) {
		t.Fatal("keys are not RFC 3079's")
	}
	if out, err := m.process([]byte{msOpSuccess}, check); err != nil || !out.done {
		t.Fatalf("acknowledgement %+v %v", out, err)
	}
	// The same Response to a fresh challenge fails, with E=691.
	var other eapMSCHAPv2
	other.start(9)
	out, err = other.process(response(9), check)
	if err != nil || other.verdict.reason != ReasonBadCredentials || !bytes.Contains(out.reply, []byte("E=691 R=0 C=")) {
		t.Fatalf("failure %q %v", out.reply, err)
	}
	// An MS-CHAPv2-ID other than the Challenge's is out of place.
	var third eapMSCHAPv2
	third.start(9)
	if _, err := third.process(response(8), check); err == nil {
		t.Fatal("a Response for another MS-CHAPv2-ID was taken")
	}
}
