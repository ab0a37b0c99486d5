package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	lradius "layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"

	"xr/internal/xrtest"
)

// A primary replicating to a file:// replica and a standby following it,
// two xr processes on loopback: what the primary writes reaches the
// standby's RADIUS answers, the standby refuses writes, reports its lag
// and lets staff sign in to read; it keeps answering once the primary is
// killed and, with --promote-after, promotes itself without losing a
// request.
func TestStandbyFollowsPrimary(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	bin := buildXR(t)
	pdata, sdata, rdir := filepath.Join(work, "primary"), filepath.Join(work, "standby"), filepath.Join(work, "replica")
	primary, api, tok := startPrimary(t, bin, pdata, work, rdir)
	api.do("POST", "/admin/profiles", tok, map[string]any{"name": "Home", "price": 10, "duration_days": 30}, 201)
	api.do("POST", "/users", tok, map[string]any{"username": "alice", "password": "alice-pw", "profile_id": 1, "expiration": "2099-01-01"}, 201)
	api.do("POST", "/admin/profiles", tok, map[string]any{"name": "Capped", "price": 10, "duration_days": 30, "bytes_limit": 1_000_000}, 201)
	var dave struct {
		Data struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(api.do("POST", "/users", tok, map[string]any{"username": "dave", "password": "dave-pw", "profile_id": 2}, 201), &dave); err != nil {
		t.Fatal(err)
	}
	api.do("POST", fmt.Sprintf("/users/%d/activation", dave.Data.ID), tok, map[string]any{"request_id": "activate-dave"}, 200) // the plan's quota on dave

	standby := startXR(t, bin, sdata, work, "standby", "--standby-of", "file://"+rdir, "--promote-after", "8s")
	sapi := &testAPI{t: t, base: "http://" + standby.http}
	beats := recordBeats(t, sdata)

	t.Run("a subscriber created on the primary is accepted by the standby", func(t *testing.T) {
		api.do("POST", "/users", tok, map[string]any{"username": "bob", "password": "bob-pw", "profile_id": 1, "expiration": "2099-01-01"}, 201)
		xrtest.Eventually(t, "the standby accepts bob", func() bool {
			return accessCode(t, standby.auth, nasSecret, "bob", "bob-pw") == lradius.CodeAccessAccept
		})
		if c := accessCode(t, standby.auth, nasSecret, "bob", "wrong-pw"); c != lradius.CodeAccessReject {
			t.Fatalf("a wrong password on the standby: %v", c)
		}
	})

	t.Run("a write on the standby answers 503 standby_read_only and stores nothing", func(t *testing.T) {
		body := sapi.do("POST", "/users", tok, map[string]any{"username": "carol", "password": "carol-pw", "profile_id": 1}, 503)
		var env struct {
			Error struct {
				Code    string         `json:"code"`
				Message string         `json:"message"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Error.Code != "ERR_MAINTENANCE" || env.Error.Details["reason"] != "standby_read_only" {
			t.Fatalf("want ERR_MAINTENANCE standby_read_only, got %s", body)
		}
		if !strings.Contains(env.Error.Message, "standby") {
			t.Errorf("the message does not say why: %q", env.Error.Message)
		}
		for _, a := range []*testAPI{api, sapi} {
			if list := a.do("GET", "/users", tok, nil, 200); bytes.Contains(list, []byte(`"carol"`)) {
				t.Fatalf("carol was stored (%s): %s", a.base, list)
			}
		}
	})

	t.Run("readyz, metrics and the console report the standby and its lag", func(t *testing.T) {
		var ready struct {
			Data struct {
				Standby struct {
					Of         string   `json:"of"`
					Lag        *float64 `json:"lag_seconds"`
					LastCommit string   `json:"last_commit"`
				} `json:"standby"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sapi.do("GET", "/readyz", "", nil, 200), &ready); err != nil {
			t.Fatal(err)
		}
		if sb := ready.Data.Standby; sb.Of != "file://"+rdir || sb.Lag == nil || *sb.Lag < 0 || sb.LastCommit == "" {
			t.Fatalf("/readyz standby = %+v", sb)
		}
		metrics := string(sapi.do("GET", "/metrics", "", nil, 200))
		for _, m := range []string{"xr_replication_lag_seconds ", "xr_replication_last_commit_timestamp_seconds ", "xr_replication_follower_up 1"} {
			if !strings.Contains(metrics, m) {
				t.Errorf("/metrics has no %q", m)
			}
		}
		if strings.Contains(string(api.do("GET", "/metrics", "", nil, 200)), "xr_replication_lag_seconds") {
			t.Error("the primary reports a replication lag")
		}
		if page := string(sapi.do("GET", "/login", "", nil, 200)); !strings.Contains(page, `class="standby"`) || !strings.Contains(page, "Standby server") {
			t.Error("the standby's console shows no standby banner")
		}
		if strings.Contains(string(api.do("GET", "/login", "", nil, 200)), `class="standby"`) {
			t.Error("the primary's console shows the standby banner")
		}
	})

	t.Run("staff sign in on the standby and read; the session is revoked on sign-out", func(t *testing.T) {
		var res struct {
			Data struct {
				Token        string `json:"token"`
				RefreshToken string `json:"refresh_token"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sapi.do("POST", "/auth/login", "", map[string]any{"email": "owner", "password": cliPassword, "refresh": true}, 200), &res); err != nil || res.Data.Token == "" {
			t.Fatalf("sign-in on the standby: %+v %v", res, err)
		}
		if res.Data.RefreshToken != "" {
			t.Error("a standby gave a refresh token (refreshing writes)")
		}
		local := res.Data.Token
		if list := sapi.do("GET", "/users", local, nil, 200); !bytes.Contains(list, []byte(`"alice"`)) {
			t.Fatalf("subscribers read with the standby's session: %s", list)
		}
		sapi.do("POST", "/users", local, map[string]any{"username": "carol", "password": "carol-pw", "profile_id": 1}, 503)
		api.do("GET", "/auth/me", local, nil, 401) // a standby's session is its own
		sapi.do("POST", "/auth/logout", local, nil, 200)
		if body := sapi.do("GET", "/auth/me", local, nil, 401); !bytes.Contains(body, []byte(`"session_revoked"`)) {
			t.Fatalf("after sign-out: %s", body)
		}

		// The console: the sign-in form, then a page with the banner.
		jar, _ := cookiejar.New(nil)
		browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		form := url.Values{"email": {"owner"}, "password": {cliPassword}, "next": {"/users"}}
		r, err := browser.PostForm(sapi.base+"/login", form)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/users" {
			t.Fatalf("console sign-in on the standby: %d to %q", r.StatusCode, r.Header.Get("Location"))
		}
		r, err = browser.Get(sapi.base + "/users")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 || !bytes.Contains(page, []byte(`class="standby"`)) || !bytes.Contains(page, []byte("alice")) {
			t.Fatalf("the console's subscribers on the standby: %d\n%s", r.StatusCode, page)
		}
	})

	t.Run("accounting on the standby is journaled and counted in its quota decisions", func(t *testing.T) {
		xrtest.Eventually(t, "the standby accepts dave", func() bool {
			return accessCode(t, standby.auth, nasSecret, "dave", "dave-pw") == lradius.CodeAccessAccept
		})
		for _, st := range []rfc2866.AcctStatusType{rfc2866.AcctStatusType_Value_Start, rfc2866.AcctStatusType_Value_InterimUpdate} {
			p := lradius.New(lradius.CodeAccountingRequest, []byte(nasSecret))
			_ = rfc2865.UserName_SetString(p, "dave")
			_ = rfc2866.AcctStatusType_Set(p, st)
			_ = rfc2866.AcctSessionID_SetString(p, "dave-1")
			if st == rfc2866.AcctStatusType_Value_InterimUpdate {
				_ = rfc2866.AcctInputOctets_Set(p, 600_000)
				_ = rfc2866.AcctOutputOctets_Set(p, 600_000)
				_ = rfc2866.AcctSessionTime_Set(p, 60)
			}
			if c := exchange(t, standby.acct, p); c != lradius.CodeAccountingResponse {
				t.Fatalf("accounting %v on the standby answered %v", st, c)
			}
		}
		j, err := sql.Open("sqlite", "file:"+filepath.Join(sdata, "standby", "journal.db")+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		var n, bytes int64
		if err := j.QueryRow(`SELECT COUNT(*), MAX(bytes) FROM acct_journal WHERE tenant = 'acme' AND session_id = 'dave-1'`).Scan(&n, &bytes); err != nil || n != 2 || bytes != 1_200_000 {
			t.Fatalf("journal: %d records, %d bytes (%v); want 2 and 1200000", n, bytes, err)
		}
		if c := accessCode(t, standby.auth, nasSecret, "dave", "dave-pw"); c != lradius.CodeAccessReject {
			t.Fatalf("dave past his 1 MB quota on the standby's own accounting: %v", c)
		}
		if c := accessCode(t, primary.auth, nasSecret, "dave", "dave-pw"); c != lradius.CodeAccessAccept {
			t.Fatalf("the primary never saw that usage, yet: %v", c)
		}
	})

	t.Run("a session the standby saw start counts in its simultaneous use until it stops", func(t *testing.T) {
		acct := func(st rfc2866.AcctStatusType, sid string) {
			t.Helper()
			p := lradius.New(lradius.CodeAccountingRequest, []byte(nasSecret))
			_ = rfc2866.AcctStatusType_Set(p, st)
			if sid != "" {
				_ = rfc2865.UserName_SetString(p, "alice")
				_ = rfc2866.AcctSessionID_SetString(p, sid)
			}
			if c := exchange(t, standby.acct, p); c != lradius.CodeAccountingResponse {
				t.Fatalf("accounting %v on the standby answered %v", st, c)
			}
		}
		acct(rfc2866.AcctStatusType_Value_Start, "alice-1")
		if c := accessCode(t, standby.auth, nasSecret, "alice", "alice-pw"); c != lradius.CodeAccessReject {
			t.Fatalf("alice's second login beside the session the standby saw start (plan: one at a time): %v", c)
		}
		acct(rfc2866.AcctStatusType_Value_Stop, "alice-1")
		if c := accessCode(t, standby.auth, nasSecret, "alice", "alice-pw"); c != lradius.CodeAccessAccept {
			t.Fatalf("alice after her session stopped on the standby: %v", c)
		}
		// A NAS that restarts (Accounting-On) ends the sessions it had.
		acct(rfc2866.AcctStatusType_Value_Start, "alice-2")
		if c := accessCode(t, standby.auth, nasSecret, "alice", "alice-pw"); c != lradius.CodeAccessReject {
			t.Fatalf("alice beside her second session: %v", c)
		}
		acct(rfc2866.AcctStatusType_Value_AccountingOn, "")
		if c := accessCode(t, standby.auth, nasSecret, "alice", "alice-pw"); c != lradius.CodeAccessAccept {
			t.Fatalf("alice after her NAS restarted: %v", c)
		}
	})

	t.Run("while the primary beats, the standby does not promote itself", func(t *testing.T) {
		// Ten heartbeats seen span more than --promote-after.
		xrtest.Eventually(t, "ten heartbeats of the primary seen by the standby", func() bool { return beats.count() >= 10 })
		var ready struct {
			Data struct {
				Standby map[string]any `json:"standby"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sapi.do("GET", "/readyz", "", nil, 200), &ready); err != nil {
			t.Fatal(err)
		}
		sb := ready.Data.Standby
		if silent, ok := sb["primary_silent_seconds"].(float64); sb == nil || sb["promote_after_seconds"] != 8.0 || !ok || silent >= 8 {
			t.Fatalf("standby /readyz while the primary beats: %v", sb)
		}
		if !strings.Contains(string(sapi.do("GET", "/metrics", "", nil, 200)), "xr_replication_primary_silent_seconds ") {
			t.Error("/metrics has no xr_replication_primary_silent_seconds")
		}
		sapi.do("POST", "/users", tok, map[string]any{"username": "zoe", "password": "zoe-pw", "profile_id": 1}, 503)
	})

	t.Run("after kill -9 of the primary the standby answers, promotes itself and loses no request", func(t *testing.T) {
		// An Access-Request and a connection every 20 ms from the kill
		// until after the promotion, none retried: the promoted box
		// re-executes itself with its sockets kept open, so none is
		// refused or left unanswered (answers may come a second late).
		probe := startProbe(t, standby, "alice", "alice-pw")
		primary.kill(t)
		for range 3 {
			if c := accessCode(t, standby.auth, nasSecret, "alice", "alice-pw"); c != lradius.CodeAccessAccept {
				t.Fatalf("alice on the standby without its primary: %v", c)
			}
		}
		xrtest.Eventually(t, "the standby promoted itself", func() bool {
			res, err := http.Get(sapi.base + "/readyz")
			if err != nil {
				return false
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return res.StatusCode == 200 && !bytes.Contains(b, []byte(`"standby"`))
		})
		sapi.do("POST", "/users", tok, map[string]any{"username": "zoe", "password": "zoe-pw", "profile_id": 1}, 201)
		if b, err := os.ReadFile(filepath.Join(sdata, "standby", "promoted.json")); err != nil || !bytes.Contains(b, []byte(`"generation":2`)) {
			t.Fatalf("promotion record: %s %v", b, err)
		}
		if sent, failed := probe.stop(); len(failed) > 0 {
			t.Fatalf("%d of %d requests sent to the standby during its promotion failed: %v", len(failed), sent, failed)
		} else {
			t.Logf("%d requests during the promotion, all answered", sent)
		}
	})
}

// beatRecorder counts the distinct heartbeats of the primary a standby's
// follower reported, polling its status until the test ends.
type beatRecorder struct {
	mu    sync.Mutex
	beats map[uint64]bool
}

func recordBeats(t *testing.T, sdata string) *beatRecorder {
	r := &beatRecorder{beats: map[uint64]bool{}}
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(done); <-stopped })
	go func() {
		defer close(stopped)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var st struct {
				Beat uint64 `json:"heartbeat"`
			}
			if b, err := os.ReadFile(filepath.Join(sdata, "standby", "follow.json")); err == nil && json.Unmarshal(b, &st) == nil && st.Beat != 0 {
				r.mu.Lock()
				r.beats[st.Beat] = true
				r.mu.Unlock()
			}
		}
	}()
	return r
}

func (r *beatRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.beats)
}

