package radiusd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"xr/radiusd"
	"xr/radiusd/sim"
)

// Benchmarks: the server runs in the benchmark process with an in-memory
// backend; the load generator (package sim) runs in a child process (this
// test binary re-executed), so that the server's CPU time per request can
// be measured apart from the client's. Both share the machine, as a
// RADIUS server and its load generator would in the comparison.
//
//	go test -run '^$' -bench . -benchtime 200000x ./radiusd/

const benchSecret = "bench-secret-0123"

type memDirectory struct{ nas *radiusd.NAS }

func (d memDirectory) LookupNAS(ip netip.Addr) (*radiusd.NAS, bool) {
	if ip == d.nas.IP {
		return d.nas, true
	}
	return nil, false
}

// memAuthorizer is the in-memory authorization index the app keeps
// coherent with the database: a read-locked map lookup per request.
type memAuthorizer struct {
	mu    sync.RWMutex
	users map[string]radiusd.Authorization
}

func (a *memAuthorizer) Authorize(_ context.Context, req *radiusd.AuthRequest) (radiusd.Authorization, error) {
	a.mu.RLock()
	az, ok := a.users[req.Username]
	a.mu.RUnlock()
	az.Found = ok
	return az, nil
}

// memAccounter applies batches in memory; commitDelay simulates an fsync.
type memAccounter struct {
	commitDelay time.Duration
	records     atomic.Int64
}

func (a *memAccounter) RecordAccounting(_ context.Context, recs []radiusd.AcctRecord) error {
	if a.commitDelay > 0 {
		time.Sleep(a.commitDelay)
	}
	a.records.Add(int64(len(recs)))
	return nil
}

func startBenchServer(b *testing.B, acct *memAccounter) (*radiusd.Server, string, string) {
	return startServerT(b, acct)
}

func startServerT(b testing.TB, acct *memAccounter) (*radiusd.Server, string, string) {
	b.Helper()
	users := make(map[string]radiusd.Authorization, 10000)
	for i := range 10000 {
		users[fmt.Sprintf("user%05d", i)] = radiusd.Authorization{Password: "pass", SessionTimeout: 86400,
			InterimInterval: 300, RateDownKbps: 20480, RateUpKbps: 5120, Class: []byte("plan:20M")}
	}
	nas := &radiusd.NAS{TenantSlug: "bench", ID: 1, Name: "sim", IP: netip.MustParseAddr("127.0.0.1"),
		Secret: []byte(benchSecret), Type: radiusd.NASTypeMikrotik, RequireMessageAuthenticator: true}
	s := &radiusd.Server{Directory: memDirectory{nas}, Authorizer: &memAuthorizer{users: users}, Accounter: acct,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if v := os.Getenv("XR_BENCH_WORKERS"); v != "" {
		s.Workers, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("XR_BENCH_BATCHWAIT"); v != "" {
		s.BatchWait, _ = time.ParseDuration(v)
	}
	ac, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	cc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ac, cc)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s, ac.LocalAddr().String(), cc.LocalAddr().String()
}

// TestSimChild is the load-generator half of the benchmarks; it only runs
// when re-executed by one.
func TestSimChild(t *testing.T) {
	t.Parallel()
	js := os.Getenv("XR_SIM_CHILD")
	if js == "" {
		t.Skip("runs only as a benchmark's child process")
	}
	var cfg sim.Config
	if err := json.Unmarshal([]byte(js), &cfg); err != nil {
		t.Fatal(err)
	}
	rep, err := sim.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(rep)
	fmt.Printf("\nSIMREPORT %s\n", out)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func runSim(b *testing.B, cfg sim.Config) {
	b.Helper()
	js, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSimChild$", "-test.bench=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), "XR_SIM_CHILD="+string(js))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	b.ResetTimer()
	cpu0 := cpuTime()
	err := cmd.Run()
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if err != nil {
		b.Fatalf("load generator: %v\n%s", err, out.String())
	}
	var rep sim.Report
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "SIMREPORT "); ok {
			if err := json.Unmarshal([]byte(line), &rep); err != nil {
				b.Fatal(err)
			}
		}
	}
	if rep.Mode == "" {
		b.Fatalf("no report from the load generator:\n%s", out.String())
	}
	unit := "auth/s"
	switch rep.Mode {
	case sim.ModeAcctInterim:
		unit = "acct/s"
	case sim.ModeStorm:
		unit = "sessions/s"
		b.ReportMetric(float64(rep.SessionsLost), "lost")
	}
	if rep.Mode == sim.ModeStorm {
		b.ReportMetric(rep.SessionsPerSec, unit)
	} else {
		b.ReportMetric(rep.PerSecond, unit)
	}
	b.ReportMetric(rep.P50Ms, "p50-ms")
	b.ReportMetric(rep.P99Ms, "p99-ms")
	b.ReportMetric(float64(rep.Timeouts), "timeouts")
	if rep.Requests > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(rep.Requests), "server-cpu-µs/req")
	}
	if testing.Verbose() {
		b.Logf("N=%d\n%s", b.N, rep)
	}
}

