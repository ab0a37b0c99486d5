package aaa_test

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"database/sql"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"

	"xr/app"
	"xr/app/aaa"
	"xr/app/modules"
	"xr/app/webhooks"
	"xr/internal/xrtest"
	"xr/radiusd"
)

const secret = "e2e-shared-secret-1"

// rig is a tenant with a NAS on loopback behind a real RADIUS server.
type rig struct {
	t        testing.TB
	a        *app.App
	ten      *app.Tenant
	svc      *aaa.Service
	srv      *radiusd.Server
	auth     string
	acctAddr string
	coa      net.PacketConn // a fake NAS CoA port
	coaSeen  chan []byte
	ownerID  int64
	planID   int64
	fupPlan  int64
	poolPlan int64
}

func newRig(t testing.TB) *rig {
	t.Helper()
	return newRigWith(t, nil)
}

// newRigWith is newRig whose server setup may change the server before it
// starts and return a RadSec listener for it to serve.
func newRigWith(t testing.TB, setup func(r *rig, s *radiusd.Server) net.Listener) *rig {
	t.Helper()
	a := xrtest.Lab(t, modules.All()...) // the fake NAS is on loopback
	ctx := context.Background()
	_, owner := xrtest.CreateTenant(t, a, app.NewTenant{Slug: "isp"})
	ten := xrtest.Acquire(t, a, "isp")
	r := &rig{t: t, a: a, ten: ten, ownerID: owner, coaSeen: make(chan []byte, 16)}
	// The fake NAS listens for Disconnect/CoA on a loopback port.
	var err error
	r.coa, err = net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go r.fakeNAS()
	coaPort := r.coa.LocalAddr().(*net.UDPAddr).Port
	if _, err := aaa.CreateNAS(ctx, xrtest.System(t, ten), aaa.NASInput{Name: app.Opt[string]{Set: true, V: "lo"}, IP: app.Opt[string]{Set: true, V: "127.0.0.1"},
		Secret: app.Opt[string]{Set: true, V: secret}, CoAPort: app.Opt[int]{Set: true, V: coaPort}}); err != nil {
		t.Fatal(err)
	}
	r.planID = r.exec(`INSERT INTO profiles(name, price, duration_days, bytes_limit, rate_down_kbps, rate_up_kbps, simultaneous_use, created_at, updated_at)
		VALUES ('10M', 10000, 30, 0, 10240, 2048, 1, ?, ?)`, app.StampNow(), app.StampNow())
	r.fupPlan = r.exec(`INSERT INTO profiles(name, price, duration_days, bytes_limit, rate_down_kbps, rate_up_kbps, fup_rate_down_kbps, fup_rate_up_kbps, simultaneous_use, created_at, updated_at)
		VALUES ('FUP', 10000, 30, 0, 20480, 4096, 512, 256, 2, ?, ?)`, app.StampNow(), app.StampNow())
	r.poolPlan = r.exec(`INSERT INTO profiles(name, price, duration_days, expired_pool, simultaneous_use, created_at, updated_at)
		VALUES ('Pool', 10000, 30, 'expired-pool', 1, ?, ?)`, app.StampNow(), app.StampNow())

	r.svc = aaa.New(a)
	r.svc.PollEvery = 20 * time.Millisecond
	backend := radiusd.NewAppBackend(r.svc, &radiusd.CoAClient{InitialTimeout: 100 * time.Millisecond, MaxAttempts: 2})
	r.srv = &radiusd.Server{Directory: backend, Authorizer: backend, Accounter: backend, Logger: a.Log, BatchWait: -1}
	authC, _ := net.ListenPacket("udp", "127.0.0.1:0")
	acctC, _ := net.ListenPacket("udp", "127.0.0.1:0")
	r.auth, r.acctAddr = authC.LocalAddr().String(), acctC.LocalAddr().String()
	var radsec net.Listener
	if setup != nil {
		radsec = setup(r, r.srv)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	go r.svc.Run(runCtx)
	go r.srv.ServeListeners(radiusd.Listeners{Auth: authC, Acct: acctC, RadSec: radsec})
	t.Cleanup(func() {
		sctx, c2 := context.WithTimeout(context.Background(), 5*time.Second)
		defer c2()
		r.srv.Shutdown(sctx)
		cancel()
		r.svc.Close()
		r.coa.Close()
	})
	return r
}

func (r *rig) exec(q string, args ...any) int64 {
	r.t.Helper()
	return xrtest.Exec(r.t, r.ten, q, args...)
}

// user inserts a subscriber; mut edits the column values before insert.
func (r *rig) user(name, password string, profile int64, mut map[string]any) int64 {
	cols := map[string]any{"username": name, "password_sealed": r.a.Keys.Seal([]byte(password)), "parent_id": r.ownerID,
		"profile_id": profile, "enabled": 1, "expiration": app.FormatTime(time.Now().Add(72 * time.Hour)),
		"lookup_token": app.RandomToken(12), "created_at": app.StampNow(), "updated_at": app.StampNow()}
	for k, v := range mut {
		cols[k] = v
	}
	var names, marks []string
	var args []any
	for k, v := range cols {
		names = append(names, k)
		marks = append(marks, "?")
		args = append(args, v)
	}
	return r.exec(`INSERT INTO users(`+strings.Join(names, ",")+`) VALUES (`+strings.Join(marks, ",")+`)`, args...)
}

func (r *rig) fakeNAS() {
	buf := make([]byte, 4096)
	for {
		n, from, err := r.coa.ReadFrom(buf)
		if err != nil {
			return
		}
		req, err := radius.Parse(buf[:n], []byte(secret))
		if err != nil {
			continue
		}
		r.coaSeen <- append([]byte{}, buf[:n]...)
		resp := req.Response(radius.CodeDisconnectACK)
		if req.Code == radius.CodeCoARequest {
			resp = req.Response(radius.CodeCoAACK)
		}
		b, _ := resp.Encode()
		r.coa.WriteTo(b, from)
	}
}

// accessRequest sends PAP with a Message-Authenticator.
func (r *rig) accessRequest(user, password, mac string) *radius.Packet {
	r.t.Helper()
	p := radius.New(radius.CodeAccessRequest, []byte(secret))
	rfc2865.UserName_SetString(p, user)
	rfc2865.UserPassword_SetString(p, password)
	if mac != "" {
		rfc2865.CallingStationID_SetString(p, mac)
	}
	rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
	b, _ := p.Encode()
	h := hmac.New(md5.New, []byte(secret))
	h.Write(b)
	rfc2869.MessageAuthenticator_Set(p, h.Sum(nil))
	return r.send(p, r.auth)
}

func (r *rig) acct(status rfc2866.AcctStatusType, user, sid string, in, out uint32, secs uint32) *radius.Packet {
	r.t.Helper()
	p := radius.New(radius.CodeAccountingRequest, []byte(secret))
	rfc2866.AcctStatusType_Set(p, status)
	if user != "" {
		rfc2865.UserName_SetString(p, user)
	}
	if sid != "" {
		rfc2866.AcctSessionID_SetString(p, sid)
	}
	rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(in))
	rfc2866.AcctOutputOctets_Set(p, rfc2866.AcctOutputOctets(out))
	rfc2866.AcctSessionTime_Set(p, rfc2866.AcctSessionTime(secs))
	return r.send(p, r.acctAddr)
}

