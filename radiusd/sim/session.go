package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"
)

// liveCounters are the run's running totals, shared by every worker and
// read by the progress line while the run goes on (the per-worker stats
// are merged only at the end).
type liveCounters struct {
	requests, accepted, rejected, acked, timeouts, bad atomic.Int64
	sessions                                           atomic.Int64 // sessions live now
	started, stopped                                   atomic.Int64
	disconnects, rateChanges, coaNAKs                  atomic.Int64
}

// Progress is a snapshot of a run in progress (Config.Progress).
type Progress struct {
	Elapsed      time.Duration `json:"elapsed"`
	Requests     int64         `json:"requests"`
	PerSecond    float64       `json:"requests_per_second"` // over the last interval
	Accepted     int64         `json:"accepted"`
	Rejected     int64         `json:"rejected"`
	Timeouts     int64         `json:"timeouts"`
	LiveSessions int64         `json:"live_sessions"`
	Disconnects  int64         `json:"disconnects"`
}

func (p Progress) String() string {
	return fmt.Sprintf("%6.0fs  %7.0f req/s  accept %d  reject %d  timeouts %d  live sessions %d  disconnected %d",
		p.Elapsed.Seconds(), p.PerSecond, p.Accepted, p.Rejected, p.Timeouts, p.LiveSessions, p.Disconnects)
}

// runProgress calls fn every interval until stop is closed.
func runProgress(live *liveCounters, start time.Time, every time.Duration, fn func(Progress), stop <-chan struct{}) {
	tk := time.NewTicker(every)
	defer tk.Stop()
	var last int64
	lastAt := start
	for {
		select {
		case <-stop:
			return
		case now := <-tk.C:
			n := live.requests.Load()
			p := Progress{Elapsed: now.Sub(start), Requests: n, Accepted: live.accepted.Load(), Rejected: live.rejected.Load(),
				Timeouts: live.timeouts.Load(), LiveSessions: live.sessions.Load(), Disconnects: live.disconnects.Load()}
			if d := now.Sub(lastAt).Seconds(); d > 0 {
				p.PerSecond = float64(n-last) / d
			}
			last, lastAt = n, now
			fn(p)
		}
	}
}

// Mix is the blend of a mixed run: the share of workers playing each
// pattern, in percent (normalised over their sum). Session workers play
// whole sessions; auth workers re-authenticate (a fraction with a wrong
// password, WrongPassword percent); interim workers send Interim-Updates
// for sessions the server may not know (a NAS catching up after a
// restart). The non-session workers pause Think between requests.
type Mix struct {
	Session       int           `json:"session"`
	Auth          int           `json:"auth"`
	Interim       int           `json:"interim"`
	WrongPassword int           `json:"wrong_password"`
	Think         time.Duration `json:"think"`
}

// DefaultMix is a busy evening: mostly sessions, some re-authentication
// with a few typos, a little stray accounting.
var DefaultMix = Mix{Session: 80, Auth: 15, Interim: 5, WrongPassword: 10, Think: 200 * time.Millisecond}

// ParseMix reads "session=80,auth=15,interim=5,wrong=10,think=200ms";
// omitted keys keep DefaultMix's values.
func ParseMix(s string) (Mix, error) {
	m := DefaultMix
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return m, fmt.Errorf("sim: mix %q: want key=value", part)
		}
		if k == "think" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return m, fmt.Errorf("sim: mix think %q: want a duration", v)
			}
			m.Think = d
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100 {
			return m, fmt.Errorf("sim: mix %s=%q: want 0..100", k, v)
		}
		switch k {
		case "session":
			m.Session = n
		case "auth":
			m.Auth = n
		case "interim":
			m.Interim = n
		case "wrong":
			m.WrongPassword = n
		default:
			return m, fmt.Errorf("sim: mix: unknown key %q (session, auth, interim, wrong, think)", k)
		}
	}
	if m.Session+m.Auth+m.Interim == 0 {
		return m, fmt.Errorf("sim: mix: every share is 0")
	}
	return m, nil
}

// liveSession is one session the simulated NAS holds, findable by the CoA
// listener.
type liveSession struct {
	sid, user string
	i         int // user index: its Calling-Station-Id
	ip        [4]byte
	end       chan struct{} // closed by a Disconnect-Request
	once      sync.Once
	rateDown  atomic.Int64 // kbps from the last CoA-Request, 0 if none
}

func (s *liveSession) kill() { s.once.Do(func() { close(s.end) }) }

// registry is the NAS's session table.
type registry struct {
	mu     sync.Mutex
	bySID  map[string]*liveSession
	byUser map[string]*liveSession
	byIP   map[[4]byte]*liveSession
}

func newRegistry() *registry {
	return &registry{bySID: map[string]*liveSession{}, byUser: map[string]*liveSession{}, byIP: map[[4]byte]*liveSession{}}
}

func (r *registry) add(s *liveSession) {
	r.mu.Lock()
	r.bySID[s.sid], r.byUser[strings.ToLower(s.user)], r.byIP[s.ip] = s, s, s
	r.mu.Unlock()
}

