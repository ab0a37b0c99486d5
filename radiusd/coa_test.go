package radiusd

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"
	"layeh.com/radius/rfc3576"
	"layeh.com/radius/vendors/mikrotik"
)

// fakeNAS is a RADIUS dynamic-authorization server (the NAS side of RFC
// 5176) built on layeh, answering according to mode.
type fakeNAS struct {
	conn   *net.UDPConn
	mode   string // ack, nak503, silent, wrongsecret
	secret []byte
	mu     sync.Mutex
	got    [][]byte
	errs   []string
}

func startFakeNAS(t *testing.T, mode string) (*fakeNAS, *NAS) {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeNAS{conn: c, mode: mode, secret: []byte(testSecret)}
	t.Cleanup(func() { c.Close() })
	go f.serve()
	nas := &NAS{Name: "fake", IP: loopback, Secret: []byte(testSecret), Type: NASTypeMikrotik,
		CoAPort: c.LocalAddr().(*net.UDPAddr).Port}
	return f, nas
}

func (f *fakeNAS) serve() {
	buf := make([]byte, 4096)
	for {
		n, from, err := f.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		b := append([]byte(nil), buf[:n]...)
		f.mu.Lock()
		f.got = append(f.got, b)
		if !radius.IsAuthenticRequest(b, f.secret) {
			f.errs = append(f.errs, "bad Request Authenticator")
		}
		if !requestMAValid(b, f.secret) {
			f.errs = append(f.errs, "bad or missing Message-Authenticator")
		}
		f.mu.Unlock()
		req, err := radius.Parse(b, f.secret)
		if err != nil {
			continue
		}
		var resp *radius.Packet
		switch f.mode {
		case "ack", "wrongsecret":
			resp = req.Response(req.Code + 1)
		case "nak503":
			resp = req.Response(req.Code + 2)
			rfc3576.ErrorCause_Set(resp, rfc3576.ErrorCause_Value_SessionContextNotFound)
		default:
			continue
		}
		if f.mode == "wrongsecret" {
			resp.Secret = []byte("not-the-secret")
		}
		// Message-Authenticator over the response with the request's
		// authenticator, then layeh's Response Authenticator.
		rfc2869.MessageAuthenticator_Set(resp, make([]byte, 16))
		raw, _ := resp.MarshalBinary()
		m := hmac.New(md5.New, resp.Secret)
		m.Write(raw)
		rfc2869.MessageAuthenticator_Set(resp, m.Sum(nil))
		out, _ := resp.Encode()
		f.conn.WriteToUDP(out, from)
	}
}

// requestMAValid checks an RFC 5176 request's Message-Authenticator, which
// is computed with the authenticator field zeroed.
func requestMAValid(b, secret []byte) bool {
	cp := append([]byte(nil), b...)
	clear(cp[4:20])
	for off := 20; off+2 <= len(cp); off += int(cp[off+1]) {
		if cp[off+1] < 2 {
			return false
		}
		if cp[off] == attrMessageAuth {
			got := append([]byte(nil), cp[off+2:off+18]...)
			clear(cp[off+2 : off+18])
			m := hmac.New(md5.New, secret)
			m.Write(cp)
			return hmac.Equal(m.Sum(nil), got)
		}
	}
	return false
}

func (f *fakeNAS) received() ([][]byte, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.got...), append([]string(nil), f.errs...)
}

func fastClient() *CoAClient {
	return &CoAClient{InitialTimeout: 40 * time.Millisecond, MaxTimeout: 80 * time.Millisecond, MaxAttempts: 3, Metrics: NewMetrics()}
}

var session = DisconnectRequest{Username: "alice", AcctSessionID: "81000042", FramedIP: netip.MustParseAddr("100.64.0.9")}

func TestDisconnectACK(t *testing.T) {
	t.Parallel()
	f, nas := startFakeNAS(t, "ack")
	c := fastClient()
	res, err := c.Disconnect(context.Background(), nas, session)
	if err != nil || res.Outcome != OutcomeOK || res.Attempts != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	got, errs := f.received()
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	p, err := radius.Parse(got[0], []byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := rfc2869.EventTimestamp_Lookup(p)
	if p.Code != radius.CodeDisconnectRequest || rfc2865.UserName_GetString(p) != "alice" ||
		rfc2866.AcctSessionID_GetString(p) != "81000042" || !rfc2865.FramedIPAddress_Get(p).Equal(net.IPv4(100, 64, 0, 9)) ||
		time.Since(ts) > 5*time.Second {
		t.Fatalf("request %+v", p)
	}
	var buf bytes.Buffer
	c.Metrics.WritePrometheus(&buf)
	if !strings.Contains(buf.String(), `radius_coa_requests_total{kind="disconnect",outcome="ok"} 1`) {
		t.Fatal("outcome not counted")
	}
}

func TestDisconnectNAK503(t *testing.T) {
	t.Parallel()
	_, nas := startFakeNAS(t, "nak503")
	res, err := fastClient().Disconnect(context.Background(), nas, DisconnectRequest{AcctSessionID: "gone"})
	if err != nil || res.Outcome != OutcomeNAK || res.ErrorCause != 503 || !res.SessionGone() {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestDisconnectUnreachable(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"silent", "wrongsecret"} {
		t.Run(mode, func(t *testing.T) {
			f, nas := startFakeNAS(t, mode)
			res, err := fastClient().Disconnect(context.Background(), nas, session)
			if err != nil || res.Outcome != OutcomeUnreachable || res.Attempts != 3 {
				t.Fatalf("%+v %v", res, err)
			}
			got, _ := f.received()
			if len(got) != 3 {
				t.Fatalf("%d transmissions", len(got))
			}
			// Retransmissions keep Identifier and Request Authenticator.
			if !bytes.Equal(got[0], got[1]) || !bytes.Equal(got[1], got[2]) {
				t.Fatal("retransmission differs from the original")
			}
		})
	}
	// The caller's deadline bounds the whole exchange.
	_, nas := startFakeNAS(t, "silent")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	res, err := (&CoAClient{}).Disconnect(ctx, nas, session)
	if err != nil || res.Outcome != OutcomeUnreachable || time.Since(t0) > 500*time.Millisecond {
		t.Fatalf("%+v %v after %v", res, err, time.Since(t0))
	}
	// Nothing listening at all (ICMP port unreachable).
	dead := *nas
	dead.CoAPort = 9 // discard; nothing answers RADIUS there
	if res, err := fastClient().Disconnect(context.Background(), &dead, session); err != nil || res.Outcome != OutcomeUnreachable {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := fastClient().Disconnect(context.Background(), nas, DisconnectRequest{}); err == nil {
		t.Fatal("request without session identification sent")
	}
}

func TestChangeRate(t *testing.T) {
	t.Parallel()
	f, nas := startFakeNAS(t, "ack")
	res, err := fastClient().ChangeRate(context.Background(), nas, session, 2048, 512)
	if err != nil || res.Outcome != OutcomeOK {
		t.Fatalf("%+v %v", res, err)
	}
	got, errs := f.received()
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	p, _ := radius.Parse(got[0], []byte(testSecret))
	if p.Code != radius.CodeCoARequest || mikrotik.MikrotikRateLimit_GetString(p) != "512k/2048k" {
		t.Fatalf("request %v %q", p.Code, mikrotik.MikrotikRateLimit_GetString(p))
	}
}
