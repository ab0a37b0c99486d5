// Package sim is a NAS simulator and RADIUS load generator: it speaks to
// any RADIUS server (xr's or another) over UDP like a busy access router,
// with a fixed number of requests in flight, and reports throughput and
// latency. `xr simulate` and the radiusd benchmarks are built on it.
//
// It deliberately does not share packet code with radiusd, so that it
// checks the server rather than agreeing with it.
package sim

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode selects the traffic pattern.
type Mode string

const (
	// ModeAuth sends PAP Access-Requests (with Message-Authenticator)
	// cycling over Users usernames.
	ModeAuth Mode = "auth"
	// ModeAcctInterim sends Accounting Interim-Updates cycling over
	// Sessions sessions with growing counters.
	ModeAcctInterim Mode = "acct-interim"
	// ModeStorm is a NAS reboot: Accounting-On, then for each of Sessions
	// sessions an Access-Request followed by an Accounting-Start.
	ModeStorm Mode = "storm"
	// ModeAcctChurn is session churn (the evening peak, or after a NAS
	// reboot): each worker plays whole sessions, Start, two Interims and a
	// Stop, every session new. Count counts requests (4 per session).
	ModeAcctChurn Mode = "acct-churn"
	// ModeSession plays the churn of a real evening: each of Concurrency
	// workers plays whole sessions one after another, Access-Request
	// (AuthMethod), Start, an Interim every Interim with growing counters,
	// and Stop after about SessionLength. No two live sessions share a
	// user. Count counts sessions. With CoAListen the simulated NAS
	// answers Disconnect-Request and CoA-Request for the sessions it holds.
	ModeSession Mode = "session"
	// ModeMixed blends sessions with re-authentication and stray
	// accounting (Mix); Count counts sessions.
	ModeMixed Mode = "mixed"
)

// Config describes one run.
type Config struct {
	AuthAddr string `json:"auth_addr"` // server auth address, host:port
	AcctAddr string `json:"acct_addr"` // server accounting address, host:port
	Secret   string `json:"secret"`
	// LocalIP is the source address to send from: the NAS address the
	// server knows. Empty lets the kernel choose.
	LocalIP string `json:"local_ip,omitempty"`
	// NASIP is sent as NAS-IP-Address; default LocalIP or 127.0.0.1.
	NASIP string `json:"nas_ip,omitempty"`
	// UserFormat and PasswordFormat generate credentials from an index with
	// fmt (a format without a verb is used as is); defaults "user%05d", "pass".
	UserFormat     string `json:"user_format,omitempty"`
	PasswordFormat string `json:"password_format,omitempty"`
	Users          int    `json:"users,omitempty"`       // distinct users in auth mode; default 10000
	Sessions       int    `json:"sessions,omitempty"`    // sessions (interim, storm); default Users
	Concurrency    int    `json:"concurrency,omitempty"` // requests in flight; default 64
	Mode           Mode   `json:"mode"`
	// Duration bounds the run in time; Count in requests (auth, interim) or
	// sessions (storm). With neither, one pass over Users/Sessions is made.
	Duration time.Duration `json:"duration,omitempty"`
	Count    int           `json:"count,omitempty"`
	// Timeout is the wait for an answer per try (default 1 s); Retries the
	// retransmissions after that, the same bytes each time (0 = none; a
	// real NAS typically makes 2-3).
	Timeout time.Duration `json:"timeout,omitempty"`
	Retries int           `json:"retries,omitempty"`
	// NoMessageAuthenticator leaves Message-Authenticator out of
	// Access-Requests (for servers or NAS entries that do not require it).
	NoMessageAuthenticator bool `json:"no_message_authenticator,omitempty"`
	// Rate paces the run at about this many requests per second over all
	// workers (acct-churn books a session's 4 requests at once); 0 sends as
	// fast as Concurrency allows. A run that fell behind (timeouts) catches
	// up by at most a tenth of a second's worth of requests.
	Rate float64 `json:"rate,omitempty"`
	// First offsets the numbering of requests (users, sessions), so that
	// consecutive runs against one server continue the sequence: acct-churn
	// sessions of a later run get new Acct-Session-Ids.
	First int `json:"first,omitempty"`
	// AuthMethod of Access-Requests: pap (default), chap or mschapv2.
	AuthMethod string `json:"auth_method,omitempty"`
	// Session and mixed modes: the Interim-Update interval (default 30 s),
	// the mean session length (default 10 Interims; each session is 0.5 to
	// 1.5 times it) and the mean download per Interim (default 2 MB; upload
	// is an eighth).
	Interim          time.Duration `json:"interim,omitempty"`
	SessionLength    time.Duration `json:"session_length,omitempty"`
	OctetsPerInterim int64         `json:"octets_per_interim,omitempty"`
	Mix              Mix           `json:"mix"`
	// CoAListen, when set (session and mixed modes), is the address where
	// the simulated NAS answers Disconnect-Request and CoA-Request (RFC
	// 5176): point the server's NAS entry's CoA port at it.
	CoAListen string `json:"coa_listen,omitempty"`
	// CoAReady, when set, is called with the bound CoA address.
	CoAReady func(addr string) `json:"-"`
	// Progress, when set, is called every ProgressEvery (default 1 s) while
	// the run goes on.
	Progress      func(Progress) `json:"-"`
	ProgressEvery time.Duration  `json:"-"`
}

