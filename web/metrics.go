package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"io"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"xr/app"
)

// GET /metrics goes through github.com/prometheus/client_golang. Each
// Server has its own registry (two instances in one process never share
// series) holding: the Go runtime and process collectors; HTTP requests
// by route pattern, method and status with a latency histogram by route;
// the storage-health series; the tenant pool and the scheduler; and, per
// tenant (read from the open tenants' files at scrape time, kept in
// instance.db for the closed ones), jobs by kind and state, webhook deliveries by state, outgoing
// messages by channel and state, and per-tenant subscriber and online
// gauges. The RADIUS collector (Server.Metrics) and text writers of other
// areas are merged in per scrape.

// DefaultMetricsTenantSeries bounds the per-tenant gauges' cardinality
// (Server.MetricsTenantSeries): the tenants with the most subscribers get
// a series each, the others are summed under tenant="_other".
const DefaultMetricsTenantSeries = 50

// metricsScrapeBudget bounds the time a scrape spends reading tenants.
const metricsScrapeBudget = 10 * time.Second

type promMetrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newPromMetrics(s *Server) *promMetrics {
	m := &promMetrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "xr_http_requests_total",
			Help: "HTTP requests answered, by route pattern (unmatched: no route), method and status."}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "xr_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"route", "method"}),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration, storageCollector{s.app}, tenantCollector{s}, poolCollector{s.app}, standbyCollector{s.app})
	return m
}

// observe counts one answered request under its row's pattern.
func (m *promMetrics) observe(rt *Route, r *http.Request, status int, d time.Duration) {
	route := "unmatched"
	if rt != nil {
		route = rt.FullPath()
	}
	if status == 0 {
		status = http.StatusOK
	}
	method := r.Method
	switch method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
	default:
		method = "other" // bounded: a client picks the method
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route, method).Observe(d.Seconds())
}

// serveMetrics answers GET /metrics: the Server's registry, the RADIUS
// collector when set, and the given text writers (areas that still print
// the exposition format themselves), merged. With MetricsToken set, the
// request must carry it as a bearer token (compared in constant time).
func (s *Server) serveMetrics(c *Ctx, text ...func(io.Writer)) error {
	if s.MetricsToken != "" {
		tok := bearerToken(c.R)
		if tok == "" {
			return app.ErrUnauthorized("missing_bearer_token")
		}
		want, got := sha256.Sum256([]byte(s.MetricsToken)), sha256.Sum256([]byte(tok))
		if subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
			return app.ErrUnauthorized("invalid_token")
		}
	}
	g := prometheus.Gatherers{s.prom.reg}
	if s.Metrics != nil {
		r := prometheus.NewRegistry()
		if err := r.Register(s.Metrics); err != nil {
			return app.ErrInternal(err)
		}
		g = append(g, r)
	}
	for _, w := range text {
		g = append(g, textGatherer(w))
	}
	promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: promLog{s}}).ServeHTTP(c.W, c.R)
	return nil
}

type promLog struct{ s *Server }

func (l promLog) Println(v ...any) { l.s.log.Warn("metrics", "err", v) }

// textGatherer reads metric families from a writer of the text format.
func textGatherer(write func(io.Writer)) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		var b bytes.Buffer
		write(&b)
		p := expfmt.NewTextParser(model.LegacyValidation)
		fams, err := p.TextToMetricFamilies(&b)
		if err != nil {
			return nil, err
		}
		out := make([]*dto.MetricFamily, 0, len(fams))
		for _, f := range fams {
			out = append(out, f)
		}
		return out, nil
	})
}

// storageCollector exports the storage-health flag (see storage_health.go).
type storageCollector struct{ a *app.App }

var (
	descStorageFull = prometheus.NewDesc("xr_storage_full",
		"1 while some database file refuses writes for lack of space (SQLITE_FULL).", nil, nil)
	descStorageFullFiles = prometheus.NewDesc("xr_storage_full_files",
		"Database files refusing writes for lack of space, by file (instance or tenant slug).", []string{"file"}, nil)
	descStorageFullErrors = prometheus.NewDesc("xr_storage_full_errors_total",
		"Writes refused with SQLITE_FULL since start.", nil, nil)
)

