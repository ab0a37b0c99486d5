package radiusd

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
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

// Fuzz targets of EAP and of the EAP-TLS record framing:
//
//	go test -run '^$' -fuzz FuzzEAPConversation ./radiusd/
//	go test -run '^$' -fuzz FuzzTLSFraming      ./radiusd/
//	go test -run '^$' -fuzz FuzzTLSTunnel       ./radiusd/
//	go test -run '^$' -fuzz FuzzTTLSAVPs        ./radiusd/
//	go test -run '^$' -fuzz FuzzPEAPResult      ./radiusd/

// recordConn keeps the last datagram written.
type recordConn struct {
	net.PacketConn
	last []byte
}

func (c *recordConn) WriteTo(b []byte, _ net.Addr) (int, error) {
	c.last = append(c.last[:0], b...)
	return len(b), nil
}

// splitChunks reads length-prefixed chunks (one octet of length each).
func splitChunks(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 && len(out) < 16 {
		n := min(int(b[0]), len(b)-1)
		out = append(out, b[1:1+n])
		b = b[1+n:]
	}
	return out
}

func chunks(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, byte(len(p)))
		b = append(b, p...)
	}
	return b
}

// FuzzEAPConversation sends a sequence of arbitrary EAP packets, each in
// an Access-Request carrying the State of the answer before, through the
// worker path, with PEAP and TTLS on. Every answer must be well formed:
// a Challenge with a State and an EAP Request, an Accept with EAP-Success,
// a Reject with EAP-Failure.
func FuzzEAPConversation(f *testing.F) {
	id := eapBuild(eapResponse, 0, eapTypeIdentity, []byte("alice"))
	f.Add(chunks(id))
	f.Add(chunks(id, eapBuild(eapResponse, 1, eapTypeNak, []byte{eapTypeTTLS})))
	f.Add(chunks(id, eapBuild(eapResponse, 1, eapTypePEAP, []byte{tlsFlagLength | tlsFlagMore, 0, 0, 0, 9, 22, 3, 1})))
	f.Add(chunks(id, eapBuild(eapResponse, 1, eapTypeNak, []byte{eapTypeMSCHAPv2}), eapBuild(eapResponse, 2, eapTypeMSCHAPv2, []byte{2, 2, 0, 54, 49})))
	f.Add(chunks(eapBuild(eapResponse, 4, eapTypePEAP, []byte{0})))
	pki := newTestPKI(f)
	az := &fakeAuthorizer{users: map[string]Authorization{"alice": {Found: true, Password: "pw"}}}
	nas := &NAS{TenantSlug: "fz", ID: 1, Name: "fuzz", IP: loopback, Secret: []byte(testSecret), Type: NASTypeMikrotik}
	s := &Server{
		Directory: &fakeDirectory{byIP: map[netip.Addr]*NAS{loopback: nas}}, Authorizer: az, Accounter: &fakeAccounter{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), DedupTTL: time.Nanosecond,
		EAPTLS: &tls.Config{Certificates: []tls.Certificate{pki.server}},
	}
	s.prepare()
	ws := newWorkerState()
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	f.Fuzz(func(t *testing.T, seq []byte) {
		defer s.eap.closeAll()
		rc := &recordConn{}
		l := &listener{kind: kindAuth, conn: rc, queue: make(chan *packetBuf, 1)}
		var state []byte
		for i, msg := range splitChunks(seq) {
			if len(msg) == 0 {
				continue
			}
			p := radius.New(radius.CodeAccessRequest, []byte(testSecret))
			rfc2865.UserName_SetString(p, "alice")
			for rest := msg; len(rest) > 0; {
				n := min(len(rest), 253)
				p.Add(radius.Type(attrEAPMessage), rest[:n])
				rest = rest[n:]
			}
			if state != nil {
				p.Add(radius.Type(attrState), state)
			}
			p.Identifier = byte(i)
			req := encodeRequest(t, p, true)
			pb := new(packetBuf)
			n := copy(pb.buf[:], req)
			rc.last = nil
			if !s.admit(l, pb, n, src) {
				continue
			}
			s.handle(ws, l, <-l.queue)
			if rc.last == nil {
				continue
			}
			resp, err := radius.Parse(rc.last, []byte(testSecret))
			if err != nil || !radius.IsAuthenticResponse(rc.last, req, []byte(testSecret)) {
				t.Fatalf("answer does not parse or authenticate: %v", err)
			}
			var eap []byte
			for _, a := range resp.Attributes {
				if a.Type == radius.Type(attrEAPMessage) {
					eap = append(eap, a.Attribute...)
				}
			}
			ep, err := parseEAP(eap)
			if err != nil {
				t.Fatalf("answer's EAP: %v", err)
			}
			want := map[radius.Code]byte{radius.CodeAccessChallenge: eapRequest, radius.CodeAccessAccept: eapSuccess, radius.CodeAccessReject: eapFailure}[resp.Code]
			if ep.code != want {
				t.Fatalf("%v carries EAP code %d", resp.Code, ep.code)
			}
			state = nil
			if resp.Code == radius.CodeAccessChallenge {
				st, ok := resp.Attributes.Lookup(radius.Type(attrState))
				if !ok || len(st) != 16 {
					t.Fatal("Challenge without a State")
				}
				state = st
			}
		}
	})
}

