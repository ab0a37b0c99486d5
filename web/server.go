package web

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"xr/app"
	"xr/app/aaa"
	"xr/app/identity"
)

// Connection deadlines every row gets from the middleware (the defaults
// of the Server fields of the same names; see Route.File and
// Route.Stream).
const (
	// DefaultReadBudget is the time budget of a read request (a GET past
	// it answers 503 ERR_TIMEOUT).
	DefaultReadBudget = 30 * time.Second
	// DefaultBodyTimeout is how long a JSON request body may take to
	// arrive; past it the request is 408 request_timeout and the
	// connection is closed.
	DefaultBodyTimeout = 20 * time.Second
	// DefaultFileTimeout replaces both deadlines on file rows (uploads and
	// downloads).
	DefaultFileTimeout = 10 * time.Minute
	// DefaultWriteTimeout is how long writing a response may take once
	// its first byte is written; stream rows have none.
	DefaultWriteTimeout = 2 * time.Minute
)

// Server is the HTTP surface of one instance.
type Server struct {
	app    *app.App
	log    *slog.Logger
	mux    *http.ServeMux
	routes []*Route
	gz     compressors // gzhttp wrappers, compress.go
	// Metrics, when set, is the RADIUS server's collector, served at GET
	// /metrics beside the Server's own (web/metrics.go).
	Metrics prometheus.Collector
	// MetricsToken, when set, is the bearer token GET /metrics requires
	// (xr serve --metrics-token).
	MetricsToken string
	// MetricsTenantSeries is how many tenants get their own per-tenant
	// series in /metrics (DefaultMetricsTenantSeries).
	MetricsTenantSeries int
	prom                *promMetrics
	// Radius is the RADIUS data service (live sessions, disconnects); nil
	// when the instance runs without one.
	Radius *aaa.Service
	// PortalAuth authenticates a subscriber-portal credential (set by the
	// portal area); nil refuses every subscriber route.
	PortalAuth func(c *Ctx) error
	// BodyTimeout, FileTimeout and WriteTimeout are the connection
	// deadlines (Default* unless changed before serving).
	BodyTimeout, FileTimeout, WriteTimeout time.Duration
	// ReadBudget is the time budget of a read request (DefaultReadBudget).
	ReadBudget time.Duration
	// TrustedProxies are the addresses whose X-Forwarded-For and
	// X-Forwarded-Proto count (xr serve --trusted-proxy; web/forwarded.go).
	TrustedProxies []netip.Prefix
	sites          []*Site                      // mounted pages (web/pages.go)
	static         *staticAssets                // the pages' files (web/static.go)
	pageText       map[string]map[string]string // the pages' catalogue, by language
	fallbacks      []fallbackRoute
	reqSeq         atomic.Uint64
	started        time.Time

	// permsHook, when set (only by the authorization sweep test,
	// web/authz_sweep_test.go), replaces the row's permission check: it
	// may hand the handler another actor, so the test can prove that the
	// area function checks the caller by itself.
	permsHook func(c *Ctx)
}

// New builds the server and its mux from the route table, with the pages
// of the products given (web/console, web/my).
func New(a *app.App, pages ...Pages) *Server {
	s := &Server{app: a, log: a.Log, mux: http.NewServeMux(), started: time.Now(),
		BodyTimeout: DefaultBodyTimeout, FileTimeout: DefaultFileTimeout, WriteTimeout: DefaultWriteTimeout, MetricsTenantSeries: DefaultMetricsTenantSeries, ReadBudget: DefaultReadBudget}
	s.PortalAuth = s.portalAuth
	s.gz = newCompressors()
	s.prom = newPromMetrics(s)
	for _, r := range s.table() {
		s.routes = append(s.routes, r)
		s.register(r, s.wrap(r))
	}
	s.static = &staticAssets{}
	if len(pages) > 0 {
		s.static, s.pageText = sharedStatic(), PageCatalogue()
	}
	for _, p := range pages {
		s.sites = append(s.sites, s.mount(p))
	}
	s.mux.HandleFunc("GET /static/", s.serveStatic)
	s.mux.HandleFunc("GET /favicon.ico", s.serveFavicon)
	s.mux.HandleFunc("/", s.noRoute)
	return s
}

