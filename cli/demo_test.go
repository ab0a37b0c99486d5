package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/internal/xrtest"
)

func demoFreeUDP(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().String()
}

// demoAPI calls the demo's API with a bearer token.
type demoAPI struct {
	t     *testing.T
	base  string // http://127.0.0.1:port/api/v1
	token string
}

func (c demoAPI) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		c.t.Fatalf("%s %s: %d, not JSON: %v", method, path, res.StatusCode, err)
	}
	return res.StatusCode, m
}

// get answers the body of a 200, failing the test otherwise.
func (c demoAPI) get(path string) map[string]any {
	c.t.Helper()
	code, m := c.do("GET", path, nil)
	if code != 200 {
		c.t.Fatalf("GET %s: %d %v", path, code, m)
	}
	return m
}

func (c demoAPI) total(path string) int {
	c.t.Helper()
	m := c.get(path)
	meta, _ := m["meta"].(map[string]any)
	n, ok := meta["total"].(float64)
	if !ok {
		c.t.Fatalf("GET %s: no meta.total in %v", path, m)
	}
	return int(n)
}

func rows(m map[string]any) []map[string]any {
	l, _ := m["data"].([]any)
	out := make([]map[string]any, 0, len(l))
	for _, r := range l {
		out = append(out, r.(map[string]any))
	}
	return out
}

// startDemo runs the demo on dir with loopback ports of its own until the
// test ends; it returns what the banner printed and the CoA address.
func startDemo(t *testing.T, dir string, noSim bool) (demoStarted, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	var logs syncBuffer
	g := &globals{data: dir, json: true, out: &out, errOut: &logs, logLevel: "warn"}
	o := demoOpts{serve: serveOpts{http: "127.0.0.1:0", domain: "localhost", radiusAuth: demoFreeUDP(t), radiusAcct: demoFreeUDP(t)},
		coaListen: demoFreeUDP(t), sessions: 24, interim: 300 * time.Millisecond, noSim: noSim}
	ctx, cancel := context.WithCancel(context.Background())
	startedc := make(chan demoStarted, 1)
	done := make(chan error, 1)
	go func() { done <- runDemo(ctx, g, o, true, func(s demoStarted) { startedc <- s }) }()
	var s demoStarted
	select {
	case s = <-startedc:
	case err := <-done:
		t.Fatalf("demo ended: %v\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatal("demo did not start")
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("demo log:\n%s", logs.String())
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("demo returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("demo did not stop")
		}
	})
	return s, &out
}

