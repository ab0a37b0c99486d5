package radiusd

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestMinuteWindow: the bad-authenticator window counts the current minute
// and the 59 before it; older buckets are forgotten, and a bucket reused
// after the hour wraps starts from zero.
func TestMinuteWindow(t *testing.T) {
	t.Parallel()
	var w minuteWindow
	t0 := time.Date(2025, 3, 1, 10, 0, 5, 0, time.UTC)
	w.add(t0)
	w.add(t0.Add(10 * time.Second))
	w.add(t0.Add(30 * time.Minute))
	for _, c := range []struct {
		at   time.Duration
		want uint64
	}{{0, 2}, {30 * time.Minute, 3}, {59 * time.Minute, 3}, {60 * time.Minute, 1}, {90 * time.Minute, 0}, {-time.Minute, 0}} {
		if got := w.sum(t0.Add(c.at)); got != c.want {
			t.Errorf("sum at +%v = %d, want %d", c.at, got, c.want)
		}
	}
	w.add(t0.Add(2 * time.Hour)) // same bucket as t0, a new minute
	if got := w.sum(t0.Add(2 * time.Hour)); got != 1 {
		t.Errorf("reused bucket = %d, want 1", got)
	}
}

// TestNASHealthMerge: a renamed NAS has two series; its health takes the
// latest of each and adds the drops, and /metrics writes it once per NAS.
func TestNASHealthMerge(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	old := m.nasFor(&NAS{TenantSlug: "acme", ID: 7, Name: "old", IP: netip.MustParseAddr("192.0.2.1")})
	cur := m.nasFor(&NAS{TenantSlug: "acme", ID: 7, Name: "new", IP: netip.MustParseAddr("192.0.2.1")})
	other := m.nasFor(&NAS{TenantSlug: "beta", ID: 7, Name: "new", IP: netip.MustParseAddr("192.0.2.9")})
	now := time.Now()
	old.health.lastAuth.Store(now.Add(-time.Minute).UnixNano())
	old.health.authMA.Store(false)
	cur.health.lastAuth.Store(now.UnixNano())
	cur.health.authMA.Store(true)
	old.health.skew.Store(-5)
	old.health.skewAt.Store(now.UnixNano())
	old.health.badAuth.add(now)
	cur.health.badAuth.add(now)
	other.health.badAuth.add(now)
	m.coaDone(&NAS{TenantSlug: "acme", ID: 7, Name: "new", IP: netip.MustParseAddr("192.0.2.1")}, "", nil)

	h := m.NASHealth("acme", 7)
	if h.SendsMessageAuthenticator == nil || !*h.SendsMessageAuthenticator || h.ClockSkew == nil || *h.ClockSkew != -5 ||
		h.BadAuthenticatorLastHour != 2 || h.LastCoAOutcome != OutcomeUnreachable || h.LastAccounting.IsZero() == false {
		t.Fatalf("%+v", h)
	}
	if h := m.NASHealth("acme", 8); h.SendsMessageAuthenticator != nil || !h.LastAccessRequest.IsZero() || h.BadAuthenticatorLastHour != 0 {
		t.Fatalf("unknown NAS: %+v", h)
	}
	var b bytes.Buffer
	m.WritePrometheus(&b)
	out := b.String()
	for _, want := range []string{
		"radius_nas_message_authenticator{nas_id=\"7\",tenant=\"acme\"} 1\n",
		"radius_nas_clock_skew_seconds{nas_id=\"7\",tenant=\"acme\"} -5\n",
		"radius_nas_bad_authenticator_drops_last_hour{nas_id=\"7\",tenant=\"acme\"} 2\n",
		"radius_nas_bad_authenticator_drops_last_hour{nas_id=\"7\",tenant=\"beta\"} 1\n",
		"radius_nas_last_coa_timestamp_seconds{nas_id=\"7\",outcome=\"unreachable\",tenant=\"acme\"} ",
		"radius_nas_last_accounting_timestamp_seconds{nas_id=\"7\",tenant=\"acme\"} 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if n := strings.Count(out, "radius_nas_bad_authenticator_drops_last_hour{nas_id=\"7\",tenant=\"acme\""); n != 1 {
		t.Errorf("acme/7 written %d times", n)
	}
}
