//go:build soak

package cli

// The soak run: `go test -tags soak ./cli -run Soak -v -timeout 30m`.
// It builds xr, serves a real tenant from a child process on loopback and
// drives it for XR_SOAK (default 10m) with mixed API writes, RADIUS auth and
// accounting at a fraction of the capacity measured first, a backup every
// minute and a kill -9 with restart at half time; then it checks that every
// acknowledged write is stored exactly once and reports the figures (t.Log,
// and JSON to XR_SOAK_OUT when set).

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"xr/db"
	"xr/radiusd/sim"
)

const (
	soakSlug     = "soak"
	soakDomain   = "xr.test"
	soakSecret   = "soak-loopback-nas-secret-0123456789"
	soakAuthFmt  = "user0%04d" // user00000.. for authentication
	soakAcctFmt  = "user1%04d" // user10000.. for accounting (no simultaneous-use clash)
	soakDepRate  = 8.0         // deposits per second (4 workers)
	soakEditRate = 4.0         // PATCH per second (2 workers)
	soakRedRate  = 0.8         // card redemptions per second (bucket card_redeem: 60/min per operator)
)

// soakEnv reads the run's knobs.
type soakEnv struct {
	Duration time.Duration `json:"duration"`
	Load     float64       `json:"radius_load"` // fraction of capacity for the auth+acct mix
	Users    int           `json:"users_per_stream"`
}

func readSoakEnv(t *testing.T) soakEnv {
	e := soakEnv{Duration: 10 * time.Minute, Load: 0.5, Users: 2000}
	if v := os.Getenv("XR_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			t.Fatalf("XR_SOAK=%q: want a duration of at least 1m", v)
		}
		e.Duration = d
	}
	if v := os.Getenv("XR_SOAK_LOAD"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 2 {
			t.Fatalf("XR_SOAK_LOAD=%q: want a fraction of capacity", v)
		}
		e.Load = f
	}
	return e
}

// ---------------------------------------------------------------- server

type soakServer struct {
	bin, data  string
	http       string // host:port
	auth, acct string
	log        *os.File
	cmd        *exec.Cmd
	exited     chan struct{}
	waitErr    error
}

