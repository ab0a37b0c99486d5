package cli

import (
	"encoding/json"
	"html"
	"math"
	"regexp"
	"strconv"
	"testing"
)

// TestDemoReportCharts: on the demo's 90 days of history every report
// draws a chart, and a chart covers the whole filtered set, not the page
// of 25 rows shown: its days sum to the API's aggregate of the measure.
func TestDemoReportCharts(t *testing.T) {
	t.Parallel()
	k, _ := demoJobApp(t)
	cookie := k.ConsoleCookie(demoSlug, demoUser, demoPassword)
	token := k.Login(demoSlug, demoUser, demoPassword)
	series := regexp.MustCompile(`id="report-chart" data-series="([^"]*)"`)
	// The aggregates a chart's days add up to, per report.
	sums := map[string][]string{"activations": {"revenue", "refunded"}, "activation-stats": {"revenue"},
		"profits": {"activation_revenue"}, "sessions": {"total_bytes"}, "traffic": {"total_bytes"}}
	index := k.Do("GET", demoSlug, "/reports", "", nil, "Cookie", cookie)
	keys := regexp.MustCompile(`data-report="([a-z-]+)"`).FindAllStringSubmatch(string(index.Body), -1)
	if index.Status != 200 || len(keys) < 18 {
		t.Fatalf("index: %d, %d reports", index.Status, len(keys))
	}
	for _, key := range keys {
		report := key[1]
		t.Run(report, func(t *testing.T) {
			page := k.Do("GET", demoSlug, "/reports/"+report, "", nil, "Cookie", cookie)
			m := series.FindSubmatch(page.Body)
			if page.Status != 200 || m == nil {
				t.Fatalf("%d, no chart", page.Status)
			}
			var chart struct {
				T []int64   `json:"t"`
				V []float64 `json:"v"`
			}
			if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &chart); err != nil || len(chart.T) == 0 || len(chart.T) != len(chart.V) {
				t.Fatalf("chart %s: %v", m[1], err)
			}
			keys := sums[report]
			if keys == nil {
				return
			}
			api := k.Do("GET", demoSlug, "/api/v1/admin/reports/"+report+"?page_size=25", token, nil)
			meta := api.Meta()
			if api.Status != 200 || !meta["has_next"].(bool) {
				t.Fatalf("the API's first page is the whole set (%d): the test proves nothing", api.Status)
			}
			want, got := 0.0, 0.0
			aggs := meta["aggregates"].(map[string]any)
			for _, key := range keys {
				want += demoNumber(t, aggs[key])
			}
			for _, v := range chart.V {
				got += v
			}
			if math.Abs(got-want) > 0.01 {
				t.Fatalf("the chart's days sum to %v, the report's %v is %v", got, keys, want)
			}
		})
	}
}

// demoNumber reads an aggregate: a JSON number, or money as a decimal string.
func demoNumber(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err == nil {
			return f
		}
	}
	t.Fatalf("aggregate %v", v)
	return 0
}