// demoFirstViews: each staff login can do its job at first sign-in, as
// the counts it sees say.
func demoFirstViews(t *testing.T, owner demoAPI, tokens map[string]string) {
	t.Helper()
	as := func(u string) demoAPI { return demoAPI{t: t, base: owner.base, token: tokens[u]} }
	me := func(u string) map[string]any { return as(u).get("/auth/me")["data"].(map[string]any) }
	// Support and the NOC see the whole tenant: every subscriber, every
	// live session the owner sees.
	everyone, online := owner.total("/users?page_size=1"), owner.total("/admin/sessions?page_size=1")
	for _, u := range []string{demoSupport, demoNOC} {
		if me(u)["tenant_wide"] != true {
			t.Errorf("%s is not tenant-wide", u)
		}
		if n := as(u).total("/users?page_size=1"); n != everyone {
			t.Errorf("%s sees %d subscribers of %d", u, n, everyone)
		}
		if n := as(u).total("/admin/sessions?page_size=1"); n == 0 || online == 0 {
			t.Errorf("%s sees %d live sessions (the owner %d)", u, n, online)
		}
	}
	// Support: the tickets, and a ticket's subscriber with its sessions.
	tks := rows(as(demoSupport).get("/tickets?page_size=50"))
	if len(tks) == 0 {
		t.Fatal("support sees no ticket")
	}
	var uid any
	for _, tk := range tks {
		if tk["user_id"] != nil {
			uid = tk["user_id"]
			break
		}
	}
	if uid == nil {
		t.Fatalf("no ticket names a subscriber: %v", tks[0])
	}
	as(demoSupport).get(fmt.Sprintf("/users/%v", uid))
	as(demoSupport).get(fmt.Sprintf("/users/%v/sessions?page_size=5", uid))
	// The NOC: the NAS, the monitored devices and the map; it reads and
	// acknowledges, it does not change the network.
	noc := as(demoNOC)
	if n := len(rows(noc.get("/admin/nas"))); n != 3 {
		t.Errorf("the NOC sees %d NAS", n)
	}
	if n := noc.total("/admin/monitoring/devices?page_size=1"); n == 0 {
		t.Error("the NOC sees no monitored device")
	}
	noc.get("/admin/monitoring/geo")
	if code, _ := noc.do("POST", "/admin/nas", map[string]any{"name": "x", "ip": "10.9.9.9", "secret": "s3cret-x"}); code != 403 {
		t.Errorf("the NOC adds a NAS: %d", code)
	}
	// The cashier holds card stock at its till from the first sign-in.
	held := int64(0)
	for _, c := range as(demoCashier).get("/pos/products")["data"].(map[string]any)["cards"].([]any) {
		held += int64(c.(map[string]any)["available"].(float64))
	}
	if held != 20 {
		t.Errorf("the cashier holds %d cards at its till, want 20", held)
	}
	// A reseller sees the series whose cards it holds, its stock there
	// equals its own list of available cards, and its till sells them.
	north := as(demoReseller)
	series := rows(north.get("/card-batches?page_size=50"))
	stock := 0
	for _, b := range series {
		n := int(b["in_stock"].(float64))
		stock += n
		if listed := north.total(fmt.Sprintf("/card-batches/%v/cards?page_size=1&filter[state]=unused&filter[disposition]=available", b["id"])); listed != n {
			t.Errorf("series %v: in_stock %d, the card list %d", b["id"], n, listed)
		}
	}
	if len(series) == 0 || stock < 10 {
		t.Fatalf("north sees %d series, %d cards in stock", len(series), stock)
	}
	tillStock := 0
	for _, c := range north.get("/pos/products")["data"].(map[string]any)["cards"].([]any) {
		tillStock += int(c.(map[string]any)["available"].(float64))
	}
	if tillStock != stock {
		t.Errorf("north's till offers %d cards, its stock is %d", tillStock, stock)
	}
}

