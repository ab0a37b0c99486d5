package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The tenants `xr dev tenants` makes: bench00001..., owner "owner" and a
// subscriber "bench", both with benchPassword; the first has a NAS at
// nasIP with nasSecret.
const (
	benchPassword = "Bench-pass-1"
	nasSecret     = "ha-figures-secret"
	nasIP         = "127.1.0.2"
	domain        = "xr.test"
)

func slug(i int) string { return fmt.Sprintf("bench%05d", i+1) }

// server is one `xr serve` process on loopback ports.
type server struct {
	name             string
	cmd              *exec.Cmd
	http, auth, acct string
	exited           chan struct{}
}

// setupData makes tenants bench tenants in a fresh data directory.
func setupData(bin, data string, tenants int) error {
	out, err := exec.Command(bin, "--data", data, "dev", "tenants", "--count", strconv.Itoa(tenants), "--nas", "1",
		"--secret", nasSecret).CombinedOutput()
	if err != nil {
		return fmt.Errorf("xr dev tenants: %v\n%s", err, out)
	}
	return nil
}

// startServer runs xr serve on data (extra: --replicate-to or
// --standby-of) and waits for its /readyz.
func startServer(bin, data, work, name string, extra ...string) (*server, error) {
	s := &server{name: name, exited: make(chan struct{})}
	for _, a := range []*string{&s.http, &s.auth, &s.acct} {
		addr, err := freeAddr(a != &s.http)
		if err != nil {
			return nil, err
		}
		*a = addr
	}
	args := append([]string{"--data", data, "serve", "--http", s.http, "--domain", domain, "--radius-auth", s.auth,
		"--radius-acct", s.acct, "--log-level", "warn", "--allow-private-egress"}, extra...)
	logf, err := os.Create(filepath.Join(work, name+".log"))
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return nil, errors.Join(err, logf.Close())
	}
	go func() { _ = s.cmd.Wait(); _ = logf.Close(); close(s.exited) }()
	if err := s.waitReady(60*time.Second, nil); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// waitReady waits for a 200 from /readyz whose body passes ok (nil: any).
func (s *server) waitReady(limit time.Duration, ok func([]byte) bool) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("%s exited (see its log)", s.name)
		default:
		}
		if res, err := http.Get("http://" + s.http + "/readyz"); err == nil {
			b, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			if res.StatusCode == 200 && (ok == nil || ok(b)) {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s", s.name, limit)
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// kill is kill -9.
func (s *server) kill() error {
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	<-s.exited
	return nil
}

// stop ends the server as an operator would (SIGINT), -9 after 20 s.
func (s *server) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// cpuTicks is the process's user+system CPU in clock ticks (1/100 s on
// Linux), from /proc/PID/stat.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: count from its ")".
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	return u + s, errors.Join(err1, err2)
}

// treeTicks is cpuTicks of pid and its children (a standby's follower).
func treeTicks(pid int) (int64, error) {
	total, err := cpuTicks(pid)
	if err != nil {
		return 0, err
	}
	lists, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range lists {
		b, err := os.ReadFile(l)
		if err != nil {
			continue // the thread ended
		}
		for _, f := range strings.Fields(string(b)) {
			child, err := strconv.Atoi(f)
			if err != nil {
				return 0, err
			}
			if n, err := cpuTicks(child); err == nil {
				total += n
			}
		}
	}
	return total, nil
}

const ticksPerSecond = 100 // USER_HZ, fixed on Linux

// freeAddr is a loopback address free a moment ago.
func freeAddr(udp bool) (string, error) {
	if udp {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		defer func() { _ = c.Close() }()
		return c.LocalAddr().String(), nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// tenantAPI calls one tenant's staff API on any server with a token made
// on the primary (the standby and the promoted box accept it: it is in
// the replicated files).
type tenantAPI struct {
	client *http.Client
	host   string
	token  string
	user   int64 // the subscriber "bench"
}

var httpClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}

// login signs tenant i's owner in on addr from a source address of its
// own (the login bucket counts per address) and finds the subscriber.
func login(addr string, i int) (*tenantAPI, error) {
	from := netip.MustParseAddr(fmt.Sprintf("127.2.%d.%d", i/250, i%250+1))
	d := &net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0))}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	defer c.CloseIdleConnections()
	a := &tenantAPI{client: c, host: slug(i) + "." + domain}
	var tok struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := a.call(addr, "POST", "/auth/login", map[string]string{"email": "owner", "password": benchPassword}, &tok); err != nil {
		return nil, err
	}
	a.token = tok.Data.Token
	var users struct {
		Data []struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	if err := a.call(addr, "GET", "/users", nil, &users); err != nil {
		return nil, err
	}
	if len(users.Data) == 0 {
		return nil, fmt.Errorf("%s: no subscriber", a.host)
	}
	a.user, a.client = users.Data[0].ID, httpClient
	return a, nil
}

// call sends one API request and decodes a 2xx answer into out.
func (a *tenantAPI) call(addr, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+addr+"/api/v1"+path, rd)
	if err != nil {
		return err
	}
	req.Host = a.host
	req.Header.Set("Content-Type", "application/json")
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	res, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s on %s: %d %s", method, path, a.host, res.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// deposit is one acknowledged write: 1 unit with a request id.
func (a *tenantAPI) deposit(addr, requestID string) error {
	return a.call(addr, "POST", fmt.Sprintf("/users/%d/deposit", a.user), map[string]any{"amount": 1, "request_id": requestID}, nil)
}

// balance is the subscriber's balance on addr, in deposits of 1.
func (a *tenantAPI) balance(addr string) (int, error) {
	var u struct {
		Data struct {
			Balance float64 `json:"balance"`
		} `json:"data"`
	}
	err := a.call(addr, "GET", fmt.Sprintf("/users/%d", a.user), nil, &u)
	return int(u.Data.Balance + 0.5), err
}

// loginAll signs in every tenant on addr.
func loginAll(addr string, tenants int) ([]*tenantAPI, error) {
	apis := make([]*tenantAPI, tenants)
	for i := range apis {
		a, err := login(addr, i)
		if err != nil {
			return nil, err
		}
		apis[i] = a
	}
	return apis, nil
}

// replicaBytes is the size of every file under dir by path.
func replicaBytes(dir string) map[string]int64 {
	sizes := map[string]int64{}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				sizes[p] = info.Size()
			}
		}
		return nil
	})
	return sizes
}

// promote runs xr promote on the standby's data directory.
func promote(bin, data string) error {
	out, err := exec.Command(bin, "--data", data, "promote").CombinedOutput()
	if err != nil {
		return fmt.Errorf("xr promote: %v\n%s", err, out)
	}
	return nil
}