func (storageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descStorageFull
	ch <- descStorageFullFiles
	ch <- descStorageFullErrors
}

func (sc storageCollector) Collect(ch chan<- prometheus.Metric) {
	st := sc.a.StorageStatus()
	full := 0.0
	if len(st.Full) > 0 {
		full = 1
	}
	ch <- prometheus.MustNewConstMetric(descStorageFull, prometheus.GaugeValue, full)
	for _, f := range st.Full {
		ch <- prometheus.MustNewConstMetric(descStorageFullFiles, prometheus.GaugeValue, 1, f)
	}
	ch <- prometheus.MustNewConstMetric(descStorageFullErrors, prometheus.CounterValue, float64(st.Failures))
}

// tenantCollector reports every tenant's gauges (app.AllTenantGauges: the
// open tenants read at scrape time within metricsScrapeBudget, the closed
// ones as kept when they closed).
type tenantCollector struct{ s *Server }

var (
	descTenants       = prometheus.NewDesc("xr_tenants", "Tenants of the instance.", nil, nil)
	descTenantsUnread = prometheus.NewDesc("xr_metrics_tenants_unread",
		"Tenants without figures in this scrape (a read failed or ran out of the scrape's time budget, or the tenant has not closed since it was created); their series are missing.", nil, nil)
	descSubscribers = prometheus.NewDesc("xr_tenant_subscribers",
		"Subscribers counted by the licence, by tenant (the largest tenants; the rest summed as _other).", []string{"tenant"}, nil)
	descOnline = prometheus.NewDesc("xr_tenant_online_sessions",
		"Open RADIUS sessions, by tenant (the largest tenants; the rest summed as _other).", []string{"tenant"}, nil)
	descJobs = prometheus.NewDesc("xr_jobs",
		"Jobs in the tenants' queues, by kind and state.", []string{"kind", "state"}, nil)
	descWebhooks = prometheus.NewDesc("xr_webhook_deliveries",
		"Webhook deliveries kept in the tenants' files, by state.", []string{"state"}, nil)
	descMessages = prometheus.NewDesc("xr_message_deliveries",
		"Outgoing messages (email, SMS, inbox) kept in the tenants' files, by channel and state.", []string{"channel", "state"}, nil)
)

func (tenantCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTenants, descTenantsUnread, descSubscribers, descOnline, descJobs, descWebhooks, descMessages} {
		ch <- d
	}
}