// TestDemoSeedThroughAPI: the demo seeded into a temp dir, served, alive
// with the simulator, checked through the API with the token the banner
// printed: counts per kind, 90 days of history, live sessions, a reseller
// that sees only its subtree, every printed command working, and a
// Disconnect from the API taking a simulated session down end to end.
func TestDemoSeedThroughAPI(t *testing.T) {
	dir := t.TempDir()
	s, out := startDemo(t, dir, false)
	info := s.Banner
	// The banner is one JSON object with --json.
	var printed demoInfo
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &printed); err != nil || printed.Token != info.Token || printed.Token == "" {
		t.Fatalf("banner: %v %q", err, out.String())
	}
	api := demoAPI{t: t, base: "http://" + info.HTTP + "/api/v1", token: info.Token}

	// Counts per kind.
	for path, want := range map[string]int{"/users?page_size=1": demoSubscribers, "/managers?page_size=1": 7, "/admin/profiles?page_size=1": 8,
		"/card-batches?page_size=1": 4, "/card-templates?page_size=1": 1, "/studio/designs?page_size=1": 1, "/hotspot/pages?page_size=1": 2, "/admin/webhooks/endpoints": 2} {
		if n := api.total(path); n != want {
			t.Errorf("GET %s: total %d, want %d", path, n, want)
		}
	}
	if n := len(rows(api.get("/admin/nas"))); n != 3 {
		t.Errorf("%d NAS", n)
	}
	// The network map: 7 devices and the 3 NAS located, links between
	// them, 210 subscribers placed.
	geo := api.get("/admin/monitoring/geo?subscribers=true")["data"].(map[string]any)["features"].([]any)
	layers := map[string]int{}
	for _, f := range geo {
		layers[f.(map[string]any)["properties"].(map[string]any)["layer"].(string)]++
	}
	if layers["devices"] != 9 || layers["links"] != 8 || layers["subscribers"] != 210 {
		t.Errorf("map layers %v", layers)
	}
	// The online shop: its series' "sold online" is the cards of the paid
	// sales its sales list shows (the demo buys through the shop itself).
	var soldOnline, paidCards, sales int
	for _, l := range rows(api.get("/admin/shop/batches")) {
		soldOnline += int(l["sold_online"].(float64))
	}
	for _, sale := range rows(api.get("/admin/shop/sales?page_size=200")) {
		sales++
		if sale["state"] == "paid" {
			paidCards += int(sale["quantity"].(float64))
		}
	}
	if soldOnline != 12 || paidCards != soldOnline || sales != 5 {
		t.Errorf("shop: sold online %d, paid sales' cards %d, %d sales", soldOnline, paidCards, sales)
	}
	// Tickets in every state.
	states, _ := api.get("/tickets/counts")["data"].(map[string]any)["states"].(map[string]any)
	for _, st := range []string{"new", "open", "pending", "snoozed", "resolved", "closed"} {
		if n, _ := states[st].(float64); n < 1 {
			t.Errorf("no %s ticket: %v", st, states)
		}
	}
	// Subscribers of every standing.
	for filter, min := range map[string]int{"filter[enabled]=false": 5, "filter[expired]=true": 10} {
		if n := api.total("/users?page_size=1&" + filter); n < min {
			t.Errorf("%s: %d subscribers, want at least %d", filter, n, min)
		}
	}
	// History spans 90 days: the oldest activation, and closed sessions
	// with their daily usage.
	old := rows(api.get("/admin/reports/activations?sort=created_at&order=asc&page_size=1"))
	if len(old) != 1 {
		t.Fatal("no activations")
	}
	first, err := time.Parse(app.TimeLayout, old[0]["created_at"].(string))
	if err != nil || time.Since(first) < 88*24*time.Hour || time.Since(first) > 91*24*time.Hour {
		t.Fatalf("oldest activation %v (%v)", old[0]["created_at"], err)
	}
	if n := api.total("/admin/reports/activations?page_size=1"); n < 900 {
		t.Errorf("%d activations in the history", n)
	}
	from := time.Now().UTC().AddDate(0, 0, -89).Format(app.DateLayout)
	usage := rows(api.get(fmt.Sprintf("/users/1/usage?from=%s&to=%s&granularity=day", from, time.Now().UTC().Format(app.DateLayout))))
	if len(usage) < 30 {
		t.Errorf("user00000 has %d days of usage", len(usage))
	}

	// Live sessions appear (the simulator logs in through RADIUS).
	var live []map[string]any
	xrtest.Eventually(t, "live sessions", func() bool {
		live = rows(api.get("/admin/sessions?page_size=50"))
		return len(live) >= 1
	})

	// Every printed login signs in (the console takes the same).
	tokens := map[string]string{}
	for _, l := range info.Logins {
		code, m := api.do("POST", "/auth/login", map[string]any{"email": l.Username, "password": l.Password})
		if code != 200 {
			t.Fatalf("%s login %s: %d %v", l.Role, l.Username, code, m)
		}
		tokens[l.Username], _ = m["data"].(map[string]any)["token"].(string)
	}
	for _, u := range []string{demoUser, demoReseller, demoSubReseller, demoCashier, demoSupport, demoNOC} {
		if tokens[u] == "" {
			t.Fatalf("the banner does not print %s: %v", u, info.Logins)
		}
	}
	for _, l := range info.Logins {
		if l.For == "" {
			t.Errorf("the banner does not say what %s is for", l.Username)
		}
	}
	demoFirstViews(t, api, tokens)
	// The cashier takes payments for its counter customers.
	cashier := demoAPI{t: t, base: api.base, token: tokens[demoCashier]}
	if n := cashier.total("/users?page_size=1"); n < 10 {
		t.Fatalf("the cashier sees %d subscribers", n)
	}
	// A seeded reseller sees only its subtree.
	rtok := tokens[demoReseller]
	reseller := demoAPI{t: t, base: api.base, token: rtok}
	mine := reseller.total("/users?page_size=1")
	if mine == 0 || mine >= demoSubscribers {
		t.Fatalf("the reseller sees %d subscribers", mine)
	}
	sub := rows(reseller.get("/managers?page_size=100"))
	names := map[string]bool{}
	want := 0
	for _, r := range sub {
		names[fmt.Sprint(r["username"])] = true
	}
	for _, r := range rows(api.get("/managers?page_size=100")) {
		switch r["username"] {
		case demoReseller, "north-east", "ne-shop":
			// The owner's count of the subtree's subscribers, manager by manager.
			want += api.total(fmt.Sprintf("/users?page_size=1&filter[parent_id]=%v", r["id"]))
		}
	}
	if mine != want {
		t.Fatalf("the reseller sees %d subscribers, its subtree holds %d", mine, want)
	}
	if !names["north-east"] || !names["ne-shop"] || names["south"] || names[demoCashier] || names[demoUser] {
		t.Fatalf("the reseller's managers: %v", names)
	}
	if code, m := reseller.do("GET", "/users/1", nil); code != 404 { // user00000 is the owner's
		t.Fatalf("the reseller reads the owner's subscriber: %d %v", code, m)
	}

	// Every printed command works.
	for _, c := range info.Curl {
		if _, err := exec.LookPath("curl"); err != nil {
			t.Log("no curl here: the printed curl lines are not run")
			break
		}
		b, err := exec.Command("sh", "-c", c).Output()
		var m map[string]any
		if err != nil || json.Unmarshal(b, &m) != nil || m["data"] == nil {
			t.Errorf("%s: %v %s", c, err, b)
		}
	}
	if _, err := exec.LookPath("radclient"); err == nil {
		b, err := exec.Command("sh", "-c", info.Radclient).CombinedOutput()
		if err != nil || !strings.Contains(string(b), "Access-Accept") {
			t.Errorf("%s: %v\n%s", info.Radclient, err, b)
		}
	} else {
		t.Log("no radclient here: the printed radclient line is not run")
	}

	// A Disconnect from the API: the simulated NAS ACKs, then sends the
	// session's Stop.
	id := int64(live[0]["id"].(float64))
	code, m := api.do("POST", fmt.Sprintf("/admin/sessions/%d/disconnect", id), nil)
	if d, _ := m["data"].(map[string]any); code != 200 || d["ok"] != true {
		t.Fatalf("disconnect: %d %v", code, m)
	}
	uid := int64(live[0]["user_id"].(float64))
	sid := live[0]["acct_session_id"]
	xrtest.Eventually(t, "the disconnected session's Stop", func() bool {
		for _, r := range rows(api.get(fmt.Sprintf("/users/%d/sessions?page_size=5", uid))) {
			if r["acct_session_id"] == sid {
				return r["terminate_cause"] == "Admin-Reset"
			}
		}
		return false
	})
}

