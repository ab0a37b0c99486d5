package web_test

import (
	"fmt"
	"testing"

	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// /metrics reports the tenant pool and the scheduler, and the figures of a
// closed tenant as they were when it closed: the scrape opens no tenant.
func TestMetricsTenantPoolAndClosedTenants(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	for i := range 3 {
		if r := k.Do("POST", "acme", "/api/v1/users", tok, map[string]any{"username": fmt.Sprintf("pool-%d", i), "password": "secret-pool-1"}); r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	k.Tenant("quiet")
	k.App.Pool.SetMaxOpen(-1)
	xrtest.Eventually(t, "every tenant to close", func() bool {
		k.App.Pool.CloseIdle()
		return k.App.Pool.OpenCount() == 0
	})
	opens := k.App.TenantStats().Opens

	body := k.Do("GET", "", "/metrics", "", nil).Body
	if st := k.App.TenantStats(); st.Opens != opens || st.Open != 0 {
		t.Fatalf("the scrape opened tenants: %+v (opens before %d)", st, opens)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64 // -1: present, any value
	}{
		{"xr_tenant_subscribers", []string{"tenant", "acme"}, 3},
		{"xr_tenant_subscribers", []string{"tenant", "quiet"}, 0},
		{"xr_tenants", nil, 2},
		{"xr_metrics_tenants_unread", nil, 0},
		{"xr_tenants_open", nil, 0},
		{"xr_tenants_open_max", nil, 0},
		{"xr_tenant_opens_total", nil, float64(opens)},
		{"xr_tenant_closes_total", nil, -1},
		{"xr_scheduler_due", nil, -1},
		{"xr_scheduler_overdue", nil, 0},
		{"xr_scheduler_running", nil, 0},
		{"xr_scheduler_runs_total", nil, -1},
		{"xr_scheduler_lag_seconds", nil, 0},
		{"xr_scheduler_last_run_lag_seconds", nil, -1},
	} {
		v, ok := metricValue(t, body, c.name, c.labels...)
		if !ok || (c.want >= 0 && v != c.want) {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	if v, _ := metricValue(t, body, "xr_tenant_closes_total"); v < 2 {
		t.Errorf("closes %v, want at least the two tenants", v)
	}
	promtoolCheck(t, body)
}
