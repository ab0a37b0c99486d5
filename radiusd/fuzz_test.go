package radiusd

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/vendors/microsoft"
)

// discardConn is a PacketConn whose writes go nowhere; it lets the fuzzer
// drive the whole request path without sockets.
type discardConn struct{ net.PacketConn }

func (discardConn) WriteTo(b []byte, _ net.Addr) (int, error) { return len(b), nil }

func fuzzSeeds(f *testing.F) {
	f.Add(papRequestBytes("alice", "pw"))
	p := radius.New(radius.CodeAccessRequest, []byte(testSecret))
	rfc2865.UserName_SetString(p, "User")
	microsoft.MSCHAPChallenge_Add(p, rfcAuthChallenge)
	microsoft.MSCHAP2Response_Add(p, make([]byte, 50))
	b, _ := p.Encode()
	f.Add(b)
	acct := radius.New(radius.CodeAccountingRequest, []byte(testSecret))
	acct.Add(40, radius.NewInteger(3))
	acct.Add(44, []byte("sess"))
	b, _ = acct.Encode()
	f.Add(b)
	f.Add([]byte{1, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{4, 1, 0, 22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2})
}

func papRequestBytes(user, pass string) []byte {
	p := radius.New(radius.CodeAccessRequest, []byte(testSecret))
	rfc2865.UserName_SetString(p, user)
	rfc2865.UserPassword_SetString(p, pass)
	b, _ := p.Encode()
	return b
}

// FuzzParsePacket checks the validator against layeh's parser: whatever
// radiusd accepts, layeh parses to the same attributes, and lookups never
// read outside the packet.
func FuzzParsePacket(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var ix attrIndex
		p, err := parsePacket(b, &ix)
		if err != nil {
			return
		}
		lp, err := radius.Parse(p, []byte(testSecret))
		if err != nil {
			t.Fatalf("radiusd accepted what layeh refuses: %v", err)
		}
		if len(lp.Attributes) != ix.n {
			t.Fatalf("%d attributes, layeh sees %d", ix.n, len(lp.Attributes))
		}
		for i, avp := range lp.Attributes {
			o := int(ix.off[i])
			if byte(avp.Type) != p[o] || !bytes.Equal(avp.Attribute, p[o+2:o+int(p[o+1])]) {
				t.Fatalf("attribute %d differs", i)
			}
		}
		ix.vendor(p, vendorMicrosoft, msCHAP2Response)
		ix.uint32(p, 40)
	})
}

// FuzzHandlePacket runs arbitrary datagrams through admission and the
// worker path (auth and accounting) with an accepting backend.
func FuzzHandlePacket(f *testing.F) {
	fuzzSeeds(f)
	az := &fakeAuthorizer{users: map[string]Authorization{
		"alice": {Found: true, Password: "pw", RateDownKbps: 1, RateUpKbps: 1, Class: []byte("c")},
		"User":  {Found: true, Password: "clientPass"},
	}}
	nas := &NAS{Name: "fuzz", IP: loopback, Secret: []byte(testSecret), Type: NASTypeMikrotik}
	s := &Server{
		Directory: &fakeDirectory{byIP: map[netip.Addr]*NAS{loopback: nas}}, Authorizer: az, Accounter: &fakeAccounter{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), DedupTTL: time.Nanosecond,
	}
	s.prepare()
	s.batchIn = make(chan acctItem, 1)
	ws := newWorkerState()
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, kind := range []listenerKind{kindAuth, kindAcct} {
			l := &listener{kind: kind, conn: discardConn{}, queue: make(chan *packetBuf, 1)}
			pb := new(packetBuf)
			n := copy(pb.buf[:], b)
			if !s.admit(l, pb, n, src) {
				continue
			}
			s.handle(ws, l, <-l.queue)
			select {
			case <-s.batchIn:
			default:
			}
		}
	})
}

// FuzzMSCHAPv2 decodes and verifies arbitrary MS-CHAP attribute values.
func FuzzMSCHAPv2(f *testing.F) {
	resp := make([]byte, 50)
	copy(resp[2:18], rfcPeerChallenge)
	copy(resp[26:], rfcNTResponse)
	f.Add(rfcAuthChallenge, resp, "User")
	f.Add([]byte{}, []byte{}, `D\`)
	pw := ntPasswordHash("clientPass")
	f.Fuzz(func(t *testing.T, chal, resp []byte, user string) {
		m, err := decodeMSCHAPv2(chal, resp)
		if err != nil {
			return
		}
		if name, ok := verifyMSCHAPv2(&m, user, pw); ok {
			w := newPacket(nil, codeAccessAccept, 1, make([]byte, 16), true)
			if err := addMSCHAPv2Success(&w, &m, name, "clientPass", []byte(testSecret), make([]byte, 16)); err != nil {
				t.Fatal(err)
			}
		}
	})
}
