package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/outbox"
	"xr/app/replica"
	"xr/db"
	"xr/web"
	"xr/web/console"
	"xr/web/my"
)

type serveOpts struct {
	http, domain, defaultTenant string
	radiusAuth, radiusAcct      string
	noRadius                    bool
	allowPrivateEgress          bool
	allowSignup                 bool
	secureCookies               bool
	smtpAddr, smtpFrom          string
	smtpUser, smtpPassword      string
	smtpPasswordEnv             string
	smtpTLS, smtpAuth           string
	metricsToken                string
	host                        hostOpts // serve_host.go
	tls                         tlsOpts  // serve_tls.go
	idleClose                   time.Duration
	maxOpenTenants              int
	replicateTo                 string
	standbyOf                   string
	promoteAfter                time.Duration // a standby promotes itself after its primary was silent this long (0: never)
	followerBin                 string        // the xr binary the follower runs (tests); default: this one
	radiusTLS                   radiusTLSOpts // --radsec, --eap-cert, ... (radius_tls.go)
	standbyAddress              string
	replicaCreds                replicaCredOpts // serve_replica.go
	socks                       *sockets        // the listeners, handed over across a promotion (serve_handover.go)
}

func (o *serveOpts) flags(cmd *cobra.Command, httpDefault string) {
	f := cmd.Flags()
	f.StringVar(&o.http, "http", httpDefault, "HTTP listen address")
	f.StringVar(&o.domain, "domain", "localhost", "instance domain: tenants are <slug>.<domain>")
	f.StringVar(&o.defaultTenant, "default-tenant", "", "tenant for hosts that name none (a box reached by IP)")
	f.StringVar(&o.radiusAuth, "radius-auth", ":1812", "RADIUS authentication listen address")
	f.StringVar(&o.radiusAcct, "radius-acct", ":1813", "RADIUS accounting listen address")
	f.BoolVar(&o.noRadius, "no-radius", false, "do not start the RADIUS server")
	f.BoolVar(&o.allowPrivateEgress, "allow-private-egress", false, "let webhooks reach loopback and private addresses (tests, labs)")
	f.BoolVar(&o.allowSignup, "allow-signup", false, "let new ISPs register tenants through /auth/register/*")
	f.BoolVar(&o.secureCookies, "secure-cookies", false, "mark the console's session cookie Secure (browsers reach xr through a TLS proxy; implied by --tls-acme and --tls-cert)")
	f.StringVar(&o.smtpAddr, "smtp-addr", "", "SMTP relay host:port for outgoing mail (empty: mail is logged and kept in the outbox)")
	f.StringVar(&o.smtpFrom, "smtp-from", "", "sender address of outgoing mail")
	f.StringVar(&o.metricsToken, "metrics-token", "", "bearer token GET /metrics requires (default: env XR_METRICS_TOKEN; empty: /metrics is public)")
	f.StringVar(&o.smtpUser, "smtp-user", "", "SMTP user (authenticates when set)")
	f.StringVar(&o.smtpPassword, "smtp-password", "", "SMTP password (prefer --smtp-password-env: a flag shows in the process list)")
	f.StringVar(&o.smtpPasswordEnv, "smtp-password-env", "XR_SMTP_PASSWORD", "environment variable holding the SMTP password, read when --smtp-password is empty")
	f.StringVar(&o.smtpTLS, "smtp-tls", "opportunistic", "SMTP transport security: opportunistic (STARTTLS when offered), starttls (required), tls (implicit, port 465) or none")
	f.StringVar(&o.smtpAuth, "smtp-auth", "", "SMTP auth mechanism: plain, login or cram-md5 (empty: the strongest the relay offers; none in clear without TLS)")
	o.host.flags(f)
	o.tls.flags(f)
	f.DurationVar(&o.idleClose, "idle-close", 10*time.Minute, "close a tenant's files after nobody used them this long (they open again on the next use)")
	f.IntVar(&o.maxOpenTenants, "max-open-tenants", app.DefaultMaxOpenTenants, "most tenants open at once: past it the least recently used idle ones close (-1: no cap)")
	f.StringVar(&o.replicateTo, "replicate-to", "", "stream instance.db and every tenant file to this replica (file:///DIR, sftp://USER@HOST/DIR or s3://BUCKET/PREFIX?endpoint=URL; Litestream), for a standby to follow")
	f.StringVar(&o.standbyOf, "standby-of", "", "run as a standby of the primary replicating to this replica (file://, sftp:// or s3://, as --replicate-to): restore and follow its files, serve them read-only, answer RADIUS")
	f.DurationVar(&o.promoteAfter, "promote-after", 0, "with --standby-of: promote this standby by itself once the primary's heartbeat in the replica has been silent this long (e.g. 30s; at least 3s; 0: only xr promote does)")
	o.radiusTLS.flags(f)
	o.replicaCreds.flags(f)
	f.StringVar(&o.standbyAddress, "standby-address", "", "the standby box's address as NASes reach it (xr serve --standby-of runs there): NAS setup scripts list it as the second RADIUS server")
}

