package webtest

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"database/sql"
	"net"
	"net/netip"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/xrtest"
	"xr/radiusd"
)

// RadiusKit is the HTTP API and a real RADIUS server on loopback over one
// instance, with the change-log poll effectively off: whatever the RADIUS
// side sees right after an API answer, it saw through the commit hook.
type RadiusKit struct {
	*Kit
	Svc                *aaa.Service
	Tok                string
	Plan               int64
	AuthAddr, AcctAddr string
}

// RadiusSecret is the shared secret of the kit's NAS.
const RadiusSecret = "ryw-shared-secret-1"

// NewRadiusKit is a RadiusKit with a plan and a NAS on 127.0.0.1.
func NewRadiusKit(t *testing.T) *RadiusKit {
	k := &RadiusKit{Kit: NewWith(t, app.Config{AllowPrivateEgress: true}, nil, nil)} // the NAS is on loopback
	ctx := context.Background()
	if _, err := aaa.CreateNAS(ctx, xrtest.System(t, k.Acquire("acme")), aaa.NASInput{Name: app.Opt[string]{Set: true, V: "lo"},
		IP: app.Opt[string]{Set: true, V: "127.0.0.1"}, Secret: app.Opt[string]{Set: true, V: RadiusSecret}}); err != nil {
		t.Fatal(err)
	}
	k.Svc = aaa.New(k.App)
	k.Svc.PollEvery = time.Hour
	k.Srv.Radius = k.Svc
	k.AuthAddr, k.AcctAddr = ServeRadius(t, k.App, k.Svc, &radiusd.CoAClient{InitialTimeout: 50 * time.Millisecond, MaxAttempts: 1})
	k.Tok = k.Owner("acme")
	r := k.Do("POST", "acme", "/api/v1/admin/profiles", k.Tok, map[string]any{"name": "Home", "price": 10, "duration_days": 30,
		"rate_down_kbps": 10240, "rate_up_kbps": 2048})
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	k.Plan = int64(r.Data()["id"].(float64))
	// Load the tenant's index now, as a running server has: the hook must
	// keep a loaded index current (an unloaded one reads everything).
	if _, err := k.Svc.Authorize(ctx, MustNAS(t, k.Svc), "nobody", ""); err != nil {
		t.Fatal(err)
	}
	return k
}

// ServeRadius runs a real RADIUS server for svc on loopback (auth and
// accounting sockets, the service's poll and sweep) until the test ends,
// and returns the two addresses.
func ServeRadius(t *testing.T, a *app.App, svc *aaa.Service, coa *radiusd.CoAClient) (authAddr, acctAddr string) {
	t.Helper()
	backend := radiusd.NewAppBackend(svc, coa)
	srv := &radiusd.Server{Directory: backend, Authorizer: backend, Accounter: backend, Logger: a.Log, Metrics: coa.Metrics, BatchWait: -1}
	authC, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acctC, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	go svc.Run(runCtx)
	go func() { _ = srv.Serve(authC, acctC) }()
	t.Cleanup(func() {
		sctx, c2 := context.WithTimeout(context.Background(), 5*time.Second)
		defer c2()
		_ = srv.Shutdown(sctx)
		cancel()
		svc.Close()
	})
	return authC.LocalAddr().String(), acctC.LocalAddr().String()
}

// MustNAS is the NAS at 127.0.0.1, once the RADIUS index has it.
func MustNAS(t *testing.T, svc *aaa.Service) *aaa.NAS {
	n, ok := svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	if !ok {
		t.Fatal("NAS not in the directory")
	}
	return n
}

// CreateUser creates a subscriber on the kit's plan through the API.
func (k *RadiusKit) CreateUser(name string) int64 {
	k.T.Helper()
	r := k.Do("POST", "acme", "/api/v1/users", k.Tok, map[string]any{"username": name, "password": "pw-" + name,
		"profile_id": k.Plan, "expiration": "2030-01-02"})
	if r.Status != 201 {
		k.T.Fatalf("create %s: %d %s", name, r.Status, r.Body)
	}
	return int64(r.Data()["id"].(float64))
}

// Exchange sends a RADIUS packet to addr and returns the answer.
func (k *RadiusKit) Exchange(p *radius.Packet, addr string) *radius.Packet {
	k.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := radius.Client{Retry: 0}
	resp, err := c.Exchange(ctx, p, addr)
	if err != nil {
		k.T.Fatalf("exchange: %v", err)
	}
	return resp
}

// Auth sends an Access-Request (PAP, Message-Authenticator) and returns
// the answer's code.
func (k *RadiusKit) Auth(user, password string) radius.Code {
	k.T.Helper()
	p := radius.New(radius.CodeAccessRequest, []byte(RadiusSecret))
	k.must(rfc2865.UserName_SetString(p, user))
	k.must(rfc2865.UserPassword_SetString(p, password))
	k.must(rfc2869.MessageAuthenticator_Set(p, make([]byte, 16)))
	b, _ := p.Encode()
	h := hmac.New(md5.New, []byte(RadiusSecret))
	h.Write(b)
	k.must(rfc2869.MessageAuthenticator_Set(p, h.Sum(nil)))
	return k.Exchange(p, k.AuthAddr).Code
}

// Acct sends an Accounting-Request and fails unless it is acknowledged.
func (k *RadiusKit) Acct(status rfc2866.AcctStatusType, user, sid string, octets, secs uint32) {
	k.T.Helper()
	p := radius.New(radius.CodeAccountingRequest, []byte(RadiusSecret))
	k.must(rfc2866.AcctStatusType_Set(p, status))
	k.must(rfc2865.UserName_SetString(p, user))
	k.must(rfc2866.AcctSessionID_SetString(p, sid))
	k.must(rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(octets/2)))
	k.must(rfc2866.AcctOutputOctets_Set(p, rfc2866.AcctOutputOctets(octets-octets/2)))
	k.must(rfc2866.AcctSessionTime_Set(p, rfc2866.AcctSessionTime(secs)))
	if code := k.Exchange(p, k.AcctAddr).Code; code != radius.CodeAccountingResponse {
		k.T.Fatalf("accounting answered %v", code)
	}
}

// Scalar reads one nullable integer from acme's database.
func (k *RadiusKit) Scalar(q string, args ...any) (v sql.NullInt64) {
	k.T.Helper()
	if err := k.Acquire("acme").DB.R.QueryRow(q, args...).Scan(&v); err != nil {
		k.T.Fatal(err)
	}
	return v
}

// must fails the test on an error building a packet.
func (k *RadiusKit) must(err error) {
	k.T.Helper()
	if err != nil {
		k.T.Fatal(err)
	}
}