func (r *rig) send(p *radius.Packet, addr string) *radius.Packet {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c := radius.Client{Retry: 0}
	resp, err := c.Exchange(ctx, p, addr)
	if err != nil {
		r.t.Fatalf("exchange: %v", err)
	}
	return resp
}

func expectReject(t *testing.T, resp *radius.Packet, msg string) {
	t.Helper()
	if resp.Code != radius.CodeAccessReject {
		t.Fatalf("want reject, got %v", resp.Code)
	}
	if got := rfc2865.ReplyMessage_GetString(resp); !strings.Contains(got, msg) {
		t.Fatalf("reply message %q, want it to contain %q", got, msg)
	}
}

func TestAuthorizationPolicy(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	past := app.FormatTime(time.Now().Add(-time.Hour))
	r.user("alice", "alice-pw", r.planID, map[string]any{"static_ip": "10.9.8.7"})
	r.user("bob", "bob-pw", r.planID, map[string]any{"enabled": 0})
	r.user("carol", "carol-pw", r.planID, map[string]any{"expiration": past})
	r.user("dave", "dave-pw", r.planID, map[string]any{"expiration": nil})
	r.user("erin", "erin-pw", r.planID, map[string]any{"bytes_limit": 1000, "used_bytes": 1000})
	r.user("frank", "frank-pw", r.fupPlan, map[string]any{"bytes_limit": 1000, "used_bytes": 5000})
	r.user("gina", "gina-pw", r.planID, map[string]any{"mac_lock_enabled": 1, "mac_locked_addrs": `["AA:BB:CC:DD:EE:FF"]`})
	r.user("hank", "hank-pw", r.poolPlan, map[string]any{"expiration": past})
	r.user("ivy", "ivy-pw", r.planID, map[string]any{"seconds_limit": 100, "used_seconds": 100})
	r.user("jack", "jack-pw", r.planID, map[string]any{"deleted_at": app.StampNow()})

	resp := r.accessRequest("alice", "alice-pw", "")
	if resp.Code != radius.CodeAccessAccept {
		t.Fatalf("alice: %v %q", resp.Code, rfc2865.ReplyMessage_GetString(resp))
	}
	if st := rfc2865.SessionTimeout_Get(resp); st < 71*3600 || st > 72*3600 {
		t.Fatalf("session timeout %d", st)
	}
	if ip := rfc2865.FramedIPAddress_Get(resp); ip.String() != "10.9.8.7" {
		t.Fatalf("framed ip %v", ip)
	}
	if cls := string(rfc2865.Class_Get(resp)); !strings.HasPrefix(cls, "xr:isp:") {
		t.Fatalf("class %q", cls)
	}
	if ii := rfc2869.AcctInterimInterval_Get(resp); ii != 300 {
		t.Fatalf("interim %d", ii)
	}
	if !hasVendorAttr(resp, 14988, 8, "2048k/10240k") {
		t.Fatalf("no Mikrotik-Rate-Limit 2048k/10240k")
	}
	expectReject(t, r.accessRequest("alice", "wrong", ""), "")
	expectReject(t, r.accessRequest("nobody", "x", ""), "")
	expectReject(t, r.accessRequest("bob", "bob-pw", ""), "suspended")
	expectReject(t, r.accessRequest("carol", "carol-pw", ""), "expired")
	expectReject(t, r.accessRequest("dave", "dave-pw", ""), "not active")
	expectReject(t, r.accessRequest("erin", "erin-pw", ""), "quota")
	expectReject(t, r.accessRequest("gina", "gina-pw", "11-22-33-44-55-66"), "device")
	expectReject(t, r.accessRequest("ivy", "ivy-pw", ""), "time quota")
	expectReject(t, r.accessRequest("jack", "jack-pw", ""), "")
	// A wrong password on a refused account says nothing about the account.
	if got := rfc2865.ReplyMessage_GetString(r.accessRequest("bob", "nope", "")); strings.Contains(got, "suspended") {
		t.Fatalf("refusal reason leaked before the password check: %q", got)
	}
	if resp := r.accessRequest("gina", "gina-pw", "aabb.ccdd.eeff"); resp.Code != radius.CodeAccessAccept {
		t.Fatalf("gina with her MAC: %v", resp.Code)
	}
	resp = r.accessRequest("frank", "frank-pw", "")
	if resp.Code != radius.CodeAccessAccept || !hasVendorAttr(resp, 14988, 8, "256k/512k") {
		t.Fatalf("frank should get the FUP rate: %v", resp.Code)
	}
	resp = r.accessRequest("hank", "hank-pw", "")
	if resp.Code != radius.CodeAccessAccept || rfc2869.FramedPool_GetString(resp) != "expired-pool" {
		t.Fatalf("hank should land in the expired pool: %v %q", resp.Code, rfc2869.FramedPool_GetString(resp))
	}
}

