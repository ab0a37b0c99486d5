package web_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"xr/app"
	"xr/internal/webtest"
	"xr/radiusd"
	"xr/web"
)

// metricValue is the value of name's series whose labels include the
// given pairs, from a text exposition; ok is false when there is none.
func metricValue(t *testing.T, body []byte, name string, labels ...string) (float64, bool) {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("exposition: %v\n%s", err, body)
	}
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if got[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// promtoolCheck runs `promtool check metrics` on an exposition. Without
// promtool the check is skipped loudly, unless CI is set (.ci/run installs
// Debian's prometheus package): then it fails.
func promtoolCheck(t *testing.T, body []byte) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not found: .ci/run installs it (Debian package prometheus)")
		}
		t.Log("!!! SKIPPING `promtool check metrics`: promtool is not installed (apt-get install prometheus); CI=true makes this a failure !!!")
		return
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestMetricsExposition: /metrics is the client_golang exposition with
// HELP and TYPE on every family, promtool accepts it, and it carries HTTP
// requests by route pattern and status with latencies, the Go and process
// collectors, the tenants' gauges, jobs by kind and state, the storage
// health and the RADIUS server's series.
func TestMetricsExposition(t *testing.T) {
	t.Parallel()
	rm := radiusd.NewMetrics()
	k := webtest.NewWith(t, app.Config{}, nil, func(s *web.Server) { s.Metrics = rm })
	tok := k.Owner("acme")
	if r := k.Do("POST", "acme", "/api/v1/users", tok, map[string]any{"username": "met-a", "password": "secret-met-a"}); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	for range 2 {
		if r := k.Do("GET", "acme", "/api/v1/users", tok, nil); r.Status != 200 {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
	}
	k.Do("GET", "acme", "/api/v1/users/987654", tok, nil)
	if r := k.Do("POST", "acme", "/api/v1/exports", tok, map[string]any{"resource": "users", "format": "csv"}); r.Status != 202 {
		t.Fatalf("export: %d %s", r.Status, r.Body)
	}

	r := k.Do("GET", "", "/metrics", "", nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("metrics: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	body := r.Body
	// Every family has HELP and TYPE.
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range fams {
		if f.GetHelp() == "" || !bytes.Contains(body, []byte("# HELP "+name+" ")) || !bytes.Contains(body, []byte("# TYPE "+name+" ")) {
			t.Errorf("%s without HELP or TYPE", name)
		}
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64 // -1: present, any value
	}{
		{"xr_http_requests_total", []string{"route", "/api/v1/users", "method", "GET", "status", "200"}, 2},
		{"xr_http_requests_total", []string{"route", "/api/v1/users/{id}", "method", "GET", "status", "404"}, 1},
		{"xr_http_requests_total", []string{"route", "/api/v1/users", "method", "POST", "status", "201"}, 1},
		{"xr_http_request_duration_seconds", []string{"route", "/api/v1/users", "method", "GET"}, 2},
		{"xr_tenant_subscribers", []string{"tenant", "acme"}, 1},
		{"xr_tenant_online_sessions", []string{"tenant", "acme"}, 0},
		{"xr_tenants", nil, 1},
		{"xr_jobs", []string{"state", "queued"}, 1},
		{"xr_storage_full", nil, 0},
		{"xr_storage_full_errors_total", nil, 0},
		{"go_goroutines", nil, -1},
		{"go_memstats_alloc_bytes", nil, -1},
		{"process_start_time_seconds", nil, -1},
		{"radius_requests_total", []string{"type", "access_request", "result", "accept"}, 0},
		{"radius_drops_total", []string{"reason", "queue_full"}, 0},
		{"radius_acct_batch_size", nil, 0},
	} {
		v, ok := metricValue(t, body, c.name, c.labels...)
		if !ok || (c.want >= 0 && v != c.want) {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	if !bytes.Contains(body, []byte("# TYPE xr_http_request_duration_seconds histogram")) {
		t.Error("request latency is not a histogram")
	}
	promtoolCheck(t, body)
}

// TestMetricsTenantSeriesBounded: past MetricsTenantSeries tenants, the
// smaller ones are summed under tenant="_other".
func TestMetricsTenantSeriesBounded(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{}, nil, func(s *web.Server) { s.MetricsTenantSeries = 1 })
	k.Tenant("beta")
	k.Tenant("gamma")
	tok := k.Owner("beta")
	for i := range 2 {
		if r := k.Do("POST", "beta", "/api/v1/users", tok, map[string]any{"username": fmt.Sprintf("b%d", i), "password": "secret-b-1"}); r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	body := k.Do("GET", "", "/metrics", "", nil).Body
	if v, ok := metricValue(t, body, "xr_tenant_subscribers", "tenant", "beta"); !ok || v != 2 {
		t.Fatalf("beta: %v %v\n%s", v, ok, body)
	}
	if v, ok := metricValue(t, body, "xr_tenant_subscribers", "tenant", "_other"); !ok || v != 0 {
		t.Fatalf("_other: %v %v", v, ok)
	}
	for _, slug := range []string{"acme", "gamma"} {
		if _, ok := metricValue(t, body, "xr_tenant_subscribers", "tenant", slug); ok {
			t.Fatalf("%s has its own series past the bound", slug)
		}
	}
	if n := bytes.Count(body, []byte("\nxr_tenant_subscribers{")); n != 2 {
		t.Fatalf("%d subscriber series, want 2", n)
	}
}

// TestMetricsBearerToken: with a metrics token, /metrics answers only a
// request bearing it (401 otherwise, and nothing of the exposition).
func TestMetricsBearerToken(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{}, nil, func(s *web.Server) { s.MetricsToken = "scrape-secret-1" })
	r := k.Do("GET", "", "/metrics", "", nil)
	webtest.ExpectErr(t, r, 401, "ERR_UNAUTHORIZED", "missing_bearer_token")
	r = k.Do("GET", "", "/metrics", "scrape-secret-2", nil)
	webtest.ExpectErr(t, r, 401, "ERR_UNAUTHORIZED", "invalid_token")
	if bytes.Contains(r.Body, []byte("go_goroutines")) {
		t.Fatal("exposition leaked without the token")
	}
	r = k.Do("GET", "", "/metrics", "scrape-secret-1", nil)
	if _, ok := metricValue(t, r.Body, "go_goroutines"); r.Status != 200 || !ok {
		t.Fatalf("with the token: %d %.300s", r.Status, r.Body)
	}
}