// FuzzTLSFraming reassembles arbitrary PEAP/TTLS fragments: a complete
// message is exactly its announced length, nothing grows past the limit,
// and the server's own fragments of it carry it back unchanged.
func FuzzTLSFraming(f *testing.F) {
	f.Add(chunks([]byte{tlsFlagLength | tlsFlagMore, 0, 0, 0, 4, 1, 2}, []byte{0, 3, 4}))
	f.Add(chunks([]byte{0, 22, 3, 1}))
	f.Add(chunks([]byte{tlsFlagMore}, []byte{tlsFlagLength, 0xff, 0xff, 0xff, 0xff}))
	f.Fuzz(func(t *testing.T, seq []byte) {
		var r tlsReassembly
		r.total = -1
		for _, frag := range splitChunks(seq) {
			fr, err := parseTLSFrame(frag)
			if err != nil {
				return
			}
			done, err := r.add(fr)
			if err != nil {
				return
			}
			if len(r.buf) > maxTLSMessage {
				t.Fatalf("reassembly grew to %d", len(r.buf))
			}
			if !done {
				continue
			}
			total := r.total
			msg := r.take()
			if total >= 0 && len(msg) != total {
				t.Fatalf("complete at %d octets, announced %d", len(msg), total)
			}
			// What the server fragments, a peer reassembles unchanged.
			out := tlsOutbound{buf: bytes.Repeat(msg, 1+2*tlsFragment/(len(msg)+1))}
			want := append([]byte(nil), out.buf...)
			var back tlsReassembly
			back.total = -1
			for out.pending() {
				f2, err := parseTLSFrame(out.next(0))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := back.add(f2); err != nil {
					t.Fatalf("own fragments refused: %v", err)
				}
			}
			if !bytes.Equal(back.take(), want) {
				t.Fatal("own fragments do not reassemble")
			}
		}
	})
}

// FuzzTLSTunnel feeds arbitrary records to a server TLS session over the
// in-memory pipe: each round trip ends (the session asks for more or
// fails) within the step timeout, and closing ends the goroutine.
func FuzzTLSTunnel(f *testing.F) {
	f.Add(chunks([]byte{22, 3, 1, 0, 5, 1, 0, 0, 1, 0}))
	f.Add(chunks([]byte{21, 3, 3, 0, 2, 2, 40}, []byte{23, 3, 3, 0, 1, 0}))
	pki := newTestPKI(f)
	cfg := &tls.Config{Certificates: []tls.Certificate{pki.server}, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12}
	f.Fuzz(func(t *testing.T, seq []byte) {
		tun, err := newTLSTunnel(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer tun.close()
		for _, rec := range splitChunks(seq) {
			if len(rec) == 0 {
				continue
			}
			if _, err := tun.feed(rec); err != nil {
				if errors.Is(err, errTunnelStuck) {
					t.Fatal("the TLS session did not answer")
				}
				return
			}
		}
	})
}

// FuzzTTLSAVPs parses arbitrary Diameter AVPs; what it reads, written
// again, reads the same.
func FuzzTTLSAVPs(f *testing.F) {
	f.Add(appendAVP(appendAVP(nil, avpUserName, 0, []byte("alice")), avpUserPassword, 0, make([]byte, 16)))
	f.Add(appendAVP(nil, avpMSCHAP2Response, vendorMicrosoft, make([]byte, 50)))
	f.Add([]byte{0, 0, 0, 1, 0x40, 0, 0, 7})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseAVPs(b)
		if err != nil {
			return
		}
		var again []byte
		again = appendAVP(again, avpUserName, 0, a.user)
		if a.hasPassword {
			again = appendAVP(again, avpUserPassword, 0, a.password)
		}
		again = appendAVP(again, avpEAPMessage, 0, a.eap)
		again = appendAVP(again, avpMSCHAPChallenge, vendorMicrosoft, a.challenge)
		again = appendAVP(again, avpMSCHAP2Response, vendorMicrosoft, a.response)
		b2, err := parseAVPs(again)
		if err != nil {
			t.Fatalf("own AVPs refused: %v", err)
		}
		if !bytes.Equal(b2.user, a.user) || !bytes.Equal(b2.password, a.password) || !bytes.Equal(b2.eap, a.eap) ||
			!bytes.Equal(b2.challenge, a.challenge) || !bytes.Equal(b2.response, a.response) {
			t.Fatal("AVPs differ after a round trip")
		}
	})
}

// FuzzPEAPResult reads arbitrary Extensions Responses.
func FuzzPEAPResult(f *testing.F) {
	ok := peapResultTLV(3, true)
	ok[0] = eapResponse
	f.Add(ok)
	f.Add([]byte{2, 1, 0, 9, 33, 0x80, 12, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if peapResultSuccess(b) {
			p, _ := parseEAP(b)
			if p.typ != eapTypeTLV || binary.BigEndian.Uint16(b[2:4]) < 11 {
				t.Fatal("success read from a packet without a Result TLV")
			}
		}
	})
}
