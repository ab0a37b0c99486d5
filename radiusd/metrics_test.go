package radiusd

import (
	"bytes"
	"net/netip"
	"regexp"
	"strings"
	"testing"
)

func TestMetricsExposition(t *testing.T) {
	t.Parallel()
	e := newEnv(t, NASTypeMikrotik, true, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "pw"})
	for _, pw := range []string{"pw", "bad"} {
		req := papRequest(t, "alice", pw, true)
		checkResponse(t, exchange(t, e.authAddr, req, answerWait), req)
	}
	exchange(t, e.authAddr, papRequest(t, "alice", "pw", false), silentWait) // no MA: dropped
	waitFor(t, "drop", func() bool { return e.srv.Metrics.Drops("missing_message_authenticator") == 1 })

	var buf bytes.Buffer
	e.srv.Metrics.WritePrometheus(&buf)
	out := buf.String()
	for _, want := range []string{
		`radius_requests_total{result="accept",type="access_request"} 1`,
		`radius_requests_total{result="reject",type="access_request"} 1`,
		`radius_requests_total{result="dropped",type="access_request"} 1`,
		`radius_drops_total{reason="missing_message_authenticator"} 1`,
		`radius_drops_total{reason="unknown_source"} 0`,
		`radius_auth_rejects_total{reason="bad_credentials"} 1`,
		`radius_nas_requests_total{ip="127.0.0.1",nas="core-1",nas_id="7",result="accept",tenant="acme"} 1`,
		`radius_nas_requests_total{ip="127.0.0.1",nas="core-1",nas_id="7",result="dropped",tenant="acme"} 1`,
		`radius_acct_batch_size_bucket{le="+Inf"} 0`,
		`# TYPE radius_acct_commit_seconds histogram`,
		`radius_queue_length_auth 0`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %s", want)
		}
	}
	sample := regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? [-+0-9.eEInf]+$`)
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(line, "# ") && !sample.MatchString(line) {
			t.Errorf("not exposition format: %q", line)
		}
	}
}

func TestMetricsLabelsAndHistogram(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	m.reject("weird \"reason\"\n")
	for i := range 100 {
		m.reject("r" + string(rune('a'+i%70)))
	}
	m.nasFor(&NAS{TenantSlug: `t"x`, Name: `a\b`, IP: netip.MustParseAddr("10.0.0.1")}).accepts.Add(1)
	for _, v := range []int{1, 3, 3, 300, 5000} {
		m.batchSize.observe(float64(v))
	}
	var buf bytes.Buffer
	m.WritePrometheus(&buf)
	out := buf.String()
	for _, want := range []string{
		`radius_auth_rejects_total{reason="weird \"reason\"\n"} 1`,
		`nas="a\\b"`, `tenant="t\"x"`,
		`radius_acct_batch_size_bucket{le="1"} 1`,
		`radius_acct_batch_size_bucket{le="4"} 3`,
		`radius_acct_batch_size_bucket{le="512"} 4`,
		`radius_acct_batch_size_bucket{le="+Inf"} 5`,
		`radius_acct_batch_size_sum 5307`,
		`radius_acct_batch_size_count 5`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	if n := strings.Count(out, "radius_auth_rejects_total{"); n > maxRejectReasons+1 {
		t.Errorf("%d reject reason series: cardinality not bounded", n)
	}
}
