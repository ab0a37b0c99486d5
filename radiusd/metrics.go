package radiusd

import (
	"io"
	"math"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Metrics holds the server's and the CoA client's counters. All updates are
// lock-free atomics on the hot path; only the first sighting of a NAS, a
// reject reason or a CoA outcome takes a lock.
type Metrics struct {
	// SessionTruth, when set, reports the RADIUS service's per-tenant
	// count of unconfirmed disconnects (AppBackend sets it).
	SessionTruth func() map[string]uint64

	packets [numPacketTypes][numResults]atomic.Uint64
	drops   [numDropReasons]atomic.Uint64

	rejectMu sync.RWMutex
	rejects  map[string]*atomic.Uint64

	batchSize    histogram
	commitTime   histogram
	commitFailed atomic.Uint64

	nasMu sync.RWMutex
	nas   map[nasKey]*nasStats

	coaMu sync.Mutex
	coa   map[[2]string]*atomic.Uint64

	gaugeMu sync.Mutex
	gauges  map[string]sampled

	radsec atomic.Pointer[radsecState] // the RadSec side's counters, once it serves
}

// sampled is a value read at scrape time (queue lengths, cache sizes).
type sampled struct {
	help  string
	value func() float64
}

// NewMetrics returns an empty metrics set.
func NewMetrics() *Metrics {
	return &Metrics{
		rejects:    map[string]*atomic.Uint64{},
		nas:        map[nasKey]*nasStats{},
		coa:        map[[2]string]*atomic.Uint64{},
		gauges:     map[string]sampled{},
		batchSize:  newHistogram([]float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}),
		commitTime: newHistogram([]float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5}),
	}
}

type packetType uint8

const (
	ptAccessRequest packetType = iota
	ptAccountingRequest
	ptStatusServer
	ptOther
	numPacketTypes
)

var packetTypeNames = [numPacketTypes]string{"access_request", "accounting_request", "status_server", "other"}

func packetTypeOf(code byte) packetType {
	switch code {
	case codeAccessRequest:
		return ptAccessRequest
	case codeAccountingRequest:
		return ptAccountingRequest
	case codeStatusServer:
		return ptStatusServer
	}
	return ptOther
}

type result uint8

const (
	resAccept    result = iota // Access-Accept sent
	resReject                  // Access-Reject sent
	resResponse                // Accounting-Response (or Status-Server answer) sent
	resReplayed                // duplicate answered from the reply cache
	resDropped                 // no answer; see radius_drops_total for why
	resChallenge               // Access-Challenge sent (an EAP round trip)
	numResults
)

var resultNames = [numResults]string{"accept", "reject", "response", "replayed", "dropped", "challenge"}

type dropReason uint8

const (
	dropUnknownSource dropReason = iota
	dropMalformed
	dropBadAuthenticator
	dropMissingMA
	dropQueueFull
	dropDuplicate
	dropUnknownCode
	dropBackendError
	dropCommitFailed
	dropEAPSessionsFull // a new EAP conversation beyond the caps (eap_store.go)
	dropEAPOutOfStep    // an EAP Response to a Request that is not the last one sent
	numDropReasons
)

var dropNames = [numDropReasons]string{
	"unknown_source", "malformed", "bad_authenticator", "missing_message_authenticator",
	"queue_full", "duplicate", "unknown_code", "backend_error", "commit_failed",
	"eap_sessions_full", "eap_out_of_step",
}

type nasKey struct {
	tenant string
	id     int64
	name   string
	ip     netip.Addr
}

type nasStats struct {
	key                                   nasKey
	accepts, rejects, acct, drops, replay atomic.Uint64
	health                                nasHealth // see health.go
}

func (m *Metrics) packet(code byte, r result) { m.packets[packetTypeOf(code)][r].Add(1) }

func (m *Metrics) drop(code byte, why dropReason, ns *nasStats) {
	m.drops[why].Add(1)
	m.packets[packetTypeOf(code)][resDropped].Add(1)
	if ns != nil {
		ns.drops.Add(1)
	}
}

// maxRejectReasons bounds the label set: reasons come from the backend.
const maxRejectReasons = 64