func (s *soakServer) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(s.bin, "--data", s.data, "--log-level", "info", "serve", "--http", s.http, "--domain", soakDomain,
		"--radius-auth", s.auth, "--radius-acct", s.acct)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func() { s.waitErr = cmd.Wait(); close(s.exited) }()
	// Ready when /readyz answers 200.
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, _ := http.NewRequest("GET", "http://"+s.http+"/readyz", nil)
		req.Host = soakDomain
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		select {
		case <-s.exited:
			t.Fatalf("xr serve exited: %v; log:\n%s", s.waitErr, tailFile(s.log.Name(), 4000))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("xr serve not ready after 20 s; log:\n%s", tailFile(s.log.Name(), 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *soakServer) pid() int { return s.cmd.Process.Pid }

func (s *soakServer) kill(t *testing.T) {
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.exited
}

// stop asks for a clean shutdown and reports how long it took.
func (s *soakServer) stop(t *testing.T) (time.Duration, error) {
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	select {
	case <-s.exited:
		return time.Since(start), s.waitErr
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		return time.Since(start), errors.New("no exit within 60 s of SIGTERM")
	}
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func freeTCP(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func freeUDP(t *testing.T) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().String()
}

// ---------------------------------------------------------------- API client

type soakAPI struct {
	base  string
	hc    *http.Client
	mu    sync.RWMutex
	token string
}

type apiAnswer struct {
	status int
	data   map[string]any
	raw    []byte
	took   time.Duration
}

// do sends one request to the tenant host; err is a transport error (no
// HTTP answer).
func (a *soakAPI) do(method, path string, body any) (apiAnswer, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.base+"/api/v1"+path, rd)
	req.Host = soakSlug + "." + soakDomain
	req.Header.Set("Content-Type", "application/json")
	a.mu.RLock()
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	a.mu.RUnlock()
	start := time.Now()
	res, err := a.hc.Do(req)
	if err != nil {
		return apiAnswer{}, err
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	if err != nil {
		return apiAnswer{}, err
	}
	out := apiAnswer{status: res.StatusCode, raw: raw, took: took}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &env) == nil && len(env.Data) > 0 && env.Data[0] == '{' {
		json.Unmarshal(env.Data, &out.data)
	}
	return out, nil
}

func (a *soakAPI) login() error {
	r, err := a.do("POST", "/auth/login", map[string]any{"email": "owner", "password": cliPassword})
	if err != nil {
		return err
	}
	tok, _ := r.data["token"].(string)
	if r.status != 200 || tok == "" {
		return fmt.Errorf("login: %d %s", r.status, r.raw)
	}
	a.mu.Lock()
	a.token = tok
	a.mu.Unlock()
	return nil
}

func (a *soakAPI) must(t *testing.T, method, path string, body any, want ...int) apiAnswer {
	t.Helper()
	r, err := a.do(method, path, body)
	if err != nil || !slices.Contains(want, r.status) {
		t.Fatalf("%s %s: %v %d %s", method, path, err, r.status, r.raw)
	}
	return r
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// ---------------------------------------------------------------- figures

// apiFigures counts answers by operation and status, and latencies by
// minute of the run.
type apiFigures struct {
	mu       sync.Mutex
	start    time.Time
	status   map[string]map[string]int          // op -> "200", "409", "conn" -> count
	lat      map[int]map[string][]time.Duration // minute -> op -> latencies of answered requests
	samples5 []string                           // first 5xx answers
	replays  map[string]int
}

func (f *apiFigures) add(op string, r apiAnswer, err error, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status[op] == nil {
		f.status[op] = map[string]int{}
	}
	if err != nil {
		f.status[op]["conn"]++
		return
	}
	f.status[op][strconv.Itoa(r.status)]++
	m := int(at.Sub(f.start) / time.Minute)
	if f.lat[m] == nil {
		f.lat[m] = map[string][]time.Duration{}
	}
	f.lat[m][op] = append(f.lat[m][op], r.took)
	if r.status >= 500 && len(f.samples5) < 20 {
		f.samples5 = append(f.samples5, fmt.Sprintf("%s %d %s", op, r.status, r.raw))
	}
	if r.status < 300 && r.data["replay"] == true {
		f.replays[op]++
	}
}

func (f *apiFigures) class(op, prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for k, v := range f.status[op] {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

type deposit struct {
	user   int64
	amount int64 // thousandths
}

type redemption struct {
	rid, redemptionID, user int64
	face                    int64
}

// ledgerBook is what the writers were told happened.
type ledgerBook struct {
	mu           sync.Mutex
	acked        map[string]deposit // deposit request_id -> what was acknowledged
	unacked      map[string]deposit // sent, never answered 2xx (conn error at the end, 4xx, 5xx)
	ackedAt      map[string]time.Time
	redeemed     []redemption
	editAcked    map[int64]string // user -> notes of the last acknowledged PATCH
	editUnknown  map[int64]string // user -> notes of a PATCH left unanswered at the end
	editsAcked   int
	connRetries  map[string]int
	reloginCount int
}

type radiusMinute struct {
	Minute    int     `json:"minute"`
	Stream    string  `json:"stream"`
	Requests  int64   `json:"requests"`
	PerSecond float64 `json:"per_second"`
	Accepted  int64   `json:"accepted"`
	Rejected  int64   `json:"rejected"`
	AcctAcked int64   `json:"acct_acked"`
	Timeouts  int64   `json:"timeouts"`
	Failed    int64   `json:"failed"`
	Bad       int64   `json:"bad_replies"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
}

type procSample struct {
	At    string  `json:"at"`
	T     float64 `json:"t_seconds"`
	PID   int     `json:"pid"`
	RSSkB int64   `json:"rss_kb"`
	FDs   int     `json:"open_files"`
}

type backupCheck struct {
	Minute  int     `json:"minute"`
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
	Check   string  `json:"check"`   // "ok" or the failure
	Missing int     `json:"missing"` // deposits acknowledged before the backup started, absent from it
	Covered int     `json:"covered"`
}

type apiMinute struct {
	Minute int                `json:"minute"`
	Ops    map[string]latency `json:"ops"`
}

type latency struct {
	N     int     `json:"n"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

type soakReport struct {
	Env                soakEnv                   `json:"env"`
	Command            string                    `json:"command"`
	LoadAvgStart       string                    `json:"loadavg_start"`
	LoadAvgEnd         string                    `json:"loadavg_end"`
	AuthCapacity       float64                   `json:"auth_capacity_per_second"`
	AcctCapacity       float64                   `json:"acct_capacity_per_second"`
	AuthRate           float64                   `json:"auth_rate"`
	AcctRate           float64                   `json:"acct_rate"`
	Status             map[string]map[string]int `json:"api_status"`
	Replays            map[string]int            `json:"api_replays"`
	FiveXX             int                       `json:"api_5xx"`
	Samples5xx         []string                  `json:"api_5xx_samples,omitempty"`
	DepositsAcked      int                       `json:"deposits_acked"`
	DepositsLost       int                       `json:"deposits_acked_lost"`
	DepositsWrong      int                       `json:"deposits_acked_wrong_amount_or_user"`
	DepositsDuplicated int                       `json:"deposits_duplicated"`
	DepositsUnackedIn  int                       `json:"deposits_unacked_applied"`
	DepositsUnacked    int                       `json:"deposits_unacked"`
	RedemptionsAcked   int                       `json:"redemptions_acked"`
	RedemptionsLost    int                       `json:"redemptions_acked_lost"`
	CardsRedeemedTwice int                       `json:"cards_redeemed_twice"`
	EditsAcked         int                       `json:"edits_acked"`
	EditsLost          int                       `json:"edits_acked_lost"`
	BalanceMismatches  int                       `json:"balances_not_equal_ledger_sum"`
	Integrity          string                    `json:"integrity_check"`
	ConnRetries        map[string]int            `json:"conn_error_retries"`
	Relogins           int                       `json:"relogins"`
	KillAt             float64                   `json:"kill_at_seconds"`
	RestartGapSeconds  float64                   `json:"restart_gap_seconds"`
	ShutdownSeconds    float64                   `json:"shutdown_seconds"`
	ShutdownErr        string                    `json:"shutdown_error,omitempty"`
	ServerLogErrors    int                       `json:"server_log_error_lines"`
	ServerLogPanics    int                       `json:"server_log_panics"`
	ServerLogSample    []string                  `json:"server_log_error_sample,omitempty"`
	ServerLogTail      []string                  `json:"server_log_tail"`
	APIMinutes         []apiMinute               `json:"api_minutes"`
	Radius             []radiusMinute            `json:"radius_minutes"`
	RadiusTimeouts     int64                     `json:"radius_timeouts"`
	RadiusFailed       int64                     `json:"radius_failed"`
	Backups            []backupCheck             `json:"backups"`
	Proc               []procSample              `json:"proc"`
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func sampleProc(pid int, at string, since time.Time) procSample {
	s := procSample{At: at, T: time.Since(since).Seconds(), PID: pid}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "VmRSS:") {
				f := strings.Fields(line)
				if len(f) >= 2 {
					s.RSSkB, _ = strconv.ParseInt(f[1], 10, 64)
				}
			}
		}
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		s.FDs = len(ents)
	}
	return s
}

// ---------------------------------------------------------------- the run

func TestSoak(t *testing.T) {
	env := readSoakEnv(t)
	rep := soakReport{Env: env, LoadAvgStart: loadavg(),
		Command: "go test -tags soak ./cli -run Soak -v -timeout 30m (XR_SOAK=" + env.Duration.String() + ")"}
	work := t.TempDir()
	bin := buildXR(t)
	data := filepath.Join(work, "data")
	xr := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append([]string{"--data", data}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("xr %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	xr(createArgs(soakSlug, "--max-users", "unlimited", "--tier", "max")...)
	xr("nas", "add", "--tenant", soakSlug, "--name", "loopback", "--ip", "127.0.0.1", "--secret", soakSecret)

	logf, err := os.Create(filepath.Join(work, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	srv := &soakServer{bin: bin, data: data, http: freeTCP(t), auth: freeUDP(t), acct: freeUDP(t), log: logf}
	srv.start(t)
	defer func() {
		if srv.cmd.ProcessState == nil {
			srv.cmd.Process.Kill()
			<-srv.exited
		}
	}()
	api := &soakAPI{base: "http://" + srv.http, hc: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}}}
	if err := api.login(); err != nil {
		t.Fatal(err)
	}

	// A plan, the subscribers (imported from a CSV by the CLI while serve
	// runs) and a refill card series.
	api.must(t, "POST", "/admin/profiles", map[string]any{"name": "Soak 10M", "price": 10, "duration_days": 30,
		"rate_down_kbps": 10240, "rate_up_kbps": 2048}, 200, 201)
	var csv strings.Builder
	csv.WriteString("username,password,profile,expiration,balance\n")
	exp := time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")
	for _, f := range []string{soakAuthFmt, soakAcctFmt} {
		for i := range env.Users {
			fmt.Fprintf(&csv, "%s,pass,Soak 10M,%s,10\n", fmt.Sprintf(f, i), exp)
		}
	}
	csvPath := filepath.Join(work, "users.csv")
	if err := os.WriteFile(csvPath, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	xr("import", "users", "--tenant", soakSlug, "--file", csvPath)

	cardQty := int(env.Duration.Seconds()*soakRedRate) + 100
	const face = 2000 // thousandths: 2.000
	series := api.must(t, "POST", "/card-batches", map[string]any{"type": "refill", "quantity": cardQty, "face_value": 2,
		"expiration": exp, "request_id": "soak-series-1", "name": "soak"}, 202)
	batch := num(series.data["batch_id"])
	waitFor(t, "card series ready", func() bool {
		r, err := api.do("GET", fmt.Sprintf("/card-batches/%d", batch), nil)
		return err == nil && r.data["status"] == "ready"
	})
	var codes []string
	for page := 1; len(codes) < cardQty; page++ {
		r := api.must(t, "GET", fmt.Sprintf("/card-batches/%d/cards?page_size=200&page=%d", batch, page), nil, 200)
		var list struct {
			Data []struct {
				Code string `json:"code"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.raw, &list); err != nil || len(list.Data) == 0 {
			t.Fatalf("cards page %d: %v %s", page, err, r.raw)
		}
		for _, c := range list.Data {
			codes = append(codes, c.Code)
		}
	}

	tenantFile := db.TenantPath(data, soakSlug)
	ro, err := sql.Open("sqlite", "file:"+tenantFile+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	var userIDs []int64
	rows, err := ro.Query(`SELECT id FROM users ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		userIDs = append(userIDs, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	ro.Close()
	if len(userIDs) != 2*env.Users {
		t.Fatalf("%d subscribers after the import, want %d", len(userIDs), 2*env.Users)
	}

	// RADIUS sees the imported subscribers.
	base := sim.Config{AuthAddr: srv.auth, AcctAddr: srv.acct, Secret: soakSecret, LocalIP: "127.0.0.1", PasswordFormat: "pass",
		Users: env.Users, Timeout: time.Second, Retries: 2}
	waitFor(t, "RADIUS accepts an imported subscriber", func() bool {
		c := base
		c.Mode, c.UserFormat, c.Users, c.Count, c.Concurrency, c.Retries = sim.ModeAuth, soakAuthFmt, 1, 1, 1, 0
		r, err := sim.Run(context.Background(), c)
		return err == nil && r.Accepted == 1
	})

	// Capacity: each stream alone, unpaced, 5 s (acct-churn sessions of
	// the calibration are numbered below those of the run).
	calib := func(mode sim.Mode, format string) float64 {
		c := base
		c.Mode, c.UserFormat, c.Concurrency, c.Duration = mode, format, 32, 5*time.Second
		r, err := sim.Run(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("capacity %s: %.0f/s (p99 %.2f ms, timeouts %d)", mode, r.PerSecond, r.P99Ms, r.Timeouts)
		return r.PerSecond
	}
	rep.AuthCapacity = calib(sim.ModeAuth, soakAuthFmt)
	rep.AcctCapacity = calib(sim.ModeAcctChurn, soakAcctFmt)
	// The mix runs at env.Load of capacity: each stream at half of that
	// share of its own solo capacity (both at 50 % of their solo rates
	// would together load the server fully).
	rep.AuthRate = rep.AuthCapacity * env.Load / 2
	rep.AcctRate = rep.AcctCapacity * env.Load / 2

	// ------------------------------------------------------------ run
	runStart := time.Now()
	end := runStart.Add(env.Duration)
	fig := &apiFigures{start: runStart, status: map[string]map[string]int{}, lat: map[int]map[string][]time.Duration{}, replays: map[string]int{}}
	book := &ledgerBook{acked: map[string]deposit{}, unacked: map[string]deposit{}, ackedAt: map[string]time.Time{},
		editAcked: map[int64]string{}, editUnknown: map[int64]string{}, connRetries: map[string]int{}}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var procMu sync.Mutex
	var curPID atomic.Int64
	curPID.Store(int64(srv.pid()))
	sample := func(at string) {
		procMu.Lock()
		rep.Proc = append(rep.Proc, sampleProc(int(curPID.Load()), at, runStart))
		procMu.Unlock()
	}
	sample("start")

	// send retries a write on transport errors (the server is down during
	// the restart) with the same body, until an HTTP answer or the end.
	send := func(op, method, path string, body any) (apiAnswer, bool) {
		for {
			at := time.Now()
			r, err := api.do(method, path, body)
			fig.add(op, r, err, at)
			if err == nil && r.status == 401 {
				book.mu.Lock()
				book.reloginCount++
				book.mu.Unlock()
				if err := api.login(); err != nil {
					t.Errorf("login again after a 401: %v", err)
					return r, false
				}
				continue
			}
			if err == nil {
				return r, true
			}
			book.mu.Lock()
			book.connRetries[op]++
			book.mu.Unlock()
			if stop.Load() {
				return r, false
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	paced := func(rate float64, fn func(rng *rand.Rand)) {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer tick.Stop()
		for !stop.Load() {
			<-tick.C
			if stop.Load() {
				return
			}
			fn(rng)
		}
	}

	var depSeq, editSeq, redSeq atomic.Int64
	for range 4 {
		wg.Add(1)
		go paced(soakDepRate/4, func(rng *rand.Rand) {
			n := depSeq.Add(1)
			rid := fmt.Sprintf("soak-dep-%d", n)
			d := deposit{user: userIDs[rng.IntN(len(userIDs))], amount: 1 + rng.Int64N(10_000)}
			body := map[string]any{"amount": json.RawMessage(fmt.Sprintf("%d.%03d", d.amount/1000, d.amount%1000)), "request_id": rid}
			r, answered := send("deposit", "POST", fmt.Sprintf("/users/%d/deposit", d.user), body)
			book.mu.Lock()
			if answered && r.status < 300 {
				book.acked[rid], book.ackedAt[rid] = d, time.Now()
			} else {
				book.unacked[rid] = d
			}
			book.mu.Unlock()
		})
	}
	for w := range 2 {
		wg.Add(1)
		go paced(soakEditRate/2, func(rng *rand.Rand) {
			// Worker w edits only the subscribers of its parity, so the
			// edits of one subscriber are ordered.
			u := userIDs[2*rng.IntN(len(userIDs)/2)+w]
			notes := fmt.Sprintf("soak edit %d", editSeq.Add(1))
			r, answered := send("edit", "PATCH", fmt.Sprintf("/users/%d", u), map[string]any{"notes": notes})
			book.mu.Lock()
			switch {
			case answered && r.status < 300:
				book.editAcked[u] = notes
				book.editsAcked++
				delete(book.editUnknown, u)
			case !answered:
				book.editUnknown[u] = notes
			}
			book.mu.Unlock()
		})
	}
	wg.Add(1)
	go paced(soakRedRate, func(rng *rand.Rand) {
		i := redSeq.Add(1) - 1
		if int(i) >= len(codes) {
			return
		}
		u := userIDs[rng.IntN(len(userIDs))]
		body := map[string]any{"code": codes[i], "user_id": u, "request_id": fmt.Sprintf("soak-red-%d", i)}
		r, answered := send("redeem", "POST", "/cards/redeem", body)
		if answered && r.status < 300 {
			book.mu.Lock()
			book.redeemed = append(book.redeemed, redemption{rid: i, redemptionID: num(r.data["redemption_id"]), user: u, face: face})
			book.mu.Unlock()
		}
	})

	// RADIUS: one paced sim run per minute and stream.
	var radMu sync.Mutex
	var radWG sync.WaitGroup
	radius := func(stream string, mode sim.Mode, format string, rate float64) {
		defer radWG.Done()
		for k := 0; time.Now().Before(end); k++ {
			sliceEnd := runStart.Add(time.Duration(k+1) * time.Minute)
			if sliceEnd.After(end) {
				sliceEnd = end
			}
			c := base
			c.Mode, c.UserFormat, c.Concurrency, c.Rate = mode, format, 16, rate
			c.Duration = time.Until(sliceEnd)
			c.First = (k + 1) * 40_000_000 // new Acct-Session-Ids every slice
			if c.Duration <= 0 {
				continue
			}
			r, err := sim.Run(context.Background(), c)
			if err != nil {
				t.Errorf("sim %s: %v", stream, err)
				return
			}
			radMu.Lock()
			rep.Radius = append(rep.Radius, radiusMinute{Minute: k, Stream: stream, Requests: r.Requests, PerSecond: r.PerSecond,
				Accepted: r.Accepted, Rejected: r.Rejected, AcctAcked: r.AcctAcked, Timeouts: r.Timeouts, Failed: r.Failed,
				Bad: r.BadReplies, P50Ms: r.P50Ms, P99Ms: r.P99Ms, MaxMs: r.MaxMs})
			radMu.Unlock()
		}
	}
	radWG.Add(2)
	go radius("auth", sim.ModeAuth, soakAuthFmt, rep.AuthRate)
	go radius("acct", sim.ModeAcctChurn, soakAcctFmt, rep.AcctRate)

	// Backups at 30 s past every minute, each checked: it opens (integrity,
	// tenant marker, schema), and holds every deposit acknowledged before it
	// started.
	var bkWG sync.WaitGroup
	bkWG.Add(1)
	go func() {
		defer bkWG.Done()
		for k := 0; ; k++ {
			at := runStart.Add(time.Duration(k)*time.Minute + 30*time.Second)
			if at.After(end) {
				return
			}
			time.Sleep(time.Until(at))
			book.mu.Lock()
			before := make([]string, 0, len(book.acked))
			for rid := range book.acked {
				before = append(before, rid)
			}
			book.mu.Unlock()
			out := filepath.Join(work, fmt.Sprintf("backup-%02d.xrbak", k))
			bc := backupCheck{Minute: k, Covered: len(before)}
			t0 := time.Now()
			b, err := exec.Command(bin, "--data", data, "backup", "--tenant", soakSlug, "--out", out).CombinedOutput()
			bc.Seconds = time.Since(t0).Seconds()
			if err != nil {
				bc.Check = fmt.Sprintf("backup failed: %v %s", err, b)
			} else {
				bc.Check = checkBackup(out, before, &bc)
			}
			if st, err := os.Stat(out); err == nil {
				bc.Bytes = st.Size()
			}
			os.Remove(out)
			radMu.Lock()
			rep.Backups = append(rep.Backups, bc)
			radMu.Unlock()
		}
	}()

	// Process samples every minute; the kill -9 and restart at half time.
	killAt := runStart.Add(env.Duration / 2)
	killed := false
	for k := 1; ; k++ {
		next := runStart.Add(time.Duration(k) * time.Minute)
		if !killed && !killAt.After(next) {
			time.Sleep(time.Until(killAt))
			sample("before kill")
			rep.KillAt = time.Since(runStart).Seconds()
			t0 := time.Now()
			srv.kill(t)
			srv.start(t)
			rep.RestartGapSeconds = time.Since(t0).Seconds()
			curPID.Store(int64(srv.pid()))
			sample("after restart")
			killed = true
		}
		if next.After(end) {
			break
		}
		time.Sleep(time.Until(next))
		sample(fmt.Sprintf("minute %d", k))
	}
	time.Sleep(time.Until(end))
	stop.Store(true)
	wg.Wait()
	radWG.Wait()
	bkWG.Wait()
	sample("end")
	rep.LoadAvgEnd = loadavg()
	took, err := srv.stop(t)
	rep.ShutdownSeconds = took.Seconds()
	if err != nil {
		rep.ShutdownErr = err.Error()
	}

	// ------------------------------------------------------------ checks
	verifyStore(t, tenantFile, book, &rep)

	fig.mu.Lock()
	rep.Status, rep.Replays, rep.Samples5xx = fig.status, fig.replays, fig.samples5
	var minutes []int
	for m := range fig.lat {
		minutes = append(minutes, m)
	}
	slices.Sort(minutes)
	for _, m := range minutes {
		am := apiMinute{Minute: m, Ops: map[string]latency{}}
		var all []time.Duration
		for op, d := range fig.lat[m] {
			am.Ops[op] = lat(d)
			all = append(all, d...)
		}
		am.Ops["all"] = lat(all)
		rep.APIMinutes = append(rep.APIMinutes, am)
	}
	fig.mu.Unlock()
	for _, op := range []string{"deposit", "edit", "redeem"} {
		rep.FiveXX += fig.class(op, "5")
	}
	for _, r := range rep.Radius {
		rep.RadiusTimeouts += r.Timeouts
		rep.RadiusFailed += r.Failed
	}
	book.mu.Lock()
	rep.ConnRetries, rep.Relogins = book.connRetries, book.reloginCount
	book.mu.Unlock()
	logText, _ := os.ReadFile(logf.Name())
	for _, line := range strings.Split(string(logText), "\n") {
		if strings.Contains(line, "level=ERROR") {
			rep.ServerLogErrors++
			if len(rep.ServerLogSample) < 10 {
				rep.ServerLogSample = append(rep.ServerLogSample, line)
			}
		}
		if strings.HasPrefix(line, "panic:") || strings.Contains(line, "fatal error:") {
			rep.ServerLogPanics++
		}
	}

	if lines := strings.Split(strings.TrimSpace(string(logText)), "\n"); len(lines) > 0 {
		rep.ServerLogTail = lines[max(0, len(lines)-6):]
	}
	t.Log("\n" + rep.table())
	if out := os.Getenv("XR_SOAK_OUT"); out != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Error(err)
		}
	}

	// What must hold.
	if rep.DepositsLost != 0 || rep.DepositsWrong != 0 || rep.DepositsDuplicated != 0 {
		t.Errorf("deposits: %d acknowledged lost, %d wrong, %d duplicated", rep.DepositsLost, rep.DepositsWrong, rep.DepositsDuplicated)
	}
	if rep.RedemptionsLost != 0 || rep.CardsRedeemedTwice != 0 || rep.EditsLost != 0 {
		t.Errorf("redemptions lost %d, cards redeemed twice %d, edits lost %d", rep.RedemptionsLost, rep.CardsRedeemedTwice, rep.EditsLost)
	}
	if rep.BalanceMismatches != 0 || rep.Integrity != "ok" {
		t.Errorf("%d balances differ from their ledger sums; integrity %q", rep.BalanceMismatches, rep.Integrity)
	}
	if rep.FiveXX != 0 {
		t.Errorf("%d 5xx answers: %v", rep.FiveXX, rep.Samples5xx)
	}
	for _, b := range rep.Backups {
		if b.Check != "ok" || b.Missing != 0 {
			t.Errorf("backup %d: %s, %d acknowledged deposits missing", b.Minute, b.Check, b.Missing)
		}
	}
	if rep.ShutdownErr != "" || rep.ServerLogPanics != 0 {
		t.Errorf("shutdown: %s; %d panics in the server log", rep.ShutdownErr, rep.ServerLogPanics)
	}
	if rep.DepositsAcked == 0 || rep.EditsAcked == 0 || rep.RedemptionsAcked == 0 {
		t.Errorf("a writer never got an acknowledgement: %+v", rep.Status)
	}
}

func lat(d []time.Duration) latency {
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	return latency{N: len(d), P50Ms: ms(quantile(d, .5)), P99Ms: ms(quantile(d, .99)), MaxMs: ms(quantile(d, 1))}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: gave up after 20 s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkBackup opens a backup like restore would and counts the deposits
// acknowledged before it started that it lacks.
func checkBackup(path string, before []string, bc *backupCheck) string {
	ctx := context.Background()
	if _, err := db.CheckTenantFile(ctx, path); err != nil {
		return "check: " + err.Error()
	}
	c, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	have, err := depositIDs(c)
	if err != nil {
		return err.Error()
	}
	for _, rid := range before {
		if len(have[rid]) == 0 {
			bc.Missing++
		}
	}
	return "ok"
}

type ledgerRow struct{ user, amount int64 }

func depositIDs(c *sql.DB) (map[string][]ledgerRow, error) {
	rows, err := c.Query(`SELECT request_id, user_id, amount FROM user_ledger WHERE kind = 'deposit' AND request_id LIKE 'soak-dep-%'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]ledgerRow{}
	for rows.Next() {
		var rid string
		var r ledgerRow
		if err := rows.Scan(&rid, &r.user, &r.amount); err != nil {
			return nil, err
		}
		out[rid] = append(out[rid], r)
	}
	return out, rows.Err()
}

// verifyStore reads the tenant file (the server stopped) and matches it
// with what the writers were told.
func verifyStore(t *testing.T, path string, book *ledgerBook, rep *soakReport) {
	c, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.QueryRow(`PRAGMA integrity_check`).Scan(&rep.Integrity); err != nil {
		t.Fatal(err)
	}
	have, err := depositIDs(c)
	if err != nil {
		t.Fatal(err)
	}
	book.mu.Lock()
	defer book.mu.Unlock()
	rep.DepositsAcked, rep.DepositsUnacked = len(book.acked), len(book.unacked)
	for rid, d := range book.acked {
		rows := have[rid]
		switch {
		case len(rows) == 0:
			rep.DepositsLost++
			if rep.DepositsLost <= 10 {
				t.Logf("lost acknowledged deposit %s (user %d, %d, acknowledged at %s)", rid, d.user, d.amount, book.ackedAt[rid].Format(time.RFC3339Nano))
			}
		case rows[0].user != d.user || rows[0].amount != d.amount:
			rep.DepositsWrong++
		}
	}
	for rid, rows := range have {
		if len(rows) > 1 {
			rep.DepositsDuplicated++
		}
		if _, ok := book.unacked[rid]; ok {
			rep.DepositsUnackedIn++
		}
	}

	refill := map[int64][]ledgerRow{}
	rows, err := c.Query(`SELECT ref_id, user_id, amount FROM user_ledger WHERE kind = 'card_refill' AND ref_type = 'card_redemption'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var r ledgerRow
		if err := rows.Scan(&id, &r.user, &r.amount); err != nil {
			t.Fatal(err)
		}
		refill[id] = append(refill[id], r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	rep.RedemptionsAcked = len(book.redeemed)
	for _, r := range book.redeemed {
		l := refill[r.redemptionID]
		if len(l) != 1 || l[0].user != r.user || l[0].amount != r.face {
			rep.RedemptionsLost++
		}
	}
	if err := c.QueryRow(`SELECT COUNT(*) FROM (SELECT card_id FROM card_redemptions GROUP BY card_id HAVING COUNT(*) > 1)`).Scan(&rep.CardsRedeemedTwice); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(`SELECT COUNT(*) FROM users u WHERE u.balance != (SELECT COALESCE(SUM(l.amount), 0) FROM user_ledger l WHERE l.user_id = u.id)`).Scan(&rep.BalanceMismatches); err != nil {
		t.Fatal(err)
	}

	rep.EditsAcked = book.editsAcked
	for u, want := range book.editAcked {
		var got string
		if err := c.QueryRow(`SELECT notes FROM users WHERE id = ?`, u).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want && got != book.editUnknown[u] {
			rep.EditsLost++
			t.Logf("subscriber %d: notes %q, last acknowledged edit %q", u, got, want)
		}
	}
}

func (r *soakReport) table() string {
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) }
	w("soak run: %s, %d+%d subscribers; load average start %s, end %s", r.Env.Duration, r.Env.Users, r.Env.Users, r.LoadAvgStart, r.LoadAvgEnd)
	w("RADIUS capacity alone: auth %.0f/s, acct-churn %.0f/s; run at %.0f %% of it: auth %.0f/s + acct %.0f/s",
		r.AuthCapacity, r.AcctCapacity, 100*r.Env.Load, r.AuthRate, r.AcctRate)
	w("")
	w("API answers by status (conn = transport error, retried with the same request_id):")
	for _, op := range []string{"deposit", "edit", "redeem"} {
		var keys []string
		for k := range r.Status[op] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.Status[op][k]))
		}
		w("  %-8s %s; replays %d", op, strings.Join(parts, ", "), r.Replays[op])
	}
	w("5xx answers                          %d", r.FiveXX)
	w("deposits acknowledged                %d", r.DepositsAcked)
	w("  acknowledged and lost              %d", r.DepositsLost)
	w("  acknowledged, wrong user/amount    %d", r.DepositsWrong)
	w("  in the ledger more than once       %d", r.DepositsDuplicated)
	w("  unacknowledged (left at the end)   %d (%d of them applied)", r.DepositsUnacked, r.DepositsUnackedIn)
	w("redemptions acknowledged / lost      %d / %d; cards redeemed twice %d", r.RedemptionsAcked, r.RedemptionsLost, r.CardsRedeemedTwice)
	w("edits acknowledged / lost            %d / %d", r.EditsAcked, r.EditsLost)
	w("balances != sum of ledger rows       %d", r.BalanceMismatches)
	w("integrity_check                      %s", r.Integrity)
	w("kill -9 at %.1f s; restart to ready %.2f s; clean shutdown at the end %.2f s %s", r.KillAt, r.RestartGapSeconds, r.ShutdownSeconds, r.ShutdownErr)
	w("server log: %d ERROR lines, %d panics", r.ServerLogErrors, r.ServerLogPanics)
	for _, l := range r.ServerLogSample {
		w("  %s", l)
	}
	w("server log, last lines:")
	for _, l := range r.ServerLogTail {
		w("  %s", l)
	}
	w("")
	w("API latency per minute (ms, p50 / p99 / max, n):")
	for _, m := range r.APIMinutes {
		var parts []string
		for _, op := range []string{"deposit", "edit", "redeem", "all"} {
			l := m.Ops[op]
			parts = append(parts, fmt.Sprintf("%s %.1f/%.1f/%.0f n=%d", op, l.P50Ms, l.P99Ms, l.MaxMs, l.N))
		}
		w("  min %2d  %s", m.Minute, strings.Join(parts, "  "))
	}
	w("RADIUS per minute (answered/s, p99 ms, timeouts, failed, rejects):")
	rad := slices.Clone(r.Radius)
	slices.SortFunc(rad, func(a, b radiusMinute) int {
		if a.Minute != b.Minute {
			return a.Minute - b.Minute
		}
		return strings.Compare(a.Stream, b.Stream)
	})
	for _, m := range rad {
		w("  min %2d  %-4s %7.0f/s  p50 %6.2f  p99 %7.2f  max %7.1f  timeouts %4d  failed %4d  rejected %d  bad %d",
			m.Minute, m.Stream, m.PerSecond, m.P50Ms, m.P99Ms, m.MaxMs, m.Timeouts, m.Failed, m.Rejected, m.Bad)
	}
	w("RADIUS timeouts (tries) %d, requests failed after retries %d", r.RadiusTimeouts, r.RadiusFailed)
	w("backups (every minute, while serving):")
	for _, bk := range r.Backups {
		w("  min %2d  %.2f s  %d bytes  %s  covers %d acknowledged deposits, missing %d", bk.Minute, bk.Seconds, bk.Bytes, bk.Check, bk.Covered, bk.Missing)
	}
	w("server process (RSS kB, open files):")
	for _, p := range r.Proc {
		w("  %7.1f s  %-13s pid %-7d rss %7d kB  fds %d", p.T, p.At, p.PID, p.RSSkB, p.FDs)
	}
	return b.String()
}