// BenchmarkAuthPAP: PAP Access-Requests with Message-Authenticator, 10,000
// users, 64 in flight.
func BenchmarkAuthPAP(b *testing.B) {
	_, auth, _ := startBenchServer(b, &memAccounter{})
	runSim(b, sim.Config{Mode: sim.ModeAuth, AuthAddr: auth, Secret: benchSecret, Users: 10000,
		Concurrency: 64, Count: b.N, Timeout: 2 * time.Second})
}

// BenchmarkAcctInterim: Interim-Updates, each answered after its batch's
// (in-memory) commit.
func BenchmarkAcctInterim(b *testing.B) {
	_, _, acct := startBenchServer(b, &memAccounter{})
	runSim(b, sim.Config{Mode: sim.ModeAcctInterim, AcctAddr: acct, Secret: benchSecret, Sessions: 10000,
		Concurrency: 64, Count: b.N, Timeout: 2 * time.Second})
}

// BenchmarkAcctInterimFsync: as above with a 2 ms commit, the cost of an
// fsync on an SSD, to show that group commit keeps throughput.
func BenchmarkAcctInterimFsync(b *testing.B) {
	_, _, acct := startBenchServer(b, &memAccounter{commitDelay: 2 * time.Millisecond})
	runSim(b, sim.Config{Mode: sim.ModeAcctInterim, AcctAddr: acct, Secret: benchSecret, Sessions: 10000,
		Concurrency: 64, Count: b.N, Timeout: 2 * time.Second})
}

// BenchmarkNASRebootStorm: Accounting-On, then b.N × (Access-Request +
// Accounting-Start). Run with -benchtime 10000x for the scenario.
func BenchmarkNASRebootStorm(b *testing.B) {
	acct := &memAccounter{commitDelay: 2 * time.Millisecond}
	_, auth, acctAddr := startBenchServer(b, acct)
	runSim(b, sim.Config{Mode: sim.ModeStorm, AuthAddr: auth, AcctAddr: acctAddr, Secret: benchSecret,
		Users: 10000, Sessions: 10000, Concurrency: 64, Count: b.N, Timeout: time.Second, Retries: 2})
}

// TestServeMemChild serves RADIUS with the in-memory backend on the
// addresses in XR_BENCH_SERVE ("auth,acct") until killed: the radiusd core
// alone under an external load generator (bench/radius_profile.py --core),
// to tell its cost from the app's. Skipped unless the variable is set.
func TestServeMemChild(t *testing.T) {
	addrs := os.Getenv("XR_BENCH_SERVE")
	if addrs == "" {
		t.Skip("runs only under bench/radius_profile.py --core")
	}
	auth, acct, _ := strings.Cut(addrs, ",")
	users := make(map[string]radiusd.Authorization, 10000)
	for i := 1; i <= 10000; i++ {
		users[fmt.Sprintf("user%05d", i)] = radiusd.Authorization{Password: fmt.Sprintf("pass%05d", i), SessionTimeout: 86400,
			InterimInterval: 300, RateDownKbps: 10240, RateUpKbps: 10240}
	}
	nas := &radiusd.NAS{TenantSlug: "bench", ID: 1, Name: "bench", IP: netip.MustParseAddr("127.0.0.1"),
		Secret: []byte(os.Getenv("XR_BENCH_SECRET")), Type: radiusd.NASTypeMikrotik}
	s := &radiusd.Server{Directory: memDirectory{nas}, Authorizer: &memAuthorizer{users: users}, Accounter: &memAccounter{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := s.ListenAndServe(ctx, auth, acct); err != nil {
		t.Fatal(err)
	}
}