func hasVendorAttr(p *radius.Packet, vendor uint32, typ byte, want string) bool {
	for _, avp := range p.Attributes {
		if avp.Type != rfc2865.VendorSpecific_Type {
			continue
		}
		v := avp.Attribute
		if len(v) < 8 {
			continue
		}
		id := uint32(v[0])<<24 | uint32(v[1])<<16 | uint32(v[2])<<8 | uint32(v[3])
		if id == vendor && v[4] == typ && string(v[6:6+int(v[5])-2]) == want {
			return true
		}
	}
	return false
}

func (r *rig) session(sid string) (open bool, in, out, charged int64, userID sql.NullInt64) {
	r.t.Helper()
	var stop sql.NullString
	err := r.ten.DB.R.QueryRow(`SELECT stop_time, input_octets, output_octets, charged_bytes, user_id FROM radius_sessions WHERE acct_session_id = ? ORDER BY id DESC LIMIT 1`, sid).
		Scan(&stop, &in, &out, &charged, &userID)
	if err != nil {
		r.t.Fatalf("session %s: %v", sid, err)
	}
	return !stop.Valid, in, out, charged, userID
}

func (r *rig) used(user string) int64 {
	var n int64
	r.ten.DB.R.QueryRow(`SELECT used_bytes FROM users WHERE username = ?`, user).Scan(&n)
	return n
}

