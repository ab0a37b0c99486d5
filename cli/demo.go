package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/aaa"
	"xr/app/identity"
	"xr/radiusd/sim"
)

// Demo credentials, printed at start.
const (
	demoSlug     = "demo"
	demoUser     = "admin"
	demoPassword = "demo-Admin-1"
	// demoTokenName names the owner's full-access API token the banner
	// shows (revealed from the database on every start).
	demoTokenName = "demo banner token"
)

type demoOpts struct {
	serve     serveOpts
	seedOnly  bool
	noSim     bool
	coaListen string
	sessions  int
	interim   time.Duration
}

func demoCmd(g *globals) *cobra.Command {
	var o demoOpts
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "serve a seeded demo ISP, alive with simulated sessions, from a fresh data directory",
		Long: `xr demo creates a believable small ISP in a fresh directory under the OS temp dir
(or --data, which must be empty or hold an earlier demo), serves the console and
the API on 127.0.0.1:8080 (another free port when that one is taken), RADIUS on
loopback, and starts the NAS simulator against itself: a few hundred live
sessions whose usage grows while you watch. Ctrl-C stops cleanly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("data") && os.Getenv("XR_DATA") == "" {
				dir, err := os.MkdirTemp("", "xr-demo-")
				if err != nil {
					return err
				}
				g.data = dir
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runDemo(ctx, g, o, cmd.Flags().Changed("http"), nil)
		},
	}
	o.serve.flags(cmd, "127.0.0.1:8080")
	mustSetDefault(cmd, "radius-auth", "127.0.0.1:1812")
	mustSetDefault(cmd, "radius-acct", "127.0.0.1:1813")
	f := cmd.Flags()
	f.BoolVar(&o.seedOnly, "seed-only", false, "seed the data directory, print where it is, and exit")
	f.BoolVar(&o.noSim, "no-simulator", false, "serve without the NAS simulator")
	f.StringVar(&o.coaListen, "coa-listen", "127.0.0.1:3799", "where the simulated NAS answers Disconnect/CoA (another free port when taken)")
	f.IntVar(&o.sessions, "sessions", 320, "simulated sessions kept live")
	f.DurationVar(&o.interim, "interim", 10*time.Second, "Interim-Update interval of simulated sessions")
	return cmd
}

// mustSetDefault changes a registered flag's default. It fails only for a
// flag that does not exist or a value it cannot hold: a programming error,
// caught by any run of the command.
func mustSetDefault(cmd *cobra.Command, name, v string) {
	cmd.Flags().Lookup(name).DefValue = v
	if err := cmd.Flags().Set(name, v); err != nil {
		panic(fmt.Sprintf("demo: default of --%s: %v", name, err))
	}
}

// demoStarted tells a test (or runDemo's caller) where the demo serves.
type demoStarted struct {
	Banner     demoInfo
	Auth, Acct string // RADIUS
	CoA        string // the simulator's Disconnect/CoA listener
}

// runDemo seeds (unless the directory already holds the demo), serves,
// and plays the NAS simulator against itself until ctx ends. The
// simulator stops first (its sessions send their Stop while RADIUS still
// answers), then the server.
func runDemo(ctx context.Context, g *globals, o demoOpts, httpChosen bool, started func(demoStarted)) error {
	o.serve.allowPrivateEgress = true // a lab: NAS, simulator and devices on loopback
	// Loopback ports: the usual ones, or free ones when taken (said so).
	var notes []string
	if !httpChosen {
		if addr, moved := freeOr("tcp", o.serve.http); moved {
			notes = append(notes, fmt.Sprintf("%s is taken: serving on another port", o.serve.http))
			o.serve.http = addr
		}
	}
	for _, p := range []*string{&o.serve.radiusAuth, &o.serve.radiusAcct, &o.coaListen} {
		addr, moved := freeOr("udp", *p)
		if moved {
			notes = append(notes, fmt.Sprintf("UDP %s is taken: using %s", *p, addr))
		}
		*p = addr
	}
	_, coaPort, err := net.SplitHostPort(o.coaListen)
	if err != nil {
		return fmt.Errorf("--coa-listen: %w", err)
	}
	began := time.Now()
	if err := seedDemo(g, coaPort); err != nil {
		return err
	}
	seeded := time.Since(began)
	if o.seedOnly {
		g.print(map[string]any{"data": g.data, "tenant": demoSlug, "seed_seconds": seeded.Seconds()},
			fmt.Sprintf("xr demo seeded in %.2f s\n  data: %s\n  serve it: xr demo --data %s", seeded.Seconds(), g.data, g.data))
		return nil
	}
	token, err := demoToken(g)
	if err != nil {
		return err
	}
	o.serve.defaultTenant = demoSlug
	serveCtx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	// simDone closes when the simulator has sent its Stops (or never ran).
	simDone := make(chan struct{})
	var once sync.Once
	finish := func() { once.Do(func() { close(simDone) }) }
	var ready atomic.Bool
	errc := make(chan error, 1)
	go func() {
		errc <- runServe(serveCtx, g, o.serve, func(addr, _ string) {
			ready.Store(true)
			info := newDemoInfo(g.data, addr, o.serve.radiusAuth, token)
			info.Notes = notes
			demoBanner(g, info)
			if o.noSim {
				finish()
				if started != nil {
					started(demoStarted{Banner: info, Auth: o.serve.radiusAuth, Acct: o.serve.radiusAcct})
				}
				return
			}
			go func() {
				defer finish()
				runDemoSimulator(simCtx, g, o, started, info)
			}()
		})
	}()
	select {
	case err := <-errc: // the server ended on its own
		stopSim()
		if !ready.Load() {
			finish()
		}
		<-simDone
		return err
	case <-ctx.Done():
	}
	stopSim()
	select {
	case <-simDone:
	case err := <-errc: // the server failed before it was ready
		return err
	}
	stopServe()
	return <-errc
}

// runDemoSimulator keeps o.sessions sessions live against the demo's own
// RADIUS server, answering Disconnect/CoA on o.coaListen, until ctx ends.
func runDemoSimulator(ctx context.Context, g *globals, o demoOpts, started func(demoStarted), info demoInfo) {
	log := g.logger()
	cfg := sim.Config{Mode: sim.ModeSession, AuthAddr: o.serve.radiusAuth, AcctAddr: o.serve.radiusAcct, Secret: DemoNASSecret,
		LocalIP: "127.0.0.1", First: demoReserved, Users: demoSubscribers - demoReserved, Concurrency: o.sessions, Interim: o.interim, SessionLength: 60 * o.interim,
		OctetsPerInterim: 40 << 20, CoAListen: o.coaListen, Timeout: 2 * time.Second, Retries: 2,
		CoAReady: func(addr string) {
			if started != nil {
				started(demoStarted{Banner: info, Auth: o.serve.radiusAuth, Acct: o.serve.radiusAcct, CoA: addr})
			}
		}}
	rep, err := sim.Run(ctx, cfg)
	if err != nil {
		log.Error("demo simulator", "err", err)
		return
	}
	log.Info("demo simulator stopped", "sessions", rep.SessionsStarted, "disconnected", rep.Disconnects, "rate_changes", rep.RateChanges)
}

// freeOr answers addr when it can be bound now, else a free loopback port
// of the same network (moved true).
func freeOr(network, addr string) (string, bool) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, false
	}
	probe := func(a string) (string, error) {
		if network == "udp" {
			c, err := net.ListenPacket("udp", a)
			if err != nil {
				return "", err
			}
			defer func() { _ = c.Close() }() // a probe: nothing was sent
			return c.LocalAddr().String(), nil
		}
		l, err := net.Listen("tcp", a)
		if err != nil {
			return "", err
		}
		defer func() { _ = l.Close() }() // a probe: nothing was accepted
		return l.Addr().String(), nil
	}
	if got, err := probe(addr); err == nil {
		if _, port, _ := net.SplitHostPort(addr); port == "0" {
			return got, false // "any port": the one found
		}
		return addr, false
	}
	if got, err := probe(net.JoinHostPort(host, "0")); err == nil {
		return got, true
	}
	return addr, false
}

// seedDemo creates the demo instance and tenant (a fresh temporary
// directory unless --data names one); an existing demo is kept as it is.
// Either way the loopback NAS's CoA port is set to coaPort, where the
// simulator answers.
func seedDemo(g *globals, coaPort string) error {
	// A directory with files but no instance is someone's: left alone.
	if _, err := os.Stat(filepath.Join(g.data, "instance.db")); err != nil {
		if entries, _ := os.ReadDir(g.data); len(entries) > 0 {
			return app.ErrValidation("not_a_demo", "data").With("data", g.data)
		}
	}
	g.mayCreate = true
	// The demo is a lab: its NAS, simulator and devices are on loopback.
	a, err := g.open(app.Config{AllowPrivateEgress: true})
	if err != nil {
		return err
	}
	defer a.Close()
	ctx := context.Background()
	if _, ok := a.TenantBySlug(demoSlug); !ok {
		if len(a.TenantSlugs()) > 0 {
			// Never seed into someone's instance.
			return app.ErrValidation("not_a_demo", "data").With("data", g.data)
		}
		if _, _, err := a.CreateTenant(ctx, app.NewTenant{Slug: demoSlug, Name: "Demo ISP", AdminUsername: demoUser,
			AdminEmail: "admin@demo.example", AdminPassword: demoPassword}); err != nil {
			return err
		}
		t, release, err := a.Acquire(demoSlug)
		if err != nil {
			return err
		}
		defer release()
		d, err := newDemoSeed(ctx, a, t)
		if err != nil {
			return err
		}
		for _, seed := range demoSeeders {
			if err := seed(ctx, d); err != nil {
				return fmt.Errorf("seed demo: %w", err)
			}
		}
	}
	return setDemoCoAPort(ctx, a, coaPort)
}

// setDemoCoAPort points the loopback NAS's CoA port at the simulator.
func setDemoCoAPort(ctx context.Context, a *app.App, port string) error {
	var p int
	if _, err := fmt.Sscan(port, &p); err != nil || p <= 0 {
		return fmt.Errorf("CoA port %q", port)
	}
	t, release, err := a.Acquire(demoSlug)
	if err != nil {
		return err
	}
	defer release()
	act, err := app.SystemActor(ctx, t)
	if err != nil {
		return err
	}
	list, err := aaa.ListNAS(ctx, act)
	if err != nil {
		return err
	}
	for _, n := range list {
		if n.IP == "127.0.0.1" {
			_, err := aaa.UpdateNAS(ctx, act, n.ID, aaa.NASInput{CoAPort: app.Opt[int]{Set: true, V: p}})
			return err
		}
	}
	return nil
}

// demoToken reveals the owner's banner token (it is sealed in the tenant).
func demoToken(g *globals) (string, error) {
	a, err := g.open(app.Config{})
	if err != nil {
		return "", err
	}
	defer a.Close()
	ctx := context.Background()
	t, release, err := a.Acquire(demoSlug)
	if err != nil {
		return "", err
	}
	defer release()
	sys, err := app.SystemActor(ctx, t)
	if err != nil {
		return "", err
	}
	list, err := identity.ListAPITokens(ctx, sys)
	if err != nil {
		return "", err
	}
	for _, k := range list {
		if k.Name == demoTokenName && k.Status == "active" {
			k, err := identity.RevealAPIToken(ctx, sys, k.ID)
			if err != nil {
				return "", err
			}
			return k.Token, nil
		}
	}
	return "", nil // revoked by hand: the banner says so
}

// demoInfo is what the banner prints: every line of it is exercised by
// TestDemoBannerWorks.
type demoInfo struct {
	Data      string      `json:"data"`
	URL       string      `json:"url"`
	HTTP      string      `json:"http"`
	Tenant    string      `json:"tenant"`
	Username  string      `json:"username"`
	Password  string      `json:"password"`
	Logins    []demoLogin `json:"logins"`
	Portal    demoLogin   `json:"portal"`
	Token     string      `json:"api_token"`
	Curl      []string    `json:"curl"`
	Radclient string      `json:"radclient"`
	Notes     []string    `json:"notes,omitempty"`
}

type demoLogin struct {
	Role     string `json:"role"`
	Username string `json:"username"`
	Password string `json:"password"`
	For      string `json:"for,omitempty"` // what the login is for, in a few words
}

// demoLogins are the staff logins the banner prints, each with its job.
var demoLogins = []demoLogin{
	{"owner", demoUser, demoPassword, "everything: plans, subscribers, staff, settings, backups"},
	{"reseller", demoReseller, demoResellerPassword, "a branch: its subscribers, its card stock (Cards → Stock), its till"},
	{"sub-reseller", demoSubReseller, demoResellerPassword, "north's own reseller, below it in the tree"},
	{"reseller", "south", demoResellerPassword, "another branch, beside north"},
	{"cashier", demoCashier, demoCashierPassword, "the counter: open a shift at the Till, sell cards it holds, take payments"},
	{"support", demoSupport, demoSupportPassword, "the help desk: tickets, any subscriber and its sessions"},
	{"NOC", demoNOC, demoNOCPassword, "the network: NAS, monitoring, the map, live sessions"},
}

func newDemoInfo(data, addr, radiusAuth, token string) demoInfo {
	_, port, _ := net.SplitHostPort(addr)
	d := demoInfo{Data: data, URL: fmt.Sprintf("http://%s.localhost:%s", demoSlug, port), HTTP: addr, Tenant: demoSlug,
		Username: demoUser, Password: demoPassword, Token: token,
		Logins: demoLogins, Portal: demoLogin{Role: "subscriber", Username: demoPortalUser, Password: demoPortalPassword}}
	base := "http://" + addr + "/api/v1"
	d.Curl = []string{
		fmt.Sprintf(`curl -s -H 'Authorization: Bearer %s' '%s/users?page_size=5'`, token, base),
		fmt.Sprintf(`curl -s -H 'Authorization: Bearer %s' '%s/admin/sessions?page_size=5'`, token, base),
		fmt.Sprintf(`curl -s %s/portal/login -H 'Content-Type: application/json' -d '{"username":"%s","password":"%s"}'`,
			base, demoPortalUser, demoPortalPassword),
	}
	d.Radclient = fmt.Sprintf(`echo 'User-Name=%s,User-Password=%s,Message-Authenticator=0x00' | radclient -x %s auth %s`,
		demoRadclientUser, demoPortalPassword, radiusAuth, DemoNASSecret)
	return d
}

// demoBanner prints where the demo is served and how to get in: text, or
// one JSON object with --json.
func demoBanner(g *globals, d demoInfo) {
	var b strings.Builder
	fmt.Fprintf(&b, "xr demo: a small ISP, alive\n  data:           %s\n  console:        %s/ (or http://%s/) in a browser\n", d.Data, d.URL, d.HTTP)
	b.WriteString("  staff logins (console and API):\n")
	for _, l := range d.Logins {
		fmt.Fprintf(&b, "    %-13s %-26s %s\n", l.Role+":", l.Username+" / "+l.Password, l.For)
	}
	fmt.Fprintf(&b, "  subscriber:     %s / %s (%s/my/ in a browser, or POST /api/v1/portal/login)\n", d.Portal.Username, d.Portal.Password, d.URL)
	if d.Token != "" {
		fmt.Fprintf(&b, "  API token:      %s\n", d.Token)
	} else {
		fmt.Fprintf(&b, "  API token:      (the demo token was revoked; make one with xr token create --tenant demo)\n")
	}
	b.WriteString("  try:\n")
	for _, c := range d.Curl {
		fmt.Fprintf(&b, "    %s\n", c)
	}
	fmt.Fprintf(&b, "    %s\n", d.Radclient)
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	b.WriteString("  Ctrl-C stops.")
	g.print(d, b.String())
}