// Routes is the route table (tests and the OpenAPI generator read it).
func (s *Server) Routes() []*Route { return s.routes }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = s.forwarded(r)
	// ServeMux answers an unclean path (double slash, dot segment) with an
	// HTML redirect; every non-2xx answer here is the JSON error object, and
	// no route has such a path.
	if r.Method != "CONNECT" && r.URL.Path != cleanPath(r.URL.Path) {
		c, _ := s.newCtx(w, r, nil)
		s.writeError(c, &app.Error{Code: app.CodeNotFound, Status: 404, Reason: "route_not_found"})
		return
	}
	s.mux.ServeHTTP(w, r)
}

// cleanPath is ServeMux's canonical form of a path: rooted, no empty or dot
// segments, a trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// table is the one route table: every group's rows plus the routes outside
// /api/v1.
func (s *Server) table() []*Route {
	var rows []Route
	for _, g := range [][]Route{
		s.rootRoutes(), s.authRoutes(), s.managersRoutes(), s.usersRoutes(), s.sessionsRoutes(),
		s.cardsRoutes(), s.webhooksRoutes(), s.portalRoutes(), s.portalTicketsRoutes(), s.ticketsRoutes(), s.reportsRoutes(), s.monitoringRoutes(), s.toolsRoutes(), s.bandwidthRoutes(), s.dashboardsRoutes(), s.backupsRoutes(), s.backupDestinationsRoutes(), s.plansRoutes(), s.nasRoutes(), s.developerRoutes(), s.jobsRoutes(),
		s.paymentsPortalRoutes(), s.selfserviceRoutes(), s.parentalRoutes(), s.portalEntryRoutes(), s.posRoutes(), s.shopRoutes(), s.dataimportRoutes(), s.studioRoutes(), s.hotspotRoutes(), s.devgwRoutes(),
		s.radiusRoutes(), s.radsecRoutes(),
	} {
		rows = append(rows, g...)
	}
	out := make([]*Route, len(rows))
	for i := range rows {
		out[i] = &rows[i]
	}
	return out
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
	// writeTimeout, when set, is armed as the connection's write deadline
	// when the response starts.
	writeTimeout time.Duration
}

func (w *statusWriter) start() {
	if w.writeTimeout > 0 {
		// Unsupported writers (a recorder) have no deadline to set.
		_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.writeTimeout))
		w.writeTimeout = 0
	}
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.start()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
		w.start()
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the connection through the
// wrapper (deadlines, flushing).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush lets streaming handlers push events through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) newCtx(w http.ResponseWriter, r *http.Request, rt *Route) (*Ctx, *statusWriter) {
	sw := &statusWriter{ResponseWriter: w}
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 64 || strings.ContainsAny(id, " \t\r\n\"") {
		id = strconv.FormatInt(s.started.Unix(), 36) + "-" + strconv.FormatUint(s.reqSeq.Add(1), 36)
	}
	sw.Header().Set("X-Request-Id", id)
	return &Ctx{W: sw, R: r, Route: rt, ReqID: id, IP: clientIP(r), App: s.app}, sw
}

// wrap derives the request pipeline of one row.
func (s *Server) wrap(rt *Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		c, sw := s.newCtx(w, r, rt)
		s.setDeadlines(w, r, rt, sw)
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic", "request_id", c.ReqID, "panic", p, "stack", string(debug.Stack()))
				if sw.status == 0 {
					s.writeError(c, app.ErrInternal(fmt.Errorf("panic: %v", p)))
				}
			}
			s.accessLog(c, sw, time.Since(start))
		}()
		if err := s.serve(c); err != nil {
			s.writeError(c, err)
		}
	})
}

