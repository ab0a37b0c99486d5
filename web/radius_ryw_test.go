package web

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"database/sql"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
	"xr/internal/xrtest"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"

	"xr/app"
	"xr/app/aaa"
	"xr/radiusd"
)

// rywKit is the HTTP API and a real RADIUS server on loopback over one
// instance, with the change-log poll effectively off: whatever the RADIUS
// side sees right after an API answer, it saw through the commit hook.
type rywKit struct {
	*kit
	svc              *aaa.Service
	tok              string
	plan             int64
	authAddr, acctAd string
}

const rywSecret = "ryw-shared-secret-1"

func newRYWKit(t *testing.T) *rywKit {
	k := &rywKit{kit: newKitWith(t, app.Config{AllowPrivateEgress: true}, nil, nil)} // the NAS is on loopback
	ctx := context.Background()
	if _, err := aaa.CreateNAS(ctx, xrtest.System(t, k.Acquire("acme")), aaa.NASInput{Name: app.Opt[string]{Set: true, V: "lo"},
		IP: app.Opt[string]{Set: true, V: "127.0.0.1"}, Secret: app.Opt[string]{Set: true, V: rywSecret}}); err != nil {
		t.Fatal(err)
	}
	k.svc = aaa.New(k.App)
	k.svc.PollEvery = time.Hour
	k.Srv.Radius = k.svc
	k.authAddr, k.acctAd = serveRadius(t, k.App, k.svc, &radiusd.CoAClient{InitialTimeout: 50 * time.Millisecond, MaxAttempts: 1})
	k.tok = k.Owner("acme")
	r := k.Do("POST", "acme", "/api/v1/admin/profiles", k.tok, map[string]any{"name": "Home", "price": 10, "duration_days": 30,
		"rate_down_kbps": 10240, "rate_up_kbps": 2048})
	if r.Status != 201 && r.Status != 200 {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	k.plan = int64(r.Data()["id"].(float64))
	// Load the tenant's index now, as a running server has: the hook must
	// keep a loaded index current (an unloaded one reads everything).
	if _, err := k.svc.Authorize(ctx, mustNAS(t, k.svc), "nobody", ""); err != nil {
		t.Fatal(err)
	}
	return k
}

// serveRadius runs a real RADIUS server for svc on loopback (auth and
// accounting sockets, the service's poll and sweep) until the test ends,
// and returns the two addresses.
func serveRadius(t *testing.T, a *app.App, svc *aaa.Service, coa *radiusd.CoAClient) (authAddr, acctAddr string) {
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
	go srv.Serve(authC, acctC)
	t.Cleanup(func() {
		sctx, c2 := context.WithTimeout(context.Background(), 5*time.Second)
		defer c2()
		srv.Shutdown(sctx)
		cancel()
		svc.Close()
	})
	return authC.LocalAddr().String(), acctC.LocalAddr().String()
}

func mustNAS(t *testing.T, svc *aaa.Service) *aaa.NAS {
	n, ok := svc.LookupNAS(netip.MustParseAddr("127.0.0.1"))
	if !ok {
		t.Fatal("NAS not in the directory")
	}
	return n
}

func (k *rywKit) createUser(name string) int64 {
	k.t.Helper()
	r := k.Do("POST", "acme", "/api/v1/users", k.tok, map[string]any{"username": name, "password": "pw-" + name,
		"profile_id": k.plan, "expiration": "2030-01-02"})
	if r.Status != 201 {
		k.t.Fatalf("create %s: %d %s", name, r.Status, r.Body)
	}
	return int64(r.Data()["id"].(float64))
}

func (k *rywKit) exchange(p *radius.Packet, addr string) *radius.Packet {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := radius.Client{Retry: 0}
	resp, err := c.Exchange(ctx, p, addr)
	if err != nil {
		k.t.Fatalf("exchange: %v", err)
	}
	return resp
}

func (k *rywKit) auth(user, password string) radius.Code {
	k.t.Helper()
	p := radius.New(radius.CodeAccessRequest, []byte(rywSecret))
	rfc2865.UserName_SetString(p, user)
	rfc2865.UserPassword_SetString(p, password)
	rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
	b, _ := p.Encode()
	h := hmac.New(md5.New, []byte(rywSecret))
	h.Write(b)
	rfc2869.MessageAuthenticator_Set(p, h.Sum(nil))
	return k.exchange(p, k.authAddr).Code
}

func (k *rywKit) acct(status rfc2866.AcctStatusType, user, sid string, octets, secs uint32) {
	k.t.Helper()
	p := radius.New(radius.CodeAccountingRequest, []byte(rywSecret))
	rfc2866.AcctStatusType_Set(p, status)
	rfc2865.UserName_SetString(p, user)
	rfc2866.AcctSessionID_SetString(p, sid)
	rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(octets/2))
	rfc2866.AcctOutputOctets_Set(p, rfc2866.AcctOutputOctets(octets-octets/2))
	rfc2866.AcctSessionTime_Set(p, rfc2866.AcctSessionTime(secs))
	if code := k.exchange(p, k.acctAd).Code; code != radius.CodeAccountingResponse {
		k.t.Fatalf("accounting answered %v", code)
	}
}