func (tc tenantCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsScrapeBudget)
	defer cancel()
	slugs := tc.s.app.TenantSlugs()
	limit := tc.s.MetricsTenantSeries
	sort.Strings(slugs)
	type one struct {
		slug string
		g    app.TenantGauges
	}
	var all []one
	jobs, msgs := map[[2]string]int64{}, map[[2]string]int64{}
	hooks := map[string]int64{}
	// Open tenants are read now, closed ones as they were when they
	// closed: a scrape opens no tenant.
	gauges, unread, err := tc.s.app.AllTenantGauges(ctx)
	if err != nil {
		tc.s.log.Warn("metrics: tenant figures", "err", err)
		unread = len(slugs)
	}
	for _, slug := range slugs {
		g, ok := gauges[slug]
		if !ok {
			continue
		}
		all = append(all, one{slug, g})
		for k, n := range g.Jobs {
			jobs[k] += n
		}
		for k, n := range g.Webhooks {
			hooks[k] += n
		}
		for k, n := range g.Messages {
			msgs[k] += n
		}
	}
	ch <- prometheus.MustNewConstMetric(descTenants, prometheus.GaugeValue, float64(len(slugs)))
	ch <- prometheus.MustNewConstMetric(descTenantsUnread, prometheus.GaugeValue, float64(unread))
	sort.SliceStable(all, func(i, j int) bool { return all[i].g.Subscribers > all[j].g.Subscribers })
	var otherSubs, otherOnline int64
	for i, t := range all {
		if i >= limit {
			otherSubs += t.g.Subscribers
			otherOnline += t.g.Online
			continue
		}
		ch <- prometheus.MustNewConstMetric(descSubscribers, prometheus.GaugeValue, float64(t.g.Subscribers), t.slug)
		ch <- prometheus.MustNewConstMetric(descOnline, prometheus.GaugeValue, float64(t.g.Online), t.slug)
	}
	if len(all) > limit {
		ch <- prometheus.MustNewConstMetric(descSubscribers, prometheus.GaugeValue, float64(otherSubs), "_other")
		ch <- prometheus.MustNewConstMetric(descOnline, prometheus.GaugeValue, float64(otherOnline), "_other")
	}
	for k, n := range jobs {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	for k, n := range hooks {
		ch <- prometheus.MustNewConstMetric(descWebhooks, prometheus.GaugeValue, float64(n), k)
	}
	for k, n := range msgs {
		ch <- prometheus.MustNewConstMetric(descMessages, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
}

// poolCollector exports the tenant pool (open tenants, opens, closes, the
// cap) and the instance scheduler (due times, how late it runs).
type poolCollector struct{ a *app.App }

var (
	descTenantsOpen    = prometheus.NewDesc("xr_tenants_open", "Tenants whose files are open now.", nil, nil)
	descTenantsOpenMax = prometheus.NewDesc("xr_tenants_open_max", "The cap on tenants open at once (0: none).", nil, nil)
	descTenantOpens    = prometheus.NewDesc("xr_tenant_opens_total", "Openings of tenant files since start.", nil, nil)
	descTenantCloses   = prometheus.NewDesc("xr_tenant_closes_total", "Closes of tenant files since start (idle, over the cap, deleted).", nil, nil)
	descSchedDue       = prometheus.NewDesc("xr_scheduler_due", "Due times of tenant tasks the scheduler keeps.", nil, nil)
	descSchedOverdue   = prometheus.NewDesc("xr_scheduler_overdue", "Tenant tasks past their due time and not started yet.", nil, nil)
	descSchedRunning   = prometheus.NewDesc("xr_scheduler_running", "Tenant task runs in progress.", nil, nil)
	descSchedRuns      = prometheus.NewDesc("xr_scheduler_runs_total", "Tenant task runs started since start.", nil, nil)
	descSchedLag       = prometheus.NewDesc("xr_scheduler_lag_seconds", "How late the oldest overdue tenant task is now (0: none overdue).", nil, nil)
	descSchedLastLag   = prometheus.NewDesc("xr_scheduler_last_run_lag_seconds", "How late after its due time the last tenant task run started.", nil, nil)
)

func (poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTenantsOpen, descTenantsOpenMax, descTenantOpens, descTenantCloses,
		descSchedDue, descSchedOverdue, descSchedRunning, descSchedRuns, descSchedLag, descSchedLastLag} {
		ch <- d
	}
}

func (pc poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := pc.a.TenantStats()
	sc := pc.a.SchedulerStats()
	for _, m := range []struct {
		d *prometheus.Desc
		t prometheus.ValueType
		v float64
	}{
		{descTenantsOpen, prometheus.GaugeValue, float64(st.Open)},
		{descTenantsOpenMax, prometheus.GaugeValue, float64(st.MaxOpen)},
		{descTenantOpens, prometheus.CounterValue, float64(st.Opens)},
		{descTenantCloses, prometheus.CounterValue, float64(st.Closes)},
		{descSchedDue, prometheus.GaugeValue, float64(sc.Due)},
		{descSchedOverdue, prometheus.GaugeValue, float64(sc.Overdue)},
		{descSchedRunning, prometheus.GaugeValue, float64(sc.Running)},
		{descSchedRuns, prometheus.CounterValue, float64(sc.Runs)},
		{descSchedLag, prometheus.GaugeValue, sc.Lag.Seconds()},
		{descSchedLastLag, prometheus.GaugeValue, sc.LastLag.Seconds()},
	} {
		ch <- prometheus.MustNewConstMetric(m.d, m.t, m.v)
	}
}