func (m *Metrics) reject(reason string) {
	m.rejectMu.RLock()
	c := m.rejects[reason]
	m.rejectMu.RUnlock()
	if c == nil {
		m.rejectMu.Lock()
		if c = m.rejects[reason]; c == nil {
			if len(m.rejects) >= maxRejectReasons {
				reason = "other"
			}
			if c = m.rejects[reason]; c == nil {
				c = new(atomic.Uint64)
				m.rejects[reason] = c
			}
		}
		m.rejectMu.Unlock()
	}
	c.Add(1)
}

// nasFor returns the per-NAS counters. The key includes name and address so
// that a renamed or moved NAS shows up as a new series, not a wrong label.
func (m *Metrics) nasFor(n *NAS) *nasStats {
	k := nasKey{tenant: n.TenantSlug, id: n.ID, name: n.Name, ip: n.IP}
	m.nasMu.RLock()
	s := m.nas[k]
	m.nasMu.RUnlock()
	if s != nil {
		return s
	}
	m.nasMu.Lock()
	defer m.nasMu.Unlock()
	if s = m.nas[k]; s == nil {
		s = &nasStats{key: k}
		m.nas[k] = s
	}
	return s
}

func (m *Metrics) batch(size int, d time.Duration, ok bool) {
	m.batchSize.observe(float64(size))
	m.commitTime.observe(d.Seconds())
	if !ok {
		m.commitFailed.Add(1)
	}
}

func (m *Metrics) coaOutcome(kind, outcome string) {
	k := [2]string{kind, outcome}
	m.coaMu.Lock()
	c := m.coa[k]
	if c == nil {
		c = new(atomic.Uint64)
		m.coa[k] = c
	}
	m.coaMu.Unlock()
	c.Add(1)
}

// setGauge registers a sampled value (queue lengths, cache sizes).
func (m *Metrics) setGauge(name, help string, f func() float64) {
	m.gaugeMu.Lock()
	m.gauges[name] = sampled{help: help, value: f}
	m.gaugeMu.Unlock()
}

// Drops returns the number of packets dropped for the given reason key (as
// printed in radius_drops_total); tests and the CLI use it.
func (m *Metrics) Drops(reason string) uint64 {
	for i, n := range dropNames {
		if n == reason {
			return m.drops[i].Load()
		}
	}
	return 0
}

// Rejects returns the number of Access-Rejects counted under reason.
func (m *Metrics) Rejects(reason string) uint64 {
	m.rejectMu.RLock()
	defer m.rejectMu.RUnlock()
	if c := m.rejects[reason]; c != nil {
		return c.Load()
	}
	return 0
}

// histogram is a fixed-bucket Prometheus histogram with atomic counters.
type histogram struct {
	bounds []float64
	counts []atomic.Uint64 // len(bounds)+1, last is +Inf
	sum    atomic.Uint64   // float64 bits
	count  atomic.Uint64
}

