package radiusd

import (
	"io"
	"log/slog"
	"net/netip"
	"testing"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
)

// BenchmarkHandlerPAP measures the server's per-request work without
// sockets: admission (validation, NAS lookup, reply cache) and the worker
// (Message-Authenticator, PAP, Accept with MA and rate limit).
func BenchmarkHandlerPAP(b *testing.B) {
	nas := &NAS{Name: "bench", IP: loopback, Secret: []byte(testSecret), Type: NASTypeMikrotik, RequireMessageAuthenticator: true}
	az := &fakeAuthorizer{users: map[string]Authorization{
		"user00001": {Found: true, Password: "pass", SessionTimeout: 3600, InterimInterval: 300, RateDownKbps: 20480, RateUpKbps: 5120},
	}}
	s := &Server{Directory: &fakeDirectory{byIP: map[netip.Addr]*NAS{loopback: nas}}, Authorizer: az,
		Accounter: &fakeAccounter{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s.prepare()
	ws := newWorkerState()
	l := &listener{kind: kindAuth, conn: discardConn{}, queue: make(chan *packetBuf, 1)}
	// Distinct authenticators so that every request is new to the cache.
	reqs := make([][]byte, 1024)
	for i := range reqs {
		p := radius.New(radius.CodeAccessRequest, []byte(testSecret))
		rfc2865.UserName_SetString(p, "user00001")
		rfc2865.UserPassword_SetString(p, "pass")
		rfc2865.CallingStationID_SetString(p, "02:00:00:00:00:01")
		reqs[i] = encodeRequestB(p)
	}
	src := netip.MustParseAddrPort("127.0.0.1:40000")
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		pb := s.pool.Get().(*packetBuf)
		req := reqs[i%len(reqs)]
		req[1] = byte(i >> 10) // vary the Identifier too: new cache key
		signMA(clearMA(req), []byte(testSecret))
		n := copy(pb.buf[:], req)
		if s.admit(l, pb, n, netip.AddrPortFrom(src.Addr(), uint16(i))) {
			pb = <-l.queue
			s.handle(ws, l, pb)
		}
		s.pool.Put(pb)
	}
}

func encodeRequestB(p *radius.Packet) []byte {
	p.Attributes = append(radius.Attributes{{Type: 80, Attribute: make([]byte, 16)}}, p.Attributes...)
	b, _ := p.Encode()
	signMA(b, p.Secret)
	return b
}

func clearMA(b []byte) []byte {
	clear(b[22:38]) // the Message-Authenticator is the first attribute
	return b
}
