package monitoring_test

import (
	"context"
	"database/sql"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"xr/app"
	"xr/app/egress"
	"xr/app/monitoring"
	"xr/app/outbox"
	"xr/app/probes"
	"xr/internal/xrtest"
)

var ctx = context.Background()

type env struct {
	a   *app.App
	t   *app.Tenant
	sys *app.Actor
	mu  sync.Mutex
	now time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	a := xrtest.Seeded(t, app.Config{AllowPrivateEgress: true}, "acme", outbox.Module, monitoring.Module) // probes reach loopback
	t.Cleanup(a.Close)
	ten := xrtest.Acquire(t, a, "acme")
	e := &env{a: a, t: ten, sys: xrtest.System(t, ten), now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	a.SetClock(func() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.now })
	// Loopback is not a default range: the tests declare it.
	xrtest.Exec(t, ten, `INSERT INTO settings(key, value) VALUES ('monitoring_network_ranges', '"127.0.0.0/8, 10.0.0.0/8"')`)
	return e
}

func (e *env) advance(d time.Duration) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
	return e.now
}

func (e *env) poll(t *testing.T) int {
	t.Helper()
	n, err := monitoring.PollDue(ctx, e.t, e.t.Now())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return ln
}

// A TCP listener is the device: up, then K failed probes make it down
// (alert, outage, device.down event, an email queued), then up again.
func TestDownAfterKFailuresThenUpWithFakeClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ln := listen(t, "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	d, err := monitoring.CreateDevice(ctx, e.sys, monitoring.DeviceInput{Name: "tower-1", Address: "127.0.0.1", Type: "router", ProbePort: port, PingInterval: 30})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := monitoring.SetNotify(ctx, e.sys, "device", d.ID, monitoring.NotifySettings{Emails: []string{"noc@isp.test"}, Rules: monitoring.Rules{DownAfter: 2}}); err != nil {
		t.Fatal(err)
	}
	if n := e.poll(t); n != 1 {
		t.Fatalf("polled %d devices, want 1", n)
	}
	got, err := monitoring.GetDevice(ctx, e.sys, "device", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "up" || got.Method != probes.MethodTCP || got.LatencyMs == nil || got.LastSeen.IsZero() {
		t.Fatalf("after a good probe: %+v", got)
	}
	// Not due again before its interval.
	e.advance(10 * time.Second)
	if n := e.poll(t); n != 0 {
		t.Fatalf("polled %d devices before the interval", n)
	}
	ln.Close()
	e.advance(20 * time.Second)
	e.poll(t)
	if got, _ = monitoring.GetDevice(ctx, e.sys, "device", d.ID); got.Status != "up" {
		t.Fatalf("one failure (K=2) already changed the status to %s", got.Status)
	}
	downAt := e.advance(30 * time.Second)
	e.poll(t)
	if got, _ = monitoring.GetDevice(ctx, e.sys, "device", d.ID); got.Status != "down" || !got.StatusSince.Equal(downAt) {
		t.Fatalf("after K failures: status %s since %v", got.Status, got.StatusSince)
	}
	alerts, err := monitoring.ListAlerts(ctx, e.sys, app.ListQuery{Page: 1, PageSize: 50, SortExpr: "a.id", Filters: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts.Rows) != 1 || alerts.Rows[0].Rule != "down" || alerts.Rows[0].State != "open" || alerts.Rows[0].Severity != "critical" {
		t.Fatalf("alerts after down: %+v", alerts.Rows)
	}
	downID := alerts.Rows[0].ID
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM events WHERE type = 'device.down'`); n != 1 {
		t.Fatalf("device.down events: %d", n)
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_outages WHERE device_id = ? AND ended_at IS NULL`, d.ID); n != 1 {
		t.Fatalf("open outages: %d", n)
	}
	dl, err := monitoring.AlertDeliveries(ctx, e.sys, downID)
	if err != nil {
		t.Fatal(err)
	}
	if len(dl) != 1 || dl[0].Channel != "email" || dl[0].To != "noc@isp.test" {
		t.Fatalf("deliveries: %+v", dl)
	}
	uc, err := monitoring.CountUnacked(ctx, e.sys)
	if err != nil || uc.Count != 1 || uc.Critical != 1 {
		t.Fatalf("unacked: %+v %v", uc, err)
	}
	// Still down: no second alert, no second event.
	e.advance(30 * time.Second)
	e.poll(t)
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_alerts`); n != 1 {
		t.Fatalf("alerts while still down: %d", n)
	}
	// Clear-all keeps an open unacknowledged alert.
	if cr, err := monitoring.ClearAlerts(ctx, e.sys); err != nil || cr.Deleted != 0 {
		t.Fatalf("clear-all: %+v %v", cr, err)
	}
	ln = listen(t, "127.0.0.1:"+strconv.Itoa(port))
	defer ln.Close()
	upAt := e.advance(30 * time.Second)
	e.poll(t)
	if got, _ = monitoring.GetDevice(ctx, e.sys, "device", d.ID); got.Status != "up" {
		t.Fatalf("after recovery: %s", got.Status)
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_alerts WHERE rule = 'down' AND state = 'resolved'`); n != 1 {
		t.Fatal("the down alert was not resolved")
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_alerts WHERE rule = 'up'`); n != 1 {
		t.Fatal("no up alert")
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM events WHERE type = 'device.up'`); n != 1 {
		t.Fatalf("device.up events: %d", n)
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM outbox_messages WHERE template = 'device.up'`); n != 1 {
		t.Fatalf("device.up messages: %d", n)
	}
	a, err := monitoring.AckAlert(ctx, e.sys, downID)
	if err != nil || !a.Acked {
		t.Fatalf("ack: %+v %v", a, err)
	}
	st, err := monitoring.GetStability(ctx, e.sys, "device", d.ID)
	if err != nil {
		t.Fatal(err)
	}
	w := st.Windows[0]
	// Probes: up, fail, fail, fail, up = 5, 2 ok; one outage of 60 s.
	if w.Window != "24h" || w.Probes != 5 || w.UptimePct == nil || *w.UptimePct != 40 || w.Outages != 1 || w.Flaps != 1 ||
		w.DownSeconds != int64(upAt.Sub(downAt)/time.Second) || w.LatencyP50 == nil || w.LatencySource != "samples" {
		t.Fatalf("stability 24h: %+v", w)
	}
	if cr, err := monitoring.ClearAlerts(ctx, e.sys); err != nil || cr.Deleted != 2 {
		t.Fatalf("clear-all after recovery: %+v %v", cr, err)
	}
}

func TestDeviceAddressMustBeInDeclaredRanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for addr, reason := range map[string]string{"169.254.169.254": "target_not_allowed", "8.8.8.8": "target_not_allowed",
		"0.0.0.0": "ip_address_not_allowed", "224.0.0.1": "ip_address_not_allowed"} {
		_, err := monitoring.CreateDevice(ctx, e.sys, monitoring.DeviceInput{Name: "x", Address: addr})
		xrtest.WantError(t, err, 400, "ERR_VALIDATION", reason)
	}
	_, err := monitoring.CreateDevice(ctx, e.sys, monitoring.DeviceInput{Name: "x", Address: "not-an-ip"})
	xrtest.WantError(t, err, 400, "ERR_VALIDATION", "invalid_ip")
	// A NAS is always a target, whatever the ranges.
	xrtest.Exec(t, e.t, `INSERT INTO nas(name, ip, secret_sealed, created_at, updated_at) VALUES ('core-nas', '203.0.113.9', x'00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
	g, err := probes.TenantGuard(ctx, e.a, e.t.DB.R)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Allow(netip.MustParseAddr("203.0.113.9")) || g.Allow(netip.MustParseAddr("203.0.113.10")) {
		t.Fatal("guard: a NAS address must be allowed, its neighbour not")
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_devices WHERE kind = 'nas' AND name = 'core-nas' AND address = '203.0.113.9'`); n != 1 {
		t.Fatal("a new NAS has no monitoring row")
	}
	// Default ranges: private space only.
	r, err := probes.ParseRanges("")
	if err != nil {
		t.Fatal(err)
	}
	gd := &probes.Guard{Ranges: r, Egress: egress.Guard{Policy: egress.Device}}
	if gd.Allow(netip.MustParseAddr("127.0.0.1")) || gd.Allow(netip.MustParseAddr("169.254.169.254")) || !gd.Allow(netip.MustParseAddr("10.1.2.3")) {
		t.Fatal("default ranges")
	}
}

// On an instance without private egress a NAS or device address on
// loopback, link-local (a metadata endpoint) or 240.0.0.0/4 is refused
// with the egress reasons, and a NAS row holding one (saved before the
// rule) is not probed: the NAS is not exempt from the guard.
func TestDeviceAddressesPassTheEgressGuard(t *testing.T) {
	t.Parallel()
	a := xrtest.App(t, outbox.Module, monitoring.Module)
	xrtest.Tenant(t, a, "acme")
	ten := xrtest.Acquire(t, a, "acme")
	sys := xrtest.System(t, ten)
	xrtest.Exec(t, ten, `INSERT INTO settings(key, value) VALUES ('monitoring_network_ranges', '"127.0.0.0/8, 169.254.0.0/16, 240.0.0.0/4, 10.0.0.0/8"')`)
	for addr, class := range map[string]string{"127.0.0.1": "loopback", "169.254.169.254": "link_local", "240.0.0.1": "reserved"} {
		_, err := monitoring.CreateDevice(ctx, sys, monitoring.DeviceInput{Name: "x", Address: addr})
		e := xrtest.WantError(t, err, 400, "ERR_VALIDATION", "ip_address_not_allowed")
		if e.Field != "address" || e.Details["class"] != class {
			t.Fatalf("%s: %+v", addr, e)
		}
	}
	if _, err := monitoring.CreateDevice(ctx, sys, monitoring.DeviceInput{Name: "ap", Address: "10.0.0.7"}); err != nil {
		t.Fatal(err)
	}
	xrtest.Exec(t, ten, `INSERT INTO nas(name, ip, secret_sealed, created_at, updated_at) VALUES ('meta', '169.254.169.254', x'00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
	g, err := probes.TenantGuard(ctx, a, ten.DB.R)
	if err != nil {
		t.Fatal(err)
	}
	if g.Allow(netip.MustParseAddr("169.254.169.254")) || g.Allow(netip.MustParseAddr("127.0.0.1")) || !g.Allow(netip.MustParseAddr("10.0.0.7")) {
		t.Fatal("the guard lets a NAS or a declared range reach loopback or link-local")
	}
}

// core → tower → {ap1, ap2}; nas under ap1; bob attached to ap2, alice has a
// live session on the NAS. The core's impact is everything; an incident's
// root is the highest down device.
func TestImpactAndIncidentsOverALinkTree(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mk := func(name, addr string, parent *int64) int64 {
		d, err := monitoring.CreateDevice(ctx, e.sys, monitoring.DeviceInput{Name: name, Address: addr, ParentID: parent})
		if err != nil {
			t.Fatal(err)
		}
		return d.ID
	}
	core := mk("core", "10.0.0.1", nil)
	tower := mk("tower", "10.0.0.2", &core)
	ap1 := mk("ap1", "10.0.0.3", &tower)
	ap2 := mk("ap2", "10.0.0.4", &tower)
	nasID := xrtest.Exec(t, e.t, `INSERT INTO nas(name, ip, secret_sealed, created_at, updated_at) VALUES ('nas', '10.0.0.5', x'00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
	nasDev := xrtest.Scalar(t, e.t, `SELECT id FROM mon_devices WHERE nas_id = ?`, nasID)
	if _, err := monitoring.CreateLink(ctx, e.sys, monitoring.LinkInput{FromID: ap1, ToID: nasDev}); err != nil {
		t.Fatal(err)
	}
	owner := xrtest.Scalar(t, e.t, `SELECT id FROM managers WHERE username = 'owner'`)
	user := func(name string) int64 {
		return xrtest.Exec(t, e.t, `INSERT INTO users(username, password_sealed, parent_id, lookup_token, created_at, updated_at) VALUES (?, x'00', ?, ?, '2026-01-01 00:00:00', '2026-01-01 00:00:00')`,
			name, owner, "tok-"+name)
	}
	bob, alice := user("bob"), user("alice")
	xrtest.Exec(t, e.t, `INSERT INTO radius_sessions(acct_session_id, user_id, username, nas_id, start_time) VALUES ('s1', ?, 'alice', ?, '2026-03-02 09:00:00')`, alice, nasID)
	if _, err := monitoring.SetUsers(ctx, e.sys, "device", ap2, monitoring.UsersInput{UserIDs: []int64{bob}}); err != nil {
		t.Fatal(err)
	}
	imp, err := monitoring.GetImpact(ctx, e.sys, "device", core)
	if err != nil {
		t.Fatal(err)
	}
	if imp.Devices != 4 || imp.Subscribers != 2 || imp.SubscribersOnline != 1 || len(imp.AffectedUsers) != 2 {
		t.Fatalf("core impact: devices %d subscribers %d online %d", imp.Devices, imp.Subscribers, imp.SubscribersOnline)
	}
	imp, err = monitoring.GetImpact(ctx, e.sys, "nas", nasID)
	if err != nil || imp.Devices != 0 || imp.Subscribers != 1 || imp.SubscribersOnline != 1 {
		t.Fatalf("nas impact: %+v %v", imp, err)
	}
	users, err := monitoring.GetUsers(ctx, e.sys, "nas", nasID)
	if err != nil || len(users) != 1 || users[0].Source != "session" || !users[0].Online {
		t.Fatalf("nas users: %+v %v", users, err)
	}
	// A loop is refused, as a link and as a parent.
	_, err = monitoring.CreateLink(ctx, e.sys, monitoring.LinkInput{FromID: ap2, ToID: core})
	xrtest.WantError(t, err, 409, "ERR_CONFLICT", "link_loop")
	_, err = monitoring.UpdateDevice(ctx, e.sys, core, monitoring.DeviceInput{Name: "core", Address: "10.0.0.1", ParentID: &ap1})
	xrtest.WantError(t, err, 400, "ERR_VALIDATION", "link_loop")
	// tower and everything under it down: one incident rooted at tower.
	xrtest.Exec(t, e.t, `UPDATE mon_devices SET status = CASE WHEN id = ? THEN 'up' ELSE 'down' END, status_since = '2026-03-02 09:55:00'`, core)
	inc, err := monitoring.Incidents(ctx, e.sys)
	if err != nil {
		t.Fatal(err)
	}
	if len(inc) != 1 || inc[0].Root.ID != tower || inc[0].Devices != 3 || inc[0].DevicesDown != 3 || inc[0].Subscribers != 2 {
		t.Fatalf("incidents: %+v", inc)
	}
	fc, err := monitoring.Geo(ctx, e.sys, monitoring.GeoQuery{})
	if err != nil || fc.Type != "FeatureCollection" || len(fc.Features) != 0 {
		t.Fatalf("geo without coordinates: %+v %v", fc, err)
	}
	lat, lon := 33.5, 36.3
	for _, id := range []int64{core, tower} {
		if _, err := monitoring.SetGeo(ctx, e.sys, "device", id, monitoring.GeoInput{Lat: &lat, Lon: &lon}); err != nil {
			t.Fatal(err)
		}
	}
	fc, err = monitoring.Geo(ctx, e.sys, monitoring.GeoQuery{})
	if err != nil || len(fc.Features) != 3 || fc.Features[2].Geometry.Type != "LineString" || fc.Features[2].Properties.(monitoring.LinkProps).Status != "down" {
		t.Fatalf("geo: %+v %v", fc, err)
	}
	h, err := monitoring.GetHygiene(ctx, e.sys)
	if err != nil || len(h.WithoutCoordinates) != 3 || len(h.LoopLinks) != 0 {
		t.Fatalf("hygiene: %+v %v", h, err)
	}
}

// Warnings (latency, NAS silent) open while over and resolve once under;
// a critical alert left unacknowledged is escalated once.
func TestWarningsNASSilentAndEscalation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ln := listen(t, "127.0.0.1:0")
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	nasID := xrtest.Exec(t, e.t, `INSERT INTO nas(name, ip, secret_sealed, created_at, updated_at) VALUES ('edge', '127.0.0.1', x'00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
	xrtest.Exec(t, e.t, `UPDATE mon_devices SET probe_port = ? WHERE nas_id = ?`, port, nasID)
	xrtest.Exec(t, e.t, `INSERT INTO radius_sessions(acct_session_id, username, nas_id, start_time, update_time) VALUES ('s1', 'x', ?, '2026-03-02 09:00:00', '2026-03-02 09:40:00')`, nasID)
	if _, err := monitoring.SetNotify(ctx, e.sys, "nas", nasID, monitoring.NotifySettings{Rules: monitoring.Rules{NASSilentMinutes: 10, LatencyMs: 0.000001}}); err != nil {
		t.Fatal(err)
	}
	dead := listen(t, "127.0.0.1:0")
	deadPort := dead.Addr().(*net.TCPAddr).Port
	dead.Close()
	d, err := monitoring.CreateDevice(ctx, e.sys, monitoring.DeviceInput{Name: "far-ap", Address: "127.0.0.2", ProbePort: deadPort})
	if err != nil {
		t.Fatal(err)
	}
	_, err = monitoring.SetNotify(ctx, e.sys, "device", d.ID, monitoring.NotifySettings{EscalateAfterMinutes: 5, EscalateEmails: []string{"boss@isp.test"}, Rules: monitoring.Rules{DownAfter: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = monitoring.SetNotify(ctx, e.sys, "device", d.ID, monitoring.NotifySettings{EscalateEmails: []string{"nope"}})
	xrtest.WantError(t, err, 400, "ERR_VALIDATION", "invalid_email")
	e.poll(t)
	open := func(rule string) int64 {
		return xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM mon_alerts WHERE rule = ? AND state = 'open'`, rule)
	}
	if open("nas_silent") != 1 || open("latency") != 1 || open("down") != 1 {
		t.Fatalf("open alerts: silent %d latency %d down %d", open("nas_silent"), open("latency"), open("down"))
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM outbox_messages WHERE template = 'device.alert'`); n != 0 {
		t.Fatalf("warnings mailed without notify_warnings: %d", n)
	}
	xrtest.Exec(t, e.t, `UPDATE radius_sessions SET update_time = '2026-03-02 10:00:10'`)
	e.advance(time.Minute)
	e.poll(t)
	if open("nas_silent") != 0 {
		t.Fatal("nas_silent not resolved after accounting came back")
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM outbox_messages WHERE recipient = 'boss@isp.test'`); n != 0 {
		t.Fatal("escalated too early")
	}
	for range 3 {
		e.advance(2 * time.Minute)
		e.poll(t)
	}
	if n := xrtest.Scalar(t, e.t, `SELECT COUNT(*) FROM outbox_messages WHERE recipient = 'boss@isp.test' AND cause LIKE 'mon_alert:%'`); n != 1 {
		t.Fatalf("escalations: %d, want exactly 1", n)
	}
}

// A generated binary tree of 2,000 devices: node i's uplink is i/2. With
// node 3's whole subtree down (and a lone down leaf under an up parent),
// the incidents are rooted at 3 and at the leaf, with their impact.
func TestRootCauseOnAGeneratedTreeOf2000(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	err := e.t.Write(ctx, func(tx *sql.Tx) error {
		for i := 1; i <= 2000; i++ {
			if _, err := tx.Exec(`INSERT INTO mon_devices(id, kind, name, address, status, created_at, updated_at) VALUES (?, 'device', ?, '10.0.0.1', 'up', '2026-03-02 09:00:00', '2026-03-02 09:00:00')`,
				i, "n"+strconv.Itoa(i)); err != nil {
				return err
			}
			if i > 1 {
				if _, err := tx.Exec(`INSERT INTO mon_links(from_id, to_id, created_at) VALUES (?, ?, '2026-03-02 09:00:00')`, i/2, i); err != nil {
					return err
				}
			}
		}
		// Down: 3 and everything under it; and leaf 1024 (its parent 512, under 2, is up).
		_, err := tx.Exec(`WITH RECURSIVE down(id) AS (SELECT 3 UNION SELECT l.to_id FROM mon_links l JOIN down ON l.from_id = down.id)
			UPDATE mon_devices SET status = 'down', status_since = '2026-03-02 09:50:00' WHERE id IN (SELECT id FROM down) OR id = 1024`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	under3 := xrtest.Scalar(t, e.t, `WITH RECURSIVE down(id) AS (SELECT 3 UNION SELECT l.to_id FROM mon_links l JOIN down ON l.from_id = down.id) SELECT COUNT(*) - 1 FROM down`)
	inc, err := monitoring.Incidents(ctx, e.sys)
	if err != nil {
		t.Fatal(err)
	}
	if len(inc) != 2 {
		t.Fatalf("%d incidents, want 2", len(inc))
	}
	byRoot := map[int64]monitoring.Incident{}
	for _, i := range inc {
		byRoot[i.Root.ID] = i
	}
	if i, ok := byRoot[3]; !ok || int64(i.Devices) != under3 || int64(i.DevicesDown) != under3 {
		t.Fatalf("incident at 3: %+v (want %d downstream)", i, under3)
	}
	if i, ok := byRoot[1024]; !ok || i.Devices != 0 {
		t.Fatalf("incident at the leaf: %+v", i)
	}
	imp, err := monitoring.GetImpact(ctx, e.sys, "device", 1)
	if err != nil || imp.Devices != 1999 || int64(imp.DevicesDown) != under3+2 || len(imp.DownstreamDevices) != 500 {
		t.Fatalf("root impact: devices %d down %d listed %d %v", imp.Devices, imp.DevicesDown, len(imp.DownstreamDevices), err)
	}
}
