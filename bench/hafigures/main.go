// Command hafigures measures what docs/ha.md promises of a primary and its
// standby (bench/ha.sh runs it): replication lag at a steady rate of API
// writes, what replication costs the primary, and, over several kill -9
// trials, the acknowledged writes lost (RPO) and the RADIUS answers lost
// by a NAS with both servers while the standby is promoted.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type config struct {
	xr, work             string
	tenants, trials      int
	rate, radiusRate     float64
	duration, poll, tail time.Duration
	killMin, killMax     time.Duration
	lagSample, rounds    int
	timeout              time.Duration
	json, keep           bool
}

func main() {
	var c config
	flag.StringVar(&c.xr, "xr", "", "the xr binary (default: go build of the module in the current directory)")
	flag.StringVar(&c.work, "work", "", "work directory (default: a temporary one, removed unless --keep)")
	flag.IntVar(&c.tenants, "tenants", 50, "tenants, one writer each (the API allows a tenant 600 writes a minute)")
	flag.Float64Var(&c.rate, "rate", 1000, "API writes (deposits) a second, over all tenants")
	flag.DurationVar(&c.duration, "duration", 20*time.Second, "steady load for the lag and cost figures (0: skip them)")
	flag.IntVar(&c.lagSample, "lag-sample", 5, "writers whose every write is timed on the standby")
	flag.DurationVar(&c.poll, "poll", 50*time.Millisecond, "how often the standby is polled for the lag")
	flag.IntVar(&c.trials, "trials", 10, "kill -9 trials (0: skip them)")
	flag.DurationVar(&c.killMin, "kill-min", 3*time.Second, "a trial kills the primary at a random moment after this much load")
	flag.DurationVar(&c.killMax, "kill-max", 8*time.Second, "... and before this much")
	flag.Float64Var(&c.radiusRate, "radius-rate", 50, "Access-Requests a second of the NAS during a trial")
	flag.DurationVar(&c.timeout, "timeout", time.Second, "the NAS's timeout per server (RouterOS timeout=1s)")
	flag.IntVar(&c.rounds, "rounds", 2, "times the NAS goes through its server list before giving up")
	flag.DurationVar(&c.tail, "tail", 5*time.Second, "RADIUS load kept after the promotion")
	flag.BoolVar(&c.json, "json", false, "print the figures as JSON")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory (logs, data)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "hafigures:", err)
		os.Exit(1)
	}
}

// figures is the whole output.
type figures struct {
	Date   string  `json:"date"`
	Config string  `json:"config"`
	Load   string  `json:"load_average"`
	Rounds int     `json:"nas_rounds"`
	Steady *steady `json:"steady,omitempty"`
	Trials []trial `json:"trials,omitempty"`
}