func (k *rywKit) scalar(q string, args ...any) (v sql.NullInt64) {
	k.t.Helper()
	if err := k.Acquire("acme").DB.R.QueryRow(q, args...).Scan(&v); err != nil {
		k.t.Fatal(err)
	}
	return v
}

// TestRadiusSeesAPIWritesAtOnce: every authorization fact an API call
// changes is the decision of the very next Access-Request, with no wait.
func TestRadiusSeesAPIWritesAtOnce(t *testing.T) {
	t.Parallel()
	k := newRYWKit(t)
	for i := range 5 {
		name := fmt.Sprintf("fresh%d", i)
		id := k.createUser(name)
		if c := k.auth(name, "pw-"+name); c != radius.CodeAccessAccept {
			t.Fatalf("%s right after create: %v", name, c)
		}
		if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/users/%d/disable", id), k.tok, nil); r.Status != 200 {
			t.Fatalf("disable: %d %s", r.Status, r.Body)
		}
		if c := k.auth(name, "pw-"+name); c != radius.CodeAccessReject {
			t.Fatalf("%s right after disable: %v", name, c)
		}
		if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/users/%d/enable", id), k.tok, nil); r.Status != 200 {
			t.Fatalf("enable: %d %s", r.Status, r.Body)
		}
		if c := k.auth(name, "pw-"+name); c != radius.CodeAccessAccept {
			t.Fatalf("%s right after enable: %v", name, c)
		}
		if r := k.Do("PATCH", "acme", fmt.Sprintf("/api/v1/users/%d", id), k.tok, map[string]any{"password": "changed-" + name}); r.Status != 200 {
			t.Fatalf("password: %d %s", r.Status, r.Body)
		}
		if c := k.auth(name, "pw-"+name); c != radius.CodeAccessReject {
			t.Fatalf("%s old password after change: %v", name, c)
		}
		if c := k.auth(name, "changed-"+name); c != radius.CodeAccessAccept {
			t.Fatalf("%s new password after change: %v", name, c)
		}
		if r := k.Do("PATCH", "acme", fmt.Sprintf("/api/v1/users/%d", id), k.tok, map[string]any{"expiration": "2020-01-01"}); r.Status != 200 {
			t.Fatalf("expiry: %d %s", r.Status, r.Body)
		}
		if c := k.auth(name, "changed-"+name); c != radius.CodeAccessReject {
			t.Fatalf("%s right after expiry moved to the past: %v", name, c)
		}
		if r := k.Do("DELETE", "acme", fmt.Sprintf("/api/v1/users/%d", id), k.tok, nil); r.Status != 200 && r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if c := k.auth(name, "changed-"+name); c != radius.CodeAccessReject {
			t.Fatalf("%s right after delete: %v", name, c)
		}
	}
}