// Report is the outcome of a run. Latencies are from the first
// transmission of a request to its valid answer.
type Report struct {
	Mode            Mode    `json:"mode"`
	Concurrency     int     `json:"concurrency"`
	Requests        int64   `json:"requests"`    // requests answered
	Sent            int64   `json:"sent"`        // datagrams sent, retransmissions included
	Accepted        int64   `json:"accepted"`    // Access-Accept
	Rejected        int64   `json:"rejected"`    // Access-Reject
	AcctAcked       int64   `json:"acct_acked"`  // Accounting-Response
	Timeouts        int64   `json:"timeouts"`    // tries left unanswered within Timeout
	Failed          int64   `json:"failed"`      // requests unanswered after all retries
	BadReplies      int64   `json:"bad_replies"` // answers failing authenticator checks
	SessionsStarted int64   `json:"sessions_started,omitempty"`
	SessionsLost    int64   `json:"sessions_lost,omitempty"`
	SessionsPerSec  float64 `json:"sessions_per_second,omitempty"`
	SessionsStopped int64   `json:"sessions_stopped,omitempty"` // session, mixed
	Disconnects     int64   `json:"disconnects,omitempty"`      // Disconnect-Requests ACKed
	RateChanges     int64   `json:"rate_changes,omitempty"`     // CoA-Requests ACKed
	CoANAKs         int64   `json:"coa_naks,omitempty"`         // for sessions the NAS did not hold
	ElapsedSeconds  float64 `json:"elapsed_seconds"`
	PerSecond       float64 `json:"requests_per_second"`
	P50Ms           float64 `json:"p50_ms"`
	P90Ms           float64 `json:"p90_ms"`
	P99Ms           float64 `json:"p99_ms"`
	MaxMs           float64 `json:"max_ms"`
}

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode %s, %d in flight, %.2f s\n", r.Mode, r.Concurrency, r.ElapsedSeconds)
	fmt.Fprintf(&b, "  %d requests answered (%.0f/s), %d datagrams sent\n", r.Requests, r.PerSecond, r.Sent)
	fmt.Fprintf(&b, "  accept %d, reject %d, accounting-response %d\n", r.Accepted, r.Rejected, r.AcctAcked)
	fmt.Fprintf(&b, "  timeouts %d, failed %d, bad replies %d\n", r.Timeouts, r.Failed, r.BadReplies)
	if r.Mode == ModeStorm {
		fmt.Fprintf(&b, "  sessions started %d (%.0f/s), lost %d\n", r.SessionsStarted, r.SessionsPerSec, r.SessionsLost)
	}
	if r.Mode == ModeSession || r.Mode == ModeMixed {
		fmt.Fprintf(&b, "  sessions started %d, stopped %d; disconnected by the server %d, rate changes %d, CoA NAKs %d\n",
			r.SessionsStarted, r.SessionsStopped, r.Disconnects, r.RateChanges, r.CoANAKs)
	}
	fmt.Fprintf(&b, "  latency p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms", r.P50Ms, r.P90Ms, r.P99Ms, r.MaxMs)
	return b.String()
}