// events counts the outbox rows that record a fact under key (a row may
// carry several keys: app.EventKeysSep).
func (r *rig) events(key string) int {
	var n int
	r.ten.DB.R.QueryRow(`SELECT COUNT(*) FROM events WHERE ',' || type || ',' LIKE '%,' || ? || ',%'`, key).Scan(&n)
	return n
}

// subscribe adds an enabled webhook endpoint wanting keys (none: every
// key): session events are written only when someone wants them.
func (r *rig) subscribe(keys ...string) int64 {
	r.t.Helper()
	r.a.Cfg.AllowPrivateEgress = true
	in := webhooks.EndpointInput{Name: app.Opt[string]{Set: true, V: "sink"}, URL: app.Opt[string]{Set: true, V: "http://127.0.0.1:9/hook"}}
	if len(keys) == 0 {
		in.AllEvents = app.Opt[bool]{Set: true, V: true}
	} else {
		in.Events = app.Opt[[]string]{Set: true, V: keys}
	}
	ep, err := webhooks.CreateEndpoint(context.Background(), xrtest.System(r.t, r.ten), in)
	if err != nil {
		r.t.Fatal(err)
	}
	return ep.ID
}

func TestAccountingLifecycle(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.subscribe()
	r.user("alice", "pw", r.planID, map[string]any{"bytes_limit": 10000})
	if resp := r.acct(rfc2866.AcctStatusType_Value_Start, "alice", "s1", 0, 0, 0); resp.Code != radius.CodeAccountingResponse {
		t.Fatalf("start: %v", resp.Code)
	}
	r.acct(rfc2866.AcctStatusType_Value_Start, "alice", "s1", 0, 0, 0) // a retransmitted Start
	var n int
	r.ten.DB.R.QueryRow(`SELECT COUNT(*) FROM radius_sessions WHERE acct_session_id = 's1'`).Scan(&n)
	if n != 1 {
		t.Fatalf("duplicate start made %d rows", n)
	}
	// While alice is online, her second login hits simultaneous use (1).
	expectReject(t, r.accessRequest("alice", "pw", ""), "already connected")

	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "alice", "s1", 3000, 1000, 60)
	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "alice", "s1", 3000, 1000, 60) // same counters again
	if got := r.used("alice"); got != 4000 {
		t.Fatalf("used after interim = %d, want 4000", got)
	}
	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "alice", "s1", 6000, 2500, 120) // 8500: crosses 80 %
	if got := r.events("usage.threshold"); got != 1 {
		t.Fatalf("usage.threshold events = %d, want 1", got)
	}
	r.acct(rfc2866.AcctStatusType_Value_Stop, "alice", "s1", 7000, 2500, 130)
	open, in, out, charged, _ := r.session("s1")
	if open || in != 7000 || out != 2500 || charged != 9500 {
		t.Fatalf("after stop: open=%v in=%d out=%d charged=%d", open, in, out, charged)
	}
	if got := r.used("alice"); got != 9500 {
		t.Fatalf("used = %d, want 9500", got)
	}
	r.acct(rfc2866.AcctStatusType_Value_Stop, "alice", "s1", 7000, 2500, 130)          // repeated Stop
	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "alice", "s1", 9000, 2500, 140) // late Interim
	if got := r.used("alice"); got != 9500 {
		t.Fatalf("a repeated stop or late interim charged again: %d", got)
	}
	if r.events("session.ended") != 1 || r.events("user.disconnected") != 1 || r.events("session.started") != 1 {
		t.Fatalf("events: started %d ended %d disconnected %d", r.events("session.started"), r.events("session.ended"), r.events("user.disconnected"))
	}
	// Offline again: she may log in.
	if resp := r.accessRequest("alice", "pw", ""); resp.Code != radius.CodeAccessAccept {
		t.Fatalf("after stop: %v", resp.Code)
	}

	// An Interim with no Start opens the session (out of order).
	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "alice", "s2", 100, 0, 10)
	if open, _, _, charged, _ := r.session("s2"); !open || charged != 100 {
		t.Fatalf("interim without start: open=%v charged=%d", open, charged)
	}
	// Accounting-On closes every open session of the NAS.
	r.acct(rfc2866.AcctStatusType_Value_AccountingOn, "", "", 0, 0, 0)
	if open, _, _, _, _ := r.session("s2"); open {
		t.Fatal("Accounting-On left a session open")
	}
	// An unknown username is recorded with no subscriber.
	r.acct(rfc2866.AcctStatusType_Value_Start, "ghost", "g1", 0, 0, 0)
	if _, _, _, _, uid := r.session("g1"); uid.Valid {
		t.Fatal("unknown user got a user_id")
	}
}