// setDeadlines gives the connection the row's deadlines: the request body
// must arrive within BodyTimeout (FileTimeout on file rows), and the
// response, once started, must be written within WriteTimeout (FileTimeout
// on file rows; none on stream rows). A request without a body gets no
// read deadline: the server's own read of the next request owns the
// connection then. The server clears both deadlines after each request.
func (s *Server) setDeadlines(w http.ResponseWriter, r *http.Request, rt *Route, sw *statusWriter) {
	body, write := s.BodyTimeout, s.WriteTimeout
	if rt != nil && rt.File {
		body, write = s.FileTimeout, s.FileTimeout
	}
	if rt != nil && rt.streaming() {
		write = 0
	}
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody && body > 0 {
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(body))
	}
	sw.writeTimeout = write
}

func (s *Server) accessLog(c *Ctx, sw *statusWriter, d time.Duration) {
	s.prom.observe(c.Route, c.R, sw.status, d)
	if !s.log.Enabled(c.R.Context(), slog.LevelInfo) {
		return
	}
	tenant := ""
	if c.Tenant != nil {
		tenant = c.Tenant.Slug
	}
	s.log.Info("http", "method", c.R.Method, "path", c.R.URL.Path, "status", sw.status, "bytes", sw.bytes,
		"ms", float64(d.Microseconds())/1000, "request_id", c.ReqID, "tenant", tenant, "ip", c.IP)
}

func (s *Server) serve(c *Ctx) error {
	rt := c.Route
	if rt.H == nil {
		return app.ErrNotImplemented()
	}
	if err := c.checkText(); err != nil {
		return err
	}
	if rt.Root {
		return rt.H(c)
	}
	if rt.isMutation() {
		// A client hanging up must not abort an operation half way: its
		// statements run on a context detached from the connection.
		c.R = c.R.WithContext(context.WithoutCancel(c.R.Context()))
	} else if !rt.streaming() {
		// Reads have a time budget; past it the statement is interrupted
		// and the client gets 503 ERR_TIMEOUT (retry, ideally narrower).
		ctx, cancel := context.WithTimeout(c.R.Context(), s.ReadBudget)
		defer cancel()
		c.R = c.R.WithContext(ctx)
	}
	ctx := c.R.Context()
	c.Host = s.resolveHost(c.R.Host)
	if c.Host.Kind == HostTenant {
		t, release, err := s.app.Acquire(c.Host.Slug)
		if err != nil {
			return err
		}
		defer release()
		c.Tenant = t
		c.R = c.R.WithContext(t.DB.Bind(ctx)) // a restore from now on refuses this request's writes
		ctx = c.R.Context()
	}
	switch rt.Access {
	case Public:
		if err := s.limitPublic(c); err != nil {
			return err
		}
	case Subscriber:
		switch {
		case rt.site != nil:
			if err := rt.site.authenticate(c); err != nil {
				return err
			}
		case s.PortalAuth == nil:
			return app.ErrUnauthorized("invalid_token")
		default:
			if err := s.PortalAuth(c); err != nil {
				return err
			}
		}
		if err := s.limitSubscriber(c); err != nil {
			return err
		}
	case Staff:
		if rt.site != nil {
			if err := rt.site.authenticate(c); err != nil {
				return err
			}
		} else {
			act, err := identity.Authenticate(ctx, s.app, c.Tenant, bearerToken(c.R))
			if err != nil {
				return err
			}
			c.Actor = act
		}
		act := c.Actor
		if rt.SessionOnly && act.Kind == app.CredAPIToken {
			return app.ErrForbidden("api_token_forbidden")
		}
		if rt.NoImpersonation && act.Impersonator != 0 {
			return app.ErrForbidden("impersonation_forbidden")
		}
		if !rt.licenseExempt() {
			lic, err := c.Tenant.CurrentLicense(ctx)
			if err != nil {
				return err // fail closed: an unreadable count is not "under the cap"
			}
			if lic.Locked() {
				return app.ErrLicenseLocked()
			}
		}
		if s.permsHook != nil {
			s.permsHook(c)
		} else if err := act.Require(rt.Perms...); err != nil {
			return err
		}
		if err := s.limitStaff(c); err != nil {
			return err
		}
	}
	return rt.H(c)
}

func bearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// limitStaff counts an authenticated request: t_mutate for every non-GET,
// then the row's own buckets.
func (s *Server) limitStaff(c *Ctx) error {
	names := c.Route.Buckets
	if c.Route.isMutation() {
		names = append([]string{app.BucketMutate}, names...)
	}
	for _, name := range names {
		if !s.allow(c, name) {
			return app.ErrRateLimited()
		}
	}
	return nil
}

// limitSubscriber counts a portal request on the caller's own buckets:
// portal_subscriber for every request, t_mutate for every non-GET, then
// the row's buckets — all keyed on the subscriber, flat (see allow).
func (s *Server) limitSubscriber(c *Ctx) error {
	names := append([]string{"portal_subscriber"}, c.Route.Buckets...)
	if c.Route.isMutation() {
		names = append([]string{"portal_subscriber", app.BucketMutate}, c.Route.Buckets...)
	}
	for _, name := range names {
		if !s.allow(c, name) {
			return app.ErrRateLimited()
		}
	}
	return nil
}

// limitPublic counts a public request per source IP, on the row's named
// bucket or on a bucket of its own.
func (s *Server) limitPublic(c *Ctx) error {
	if len(c.Route.Buckets) == 0 {
		if !s.app.Limiter.Allow("ip:"+c.IP+":"+c.Route.Pattern(), s.app.Buckets()["public"].Limit) {
			return app.ErrRateLimited()
		}
		return nil
	}
	for _, name := range c.Route.Buckets {
		if !s.allow(c, name) {
			return app.ErrRateLimited()
		}
	}
	return nil
}

func (s *Server) allow(c *Ctx, name string) bool {
	def, ok := s.app.Buckets()[name]
	if !ok {
		return true // the structural test keeps unknown names out of the table
	}
	var key string
	limit := def.Limit
	switch def.Scope {
	case app.ScopeTenant:
		if c.Tenant == nil {
			return true
		}
		if c.Route.Access == Subscriber {
			// A portal credential is bucketed per subscriber, flat.
			key = "s:" + strconv.FormatInt(c.Tenant.ID, 10) + ":" + strconv.FormatInt(c.Actor.SubscriberID, 10) + ":" + name
		} else {
			key = "t:" + strconv.FormatInt(c.Tenant.ID, 10) + ":" + name
			limit = app.ScaledLimit(def.Limit, c.Tenant.Tier())
		}
	case app.ScopeOperator:
		if c.Tenant == nil || c.Actor == nil {
			key = "ip:" + c.IP + ":" + name
		} else {
			key = "o:" + strconv.FormatInt(c.Tenant.ID, 10) + ":" + strconv.FormatInt(c.Actor.ManagerID, 10) + ":" + name
		}
	case app.ScopeIP:
		key = "ip:" + c.IP + ":" + name
	case app.ScopeSubscriber:
		if c.Tenant == nil || c.Actor == nil {
			return true
		}
		key = "s:" + strconv.FormatInt(c.Tenant.ID, 10) + ":" + strconv.FormatInt(c.Actor.SubscriberID, 10) + ":" + name
	}
	return s.app.Limiter.Allow(key, limit)
}

var probeMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "QUERY", "TRACE"}

// noRoute answers what no row matched: 405 with Allow when the path exists
// under other methods, else 404 route_not_found.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	fb, vals, allowed := s.matchFallback(r)
	if fb != nil {
		for k, v := range vals {
			r.SetPathValue(k, v)
		}
		fb.handler.ServeHTTP(w, r)
		return
	}
	c, _ := s.newCtx(w, r, nil)
	for _, m := range probeMethods {
		if m == r.Method {
			continue
		}
		r2 := r.Clone(context.Background())
		r2.Method = m
		if _, p := s.mux.Handler(r2); p != "" && p != "/" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		s.writeError(c, &app.Error{Code: app.CodeValidation, Status: 405, Reason: "method_not_allowed"})
		return
	}
	s.writeError(c, &app.Error{Code: app.CodeNotFound, Status: 404, Reason: "route_not_found"})
}
