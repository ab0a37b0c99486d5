package radiusd

import (
	"bufio"
	"sort"
)

// writeSessionTruth writes the counters of the session sweep (app/aaa
// truth.go): ACKed Disconnects that no Accounting-Stop followed within two
// interim intervals, by tenant.
func (m *Metrics) writeSessionTruth(bw *bufio.Writer) {
	header(bw, "radius_disconnect_unconfirmed_total", "counter",
		"ACKed Disconnects (operator, quota cut, zombie cleanup) not followed by an Accounting-Stop within two interim intervals, by tenant.")
	if m.SessionTruth == nil {
		return
	}
	counts := m.SessionTruth()
	slugs := make([]string, 0, len(counts))
	for k := range counts {
		slugs = append(slugs, k)
	}
	sort.Strings(slugs)
	for _, slug := range slugs {
		fmtSample(bw, "radius_disconnect_unconfirmed_total", counts[slug], "tenant", slug)
	}
}