func TestQuotaExhaustionDisconnects(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.subscribe("usage.threshold")
	r.user("zoe", "pw", r.planID, map[string]any{"bytes_limit": 1000})
	r.acct(rfc2866.AcctStatusType_Value_Start, "zoe", "z1", 0, 0, 0)
	r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, "zoe", "z1", 900, 200, 30)
	select {
	case b := <-r.coaSeen:
		if b[0] != byte(radius.CodeDisconnectRequest) {
			t.Fatalf("want a Disconnect-Request, got code %d", b[0])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no Disconnect-Request reached the NAS")
	}
	xrtest.Eventually(t, "disconnect outcome ok recorded", func() bool {
		var outcome string
		r.ten.DB.R.QueryRow(`SELECT disconnect_outcome FROM radius_sessions WHERE acct_session_id = 'z1'`).Scan(&outcome)
		return outcome == "ok"
	})
	if r.events("usage.threshold") != 2 {
		t.Fatalf("want 80%% and 100%% thresholds, got %d", r.events("usage.threshold"))
	}
	// The Accounting-Stop that follows confirms the disconnect.
	r.acct(rfc2866.AcctStatusType_Value_Stop, "zoe", "z1", 900, 200, 31)
	var reason string
	r.ten.DB.R.QueryRow(`SELECT close_reason FROM radius_sessions WHERE acct_session_id = 'z1'`).Scan(&reason)
	if reason != "disconnect_confirmed" {
		t.Fatalf("close reason %q, want disconnect_confirmed", reason)
	}
}

