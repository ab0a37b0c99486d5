package console_test

// HTTP tests of the device gateway pages (prefix cdg): what the browser
// test does not walk — bulk close, close all, the terminal's ticket
// endpoint, a changed host key accepted from the page, refused forms.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"xr/app"
	"xr/app/devgw"
	"xr/internal/sshtest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// cdgPage is a signed-in console client over plain HTTP.
type cdgPage struct {
	t *testing.T
	k *webtest.Kit
	c *http.Client
}

func cdgSignIn(t *testing.T, k *webtest.Kit, user string) *cdgPage {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &cdgPage{t: t, k: k, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if st, _, _ := p.do("POST", "/login", url.Values{"email": {user}, "password": {webtest.Password}}); st != http.StatusSeeOther {
		t.Fatalf("sign in %s: %d", user, st)
	}
	return p
}

// do sends a page request (a form when f is not nil) and answers the
// status, the Location and the body.
func (p *cdgPage) do(method, path string, f url.Values) (int, string, string) {
	p.t.Helper()
	var body io.Reader
	if f != nil {
		body = strings.NewReader(f.Encode())
	}
	req, err := http.NewRequest(method, p.k.TS.URL+path, body)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Host = "acme.xr.test"
	if f != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := p.c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Location"), string(b)
}

// cdgOpen opens a console through the page's ticket endpoint and waits
// for the gateway's "opened": the console's id.
func (p *cdgPage) cdgOpen(nas int64) (*webtest.GatewayTerm, int64) {
	p.t.Helper()
	st, _, body := p.do("POST", fmt.Sprintf("/remote/nas/%d/ticket", nas), url.Values{})
	var tk struct{ URL string }
	if err := json.Unmarshal([]byte(body), &tk); st != 200 || err != nil || !strings.HasPrefix(tk.URL, "/api/v1/admin/devgw/ssh/ws?ticket=") {
		p.t.Fatalf("ticket: %d %s", st, body)
	}
	tm, res, err := webtest.DialGateway(p.k, "acme", tk.URL)
	if err != nil {
		p.t.Fatalf("dial: %v %v", err, res)
	}
	tm.Write(p.t, 1, `{"type":"resize","cols":80,"rows":24}`)
	m := tm.WaitControl(p.t, "opened")
	return tm, int64(m["session_id"].(float64))
}

// cdgSetup is dgSetup's instance (loopback allowed, an SSH server there, a
// NAS at 127.0.0.1 with its SSH access) without rate limits: the pages
// here mint more tickets in a minute than t_probe lets one manager.
func cdgSetup(t *testing.T) (*webtest.Kit, string, *sshtest.Server, int64) {
	t.Helper()
	k := webtest.NewWith(t, app.Config{AllowPrivateEgress: true}, unlimited{}, nil)
	tok := k.Owner("acme")
	srv := sshtest.Start(t, "admin", "router-pass")
	r := k.Do("POST", "acme", "/api/v1/admin/nas", tok, map[string]any{"name": "core", "ip": "127.0.0.1", "secret": "a-long-shared-secret"})
	if r.Status != 201 {
		t.Fatalf("nas: %d %s", r.Status, r.Body)
	}
	nas := int64(r.Data()["id"].(float64))
	cv, err := devgw.PutCredentials(t.Context(), k.System("acme"), devgw.KindNAS, nas, devgw.CredentialsInput{Port: app.Opt[int]{Set: true, V: srv.Port},
		Username: app.Opt[string]{Set: true, V: "admin"}, Password: app.Opt[string]{Set: true, V: "router-pass"}})
	if err != nil || !cv.HasPassword {
		t.Fatalf("credentials: %+v %v", cv, err)
	}
	return k, tok, srv, nas
}

func TestConsoleDevgwPages(t *testing.T) {
	t.Parallel()
	k, tok, srv, nas := cdgSetup(t)
	p := cdgSignIn(t, k, "owner")
	sys := k.System("acme")
	state := func(sid int64) (string, string) {
		t.Helper()
		s, err := devgw.GetSession(t.Context(), sys, sid)
		if err != nil {
			t.Fatal(err)
		}
		return s.State, s.EndReason
	}

	// Three consoles; the list shows them live.
	t1, s1 := p.cdgOpen(nas)
	_, s2 := p.cdgOpen(nas)
	t3, s3 := p.cdgOpen(nas)
	st, _, body := p.do("GET", "/console-sessions?state=live", nil)
	for _, sid := range []int64{s1, s2, s3} {
		if st != 200 || !strings.Contains(body, fmt.Sprintf(`data-session="%d" data-state="live"`, sid)) {
			t.Fatalf("live list (%d) lacks console %d:\n%s", st, sid, body)
		}
	}
	// Close selected: only s1; its terminal is told why.
	back := "/console-sessions?state=live"
	if st, loc, _ := p.do("POST", "/console-sessions/bulk-close", url.Values{"ids": {strconv.FormatInt(s1, 10)}, "back": {back}}); st != 303 || loc != back {
		t.Fatalf("bulk close: %d → %q", st, loc)
	}
	if m := t1.WaitControl(t, "closed"); m["reason"] != devgw.ReasonClosedByStaff {
		t.Fatalf("closed message %v", m)
	}
	if s, r := state(s1); s != devgw.StateEnded || r != devgw.ReasonClosedByStaff {
		t.Fatalf("console %d after bulk close: %s %s", s1, s, r)
	}
	if s, _ := state(s2); s != devgw.StateLive {
		t.Fatalf("console %d not selected but %s", s2, s)
	}
	if _, _, body := p.do("GET", back, nil); !strings.Contains(body, "1 consoles closed.") {
		t.Fatalf("bulk close flash missing:\n%s", body)
	}
	// Nothing selected: a refusal in words, nothing closed.
	if st, _, _ := p.do("POST", "/console-sessions/bulk-close", url.Values{"back": {back}}); st != 303 {
		t.Fatalf("empty bulk close: %d", st)
	}
	if s, _ := state(s2); s != devgw.StateLive {
		t.Fatalf("an empty bulk close closed %d", s2)
	}
	// Close all in scope: the other two end.
	if st, loc, _ := p.do("POST", "/console-sessions/close-all", url.Values{"back": {"//evil.example/"}}); st != 303 || loc != "/console-sessions" {
		t.Fatalf("close all: %d → %q", st, loc)
	}
	t3.WaitControl(t, "closed")
	for _, sid := range []int64{s2, s3} {
		if s, r := state(sid); s != devgw.StateEnded || r != devgw.ReasonClosedByStaff {
			t.Fatalf("console %d after close all: %s %s", sid, s, r)
		}
	}
	// Closing an ended console again says so, and changes nothing.
	if st, _, _ := p.do("POST", fmt.Sprintf("/console-sessions/%d/close", s1), url.Values{}); st != 303 {
		t.Fatalf("close an ended console: %d", st)
	}
	if _, _, body := p.do("GET", "/console-sessions", nil); !strings.Contains(body, `class="flash bad"`) {
		t.Fatalf("no refusal shown for closing an ended console:\n%s", body)
	}
	// A bad filter is said beside its field.
	if st, _, body := p.do("GET", "/console-sessions?state=bogus", nil); st != 400 || !strings.Contains(body, `id="e-state"`) {
		t.Fatalf("bad state filter: %d", st)
	}

	// The device's host key changes: the console is refused with the
	// reason, the page shows both keys, and accepting the new one from
	// the page lets the next console in.
	old := srv.Fingerprint()
	srv.SetHostKey(sshtest.NewSigner(t))
	st, _, body = p.do("POST", fmt.Sprintf("/remote/nas/%d/ticket", nas), url.Values{})
	var tk struct{ URL string }
	if err := json.Unmarshal([]byte(body), &tk); st != 200 || err != nil {
		t.Fatalf("ticket: %d %s", st, body)
	}
	tm, _, err := webtest.DialGateway(k, "acme", tk.URL)
	if err != nil {
		t.Fatal(err)
	}
	tm.Write(t, 1, `{"type":"resize","cols":80,"rows":24}`)
	if m := tm.WaitControl(t, "error"); m["reason"] != "host_key_changed" {
		t.Fatalf("changed host key: %v", m)
	}
	xrtest.Eventually(t, "pending host key stored", func() bool {
		cv, err := devgw.GetCredentials(t.Context(), sys, devgw.KindNAS, nas)
		return err == nil && cv.HostKeyPending == srv.Fingerprint()
	})
	st, _, body = p.do("GET", fmt.Sprintf("/remote/nas/%d", nas), nil)
	if st != 200 || !strings.Contains(body, `id="devgw-hostkey-changed"`) || !strings.Contains(body, cdgEsc(old)) || !strings.Contains(body, cdgEsc(srv.Fingerprint())) {
		t.Fatalf("console page with a pending host key: %d\n%s", st, body)
	}
	if st, _, _ := p.do("POST", fmt.Sprintf("/remote/nas/%d/accept-host-key", nas), url.Values{"fingerprint": {srv.Fingerprint()}}); st != 303 {
		t.Fatalf("accept host key: %d", st)
	}
	if cv, err := devgw.GetCredentials(t.Context(), sys, devgw.KindNAS, nas); err != nil || cv.HostKey != srv.Fingerprint() || cv.HostKeyPending != "" {
		t.Fatalf("host key after accepting: %+v %v", cv, err)
	}
	tm4, _ := p.cdgOpen(nas)
	tm4.Write(t, 2, "echo again\r")
	tm4.WaitOut(t, "again")

	// A refused SSH access form is re-shown with the reason beside the
	// field; the stored access is unchanged and no secret is echoed.
	st, _, body = p.do("POST", fmt.Sprintf("/remote/nas/%d/credentials", nas), url.Values{"port": {"99999"}, "username": {"root"}, "password": {"s3cret-pw"}})
	if st != 400 || !strings.Contains(body, `id="e-port"`) || strings.Contains(body, "s3cret-pw") {
		t.Fatalf("refused port: %d\n%s", st, body)
	}
	if cv, err := devgw.GetCredentials(t.Context(), sys, devgw.KindNAS, nas); err != nil || cv.Username != "admin" || cv.Port != srv.Port {
		t.Fatalf("a refused form changed the access: %+v %v", cv, err)
	}

	// A NAS without SSH access: the ticket endpoint refuses in words, the
	// page says so and offers no connection.
	r := k.Do("POST", "acme", "/api/v1/admin/nas", tok, map[string]any{"name": "edge", "ip": "127.0.0.2", "secret": "a-long-shared-secret"})
	bare := int64(r.Data()["id"].(float64))
	st, _, body = p.do("POST", fmt.Sprintf("/remote/nas/%d/ticket", bare), url.Values{})
	var refusal map[string]string
	if err := json.Unmarshal([]byte(body), &refusal); st != 409 || err != nil || refusal["reason"] != "credentials_missing" || refusal["message"] == "" {
		t.Fatalf("ticket without access: %d %s", st, body)
	}
	st, _, body = p.do("GET", fmt.Sprintf("/remote/nas/%d", bare), nil)
	if st != 200 || !strings.Contains(body, `id="devgw-mint-error"`) || !strings.Contains(body, `data-url=""`) {
		t.Fatalf("console page without access: %d\n%s", st, body)
	}
	// A monitored device: its page has the action, its console page names it.
	xrtest.Exec(t, k.Acquire("acme"), `INSERT INTO settings(key, value) VALUES ('monitoring_network_ranges', '"10.0.0.0/8"')`)
	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/devices", tok, map[string]any{"name": "olt-east", "address": "10.0.0.7", "type": "olt"})
	if r.Status != 201 {
		t.Fatalf("device: %d %s", r.Status, r.Body)
	}
	dev := webtest.DataID(r)
	if st, _, body := p.do("GET", fmt.Sprintf("/monitoring/devices/device/%d", dev), nil); st != 200 || !strings.Contains(body, fmt.Sprintf(`href="/remote/device/%d"`, dev)) {
		t.Fatalf("device page without the console action: %d", st)
	}
	if st, _, body := p.do("GET", fmt.Sprintf("/remote/device/%d", dev), nil); st != 200 || !strings.Contains(body, "Remote console: olt-east") ||
		!strings.Contains(body, fmt.Sprintf(`href="/monitoring/devices/device/%d"`, dev)) {
		t.Fatalf("device console page: %d\n%s", st, body)
	}
	// Unknown kinds and targets are missing pages.
	for _, path := range []string{"/remote/router/1", "/remote/nas/999", "/remote/device/999"} {
		if st, _, _ := p.do("GET", path, nil); st != 404 {
			t.Fatalf("%s: %d, want 404", path, st)
		}
	}
}

// cdgEsc is a fingerprint as html/template writes it in text ('+' too).
func cdgEsc(s string) string { return strings.ReplaceAll(s, "+", "&#43;") }
