package devgw

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"xr/app"
	"xr/app/aaa"
	"xr/app/monitoring"
	"xr/internal/sshtest"
	"xr/internal/xrtest"
)

// env is one App (egress to loopback allowed, as --allow-private-egress),
// tenant acme with a NAS at 127.0.0.1 whose credentials reach an
// in-process SSH server, and an HTTP server running the gateway.
type env struct {
	t     testing.TB
	a     *app.App
	ten   *app.Tenant
	sys   *app.Actor
	ssh   *sshtest.Server
	nasID int64
	ts    *httptest.Server
	clock *fakeClock
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newEnv(t testing.TB) *env {
	t.Helper()
	a := xrtest.Seeded(t, app.Config{AllowPrivateEgress: true}, "acme", aaa.Module, monitoring.Module, Module)
	t.Cleanup(a.Close)
	ten := xrtest.Acquire(t, a, "acme")
	e := &env{t: t, a: a, ten: ten, sys: xrtest.System(t, ten), ssh: sshtest.Start(t, "admin", "router-pass"),
		clock: &fakeClock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}}
	a.SetClock(e.clock.now)
	ctx := context.Background()
	n, err := aaa.CreateNAS(ctx, e.sys, aaa.NASInput{Name: app.Opt[string]{Set: true, V: "core"}, IP: app.Opt[string]{Set: true, V: "127.0.0.1"},
		Secret: app.Opt[string]{Set: true, V: "a-long-shared-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	e.nasID = n.ID
	e.putCreds(KindNAS, n.ID)
	e.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := Serve(w, r, ten, "192.0.2.7"); err != nil {
			ae := app.Classify(err)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(ae.Status)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": ae.Code, "details": map[string]any{"reason": ae.Reason}}})
		}
	}))
	t.Cleanup(e.ts.Close)
	return e
}

func (e *env) putCreds(kind string, id int64) {
	e.t.Helper()
	_, err := PutCredentials(context.Background(), e.sys, kind, id, CredentialsInput{
		Port: app.Opt[int]{Set: true, V: e.ssh.Port}, Username: app.Opt[string]{Set: true, V: "admin"},
		Password: app.Opt[string]{Set: true, V: "router-pass"}})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) mint(kind string, id int64) *Ticket {
	e.t.Helper()
	tk, err := MintTicket(context.Background(), e.sys, TicketInput{Kind: kind, ID: id})
	if err != nil {
		e.t.Fatal(err)
	}
	return tk
}

// term is a WebSocket client of the gateway.
type term struct {
	t    testing.TB
	c    *websocket.Conn
	mu   sync.Mutex
	out  strings.Builder
	ctrl []Control
	done chan struct{}
	err  error
	// more is signalled on each output frame (benchmarks wait on it).
	more chan struct{}
}

func (e *env) dial(tk *Ticket) (*term, *http.Response, error) {
	e.t.Helper()
	u := "ws" + strings.TrimPrefix(e.ts.URL, "http") + tk.URL
	c, res, err := websocket.Dial(context.Background(), u, nil)
	if err != nil {
		return nil, res, err
	}
	tm := &term{t: e.t, c: c, done: make(chan struct{}), more: make(chan struct{}, 1)}
	go tm.read()
	e.t.Cleanup(func() { c.CloseNow() })
	return tm, res, nil
}