func run(c config) (err error) {
	if c.work == "" {
		if c.work, err = os.MkdirTemp("", "xr-ha-"); err != nil {
			return err
		}
		if !c.keep {
			defer func() { _ = os.RemoveAll(c.work) }()
		}
	}
	if c.xr == "" {
		c.xr = filepath.Join(c.work, "xr")
		if out, err := exec.Command("go", "build", "-o", c.xr, ".").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	f := figures{Rounds: c.rounds, Date: time.Now().UTC().Format(time.RFC3339),
		Config: fmt.Sprintf("%d tenants, %.0f writes/s, %s steady, %d trials, NAS %.0f req/s timeout %s x%d rounds",
			c.tenants, c.rate, c.duration, c.trials, c.radiusRate, c.timeout, c.rounds)}
	if c.duration > 0 {
		if f.Steady, err = measureSteady(c); err != nil {
			return err
		}
	}
	for i := range c.trials {
		t, err := runTrial(c, i)
		if err != nil {
			return fmt.Errorf("trial %d: %w", i+1, err)
		}
		f.Trials = append(f.Trials, t)
		fmt.Fprintf(os.Stderr, "trial %d: %s\n", i+1, t)
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f.Load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	if c.json {
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return err
		}
		fmt.Println(string(b))
		return nil
	}
	fmt.Print(f.table())
	return nil
}

// pair is a primary replicating to a file:// replica and its standby, on
// fresh bench tenants, every tenant written once and seen on the standby.
type pair struct {
	primary, standby *server
	sdata            string
	apis             []*tenantAPI
	replica          string
}

func startPair(c config, dir string) (*pair, error) {
	p := &pair{sdata: filepath.Join(dir, "standby"), replica: filepath.Join(dir, "replica")}
	pdata := filepath.Join(dir, "primary")
	if err := setupData(c.xr, pdata, c.tenants); err != nil {
		return nil, err
	}
	var err error
	if p.primary, err = startServer(c.xr, pdata, dir, "primary", "--replicate-to", "file://"+p.replica); err != nil {
		return nil, err
	}
	if p.standby, err = startServer(c.xr, p.sdata, dir, "standby", "--standby-of", "file://"+p.replica); err != nil {
		p.stop()
		return nil, err
	}
	if p.apis, err = warm(p.primary.http, c.tenants); err == nil {
		err = seen(p.standby.http, p.apis, 120*time.Second)
	}
	if err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func (p *pair) stop() {
	for _, s := range []*server{p.primary, p.standby} {
		if s != nil {
			s.stop()
		}
	}
}

// warm signs every tenant in on addr and deposits once in each, so the
// load finds them open.
func warm(addr string, tenants int) ([]*tenantAPI, error) {
	apis, err := loginAll(addr, tenants)
	if err != nil {
		return nil, err
	}
	for i, a := range apis {
		if err := a.deposit(addr, fmt.Sprintf("warm-%d", i)); err != nil {
			return nil, err
		}
	}
	return apis, nil
}

// seen waits until the standby shows every tenant's warm-up deposit.
func seen(standby string, apis []*tenantAPI, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for _, a := range apis {
		for {
			if n, err := a.balance(standby); err == nil && n >= 1 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the standby does not show %s's first deposit after %s", a.host, limit)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

func balances(addr string, apis []*tenantAPI) ([]int, error) {
	out := make([]int, len(apis))
	for i, a := range apis {
		n, err := a.balance(addr)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// trial is one kill -9 of a primary under load and the promotion of its
// standby.
type trial struct {
	KilledAfter time.Duration `json:"killed_after_ns"`
	Acked       int           `json:"acked_writes"`
	Lost        int           `json:"lost_acked_writes"`
	LostSpan    time.Duration `json:"lost_span_ns"` // from the oldest lost acknowledgement to the kill
	Unacked     int           `json:"unacked_but_kept"`
	PromoteTook time.Duration `json:"promote_ns"` // from the kill to xr promote's exit
	Radius      nasResult     `json:"radius"`
}

func (t trial) String() string {
	return fmt.Sprintf("killed after %s: %d acked, %d lost (span %s), promote %s, RADIUS sent %d lost %d (%d in a later round) gap %s max wait %s",
		t.KilledAfter.Round(time.Millisecond), t.Acked, t.Lost, t.LostSpan.Round(time.Millisecond), t.PromoteTook.Round(time.Millisecond),
		t.Radius.Sent, t.Radius.Lost, t.Radius.LaterRound, t.Radius.LongestGap.Round(time.Millisecond), t.Radius.MaxWait.Round(time.Millisecond))
}

func runTrial(c config, i int) (trial, error) {
	dir := filepath.Join(c.work, fmt.Sprintf("trial-%d", i+1))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return trial{}, err
	}
	p, err := startPair(c, dir)
	if err != nil {
		return trial{}, err
	}
	defer p.stop()
	base, err := balances(p.primary.http, p.apis)
	if err != nil {
		return trial{}, err
	}
	n := &nas{servers: []string{p.primary.auth, p.standby.auth}, timeout: c.timeout, rounds: c.rounds, from: netip.MustParseAddr(nasIP)}
	stopNAS, stopWrites := make(chan struct{}), make(chan struct{})
	radius := make(chan nasResult)
	go func() { radius <- n.run(c.radiusRate, stopNAS) }()
	start := time.Now()
	w := runWrites(p.primary.http, p.apis, c.rate, stopWrites)
	time.Sleep(c.killMin + rand.N(c.killMax-c.killMin))
	var t trial
	err = p.primary.kill()
	killed := time.Now()
	t.KilledAfter = killed.Sub(start)
	close(stopWrites)
	if err == nil {
		err = promote(c.xr, p.sdata)
	}
	if err == nil {
		t.PromoteTook = time.Since(killed)
		err = p.standby.waitReady(60*time.Second, func(b []byte) bool { return !strings.Contains(string(b), `"standby"`) })
	}
	time.Sleep(c.tail)
	close(stopNAS)
	t.Radius = <-radius
	<-w.done
	if err != nil {
		return t, err
	}
	after, err := balances(p.standby.http, p.apis)
	if err != nil {
		return t, err
	}
	oldest := killed
	for k, acks := range w.acks {
		kept := after[k] - base[k]
		t.Acked += len(acks)
		t.Unacked += max(0, kept-len(acks))
		for _, at := range acks[min(max(kept, 0), len(acks)):] {
			t.Lost++
			if at.Before(oldest) {
				oldest = at
			}
		}
	}
	t.LostSpan = killed.Sub(oldest)
	return t, nil
}

// steady is the lag and cost figures.
type steady struct {
	Writes      [2]int        `json:"writes"` // acknowledged: without, with replication
	Failed      [2]int        `json:"failed"`
	Rate        [2]float64    `json:"writes_per_s"`
	CPUPerWrite [2]float64    `json:"cpu_ms_per_write"`
	CPUCore     [2]float64    `json:"cpu_pct_of_core"`
	ShippedPerS float64       `json:"replica_bytes_per_s"`
	StandbyCore float64       `json:"standby_cpu_pct_of_core"` // the standby and its follower, lag polls included
	LagN        int           `json:"lag_samples"`
	LagUnseen   int           `json:"lag_unseen"`
	LagP50      time.Duration `json:"lag_p50_ns"`
	LagP99      time.Duration `json:"lag_p99_ns"`
	LagMax      time.Duration `json:"lag_max_ns"`
	ReadyzP50   time.Duration `json:"readyz_lag_p50_ns"` // the standby's own figure: replica → standby
	ReadyzP99   time.Duration `json:"readyz_lag_p99_ns"`
	ReadyzMax   time.Duration `json:"readyz_lag_max_ns"`
}

// measureSteady runs the same load on a primary without replication,
// then on one with a standby.
func measureSteady(c config) (*steady, error) {
	var s steady
	dir := filepath.Join(c.work, "plain")
	if err := setupData(c.xr, filepath.Join(dir, "data"), c.tenants); err != nil {
		return nil, err
	}
	plain, err := startServer(c.xr, filepath.Join(dir, "data"), dir, "plain")
	if err != nil {
		return nil, err
	}
	apis, err := warm(plain.http, c.tenants)
	if err == nil {
		err = s.load(0, c, plain, apis, nil)
	}
	plain.stop()
	if err != nil {
		return nil, err
	}
	p, err := startPair(c, filepath.Join(c.work, "replicated"))
	if err != nil {
		return nil, err
	}
	defer p.stop()
	base, err := balances(p.primary.http, p.apis[:c.lagSample])
	if err != nil {
		return nil, err
	}
	err = s.load(1, c, p.primary, p.apis, func(w *writes) error {
		t0, err := treeTicks(p.standby.pid())
		if err != nil {
			return err
		}
		start := time.Now()
		defer func() {
			if t1, err := treeTicks(p.standby.pid()); err == nil {
				s.StandbyCore = 100 * float64(t1-t0) / ticksPerSecond / time.Since(start).Seconds()
			}
		}()
		stopReadyz := make(chan struct{})
		readyz := readyzLags(p.standby.http, 250*time.Millisecond, stopReadyz)
		lags, unseen := lagSamples(p.standby.http, p.apis[:c.lagSample], base, w, c.poll, 30*time.Second)
		close(stopReadyz)
		rl := readyz()
		s.ReadyzP50, s.ReadyzP99, s.ReadyzMax = quantile(rl, 0.5), quantile(rl, 0.99), quantile(rl, 1)
		lags = sorted(lags)
		s.LagN, s.LagUnseen = len(lags), unseen
		s.LagP50, s.LagP99, s.LagMax = quantile(lags, 0.5), quantile(lags, 0.99), quantile(lags, 1)
		return nil
	}, p.replica)
	return &s, err
}

// load runs the writes on srv for the duration and fills column k;
// during (if any) runs beside the load, replica (if any) is measured.
func (s *steady) load(k int, c config, srv *server, apis []*tenantAPI, during func(*writes) error, replica ...string) error {
	time.Sleep(2 * time.Second) // the warm-up's replication settles
	stop := make(chan struct{})
	var bytes func() int64
	if len(replica) > 0 {
		bytes = shipped(replica[0], stop)
	}
	t0, err := cpuTicks(srv.pid())
	if err != nil {
		return err
	}
	start := time.Now()
	w := runWrites(srv.http, apis, c.rate, stop)
	errc := make(chan error, 1)
	if during != nil {
		// The lag of the writes already acknowledged when the poller
		// starts is still measured: their first poll comes after.
		go func() { errc <- during(w) }()
	} else {
		errc <- nil
	}
	time.Sleep(c.duration)
	close(stop)
	<-w.done
	took := time.Since(start)
	t1, err := cpuTicks(srv.pid())
	if err != nil {
		return err
	}
	s.Writes[k], s.Failed[k] = w.total(), w.failed
	s.Rate[k] = float64(s.Writes[k]) / took.Seconds()
	cpu := float64(t1-t0) / ticksPerSecond
	s.CPUCore[k] = 100 * cpu / took.Seconds()
	if s.Writes[k] > 0 {
		s.CPUPerWrite[k] = 1000 * cpu / float64(s.Writes[k])
	}
	if bytes != nil {
		s.ShippedPerS = float64(bytes()) / took.Seconds()
	}
	return errors.Join(<-errc)
}