func (r *registry) remove(s *liveSession) {
	r.mu.Lock()
	delete(r.bySID, s.sid)
	if r.byUser[strings.ToLower(s.user)] == s {
		delete(r.byUser, strings.ToLower(s.user))
	}
	if r.byIP[s.ip] == s {
		delete(r.byIP, s.ip)
	}
	r.mu.Unlock()
}

// find matches RFC 5176 session identification: Acct-Session-Id first,
// then User-Name, then Framed-IP-Address.
func (r *registry) find(sid, user string, ip [4]byte, hasIP bool) *liveSession {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sid != "" {
		return r.bySID[sid]
	}
	if user != "" {
		return r.byUser[strings.ToLower(user)]
	}
	if hasIP {
		return r.byIP[ip]
	}
	return nil
}

// sessionCounters are the counters of one session, growing per interim.
type sessionCounters struct {
	in, out       uint64
	pktIn, pktOut uint64
	seconds       uint32
}

func (c *client) acctSession(status uint32, s *liveSession, k *sessionCounters, cause uint32) bool {
	b := append(c.out[:0], byte(0x04), c.nextID(), 0, 0) // Accounting-Request
	b = append(b, make([]byte, 16)...)
	b = attrUint32(b, rfc2866.AcctStatusType_Type, status)
	b = attrString(b, rfc2866.AcctSessionID_Type, s.sid)
	b = attrString(b, rfc2865.UserName_Type, s.user)
	b = attr(b, rfc2865.NASIPAddress_Type, c.nasIP[:])
	b = attrString(b, rfc2865.NASIdentifier_Type, "xr-sim")
	b = attr(b, rfc2865.FramedIPAddress_Type, s.ip[:])
	b = attrString(b, rfc2865.CallingStationID_Type, mac(s.i))
	b = attrUint32(b, rfc2866.AcctDelayTime_Type, 0)
	if status != 1 {
		// RFC 2866/2869: the session's octets on 32 bits plus gigawords.
		b = attrUint32(b, rfc2866.AcctInputOctets_Type, uint32(k.in))
		b = attrUint32(b, rfc2869.AcctInputGigawords_Type, uint32(k.in>>32))
		b = attrUint32(b, rfc2866.AcctOutputOctets_Type, uint32(k.out))
		b = attrUint32(b, rfc2869.AcctOutputGigawords_Type, uint32(k.out>>32))
		b = attrUint32(b, rfc2866.AcctInputPackets_Type, uint32(k.pktIn))
		b = attrUint32(b, rfc2866.AcctOutputPackets_Type, uint32(k.pktOut))
		b = attrUint32(b, rfc2866.AcctSessionTime_Type, k.seconds)
	}
	if status == 2 {
		b = attrUint32(b, rfc2866.AcctTerminateCause_Type, cause)
	}
	return c.sendAccounting(b)
}

// Acct-Terminate-Cause values (RFC 2866 section 5.10).
const (
	causeUserRequest    = 1
	causeSessionTimeout = 5
	causeAdminReset     = 6
	causeNASReboot      = 11
)

// pool hands out user indices so that no two live sessions share a user.
type pool chan int

func (p pool) take(ctx context.Context) (int, bool) {
	select {
	case i := <-p:
		return i, true
	case <-ctx.Done():
		return 0, false
	}
}

// playSession is one whole session of user i: Access-Request, Start,
// Interims every Interim with growing counters, and a Stop when the
// session's length is reached (User-Request), a Disconnect-Request ended it
// (Admin-Reset), or the run ends (NAS-Reboot). The subscriber's "rate" is
// between a quarter and 1.75 times OctetsPerInterim a round.
func (c *client) playSession(ctx context.Context, reg *registry, runTag string, n, i int) bool {
	user := format(c.cfg.UserFormat, i)
	if !c.access(i) {
		return false
	}
	s := &liveSession{sid: fmt.Sprintf("%s%08x", runTag, n), user: user, i: i, end: make(chan struct{}),
		ip: [4]byte{100, 64 + byte(i>>16&63), byte(i >> 8), byte(i)}}
	if !c.start2(s) {
		return true
	}
	reg.add(s)
	c.live.sessions.Add(1)
	c.live.started.Add(1)
	defer func() {
		reg.remove(s)
		c.live.sessions.Add(-1)
		c.live.stopped.Add(1)
	}()
	length := time.Duration(float64(c.cfg.SessionLength) * (0.5 + c.rng.Float64()))
	rate := uint64(float64(c.cfg.OctetsPerInterim) * (0.25 + 1.5*c.rng.Float64()))
	var k sessionCounters
	began := time.Now()
	tk := time.NewTicker(c.cfg.Interim)
	defer tk.Stop()
	cause := uint32(causeUserRequest)
	for {
		select {
		case <-ctx.Done():
			cause = causeNASReboot
		case <-s.end:
			cause = causeAdminReset
		case <-tk.C:
			grow := rate
			if r := s.rateDown.Load(); r > 0 {
				// Slowed by a CoA (FUP): what the new rate allows.
				grow = min(grow, uint64(r)*125*uint64(c.cfg.Interim/time.Second+1))
			}
			k.out += grow
			k.in += grow / 8
			k.pktOut, k.pktIn = k.out/1200, k.in/600
			k.seconds = uint32(time.Since(began) / time.Second)
			if time.Since(began) < length {
				c.acctSession(3, s, &k, 0)
				continue
			}
		}
		break
	}
	k.seconds = uint32(time.Since(began) / time.Second)
	c.acctSession(2, s, &k, cause)
	return true
}

