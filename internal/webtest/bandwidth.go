package webtest

import (
	"context"
	"database/sql"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"layeh.com/radius"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/xrtest"
)

// FakeNAS answers CoA-Requests on loopback with CoA-ACK (or NAK) and keeps
// every request it got.
type FakeNAS struct {
	conn *net.UDPConn
	mu   sync.Mutex
	got  []*radius.Packet
	nak  bool
}

// NewFakeNAS listens for CoA and Disconnect requests on ip.
func NewFakeNAS(t *testing.T, ip string) *FakeNAS {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(ip)})
	if err != nil {
		t.Fatal(err)
	}
	f := &FakeNAS{conn: c}
	t.Cleanup(func() { _ = c.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			p, err := radius.Parse(append([]byte{}, buf[:n]...), []byte(RadiusSecret))
			if err != nil {
				continue
			}
			f.mu.Lock()
			f.got = append(f.got, p)
			nak := f.nak
			f.mu.Unlock()
			code := radius.CodeCoAACK
			if nak {
				code = radius.CodeCoANAK
			}
			r := p.Response(code)
			b, err := r.Encode()
			if err != nil {
				continue
			}
			_, _ = c.WriteToUDP(b, from)
		}
	}()
	return f
}

// Port is the UDP port the fake NAS listens on.
func (f *FakeNAS) Port() int { return f.conn.LocalAddr().(*net.UDPAddr).Port }

// Requests are the requests the fake NAS got, oldest first.
func (f *FakeNAS) Requests() []*radius.Packet {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*radius.Packet{}, f.got...)
}

// VendorValues is the first value of vendor attribute (vendor, type).
func VendorValues(p *radius.Packet, vendor uint32, typ byte) []string {
	var out []string
	for _, a := range p.Attributes {
		if a.Type != 26 || len(a.Attribute) < 6 {
			continue
		}
		v := uint32(a.Attribute[0])<<24 | uint32(a.Attribute[1])<<16 | uint32(a.Attribute[2])<<8 | uint32(a.Attribute[3])
		if v == vendor && a.Attribute[4] == typ {
			out = append(out, string(a.Attribute[6:]))
		}
	}
	return out
}

// BandwidthKit is the RadiusKit with two more NASes (MikroTik and Cisco) whose CoA
// port is a fake NAS on loopback.
type BandwidthKit struct {
	*RadiusKit
	MT, CS       *FakeNAS
	MTNAS, CSNAS *aaa.NAS
}

// NewBandwidthKit is a RadiusKit with a MikroTik and a Cisco NAS whose CoA
// ports are fake NASes.
func NewBandwidthKit(t *testing.T) *BandwidthKit {
	k := &BandwidthKit{RadiusKit: NewRadiusKit(t)}
	k.MT, k.CS = NewFakeNAS(t, "127.0.0.2"), NewFakeNAS(t, "127.0.0.3")
	ctx := context.Background()
	// Access-Accept checks below run beside an online session.
	if err := k.Acquire("acme").Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE profiles SET simultaneous_use = 10 WHERE id = ?`, k.Plan)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []struct {
		name, ip, typ string
		port          int
	}{{"mt", "127.0.0.2", "mikrotik", k.MT.Port()}, {"cs", "127.0.0.3", "cisco", k.CS.Port()}} {
		if _, err := aaa.CreateNAS(ctx, xrtest.System(t, k.Acquire("acme")), aaa.NASInput{Name: app.Opt[string]{Set: true, V: n.name},
			IP: app.Opt[string]{Set: true, V: n.ip}, Secret: app.Opt[string]{Set: true, V: RadiusSecret}, Type: app.Opt[aaa.NASType]{Set: true, V: aaa.NASType(n.typ)},
			CoAPort: app.Opt[int]{Set: true, V: n.port}}); err != nil {
			t.Fatal(err)
		}
	}
	xrtest.Eventually(t, "NASes in the directory", func() bool {
		var ok1, ok2 bool
		k.MTNAS, ok1 = k.Svc.LookupNAS(netip.MustParseAddr("127.0.0.2"))
		k.CSNAS, ok2 = k.Svc.LookupNAS(netip.MustParseAddr("127.0.0.3"))
		return ok1 && ok2
	})
	return k
}

// Online starts an accounting session of user on NAS n.
func (k *BandwidthKit) Online(n *aaa.NAS, user, sid string) {
	k.T.Helper()
	if err := k.Svc.RecordAccounting(context.Background(), []aaa.AcctEvent{{NAS: n, Status: aaa.StatusStart, SessionID: sid, Username: user, EventTime: time.Now()}}); err != nil {
		k.T.Fatal(err)
	}
}

// Rate is the download and upload rate RADIUS would give user on NAS n.
func (k *BandwidthKit) Rate(n *aaa.NAS, user string) (int64, int64) {
	k.T.Helper()
	a, err := k.Svc.Authorize(context.Background(), n, user, "")
	if err != nil || a.Refusal != "" {
		k.T.Fatalf("authorize %s: %v %q", user, err, a.Refusal)
	}
	return a.RateDownKbps, a.RateUpKbps
}

// SetNak makes the fake NAS answer NAK (or ACK again).
func (f *FakeNAS) SetNak(nak bool) {
	f.mu.Lock()
	f.nak = nak
	f.mu.Unlock()
}