func newHistogram(bounds []float64) histogram {
	return histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := sort.SearchFloat64s(h.bounds, v) // first bound >= v: le semantics
	h.counts[i].Add(1)
	h.count.Add(1)
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// The exposition goes through github.com/prometheus/client_golang:
// Metrics is a prometheus.Collector (unchecked: its label sets grow with
// the NASes seen) that turns the atomics into constant metrics at scrape
// time, so the hot path stays lock-free.

// Describe sends nothing: an unchecked collector.
func (m *Metrics) Describe(chan<- *prometheus.Desc) {}

// Collect emits every RADIUS series.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	e := emitter{ch}
	for t := range numPacketTypes {
		for r := range numResults {
			e.counter("radius_requests_total", "RADIUS requests received, by packet type and what was done with them.",
				float64(m.packets[t][r].Load()), "type", packetTypeNames[t], "result", resultNames[r])
		}
	}
	for r := range numDropReasons {
		e.counter("radius_drops_total", "RADIUS requests dropped without an answer, by reason.", float64(m.drops[r].Load()), "reason", dropNames[r])
	}
	m.rejectMu.RLock()
	for k, c := range m.rejects {
		e.counter("radius_auth_rejects_total", "Access-Rejects sent, by refusal reason.", float64(c.Load()), "reason", k)
	}
	m.rejectMu.RUnlock()

	e.histogram("radius_acct_batch_size", "Accounting records per group commit.", &m.batchSize)
	e.histogram("radius_acct_commit_seconds", "Duration of accounting group commits.", &m.commitTime)
	e.counter("radius_acct_commit_failures_total", "Accounting group commits that failed (no responses sent).", float64(m.commitFailed.Load()))
	if rs := m.radsec.Load(); rs != nil {
		e.counter("radius_radsec_handshake_failures_total", "RadSec connections refused in the TLS handshake (no, an unknown or an unbound client certificate; TLS below 1.2; timeout).",
			float64(rs.handshakeFailures.Load()))
		e.counter("radius_radsec_refused_total", "RadSec connections closed at once: over the connection caps.", float64(rs.refused.Load()))
	}

	m.nasMu.RLock()
	stats := make([]*nasStats, 0, len(m.nas))
	for _, s := range m.nas {
		stats = append(stats, s)
	}
	m.nasMu.RUnlock()
	sort.Slice(stats, func(i, j int) bool {
		a, b := stats[i].key, stats[j].key
		if a.tenant != b.tenant {
			return a.tenant < b.tenant
		}
		if a.id != b.id {
			return a.id < b.id
		}
		if a.name != b.name {
			return a.name < b.name
		}
		return a.ip.Less(b.ip)
	})
	for _, s := range stats {
		k := s.key
		id := strconv.FormatInt(k.id, 10)
		ip := ""
		if k.ip.IsValid() {
			ip = k.ip.String()
		}
		for _, c := range []struct {
			r string
			v *atomic.Uint64
		}{{"accept", &s.accepts}, {"reject", &s.rejects}, {"accounting", &s.acct}, {"replayed", &s.replay}, {"dropped", &s.drops}} {
			e.counter("radius_nas_requests_total", "RADIUS requests per NAS, by result.", float64(c.v.Load()),
				"tenant", k.tenant, "nas_id", id, "nas", k.name, "ip", ip, "result", c.r)
		}
	}

	collectNASHealth(e, stats)

	m.coaMu.Lock()
	for k, c := range m.coa {
		e.counter("radius_coa_requests_total", "Disconnect/CoA requests sent, by kind and outcome.", float64(c.Load()), "kind", k[0], "outcome", k[1])
	}
	m.coaMu.Unlock()

	m.collectSessionTruth(e) // see sessiontruth.go

	m.gaugeMu.Lock()
	for n, g := range m.gauges {
		e.gauge(n, g.help, g.value())
	}
	m.gaugeMu.Unlock()
}

// WritePrometheus writes all metrics in the Prometheus text exposition
// format, through a registry of their own (tests and tools; the server's
// /metrics registers m beside its other collectors). w is an HTTP response
// or a buffer: like every response write its errors are not checked.
func (m *Metrics) WritePrometheus(w io.Writer) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	families, err := reg.Gather()
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		_ = enc.Encode(f)
	}
	if err != nil {
		_, _ = io.WriteString(w, "# gather error: "+strings.ReplaceAll(err.Error(), "\n", " ")+"\n")
	}
}

// emitter sends constant metrics; label values that are not UTF-8 (a NAS
// name, a reject reason from the backend) are repaired, never refused.
type emitter struct{ ch chan<- prometheus.Metric }

func (e emitter) send(name, help string, typ prometheus.ValueType, v float64, labels []string) {
	names := make([]string, 0, len(labels)/2)
	values := make([]string, 0, len(labels)/2)
	for i := 0; i+1 < len(labels); i += 2 {
		names = append(names, labels[i])
		values = append(values, strings.ToValidUTF8(labels[i+1], "\uFFFD"))
	}
	e.ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name, help, names, nil), typ, v, values...)
}

func (e emitter) counter(name, help string, v float64, labels ...string) {
	e.send(name, help, prometheus.CounterValue, v, labels)
}

func (e emitter) gauge(name, help string, v float64, labels ...string) {
	e.send(name, help, prometheus.GaugeValue, v, labels)
}

func (e emitter) histogram(name, help string, h *histogram) {
	buckets := make(map[float64]uint64, len(h.bounds))
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		buckets[b] = cum
	}
	cum += h.counts[len(h.bounds)].Load()
	e.ch <- prometheus.MustNewConstHistogram(prometheus.NewDesc(name, help, nil, nil), cum, math.Float64frombits(h.sum.Load()), buckets)
}