func (c *Config) defaults() error {
	if c.Mode == "" {
		c.Mode = ModeAuth
	}
	switch c.Mode {
	case ModeAuth, ModeAcctInterim, ModeStorm, ModeAcctChurn, ModeSession, ModeMixed:
	default:
		return fmt.Errorf("sim: unknown mode %q (auth, acct-interim, storm, acct-churn, session, mixed)", c.Mode)
	}
	switch c.AuthMethod {
	case "":
		c.AuthMethod = AuthPAP
	case AuthPAP, AuthCHAP, AuthMSCHAPv2:
	default:
		return fmt.Errorf("sim: unknown auth method %q (pap, chap, mschapv2)", c.AuthMethod)
	}
	if c.Interim <= 0 {
		c.Interim = 30 * time.Second
	}
	if c.SessionLength <= 0 {
		c.SessionLength = 10 * c.Interim
	}
	if c.OctetsPerInterim <= 0 {
		c.OctetsPerInterim = 2 << 20
	}
	if c.Mix == (Mix{}) {
		c.Mix = DefaultMix
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = time.Second
	}
	if c.CoAListen != "" && c.Mode != ModeSession && c.Mode != ModeMixed {
		return errors.New("sim: --coa-listen needs a mode that holds sessions (session, mixed)")
	}
	if c.Secret == "" {
		return errors.New("sim: a shared secret is required")
	}
	if c.UserFormat == "" {
		c.UserFormat = "user%05d"
	}
	if c.PasswordFormat == "" {
		c.PasswordFormat = "pass"
	}
	if c.Users <= 0 {
		c.Users = 10000
	}
	if c.Sessions <= 0 {
		c.Sessions = c.Users
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 64
	}
	if c.Timeout <= 0 {
		c.Timeout = time.Second
	}
	c.Retries = max(c.Retries, 0)
	if c.NASIP == "" {
		c.NASIP = c.LocalIP
	}
	if c.NASIP == "" {
		c.NASIP = "127.0.0.1"
	}
	if c.Count <= 0 && c.Duration <= 0 && c.Mode != ModeSession && c.Mode != ModeMixed {
		if c.Mode == ModeAuth {
			c.Count = c.Users
		} else {
			c.Count = c.Sessions
		}
	}
	if (c.Mode == ModeAuth || c.Mode == ModeStorm || c.Mode == ModeSession || c.Mode == ModeMixed) && c.AuthAddr == "" {
		return errors.New("sim: auth address required")
	}
	if c.Mode != ModeAuth && c.AcctAddr == "" {
		return errors.New("sim: accounting address required")
	}
	return nil
}

func format(f string, i int) string {
	if strings.Contains(f, "%") {
		return fmt.Sprintf(f, i)
	}
	return f
}