// TestSimulateModesAgainstXR runs `xr simulate` in every mode and
// authentication method against the demo served on loopback (its own
// simulator off), on the subscribers the demo leaves to people.
func TestSimulateModesAgainstXR(t *testing.T) {
	dir := t.TempDir()
	s, _ := startDemo(t, dir, true)
	auth, acct := s.Auth, s.Acct
	run := func(args ...string) map[string]any {
		t.Helper()
		base := []string{"--json", "simulate", "--nas-secret", DemoNASSecret, "--auth", auth, "--acct", acct, "--users", "10",
			"--concurrency", "4", "--timeout", "2s"}
		r := mustOK(t, runXR(t, dir, append(base, args...)...))
		return r.json(t)
	}
	num := func(m map[string]any, k string) int { v, _ := m[k].(float64); return int(v) }
	for _, method := range []string{"pap", "chap", "mschapv2"} {
		m := run("--mode", "auth", "--count", "10", "--auth-method", method)
		if num(m, "accepted") != 10 || num(m, "bad_replies") != 0 || num(m, "failed") != 0 {
			t.Fatalf("auth %s: %v", method, m)
		}
	}
	m := run("--mode", "auth", "--count", "5", "--password-format", "wrong")
	if num(m, "rejected") != 5 {
		t.Fatalf("wrong passwords: %v", m)
	}
	m = run("--mode", "session", "--count", "8", "--interim", "100ms", "--session-length", "300ms", "--auth-method", "chap")
	if num(m, "sessions_started") != 8 || num(m, "sessions_stopped") != 8 || num(m, "failed") != 0 || num(m, "acct_acked") < 16 {
		t.Fatalf("session: %v", m)
	}
	m = run("--mode", "mixed", "--count", "4", "--interim", "100ms", "--session-length", "300ms",
		"--mix", "session=50,auth=50,interim=0,wrong=50,think=10ms")
	if num(m, "sessions_started") != 4 || num(m, "rejected") == 0 || num(m, "accepted") < 5 || num(m, "failed") != 0 {
		t.Fatalf("mixed: %v", m)
	}
	m = run("--mode", "acct-churn", "--count", "40", "--first", "1000")
	if num(m, "acct_acked") != 40 {
		t.Fatalf("acct-churn: %v", m)
	}
	m = run("--mode", "acct-interim", "--sessions", "10", "--count", "20")
	if num(m, "acct_acked") != 20 {
		t.Fatalf("acct-interim: %v", m)
	}
	// Storm last: its Accounting-On closes the NAS's sessions, then every
	// user logs in again.
	m = run("--mode", "storm", "--sessions", "10")
	if num(m, "sessions_started") != 10 || num(m, "sessions_lost") != 0 {
		t.Fatalf("storm: %v", m)
	}
	r := runXR(t, dir, "simulate", "--nas-secret", "x", "--mode", "nope")
	if r.code == 0 || !strings.Contains(r.stderr, "unknown mode") {
		t.Fatalf("unknown mode: %d %q", r.code, r.stderr)
	}
}

// xr demo never seeds into a directory that holds another instance's
// tenants; --seed-only seeds a fresh one and says where.
func TestDemoDataDirectory(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	mustFail(t, runXR(t, dir, "demo", "--seed-only"), "[not_a_demo, field data")
	if l := mustOK(t, runXR(t, dir, "tenant", "list", "--json")).stdout; strings.Contains(l, `"demo"`) {
		t.Fatalf("a demo tenant was created beside acme: %s", l)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustFail(t, runXR(t, other, "demo", "--seed-only"), "[not_a_demo, field data")
	if entries, _ := os.ReadDir(other); len(entries) != 1 {
		t.Fatalf("demo wrote into a directory of other files: %v", entries)
	}
	fresh := t.TempDir()
	m := mustOK(t, runXR(t, fresh, "--json", "demo", "--seed-only", "--coa-listen", "127.0.0.1:0")).json(t)
	if m["data"] != fresh || m["tenant"] != demoSlug {
		t.Fatalf("seed-only: %v", m)
	}
	// Seeding again keeps the demo as it is.
	mustOK(t, runXR(t, fresh, "demo", "--seed-only"))
}
