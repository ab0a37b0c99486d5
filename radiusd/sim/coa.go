package sim

import (
	"context"
	"io"
	"log"
	"net"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc3576"
	"layeh.com/radius/rfc4679"
)

// coaListener answers RFC 5176 Disconnect-Request and CoA-Request like a
// NAS: ACK for a session it holds (a Disconnect then ends the session,
// whose Stop follows), NAK with Error-Cause 503 (Session Context Not Found)
// for any other.
type coaListener struct {
	srv  *radius.PacketServer
	conn net.PacketConn
	done chan struct{}
}

func listenCoA(addr, secret string, reg *registry, live *liveCounters) (*coaListener, error) {
	conn, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, err
	}
	l := &coaListener{conn: conn, done: make(chan struct{})}
	l.srv = &radius.PacketServer{SecretSource: radius.StaticSecretSource([]byte(secret)), ErrorLog: log.New(io.Discard, "", 0),
		Handler: radius.HandlerFunc(func(w radius.ResponseWriter, r *radius.Request) {
			var ip [4]byte
			fip, err := rfc2865.FramedIPAddress_Lookup(r.Packet)
			hasIP := err == nil && fip.To4() != nil
			if hasIP {
				copy(ip[:], fip.To4())
			}
			s := reg.find(rfc2866.AcctSessionID_GetString(r.Packet), rfc2865.UserName_GetString(r.Packet), ip, hasIP)
			var code radius.Code
			switch r.Code {
			case radius.CodeDisconnectRequest:
				code = radius.CodeDisconnectNAK
				if s != nil {
					code = radius.CodeDisconnectACK
					s.kill()
					live.disconnects.Add(1)
				}
			case radius.CodeCoARequest:
				code = radius.CodeCoANAK
				if s != nil {
					code = radius.CodeCoAACK
					if kbps := coaRate(r.Packet); kbps > 0 {
						s.rateDown.Store(kbps)
					}
					live.rateChanges.Add(1)
				}
			default:
				return
			}
			resp := r.Response(code)
			if s == nil {
				live.coaNAKs.Add(1)
				_ = rfc3576.ErrorCause_Set(resp, rfc3576.ErrorCause_Value_SessionContextNotFound)
			}
			// A lost answer is retried by the server; nothing to do here.
			_ = w.Write(resp)
		})}
	go func() {
		defer close(l.done)
		_ = l.srv.Serve(conn) // ends with ErrServerShutdown at close
	}()
	return l, nil
}

// Addr is where the listener answers.
func (l *coaListener) Addr() string { return l.conn.LocalAddr().String() }

func (l *coaListener) close() {
	_ = l.srv.Shutdown(context.Background())
	<-l.done
}

// coaRate reads the new downstream rate of a CoA-Request in kbps, from the
// vendor attributes servers use (Mikrotik-Rate-Limit "up/down",
// WISPr-Bandwidth-Max-Down in bps) or the DSL Forum's
// Actual-Data-Rate-Downstream; 0 when none is understood.
func coaRate(p *radius.Packet) int64 {
	if v, err := rfc4679.ActualDataRateDownstream_Lookup(p); err == nil && v > 0 {
		return int64(v) / 1000
	}
	for _, a := range p.Attributes {
		if a.Type != 26 || len(a.Attribute) < 7 {
			continue
		}
		vendor := uint32(a.Attribute[0])<<24 | uint32(a.Attribute[1])<<16 | uint32(a.Attribute[2])<<8 | uint32(a.Attribute[3])
		typ, val := a.Attribute[4], a.Attribute[6:]
		switch {
		case vendor == 14988 && typ == 8: // Mikrotik-Rate-Limit: "rx/tx" = up/down, e.g. "512k/1024k"
			if _, down, ok := cutRate(string(val)); ok {
				return down
			}
		case vendor == 14122 && typ == 8 && len(val) == 4: // WISPr-Bandwidth-Max-Down, bps
			return int64(uint32(val[0])<<24|uint32(val[1])<<16|uint32(val[2])<<8|uint32(val[3])) / 1000
		}
	}
	return 0
}

// cutRate parses the first "up/down" pair of a Mikrotik rate limit.
func cutRate(s string) (up, down int64, ok bool) {
	var u, d int64
	var su, sd string
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			s = s[:i]
			break
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			su, sd = s[:i], s[i+1:]
			break
		}
	}
	if su == "" || sd == "" {
		return 0, 0, false
	}
	u, okU := kbps(su)
	d, okD := kbps(sd)
	return u, d, okU && okD
}

func kbps(s string) (int64, bool) {
	mul := int64(1)
	switch s[len(s)-1] {
	case 'k', 'K':
		s = s[:len(s)-1]
	case 'M', 'm':
		mul, s = 1000, s[:len(s)-1]
	default:
		mul = -1 // bps
	}
	var n int64
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		n = n*10 + int64(ch-'0')
	}
	if mul < 0 {
		return n / 1000, true
	}
	return n * mul, true
}