func (c *client) start2(s *liveSession) bool { return c.acctSession(1, s, nil, 0) }

// startProgress runs the progress line, if any; the returned func stops it
// and waits, so that no progress is reported after the run's end.
func startProgress(cfg *Config, live *liveCounters, start time.Time) func() {
	if cfg.Progress == nil {
		return func() {}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		runProgress(live, start, cfg.ProgressEvery, cfg.Progress, stop)
	}()
	return func() {
		close(stop)
		<-done
	}
}

// runSessions is the session and mixed modes.
func runSessions(ctx context.Context, cfg *Config, newClient func() (*client, error), live *liveCounters) (Report, error) {
	reg := newRegistry()
	if cfg.CoAListen != "" {
		l, err := listenCoA(cfg.CoAListen, cfg.Secret, reg, live)
		if err != nil {
			return Report{}, fmt.Errorf("sim: CoA listener: %w", err)
		}
		defer l.close()
		if cfg.CoAReady != nil {
			cfg.CoAReady(l.Addr())
		}
	}
	// Workers by pattern: in session mode all play sessions.
	nSession, nAuth := cfg.Concurrency, 0
	if cfg.Mode == ModeMixed {
		sum := cfg.Mix.Session + cfg.Mix.Auth + cfg.Mix.Interim
		nSession = max(1, cfg.Concurrency*cfg.Mix.Session/sum)
		nAuth = cfg.Concurrency * cfg.Mix.Auth / sum
		if nSession+nAuth > cfg.Concurrency {
			nAuth = cfg.Concurrency - nSession
		}
	}
	clients := make([]*client, cfg.Concurrency)
	for i := range clients {
		var err error
		if clients[i], err = newClient(); err != nil {
			for _, c := range clients[:i] {
				c.close()
			}
			return Report{}, err
		}
	}
	users := make(pool, cfg.Users)
	for i := range cfg.Users {
		users <- cfg.First + i
	}
	var tag [2]byte
	binary.BigEndian.PutUint16(tag[:], uint16(clients[0].rng.Uint32()))
	runTag := fmt.Sprintf("%04x", tag[:])
	start := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.Duration > 0 {
		var c2 context.CancelFunc
		runCtx, c2 = context.WithTimeout(runCtx, cfg.Duration)
		defer c2()
	}
	stopProgress := startProgress(cfg, live, start)
	var next atomic.Int64
	var sessionsDone sync.WaitGroup
	others, cancelOthers := context.WithCancel(runCtx)
	defer cancelOthers()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total stats
	for w, c := range clients {
		wg.Add(1)
		isSession := w < nSession
		if isSession {
			sessionsDone.Add(1)
		}
		go func() {
			defer wg.Done()
			defer c.close()
			defer func() {
				mu.Lock()
				total.merge(&c.st)
				mu.Unlock()
			}()
			switch {
			case isSession:
				defer sessionsDone.Done()
				for runCtx.Err() == nil {
					n := int(next.Add(1) - 1)
					if cfg.Count > 0 && n >= cfg.Count {
						return
					}
					i, ok := users.take(runCtx)
					if !ok {
						return
					}
					if !c.playSession(runCtx, reg, runTag, n, i) {
						// Rejected (expired, disabled, over quota...):
						// another user's turn; this one waits its turn again.
						pause(runCtx, min(cfg.Interim, time.Second))
					}
					users <- i
				}
			case w < nSession+nAuth:
				for others.Err() == nil {
					i := c.rng.IntN(cfg.Users) + cfg.First
					if c.rng.IntN(100) < cfg.Mix.WrongPassword {
						c.accessWith(i, "wrong-"+format(cfg.PasswordFormat, i))
					} else {
						c.access(i)
					}
					pause(others, cfg.Mix.Think)
				}
			default:
				for round := 1; others.Err() == nil; round++ {
					c.interim(c.rng.IntN(cfg.Users)+cfg.First, round)
					pause(others, cfg.Mix.Think)
				}
			}
		}()
	}
	// The other patterns end with the sessions (Count reached or the run
	// over).
	sessionsDone.Wait()
	cancelOthers()
	wg.Wait()
	stopProgress()
	elapsed := time.Since(start)
	r := report(cfg, &total, elapsed)
	r.SessionsStarted, r.SessionsStopped = live.started.Load(), live.stopped.Load()
	r.Disconnects, r.RateChanges, r.CoANAKs = live.disconnects.Load(), live.rateChanges.Load(), live.coaNAKs.Load()
	return r, nil
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