func TestIndexFollowsDatabase(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.user("kim", "pw", r.planID, nil)
	if resp := r.accessRequest("kim", "pw", ""); resp.Code != radius.CodeAccessAccept {
		t.Fatalf("kim: %v", resp.Code)
	}
	r.exec(`UPDATE users SET enabled = 0 WHERE username = 'kim'`)
	xrtest.Eventually(t, "disabled kim rejected", func() bool { return r.accessRequest("kim", "pw", "").Code == radius.CodeAccessReject })
	r.exec(`UPDATE users SET enabled = 1 WHERE username = 'kim'`)
	r.exec(`UPDATE profiles SET enabled = 0 WHERE id = ?`, r.planID)
	xrtest.Eventually(t, "disabled plan rejected", func() bool {
		resp := r.accessRequest("kim", "pw", "")
		return resp.Code == radius.CodeAccessReject && strings.Contains(rfc2865.ReplyMessage_GetString(resp), "plan")
	})
	// A subscriber created after the index loaded is found.
	r.user("lee", "pw", r.fupPlan, nil)
	xrtest.Eventually(t, "new subscriber lee accepted", func() bool { return r.accessRequest("lee", "pw", "").Code == radius.CodeAccessAccept })
}

func TestStaleSweep(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.user("sam", "pw", r.planID, nil)
	r.acct(rfc2866.AcctStatusType_Value_Start, "sam", "st1", 0, 0, 0)
	r.exec(`UPDATE radius_sessions SET update_time = ? WHERE acct_session_id = 'st1'`, app.FormatTime(time.Now().Add(-2*time.Hour)))
	n, err := r.svc.SweepStale(context.Background(), "isp")
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	var reason string
	r.ten.DB.R.QueryRow(`SELECT close_reason FROM radius_sessions WHERE acct_session_id = 'st1'`).Scan(&reason)
	if reason != "stale" {
		t.Fatalf("close reason %q", reason)
	}
	if resp := r.accessRequest("sam", "pw", ""); resp.Code != radius.CodeAccessAccept {
		t.Fatal("a swept session still counts for simultaneous use")
	}
}

func TestConcurrentAccountingExact(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	const users = 40
	for i := range users {
		r.user("u"+itoa(i), "pw", r.fupPlan, nil)
	}
	var wg sync.WaitGroup
	for i := range users {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			u, sid := "u"+itoa(i), "c"+itoa(i)
			r.acct(rfc2866.AcctStatusType_Value_Start, u, sid, 0, 0, 0)
			for k := 1; k <= 5; k++ {
				r.acct(rfc2866.AcctStatusType_Value_InterimUpdate, u, sid, uint32(k*1000), 0, uint32(k*10))
			}
			r.acct(rfc2866.AcctStatusType_Value_Stop, u, sid, 6000, 0, 60)
		}(i)
	}
	wg.Wait()
	var total int64
	r.ten.DB.R.QueryRow(`SELECT SUM(used_bytes) FROM users`).Scan(&total)
	if total != users*6000 {
		t.Fatalf("total charged %d, want %d", total, users*6000)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDisconnectUser(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	uid := r.user("dan", "pw", r.fupPlan, nil)
	r.acct(rfc2866.AcctStatusType_Value_Start, "dan", "d1", 0, 0, 0)
	r.acct(rfc2866.AcctStatusType_Value_Start, "dan", "d2", 0, 0, 0)
	n, err := r.svc.DisconnectUser(context.Background(), r.ten, uid)
	if err != nil || n != 2 {
		t.Fatalf("disconnect: %d %v", n, err)
	}
	for range 2 {
		select {
		case b := <-r.coaSeen:
			if b[0] != byte(radius.CodeDisconnectRequest) {
				t.Fatalf("code %d", b[0])
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the NAS got no Disconnect-Request")
		}
	}
	var ok int
	r.ten.DB.R.QueryRow(`SELECT COUNT(*) FROM radius_sessions WHERE user_id = ? AND disconnect_outcome = 'ok'`, uid).Scan(&ok)
	if ok != 2 {
		t.Fatalf("%d outcomes recorded", ok)
	}
	// Offline subscriber: nothing to do.
	other := r.user("eve", "pw", r.planID, nil)
	if n, err := r.svc.DisconnectUser(context.Background(), r.ten, other); n != 0 || err != nil {
		t.Fatalf("offline: %d %v", n, err)
	}
}