// Run executes one load run and returns its report. Cancelling ctx ends the
// run early; the report then covers what was done.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if err := cfg.defaults(); err != nil {
		return Report{}, err
	}
	nasIP, err := netip.ParseAddr(cfg.NASIP)
	if err != nil || !nasIP.Is4() {
		return Report{}, fmt.Errorf("sim: NAS IP %q is not IPv4", cfg.NASIP)
	}
	var authAddr, acctAddr *net.UDPAddr
	if cfg.AuthAddr != "" {
		if authAddr, err = net.ResolveUDPAddr("udp", cfg.AuthAddr); err != nil {
			return Report{}, err
		}
	}
	if cfg.AcctAddr != "" {
		if acctAddr, err = net.ResolveUDPAddr("udp", cfg.AcctAddr); err != nil {
			return Report{}, err
		}
	}
	var local *net.UDPAddr
	if cfg.LocalIP != "" {
		ip, err := netip.ParseAddr(cfg.LocalIP)
		if err != nil {
			return Report{}, fmt.Errorf("sim: local IP: %w", err)
		}
		local = net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, 0))
	}
	dial := func(to *net.UDPAddr) (*net.UDPConn, error) {
		if to == nil {
			return nil, nil
		}
		return net.DialUDP("udp", local, to)
	}
	live := &liveCounters{}
	newClient := func() (*client, error) {
		c := &client{cfg: &cfg, nasIP: nasIP.As4(), mac: hmac.New(md5.New, []byte(cfg.Secret)), md: md5.New(), live: live}
		var seed [32]byte
		crand.Read(seed[:])
		c.rng = rand.New(rand.NewChaCha8(seed))
		var err error
		if c.auth, err = dial(authAddr); err != nil {
			return nil, err
		}
		if c.acct, err = dial(acctAddr); err != nil {
			c.close()
			return nil, err
		}
		c.id = byte(c.rng.Uint32())
		return c, nil
	}

	if cfg.Mode == ModeSession || cfg.Mode == ModeMixed {
		return runSessions(ctx, &cfg, newClient, live)
	}
	var total stats
	var mu sync.Mutex
	if cfg.Mode == ModeStorm {
		c, err := newClient()
		if err != nil {
			return Report{}, err
		}
		ok := c.accountingOnOff(7)
		mu.Lock()
		total.merge(&c.st)
		mu.Unlock()
		c.close()
		if !ok {
			return report(&cfg, &total, 0), errors.New("sim: Accounting-On was not answered")
		}
	}

	clients := make([]*client, cfg.Concurrency)
	for i := range clients {
		if clients[i], err = newClient(); err != nil {
			for _, c := range clients[:i] {
				c.close()
			}
			return Report{}, err
		}
	}
	var next atomic.Int64
	var deadline time.Time
	start := time.Now()
	if cfg.Duration > 0 {
		deadline = start.Add(cfg.Duration)
	}
	var pace *pacer
	if cfg.Rate > 0 {
		pace = &pacer{interval: time.Duration(float64(time.Second) / cfg.Rate), next: start}
	}
	defer startProgress(&cfg, live, start)()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.close()
			for ctx.Err() == nil {
				if cfg.Mode == ModeAcctChurn {
					// One whole session per step; i numbers sessions.
					i := int(next.Add(4) - 4)
					if (cfg.Count > 0 && i >= cfg.Count) || (!deadline.IsZero() && time.Now().After(deadline)) || !pace.wait(ctx, 4) {
						break
					}
					c.churn((cfg.First + i) / 4)
					continue
				}
				i := int(next.Add(1) - 1)
				if cfg.Count > 0 && i >= cfg.Count {
					break
				}
				if (!deadline.IsZero() && time.Now().After(deadline)) || !pace.wait(ctx, 1) {
					break
				}
				i += cfg.First
				switch cfg.Mode {
				case ModeAuth:
					c.access(i % cfg.Users)
				case ModeAcctInterim:
					c.interim(i%cfg.Sessions, i/cfg.Sessions+1)
				case ModeStorm:
					c.st.attempted++
					if c.access(i%cfg.Users) && c.start(i) {
						c.st.started++
					}
				}
			}
			mu.Lock()
			total.merge(&c.st)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	total.lost = total.attempted - total.started
	return report(&cfg, &total, elapsed), nil
}

// pacer spaces requests interval apart over all workers.
type pacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
}

// wait books n requests and sleeps until the first one's turn; false when
// ctx ended first. A nil pacer never waits.
func (p *pacer) wait(ctx context.Context, n int) bool {
	if p == nil {
		return true
	}
	now := time.Now()
	p.mu.Lock()
	if floor := now.Add(-100 * time.Millisecond); p.next.Before(floor) {
		p.next = floor
	}
	at := p.next
	p.next = p.next.Add(time.Duration(n) * p.interval)
	p.mu.Unlock()
	d := at.Sub(now)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

type stats struct {
	requests, sent, accepted, rejected, acked int64
	timeouts, failed, bad, started, lost      int64
	attempted                                 int64 // storm sessions tried
	lat                                       latencyHist
}

func (s *stats) merge(o *stats) {
	s.requests += o.requests
	s.sent += o.sent
	s.accepted += o.accepted
	s.rejected += o.rejected
	s.acked += o.acked
	s.timeouts += o.timeouts
	s.failed += o.failed
	s.bad += o.bad
	s.started += o.started
	s.attempted += o.attempted
	s.lat.merge(&o.lat)
}

func report(cfg *Config, s *stats, elapsed time.Duration) Report {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	r := Report{
		Mode: cfg.Mode, Concurrency: cfg.Concurrency,
		Requests: s.requests, Sent: s.sent, Accepted: s.accepted, Rejected: s.rejected,
		AcctAcked: s.acked, Timeouts: s.timeouts, Failed: s.failed, BadReplies: s.bad,
		ElapsedSeconds: elapsed.Seconds(),
		P50Ms:          ms(s.lat.quantile(.50)), P90Ms: ms(s.lat.quantile(.90)),
		P99Ms: ms(s.lat.quantile(.99)), MaxMs: ms(s.lat.max),
	}
	if cfg.Mode == ModeStorm {
		r.SessionsStarted, r.SessionsLost = s.started, s.lost
	}
	if elapsed > 0 {
		r.PerSecond = float64(s.requests) / elapsed.Seconds()
		r.SessionsPerSec = float64(r.SessionsStarted) / elapsed.Seconds()
	}
	return r
}