// TestAccountingRightAfterCreateCharges: a Start sent right after the
// create answered opens a subscriber session, and its Stop is charged.
func TestAccountingRightAfterCreateCharges(t *testing.T) {
	t.Parallel()
	k := newRYWKit(t)
	id := k.createUser("quick")
	k.acct(rfc2866.AcctStatusType_Value_Start, "quick", "s-quick", 0, 0)
	k.acct(rfc2866.AcctStatusType_Value_Stop, "quick", "s-quick", 10_000_000, 60)
	if got := k.scalar(`SELECT user_id FROM radius_sessions WHERE acct_session_id = 's-quick'`); got.Int64 != id {
		t.Fatalf("session user_id %v, want %d", got, id)
	}
	if got := k.scalar(`SELECT used_bytes FROM users WHERE id = ?`, id); got.Int64 != 10_000_000 {
		t.Fatalf("used_bytes %v after a Stop of 10 MB", got)
	}
}

// TestAccountingResolvesWritesOfAnotherProcess: a subscriber written by
// another process (the CLI; here a write that runs no commit hook) is found
// in the database before a session is filed as unknown.
func TestAccountingResolvesWritesOfAnotherProcess(t *testing.T) {
	t.Parallel()
	k := newRYWKit(t)
	ten := k.Acquire("acme")
	var id int64
	err := ten.WriteNoHooks(context.Background(), func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO users(username, password_sealed, parent_id, enabled, expiration, profile_id, lookup_token, created_at, updated_at)
			VALUES ('cliuser', x'00', (SELECT id FROM managers ORDER BY id LIMIT 1), 1, '2030-01-01 00:00:00', ?, ?, ?, ?)`,
			k.plan, app.RandomToken(10), app.StampNow(), app.StampNow())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	k.acct(rfc2866.AcctStatusType_Value_Start, "cliuser", "s-cli", 0, 0)
	k.acct(rfc2866.AcctStatusType_Value_Stop, "cliuser", "s-cli", 4000, 10)
	if got := k.scalar(`SELECT user_id FROM radius_sessions WHERE acct_session_id = 's-cli'`); got.Int64 != id {
		t.Fatalf("session user_id %v, want %d", got, id)
	}
	if got := k.scalar(`SELECT used_bytes FROM users WHERE id = ?`, id); got.Int64 != 4000 {
		t.Fatalf("used_bytes %v", got)
	}
}

// TestUnknownSessionLinkedWhenSubscriberAppears: a session filed as unknown
// is linked to its subscriber on the next Interim once the subscriber
// exists, and everything it used is charged once.
func TestUnknownSessionLinkedWhenSubscriberAppears(t *testing.T) {
	t.Parallel()
	k := newRYWKit(t)
	k.acct(rfc2866.AcctStatusType_Value_Start, "latecomer", "s-late", 0, 0)
	k.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "latecomer", "s-late", 1000, 30)
	if got := k.scalar(`SELECT user_id FROM radius_sessions WHERE acct_session_id = 's-late'`); got.Valid {
		t.Fatalf("linked before the subscriber exists: %v", got)
	}
	if got := k.scalar(`SELECT COUNT(*) FROM radius_sessions WHERE acct_session_id = 's-late' AND kind = 'unknown'`); got.Int64 != 1 {
		t.Fatal("not filed as unknown")
	}
	id := k.createUser("latecomer")
	k.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "latecomer", "s-late", 3000, 60)
	if got := k.scalar(`SELECT user_id FROM radius_sessions WHERE acct_session_id = 's-late' AND kind = 'subscriber'`); got.Int64 != id {
		t.Fatalf("not linked: %v", got)
	}
	if got := k.scalar(`SELECT used_bytes FROM users WHERE id = ?`, id); got.Int64 != 3000 {
		t.Fatalf("used_bytes %v after linking, want 3000 (all of the session)", got)
	}
	// The same Interim again and the Stop charge only what is new.
	k.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "latecomer", "s-late", 3000, 60)
	k.acct(rfc2866.AcctStatusType_Value_Stop, "latecomer", "s-late", 5000, 90)
	if got := k.scalar(`SELECT used_bytes FROM users WHERE id = ?`, id); got.Int64 != 5000 {
		t.Fatalf("used_bytes %v after Stop, want 5000", got)
	}
	if got := k.scalar(`SELECT used_seconds FROM users WHERE id = ?`, id); got.Int64 != 90 {
		t.Fatalf("used_seconds %v after Stop, want 90", got)
	}
}