func (tm *term) read() {
	defer close(tm.done)
	for {
		typ, b, err := tm.c.Read(context.Background())
		tm.mu.Lock()
		if err != nil {
			tm.err = err
			tm.mu.Unlock()
			return
		}
		if typ == websocket.MessageBinary {
			tm.out.Write(b)
			select {
			case tm.more <- struct{}{}:
			default:
			}
		} else {
			var m Control
			if json.Unmarshal(b, &m) == nil {
				tm.ctrl = append(tm.ctrl, m)
			}
		}
		tm.mu.Unlock()
	}
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if err := tm.c.Write(context.Background(), websocket.MessageBinary, []byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

func (tm *term) control(m Control) {
	tm.t.Helper()
	b, _ := json.Marshal(m)
	if err := tm.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		tm.t.Fatal(err)
	}
}

func (tm *term) output() string { tm.mu.Lock(); defer tm.mu.Unlock(); return tm.out.String() }

// waitOut polls until the output holds s.
func (tm *term) waitOut(s string) {
	tm.t.Helper()
	xrtest.Eventually(tm.t, "output "+s, func() bool { return strings.Contains(tm.output(), s) })
}

// waitControl polls until a control message of typ arrived and returns it.
func (tm *term) waitControl(typ string) Control {
	tm.t.Helper()
	var got Control
	xrtest.Eventually(tm.t, "control "+typ, func() bool {
		tm.mu.Lock()
		defer tm.mu.Unlock()
		for _, m := range tm.ctrl {
			if m.Type == typ {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// waitClosed polls until the socket is closed.
func (tm *term) waitClosed() error {
	tm.t.Helper()
	xrtest.Eventually(tm.t, "socket closed", func() bool {
		select {
		case <-tm.done:
			return true
		default:
			return false
		}
	})
	return tm.err
}

func (e *env) session(sid int64) *Session {
	e.t.Helper()
	s, err := GetSession(context.Background(), e.sys, sid)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) waitEnded(sid int64) *Session {
	e.t.Helper()
	var s *Session
	xrtest.Eventually(e.t, "session ended", func() bool { s = e.session(sid); return s.State == StateEnded })
	return s
}

func TestConsoleRunsCommandResizesAndRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm, _, err := e.dial(e.mint(KindNAS, e.nasID))
	if err != nil {
		t.Fatal(err)
	}
	tm.control(Control{Type: "resize", Cols: 100, Rows: 30})
	op := tm.waitControl("opened")
	tm.waitOut("$ ")
	tm.send("size\r")
	tm.waitOut("100x30")
	tm.send("echo hello\r")
	tm.waitOut("\r\nhello\r\n")
	tm.control(Control{Type: "resize", Cols: 120, Rows: 40})
	tm.waitOut("[size 120x40]")

	// Live while open; the host key was trusted on first use.
	if s := e.session(op.SessionID); s.State != StateLive || s.RemoteAddr != "192.0.2.7" || s.TargetName != "core" {
		t.Fatalf("live row %+v", s)
	}
	cv, err := GetCredentials(context.Background(), e.sys, KindNAS, e.nasID)
	if err != nil || cv.HostKey != e.ssh.Fingerprint() || cv.HostKeyPending != "" || !cv.HasPassword {
		t.Fatalf("credentials %+v %v", cv, err)
	}

	tm.control(Control{Type: "close"})
	if c := tm.waitControl("closed"); c.Reason != ReasonClientClosed {
		t.Fatalf("closed %+v", c)
	}
	var ce websocket.CloseError
	if err := tm.waitClosed(); !errors.As(err, &ce) || ce.Code != websocket.StatusNormalClosure {
		t.Fatalf("close %v", err)
	}
	s := e.waitEnded(op.SessionID)
	if s.EndReason != ReasonClientClosed || s.BytesIn != int64(len("size\recho hello\r")) || s.BytesOut < int64(len(tm.output())) || !s.Recorded {
		t.Fatalf("ended row %+v (output %d bytes)", s, len(tm.output()))
	}

	// The recording replays the output: header, then output events whose
	// data is what the client saw; the resize is an "r" event.
	rc, name, err := OpenRecording(context.Background(), e.sys, op.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if !strings.HasSuffix(name, ".cast") {
		t.Fatalf("name %q", name)
	}
	sc := bufio.NewScanner(rc)
	sc.Scan()
	var hdr map[string]any
	if err := json.Unmarshal(sc.Bytes(), &hdr); err != nil || hdr["version"] != float64(2) || hdr["width"] != float64(100) || hdr["height"] != float64(30) {
		t.Fatalf("header %s %v", sc.Bytes(), err)
	}
	var replay strings.Builder
	resized := false
	for sc.Scan() {
		var ev []any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || len(ev) != 3 {
			t.Fatalf("event %s %v", sc.Bytes(), err)
		}
		switch ev[1] {
		case "o":
			replay.WriteString(ev[2].(string))
		case "r":
			resized = resized || ev[2] == "120x40"
		default:
			t.Fatalf("event kind %v (input must not be recorded)", ev[1])
		}
	}
	if replay.String() != tm.output() || !resized {
		t.Fatalf("replay %q\nwant %q (resize %v)", replay.String(), tm.output(), resized)
	}

	// Events for webhooks.
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM events WHERE type IN ('console.opened','console.closed')`); n != 2 {
		t.Fatalf("%d console events", n)
	}
}

func TestTicketSingleUseAndExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tk := e.mint(KindNAS, e.nasID)
	tm, _, err := e.dial(tk)
	if err != nil {
		t.Fatal(err)
	}
	tm.control(Control{Type: "resize", Cols: 80, Rows: 24})
	tm.waitControl("opened")
	logins := e.ssh.Logins()

	// The same ticket again: 401 before any upgrade or SSH connection.
	for _, c := range []struct {
		url, reason string
	}{{tk.URL, "ticket_invalid"}, {WSPath, "ticket_required"}, {WSPath + "?ticket=forged", "ticket_invalid"}} {
		_, res, err := e.dial(&Ticket{URL: c.url})
		if err == nil || res == nil || res.StatusCode != 401 {
			t.Fatalf("%s: %v %v", c.url, res, err)
		}
		b, _ := io.ReadAll(res.Body)
		if !strings.Contains(string(b), `"`+c.reason+`"`) {
			t.Fatalf("%s: %s", c.url, b)
		}
	}
	// An expired ticket.
	tk2 := e.mint(KindNAS, e.nasID)
	e.clock.add(TicketTTL + 2*time.Second)
	if _, res, err := e.dial(tk2); err == nil || res == nil || res.StatusCode != 401 {
		t.Fatalf("expired: %v %v", res, err)
	}
	if e.ssh.Logins() != logins {
		t.Fatalf("a refused ticket reached the device")
	}
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM devgw_tickets`); n != 0 {
		t.Fatalf("%d tickets left", n)
	}
}

func TestHostKeyChangeRefusedUntilAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	open := func() *term {
		tm, _, err := e.dial(e.mint(KindNAS, e.nasID))
		if err != nil {
			t.Fatal(err)
		}
		tm.control(Control{Type: "resize", Cols: 80, Rows: 24})
		return tm
	}
	tm := open()
	tm.waitControl("opened")
	tm.control(Control{Type: "close"})
	tm.waitClosed()
	first := e.ssh.Fingerprint()

	e.ssh.SetHostKey(sshtest.NewSigner(t))
	tm = open()
	if c := tm.waitControl("error"); c.Reason != "host_key_changed" {
		t.Fatalf("error %+v", c)
	}
	tm.waitClosed()
	cv, err := GetCredentials(context.Background(), e.sys, KindNAS, e.nasID)
	if err != nil || cv.HostKey != first || cv.HostKeyPending != e.ssh.Fingerprint() {
		t.Fatalf("credentials %+v %v", cv, err)
	}
	_, err = AcceptHostKey(context.Background(), e.sys, KindNAS, e.nasID, AcceptHostKeyInput{Fingerprint: first})
	xrtest.WantError(t, err, 409, app.CodeConflict, "host_key_mismatch")
	cv, err = AcceptHostKey(context.Background(), e.sys, KindNAS, e.nasID, AcceptHostKeyInput{Fingerprint: e.ssh.Fingerprint()})
	if err != nil || cv.HostKey != e.ssh.Fingerprint() || cv.HostKeyPending != "" {
		t.Fatalf("accept %+v %v", cv, err)
	}
	_, err = AcceptHostKey(context.Background(), e.sys, KindNAS, e.nasID, AcceptHostKeyInput{Fingerprint: e.ssh.Fingerprint()})
	xrtest.WantError(t, err, 409, app.CodeConflict, "no_pending_host_key")
	tm = open()
	tm.waitControl("opened")
}

func TestCloseSessionEndsSocket(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tm, _, err := e.dial(e.mint(KindNAS, e.nasID))
	if err != nil {
		t.Fatal(err)
	}
	tm.control(Control{Type: "resize", Cols: 80, Rows: 24})
	op := tm.waitControl("opened")
	tm.waitOut("$ ")
	if _, err := CloseSession(context.Background(), e.sys, op.SessionID); err != nil {
		t.Fatal(err)
	}
	// CloseSession returns once the row is ended: the socket is closed.
	if s := e.session(op.SessionID); s.State != StateEnded || s.EndReason != ReasonClosedByStaff {
		t.Fatalf("row %+v", s)
	}
	if c := tm.waitControl("closed"); c.Reason != ReasonClosedByStaff {
		t.Fatalf("closed %+v", c)
	}
	tm.waitClosed()
	_, err = CloseSession(context.Background(), e.sys, op.SessionID)
	xrtest.WantError(t, err, 409, app.CodeConflict, "session_not_live")
}

func TestIdleTimeoutAndMaxDurationByTheAppClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	open := func() (*term, int64) {
		tm, _, err := e.dial(e.mint(KindNAS, e.nasID))
		if err != nil {
			t.Fatal(err)
		}
		tm.control(Control{Type: "resize", Cols: 80, Rows: 24})
		op := tm.waitControl("opened")
		tm.waitOut("$ ")
		return tm, op.SessionID
	}
	tm, sid := open()
	e.clock.add(9 * time.Minute) // under the 10 min default
	tm.send("echo still here\r")
	tm.waitOut("still here\r\n")
	e.clock.add(10*time.Minute + time.Second)
	if c := tm.waitControl("closed"); c.Reason != ReasonIdle {
		t.Fatalf("closed %+v", c)
	}
	if s := e.waitEnded(sid); s.EndReason != ReasonIdle {
		t.Fatalf("row %+v", s)
	}

	// Max duration: activity every few minutes does not keep it open.
	xrtest.Exec(t, e.ten, `INSERT INTO settings(key, value) VALUES ('devgw_max_duration_seconds', '900')`)
	tm, sid = open()
	for range 3 {
		e.clock.add(5 * time.Minute)
		tm.send("\r")
	}
	e.clock.add(time.Second)
	if c := tm.waitControl("closed"); c.Reason != ReasonMaxDuration {
		t.Fatalf("closed %+v", c)
	}
	e.waitEnded(sid)
}

func TestConsoleLimitsAndRemoteExit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	xrtest.Exec(t, e.ten, `INSERT INTO settings(key, value) VALUES ('devgw_max_consoles_per_manager', '1')`)
	tk := e.mint(KindNAS, e.nasID)
	tk2 := e.mint(KindNAS, e.nasID) // minted while none is open
	tm, _, err := e.dial(tk)
	if err != nil {
		t.Fatal(err)
	}
	tm.control(Control{Type: "resize", Cols: 80, Rows: 24})
	op := tm.waitControl("opened")
	_, err = MintTicket(context.Background(), e.sys, TicketInput{Kind: KindNAS, ID: e.nasID})
	xrtest.WantError(t, err, 409, app.CodeConflict, "console_limit_manager")
	_, res, err := e.dial(tk2)
	if err == nil || res.StatusCode != 409 {
		t.Fatalf("over the cap at upgrade: %v %v", res, err)
	}
	// The shell exits: the console ends with remote_exit and frees its slot.
	tm.send("exit\r")
	if c := tm.waitControl("closed"); c.Reason != ReasonRemoteExit {
		t.Fatalf("closed %+v", c)
	}
	e.waitEnded(op.SessionID)
	xrtest.Eventually(t, "slot freed", func() bool {
		_, err := MintTicket(context.Background(), e.sys, TicketInput{Kind: KindNAS, ID: e.nasID})
		return err == nil
	})
}

func TestMintRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	// A manager without either code: 403 before validation.
	noPerm := &app.Actor{Tenant: e.ten, ManagerID: e.sys.ManagerID, Kind: app.CredSession, Perms: map[app.Perm]bool{}, TenantWide: true}
	_, err := MintTicket(ctx, noPerm, TicketInput{Kind: "bogus"})
	xrtest.WantError(t, err, 403, app.CodeForbidden, "insufficient_permissions")
	// Device code only: a NAS is refused, a device is reachable.
	devOnly := &app.Actor{Tenant: e.ten, ManagerID: e.sys.ManagerID, Kind: app.CredSession, TenantWide: true,
		Perms: map[app.Perm]bool{PermNasDevicesRemote: true}}
	_, err = MintTicket(ctx, devOnly, TicketInput{Kind: KindNAS, ID: e.nasID})
	xrtest.WantError(t, err, 403, app.CodeForbidden, "insufficient_permissions")
	_, err = MintTicket(ctx, e.sys, TicketInput{Kind: "router", ID: 1})
	xrtest.WantError(t, err, 400, app.CodeValidation, "invalid_kind")
	_, err = MintTicket(ctx, e.sys, TicketInput{Kind: KindNAS, ID: 999})
	xrtest.WantError(t, err, 404, app.CodeNotFound, "not_found")

	// A device without credentials, then with.
	xrtest.Exec(t, e.ten, `INSERT INTO settings(key, value) VALUES ('monitoring_network_ranges', '"127.0.0.0/8"')`)
	d, err := monitoring.CreateDevice(ctx, e.sys, monitoring.DeviceInput{Name: "edge", Address: "127.0.0.2"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = MintTicket(ctx, devOnly, TicketInput{Kind: KindDevice, ID: d.ID})
	xrtest.WantError(t, err, 409, app.CodeConflict, "credentials_missing")
	e.putCreds(KindDevice, d.ID)
	if _, err := MintTicket(ctx, devOnly, TicketInput{Kind: KindDevice, ID: d.ID}); err != nil {
		t.Fatal(err)
	}

	// Another tenant's device answers like a missing one.
	xrtest.Tenant(t, e.a, "other")
	other := xrtest.Acquire(t, e.a, "other")
	_, err = MintTicket(ctx, xrtest.System(t, other), TicketInput{Kind: KindDevice, ID: d.ID})
	xrtest.WantError(t, err, 404, app.CodeNotFound, "not_found")
	_, err = GetCredentials(ctx, xrtest.System(t, other), KindNAS, e.nasID)
	xrtest.WantError(t, err, 404, app.CodeNotFound, "not_found")

	// Loopback is refused without --allow-private-egress; private space is not.
	if c := egressRefusal(&app.App{}, netipMust("127.0.0.1")); c != "loopback" {
		t.Fatalf("loopback: %q", c)
	}
	if c := egressRefusal(&app.App{}, netipMust("169.254.169.254")); c != "link_local" {
		t.Fatalf("metadata: %q", c)
	}
	if c := egressRefusal(&app.App{}, netipMust("10.1.2.3")); c != "" {
		t.Fatalf("private: %q", c)
	}
	if c := egressRefusal(e.a, netipMust("224.0.0.1")); c != "multicast" {
		t.Fatalf("multicast: %q", c)
	}

	// Bad credentials input.
	_, err = PutCredentials(ctx, e.sys, KindNAS, e.nasID, CredentialsInput{Port: app.Opt[int]{Set: true, V: 70000}})
	xrtest.WantError(t, err, 400, app.CodeValidation, "invalid_port")
	_, err = PutCredentials(ctx, e.sys, KindNAS, e.nasID, CredentialsInput{PrivateKey: app.Opt[string]{Set: true, V: "not a key"}})
	xrtest.WantError(t, err, 400, app.CodeValidation, "invalid_private_key")
	// Secrets are sealed at rest.
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM devgw_credentials WHERE instr(CAST(password_sealed AS TEXT), 'router-pass') > 0`); n != 0 {
		t.Fatal("password stored in clear")
	}
}

func TestRecoverEndsRowsLeftLive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := xrtest.Exec(t, e.ten, `INSERT INTO devgw_sessions(manager_id, kind, target_id, state, started_at) VALUES (?, 'nas', ?, 'live', '2026-03-01 09:00:00')`, e.sys.ManagerID, e.nasID)
	n, err := Recover(context.Background(), e.ten)
	if err != nil || n != 1 {
		t.Fatalf("recover %d %v", n, err)
	}
	if s := e.session(id); s.State != StateEnded || s.EndReason != ReasonServerRestart {
		t.Fatalf("row %+v", s)
	}
	lq, err := app.ParseList(map[string][]string{"state": {"ended"}}, SessionListSpec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ListSessions(context.Background(), e.sys, lq)
	if err != nil || len(p.Rows) != 1 || p.Rows[0].ID != id {
		t.Fatalf("list %+v %v", p, err)
	}
}

func netipMust(s string) netip.Addr { return netip.MustParseAddr(s) }