func serveCmd(g *globals) *cobra.Command {
	var o serveOpts
	var initDir bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "run the API, the RADIUS server and the job runner",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			g.mayCreate = initDir
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			o.socks = inheritedSockets()
			err := runServe(ctx, g, o, nil)
			if errors.Is(err, errPromoted) {
				stop()
				// The same flags: the promotion record makes it the primary.
				return reexec(o.socks.env)
			}
			return err
		},
	}
	o.flags(cmd, "127.0.0.1:8080")
	cmd.Flags().BoolVar(&initDir, "init", false, "create a new instance when --data holds none (without it such a directory is refused)")
	return cmd
}

// runServe runs until ctx ends, then shuts down in order: stop accepting
// HTTP and finish in-flight requests, let jobs finish their current step,
// drain RADIUS and flush its batched writes, close the databases.
// ready, if set, is called with the bound HTTP address and the HTTPS one
// ("" when xr serves no HTTPS itself).
func runServe(ctx context.Context, g *globals, o serveOpts, ready func(httpAddr, httpsAddr string)) error {
	log := g.logger()
	if o.socks == nil {
		o.socks = newSockets()
	}
	if err := servePprof(log); err != nil {
		return err
	}
	if o.smtpPassword == "" && o.smtpPasswordEnv != "" {
		o.smtpPassword = os.Getenv(o.smtpPasswordEnv)
	}
	cfg := app.Config{Domain: o.domain, DefaultTenant: o.defaultTenant, AllowPrivateEgress: o.allowPrivateEgress,
		AllowSignup: o.allowSignup, SecureCookies: o.secureCookies || o.tls.on(), Logger: log, SMTPAddr: o.smtpAddr, SMTPFrom: o.smtpFrom, SMTPUser: o.smtpUser, SMTPPassword: o.smtpPassword,
		SMTPTLS: o.smtpTLS, SMTPAuth: o.smtpAuth, IdleClose: o.idleClose, MaxOpenTenants: o.maxOpenTenants}
	if err := outbox.CheckSMTPConfig(cfg); err != nil {
		return err
	}
	if err := o.tls.check(o.domain); err != nil {
		return err
	}
	if err := o.host.apply(&cfg, g.data); err != nil {
		return err
	}
	if err := o.checkPromoteAfter(); err != nil {
		return err
	}
	promotion, promoted, err := replica.ReadPromotion(g.data)
	if err != nil {
		return err
	}
	if promoted && o.standbyOf != "" {
		// A standby promoted (xr promote) is the primary of the replica it
		// followed, also when restarted with its standby's flags.
		log.Info("this standby was promoted: serving as the primary", "replica", o.standbyOf, "generation", promotion.Gen)
		o.replicateTo, o.standbyOf = o.standbyOf, ""
	}
	var target replica.Target
	if o.replicateTo != "" {
		t, err := replica.ParseTarget(o.replicateTo)
		if err != nil {
			return fmt.Errorf("--replicate-to: %w", err)
		}
		target, cfg.Checkpoints = t, db.CheckpointExternal
	}
	var followed replica.Target
	var sb *standby
	if o.standbyOf != "" {
		if o.replicateTo != "" {
			return errors.New("--standby-of and --replicate-to: a standby does not replicate until it is promoted")
		}
		t, err := replica.ParseTarget(o.standbyOf)
		if err == nil {
			t, err = o.replicaCreds.standbyTarget(ctx, g, t, o.allowPrivateEgress)
		}
		if err != nil {
			return fmt.Errorf("--standby-of: %w", err)
		}
		followed = t
		if sb, err = startStandby(ctx, g, o.followerBin, t, o.promoteAfter); err != nil {
			return fmt.Errorf("--standby-of: %w", err)
		}
		// Deferred before a.Close, so it runs after it.
		defer sb.stop()
		standbyConfig(&cfg, g.data, t, o.promoteAfter)
	}
	a, err := g.open(cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	if followed.Remote() {
		// Sealed again at each start: under the instance's current key.
		if err := replica.SaveStandbyCredentials(g.data, a.Keys, followed); err != nil {
			return fmt.Errorf("--standby-of: keep the credentials: %w", err)
		}
	}
	if o.replicateTo != "" {
		if target, err = o.replicaCreds.primaryTarget(ctx, g, a, target, o.allowPrivateEgress); err != nil {
			return fmt.Errorf("--replicate-to: %w", err)
		}
		rep, err := replica.Start(ctx, a, target, replica.Options{})
		switch {
		case errors.Is(err, replica.ErrFenced):
			// Another box holds the replica: serve what this one has,
			// refusing every write, until it is re-joined as a standby.
			log.Error("--replicate-to: fenced", "err", err)
		case err != nil:
			return err
		default:
			// Deferred after a.Close, so it runs first: the last writes of
			// every file still open are shipped before the files close.
			defer func() {
				if err := rep.Close(context.Background()); err != nil {
					log.Error("replication: final sync", "err", err)
				}
			}()
		}
	}
	if o.defaultTenant != "" {
		if _, ok := a.TenantBySlug(o.defaultTenant); !ok {
			return fmt.Errorf("--default-tenant %q: no such tenant", o.defaultTenant)
		}
	}
	srv := web.New(a, console.Pages, my.Pages)
	srv.TrustedProxies, _ = o.tls.proxies() // checked above
	rad := newRadius(a)
	if promoted && promotion.Primary.IsZero() {
		// Before anything is served: the journal's usage is charged
		// once, through the primary's accounting path.
		if err := finishPromotion(ctx, g.data, promotion, rad); err != nil {
			return err
		}
	}
	if err := rad.svc.SetStandbyAddress(o.standbyAddress); err != nil {
		return fmt.Errorf("--standby-address: %w", err)
	}
	srv.Radius, srv.Metrics = rad.svc, rad.metrics
	if srv.MetricsToken = o.metricsToken; srv.MetricsToken == "" {
		srv.MetricsToken = os.Getenv("XR_METRICS_TOKEN")
	}
	servers, err := listenWeb(o, a, g.data, srv)
	if err != nil {
		return err
	}
	if !o.noRadius {
		if err := rad.listen(a, o.socks, o.radiusAuth, o.radiusAcct, o.radiusTLS); err != nil {
			servers.close()
			return fmt.Errorf("radius: %w", err)
		}
	}

	// Jobs include webhook deliveries that may wait up to 10 s on a slow
	// receiver: enough workers that a few of those never stall the rest.
	// Nothing scans the tenants at start: the scheduler knows from
	// instance.db what is due, and a tenant recovers its own jobs when it
	// opens.
	a.Jobs.Workers = 16
	bg, cancelBG := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a.WatchRegistry(bg, 500*time.Millisecond) }()
	go func() { defer wg.Done(); rad.svc.Run(bg) }()
	if _, fenced := a.Fenced(); !a.IsStandby() && !fenced { // everything below writes: the primary does it
		wg.Add(2)
		go func() { defer wg.Done(); a.Jobs.Run(bg) }()
		go func() { defer wg.Done(); a.RunTenantTasks(bg) }()
		// xr serve probes every database file that refused a write for lack of
		// space, so /readyz and /metrics clear once space is freed even when no
		// write arrives to prove it.
		wg.Add(1)
		go func() { defer wg.Done(); a.RunStorageProbe(bg, 5*time.Second) }()
		for _, start := range a.Services() {
			wg.Add(1)
			go func(start func(context.Context, *app.App)) { defer wg.Done(); start(bg, a) }(start)
		}
	}

	o.socks.closeUnused()
	errc := make(chan error, 2)
	servers.serve(errc)
	httpAddr, httpsAddr := servers.addrs()
	log.Info("xr serving", "http", httpAddr, "https", httpsAddr, "domain", o.domain, "tenants", a.TenantStats().Known, "version", app.Version)
	if ready != nil {
		ready(httpAddr, httpsAddr)
	}

	var promotedNow bool
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case err := <-errc:
			if !errors.Is(err, http.ErrServerClosed) {
				cancelBG()
				wg.Wait()
				return err
			}
			break wait
		case reply := <-sb.requests():
			if promotedNow = sb.promote(ctx, reply); promotedNow {
				break wait
			}
		}
	}
	if promotedNow {
		// Before the servers close their listeners: the sockets stay
		// open for the process the exec brings back.
		if err := o.socks.keep(); err != nil {
			log.Error("the listeners close during the re-execution", "err", err)
		}
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	servers.shutdown(sctx, log)
	if err := rad.stop(sctx); err != nil {
		log.Error("radius shutdown cut the drain short", "err", err)
	}
	cancelBG()
	wg.Wait()
	log.Info("stopped")
	if promotedNow {
		return errPromoted
	}
	return nil
}