const nasSecret = "standby-test-secret"

// startPrimary makes an instance with tenant acme and a loopback NAS
// (nasSecret) in pdata and serves it replicating to rdir; it returns the
// process, its API and the owner's token.
func startPrimary(t *testing.T, bin, pdata, work, rdir string) (*xrProcess, *testAPI, string) {
	t.Helper()
	xr := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(bin, append([]string{"--data", pdata}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("xr %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	xr(createArgs("acme")...)
	xr("nas", "add", "--tenant", "acme", "--name", "lo", "--ip", "127.0.0.1", "--secret", nasSecret, "--no-message-authenticator")
	primary := startXR(t, bin, pdata, work, "primary", "--replicate-to", "file://"+rdir)
	api := &testAPI{t: t, base: "http://" + primary.http}
	return primary, api, api.login()
}

// xrProcess is an xr serve process of a test.
type xrProcess struct {
	cmd              *exec.Cmd
	http, auth, acct string
	exited           chan struct{}
}

// startXR runs xr serve on data with free loopback ports and waits for
// /readyz.
func startXR(t *testing.T, bin, data, work, name string, extra ...string) *xrProcess {
	t.Helper()
	return startXREnv(t, bin, data, work, name, nil, extra...)
}

// startXREnv is startXR with env added to the process's environment.
func startXREnv(t *testing.T, bin, data, work, name string, env []string, extra ...string) *xrProcess {
	t.Helper()
	p := &xrProcess{http: freeAddr(t, "tcp"), auth: freeAddr(t, "udp"), acct: freeAddr(t, "udp"), exited: make(chan struct{})}
	args := append([]string{"--data", data, "serve", "--http", p.http, "--domain", "xr.test", "--default-tenant", "acme",
		"--radius-auth", p.auth, "--radius-acct", p.acct}, extra...)
	logf, err := os.Create(filepath.Join(work, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); logf.Close(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(work, name+".log"))
			t.Logf("%s log:\n%s", name, b)
		}
	})
	xrtest.Eventually(t, name+" /readyz", func() bool {
		select {
		case <-p.exited:
			b, _ := os.ReadFile(filepath.Join(work, name+".log"))
			t.Fatalf("%s exited:\n%s", name, b)
		default:
		}
		res, err := http.Get("http://" + p.http + "/readyz")
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		// A fenced box serves too (refusing writes): its /readyz says so.
		return res.StatusCode == 200 || res.StatusCode == 503 && bytes.Contains(b, []byte(`"fenced"`))
	})
	return p
}

func (p *xrProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// freeAddr is a loopback address free a moment ago.
func freeAddr(t *testing.T, network string) string {
	t.Helper()
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().String()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// accessCode sends one PAP Access-Request and returns the answer's code.
func accessCode(t *testing.T, addr, nasSecret, user, pw string) lradius.Code {
	t.Helper()
	p := lradius.New(lradius.CodeAccessRequest, []byte(nasSecret))
	_ = rfc2865.UserName_SetString(p, user)
	_ = rfc2865.UserPassword_SetString(p, pw)
	return exchange(t, addr, p)
}

// exchange sends p and returns the answer's code.
func exchange(t *testing.T, addr string, p *lradius.Packet) lradius.Code {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := (&lradius.Client{Retry: time.Second}).Exchange(ctx, p, addr)
	if err != nil {
		t.Fatalf("%v to %s: %v", p.Code, addr, err)
	}
	return res.Code
}

// testAPI calls an xr process's API as the default tenant.
type testAPI struct {
	t    *testing.T
	base string
}

func (a *testAPI) login() string {
	var res struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := json.Unmarshal(a.do("POST", "/auth/login", "", map[string]any{"email": "owner", "password": cliPassword}, 200), &res); err != nil {
		a.t.Fatal(err)
	}
	return res.Data.Token
}

// do sends one request (to /api/v1 unless path is a root probe) and
// checks the status.
func (a *testAPI) do(method, path, tok string, body any, want int) []byte {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	url := a.base + "/api/v1" + path
	if path == "/readyz" || path == "/metrics" || path == "/login" {
		url = a.base + path
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		a.t.Fatalf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, b)
	}
	return b
}
