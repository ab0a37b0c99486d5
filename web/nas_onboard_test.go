package web_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/webtest"
	"xr/internal/xrtest"
	"xr/radiusd"
)

// TestNASSetupHTTP: GET /admin/nas/{id}/setup renders each vendor's script
// with the chosen server address, never the secret; a bad vendor or server
// is 400 naming the parameter, a NAS of another tenant 404, and a caller
// without prm_nas_index 403 before anything else.
func TestNASSetupHTTP(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	const secret = "onboard-secret-never-shown"
	r := s.Call("POST", "/admin/nas", s.Tok, map[string]any{"name": "core \"1\"\n$x", "ip": "192.0.2.10", "secret": secret, "type": "mikrotik", "coa_port": 3700})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := int64(r.Data()["id"].(float64))
	setup := func(q string) webtest.Resp {
		t.Helper()
		return s.Call("GET", fmt.Sprintf("/admin/nas/%d/setup%s", id, q), s.Tok, nil)
	}
	script := func(r webtest.Resp) string {
		t.Helper()
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		sc, _ := r.Data()["script"].(string)
		if strings.Contains(string(r.Body), secret) || !strings.Contains(sc, "<NAS-SECRET>") {
			t.Fatalf("secret leaked or placeholder missing: %s", r.Body)
		}
		return sc
	}

	// RouterOS with an explicit server address.
	m := setup("?vendor=mikrotik&server=203.0.113.5")
	sc := script(m)
	d := m.Data()
	if d["vendor"] != "mikrotik" || d["server"] != "203.0.113.5" || d["server_source"] != "query" || d["auth_port"].(float64) != 1812 ||
		d["acct_port"].(float64) != 1813 || d["coa_port"].(float64) != 3700 || d["interim_interval"].(float64) != 300 || fmt.Sprint(d["warnings"]) != "[]" {
		t.Fatalf("%s", m.Body)
	}
	for _, want := range []string{"add service=ppp,hotspot,login address=203.0.113.5 secret=\"<NAS-SECRET>\" authentication-port=1812 accounting-port=1813",
		"/radius incoming\nset accept=yes port=3700", "interim-update=5m", "/ip hotspot profile\nset [find] use-radius=yes", "require-message-auth="} {
		if !strings.Contains(sc, want) {
			t.Errorf("mikrotik script lacks %q:\n%s", want, sc)
		}
	}
	// The operator-typed name cannot break out of a comment or a quote.
	if strings.Contains(sc, "\n$x") || strings.Contains(sc, `core "1"`) {
		t.Fatalf("unsanitized name:\n%s", sc)
	}

	// No vendor: the NAS's type. No server: the Host, a name (RouterOS wants an IP).
	h := setup("")
	script(h)
	if h.Data()["vendor"] != "mikrotik" || h.Data()["server"] != "acme.xr.test" || h.Data()["server_source"] != "host" ||
		fmt.Sprint(h.Data()["warnings"]) != "[server_address_not_ip]" {
		t.Fatalf("%s", h.Body)
	}
	// The tenant settings: radius_public_address beats the Host, the
	// interim interval follows radius_interim_interval.
	s.Exec(`INSERT OR REPLACE INTO settings(key, value) VALUES ('radius_public_address', '"198.51.100.7"'), ('radius_interim_interval', '600')`)
	st := setup("?vendor=cisco")
	sc = script(st)
	if st.Data()["server"] != "198.51.100.7" || st.Data()["server_source"] != "setting" || st.Data()["interim_interval"].(float64) != 600 {
		t.Fatalf("%s", st.Body)
	}
	for _, want := range []string{"aaa new-model", "radius server xr\n address ipv4 198.51.100.7 auth-port 1812 acct-port 1813\n key <NAS-SECRET>",
		"aaa authentication ppp default group XR", "aaa accounting network default start-stop group XR", "aaa accounting update periodic 10",
		"aaa server radius dynamic-author\n client 198.51.100.7 server-key <NAS-SECRET>\n port 3700"} {
		if !strings.Contains(sc, want) {
			t.Errorf("cisco script lacks %q:\n%s", want, sc)
		}
	}
	// The query still wins over the setting.
	if q := setup("?vendor=generic&server=radius.example.net"); q.Status != 200 || q.Data()["server_source"] != "query" ||
		!strings.Contains(script(q), "client core--1---x {\n\tipaddr = 192.0.2.10\n\tsecret = <NAS-SECRET>") {
		t.Fatalf("%s", q.Body)
	}
	// A broken setting is ignored with a warning.
	s.Exec(`UPDATE settings SET value = '"not an address"' WHERE key = 'radius_public_address'`)
	if b := setup("?vendor=generic"); b.Status != 200 || b.Data()["server_source"] != "host" || fmt.Sprint(b.Data()["warnings"]) != "[radius_public_address_invalid]" {
		t.Fatalf("%s", b.Body)
	}

	// Bad input names the parameter.
	for q, reason := range map[string]string{"?vendor=juniper": "invalid_enum", "?vendor=MikroTik": "invalid_enum",
		"?vendor=mikrotik&server=a%20b": "invalid_server_address", "?server=1.2.3.4:1812": "invalid_server_address",
		"?server=x%0Ay": "invalid_server_address"} {
		r := setup(q)
		want := "vendor"
		if reason == "invalid_server_address" {
			want = "server"
		}
		if r.Status != 400 || r.Code() != "ERR_VALIDATION" || r.Reason() != reason || r.Field() != want {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}

	// Missing, non-numeric, and another tenant's NAS: 404.
	s.Tenant("beta")
	btok := s.Owner("beta")
	var betaID int64
	for i, ip := range []string{"192.0.2.50", "192.0.2.51"} {
		r := s.Do("POST", "beta", "/api/v1/admin/nas", btok, map[string]any{"name": fmt.Sprint("b", i), "ip": ip, "secret": secret})
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		betaID = int64(r.Data()["id"].(float64))
	}
	if betaID == id {
		t.Fatalf("beta's second NAS has acme's id %d", id)
	}
	for _, p := range []string{fmt.Sprintf("/admin/nas/%d/setup?vendor=mikrotik", betaID), "/admin/nas/999/setup", "/admin/nas/abc/setup",
		fmt.Sprintf("/admin/nas/%d/health", betaID), "/admin/nas/999/health"} {
		webtest.ExpectErr(t, s.Call("GET", p, s.Tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	}
	if r := s.Do("GET", "beta", fmt.Sprintf("/api/v1/admin/nas/%d/setup?vendor=cisco&server=203.0.113.9", betaID), btok, nil); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}

	// Without prm_nas_index: 403, even with bad input or a missing NAS.
	_, rtok := s.Manager(s.OwnerID, "nonas", webtest.ResellerCodes...)
	for _, p := range []string{fmt.Sprintf("/admin/nas/%d/setup?vendor=juniper", id), "/admin/nas/999/setup", fmt.Sprintf("/admin/nas/%d/health", id)} {
		webtest.ExpectErr(t, s.Call("GET", p, rtok, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	}
	// Health without a RADIUS server in the process: known NAS, nothing seen.
	hh := s.Call("GET", fmt.Sprintf("/admin/nas/%d/health", id), s.Tok, nil)
	if hh.Status != 200 || hh.Data()["radius_running"] != false || hh.Data()["last_access_request_at"] != nil || hh.Data()["nas_id"].(float64) != float64(id) {
		t.Fatalf("%d %s", hh.Status, hh.Body)
	}
	// Reading the setup changed nothing: the NAS and its secret are as created.
	if sec, err := aaa.NASSecret(webtest.Background, s.App, s.Ten, id); err != nil || string(sec) != secret {
		t.Fatalf("secret %q %v", sec, err)
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM nas WHERE id = ? AND coa_port = 3700 AND type = 'mikrotik'`, id); n != 1 {
		t.Fatalf("NAS row changed: %d", n)
	}
}

// healthKit is the HTTP API, a real RADIUS server on loopback sharing its
// metrics with /metrics, and a NAS at 127.0.0.1 whose CoA port is a socket
// of the test.
type healthKit struct {
	*webtest.Kit
	tok              string
	nasID            int64
	authAddr, acctAd string
	coa              net.PacketConn
}

const healthSecret = "health-shared-secret-1"

func newHealthKit(t *testing.T) *healthKit {
	k := &healthKit{Kit: webtest.NewWith(t, app.Config{AllowPrivateEgress: true}, nil, nil)} // the NAS is on loopback
	coa, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { coa.Close() })
	k.coa = coa
	n, err := aaa.CreateNAS(context.Background(), xrtest.System(t, k.Acquire("acme")), aaa.NASInput{Name: app.Opt[string]{Set: true, V: "lo"},
		IP: app.Opt[string]{Set: true, V: "127.0.0.1"}, Secret: app.Opt[string]{Set: true, V: healthSecret},
		CoAPort: app.Opt[int]{Set: true, V: coa.LocalAddr().(*net.UDPAddr).Port}})
	if err != nil {
		t.Fatal(err)
	}
	k.nasID = n.ID
	svc := aaa.New(k.App)
	svc.PollEvery = time.Hour
	metrics := radiusd.NewMetrics()
	k.Srv.Radius, k.Srv.Metrics = svc, metrics
	k.authAddr, k.acctAd = webtest.ServeRadius(t, k.App, svc, &radiusd.CoAClient{InitialTimeout: 2 * time.Second, MaxAttempts: 1, Metrics: metrics})
	k.tok = k.Owner("acme")
	return k
}

// health polls GET /admin/nas/{id}/health until ok holds (20 s give-up).
func (k *healthKit) health(what string, ok func(d map[string]any) bool) map[string]any {
	k.T.Helper()
	var r webtest.Resp
	xrtest.Eventually(k.T, "health showing "+what, func() bool {
		r = k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/nas/%d/health", k.nasID), k.tok, nil)
		if r.Status != 200 {
			k.T.Fatalf("health: %d %s", r.Status, r.Body)
		}
		return ok(r.Data())
	})
	return r.Data()
}

// send writes a datagram without waiting for an answer (dropped packets
// get none).
func (k *healthKit) send(b []byte, addr string) {
	k.T.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		k.T.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(b); err != nil {
		k.T.Fatal(err)
	}
}

func (k *healthKit) exchange(p *radius.Packet, addr string) *radius.Packet {
	k.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := (&radius.Client{Retry: 0}).Exchange(ctx, p, addr)
	if err != nil {
		k.T.Fatalf("exchange: %v", err)
	}
	return resp
}

func signMA(t *testing.T, p *radius.Packet, secret string) {
	t.Helper()
	rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	h := hmac.New(md5.New, []byte(secret))
	h.Write(b)
	rfc2869.MessageAuthenticator_Set(p, h.Sum(nil))
}

// TestNASHealthOverUDP: real packets on loopback show up in
// /admin/nas/{id}/health and in /metrics: an Access-Request with a
// Message-Authenticator, one without, accounting with an Event-Timestamp an
// hour behind, a packet with a wrong authenticator, and a Disconnect the NAS
// acknowledges.
func TestNASHealthOverUDP(t *testing.T) {
	t.Parallel()
	k := newHealthKit(t)
	d := k.health("the server serving", func(d map[string]any) bool { return d["radius_running"] == true })
	for _, f := range []string{"last_access_request_at", "last_accounting_at", "last_coa_at", "last_coa_outcome", "sends_message_authenticator", "clock_skew_seconds"} {
		if d[f] != nil {
			t.Fatalf("%s before any packet: %v", f, d)
		}
	}
	// The setup reports the ports the server really listens on.
	su := k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/nas/%d/setup?vendor=generic&server=127.0.0.1", k.nasID), k.tok, nil)
	_, authPort, _ := net.SplitHostPort(k.authAddr)
	_, acctPort, _ := net.SplitHostPort(k.acctAd)
	if su.Status != 200 || fmt.Sprint(su.Data()["auth_port"]) != authPort || fmt.Sprint(su.Data()["acct_port"]) != acctPort {
		t.Fatalf("setup ports (want %s/%s): %s", authPort, acctPort, su.Body)
	}

	// 1. An Access-Request with a Message-Authenticator (unknown user: rejected).
	p := radius.New(radius.CodeAccessRequest, []byte(healthSecret))
	rfc2865.UserName_SetString(p, "nobody")
	rfc2865.UserPassword_SetString(p, "pw")
	signMA(t, p, healthSecret)
	if code := k.exchange(p, k.authAddr).Code; code != radius.CodeAccessReject {
		t.Fatalf("access answered %v", code)
	}
	d = k.health("the Access-Request", func(d map[string]any) bool { return d["last_access_request_at"] != nil })
	if d["sends_message_authenticator"] != true {
		t.Fatalf("%v", d)
	}

	// 2. Accounting whose Event-Timestamp is an hour behind the server.
	const skew = 3600
	a := radius.New(radius.CodeAccountingRequest, []byte(healthSecret))
	rfc2866.AcctStatusType_Set(a, rfc2866.AcctStatusType_Value_Start)
	rfc2865.UserName_SetString(a, "nobody")
	rfc2866.AcctSessionID_SetString(a, "s-health")
	rfc2869.EventTimestamp_Set(a, time.Now().Add(-skew*time.Second))
	if code := k.exchange(a, k.acctAd).Code; code != radius.CodeAccountingResponse {
		t.Fatalf("accounting answered %v", code)
	}
	d = k.health("the accounting packet", func(d map[string]any) bool { return d["clock_skew_seconds"] != nil })
	if sk := d["clock_skew_seconds"].(float64); sk < skew-1 || sk > skew+2 || d["last_accounting_at"] == nil {
		t.Fatalf("skew %v: %v", sk, d)
	}

	// 3. A packet with a bad authenticator (signed with another secret):
	// dropped, counted, and it does not count as the NAS's accounting.
	bad := radius.New(radius.CodeAccountingRequest, []byte("not-the-secret"))
	rfc2866.AcctStatusType_Set(bad, rfc2866.AcctStatusType_Value_InterimUpdate)
	rfc2866.AcctSessionID_SetString(bad, "s-forged")
	rfc2869.EventTimestamp_Set(bad, time.Now().Add(time.Hour))
	b, err := bad.Encode()
	if err != nil {
		t.Fatal(err)
	}
	k.send(b, k.acctAd)
	d = k.health("the bad-authenticator drop", func(d map[string]any) bool { return d["bad_authenticator_drops_last_hour"].(float64) == 1 })
	if sk := d["clock_skew_seconds"].(float64); sk < skew-1 || sk > skew+2 {
		t.Fatalf("a forged packet moved the skew: %v", d)
	}

	// 4. An Access-Request without a Message-Authenticator: dropped (the NAS
	// requires one), and the health says the NAS does not send it.
	nm := radius.New(radius.CodeAccessRequest, []byte(healthSecret))
	rfc2865.UserName_SetString(nm, "nobody")
	rfc2865.UserPassword_SetString(nm, "pw")
	b, err = nm.Encode()
	if err != nil {
		t.Fatal(err)
	}
	k.send(b, k.authAddr)
	k.health("no Message-Authenticator", func(d map[string]any) bool { return d["sends_message_authenticator"] == false })

	// 5. A Disconnect the NAS acknowledges.
	go func() {
		buf := make([]byte, 4096)
		n, from, err := k.coa.ReadFrom(buf)
		if err != nil {
			return
		}
		req, err := radius.Parse(buf[:n], []byte(healthSecret))
		if err != nil {
			return
		}
		out, err := req.Response(radius.CodeDisconnectACK).Encode()
		if err == nil {
			k.coa.WriteTo(out, from)
		}
	}()
	var sid int64
	if err := k.Acquire("acme").DB.R.QueryRow(`SELECT id FROM radius_sessions WHERE acct_session_id = 's-health'`).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/admin/sessions/%d/disconnect", sid), k.tok, nil); r.Status != 200 || r.Data()["ok"] != true {
		t.Fatalf("disconnect: %d %s", r.Status, r.Body)
	}
	d = k.health("the CoA answer", func(d map[string]any) bool { return d["last_coa_outcome"] == "ok" })
	if d["last_coa_at"] == nil {
		t.Fatalf("%v", d)
	}

	// /metrics carries the same per NAS.
	r := k.Do("GET", "", "/metrics", "", nil)
	if r.Status != 200 {
		t.Fatalf("metrics: %d", r.Status)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("metrics: %v\n%s", err, r.Body)
	}
	// num is the value of name's series for this NAS (tenant acme, its
	// id) with the extra label pairs given.
	num := func(name string, extra ...string) float64 {
		t.Helper()
		want := map[string]string{"tenant": "acme", "nas_id": strconv.FormatInt(k.nasID, 10)}
		for i := 0; i+1 < len(extra); i += 2 {
			want[extra[i]] = extra[i+1]
		}
		if f := fams[name]; f != nil {
			for _, m := range f.GetMetric() {
				got := map[string]string{}
				for _, l := range m.GetLabel() {
					got[l.GetName()] = l.GetValue()
				}
				if reflect.DeepEqual(got, want) {
					return m.GetGauge().GetValue()
				}
			}
		}
		t.Fatalf("/metrics lacks %s%v:\n%s", name, want, r.Body)
		return 0
	}
	if num("radius_nas_message_authenticator") != 0 || num("radius_nas_bad_authenticator_drops_last_hour") != 1 {
		t.Fatalf("%s", r.Body)
	}
	if sk := num("radius_nas_clock_skew_seconds"); sk < skew-1 || sk > skew+2 {
		t.Fatalf("metrics skew %v", sk)
	}
	for _, v := range []float64{num("radius_nas_last_access_request_timestamp_seconds"), num("radius_nas_last_accounting_timestamp_seconds"),
		num("radius_nas_last_coa_timestamp_seconds", "outcome", "ok")} {
		if v < float64(time.Now().Add(-time.Hour).Unix()) {
			t.Fatalf("a NAS timestamp %v", v)
		}
	}
}
