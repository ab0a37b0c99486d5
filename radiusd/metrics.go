package radiusd

import (
	"bufio"
	"io"
	"math"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
	gauges  map[string]func() float64
}

// NewMetrics returns an empty metrics set.
func NewMetrics() *Metrics {
	return &Metrics{
		rejects:    map[string]*atomic.Uint64{},
		nas:        map[nasKey]*nasStats{},
		coa:        map[[2]string]*atomic.Uint64{},
		gauges:     map[string]func() float64{},
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
	resAccept   result = iota // Access-Accept sent
	resReject                 // Access-Reject sent
	resResponse               // Accounting-Response (or Status-Server answer) sent
	resReplayed               // duplicate answered from the reply cache
	resDropped                // no answer; see radius_drops_total for why
	numResults
)

var resultNames = [numResults]string{"accept", "reject", "response", "replayed", "dropped"}

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
	numDropReasons
)

var dropNames = [numDropReasons]string{
	"unknown_source", "malformed", "bad_authenticator", "missing_message_authenticator",
	"queue_full", "duplicate", "unknown_code", "backend_error", "commit_failed",
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
func (m *Metrics) setGauge(name string, f func() float64) {
	m.gaugeMu.Lock()
	m.gauges[name] = f
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

// WritePrometheus writes all metrics in the Prometheus text exposition
// format (version 0.0.4). w is an HTTP response: like every response write
// its errors are not checked (the client went away). The helpers below use
// WriteString only: bufio.Writer keeps the first error and Flush reports
// it.
func (m *Metrics) WritePrometheus(w io.Writer) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()

	header(bw, "radius_requests_total", "counter", "RADIUS requests received, by packet type and what was done with them.")
	for t := range numPacketTypes {
		for r := range numResults {
			fmtSample(bw, "radius_requests_total", m.packets[t][r].Load(), "type", packetTypeNames[t], "result", resultNames[r])
		}
	}

	header(bw, "radius_drops_total", "counter", "RADIUS requests dropped without an answer, by reason.")
	for r := range numDropReasons {
		fmtSample(bw, "radius_drops_total", m.drops[r].Load(), "reason", dropNames[r])
	}

	header(bw, "radius_auth_rejects_total", "counter", "Access-Rejects sent, by refusal reason.")
	m.rejectMu.RLock()
	reasons := make([]string, 0, len(m.rejects))
	for k := range m.rejects {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	for _, k := range reasons {
		fmtSample(bw, "radius_auth_rejects_total", m.rejects[k].Load(), "reason", k)
	}
	m.rejectMu.RUnlock()

	writeHistogram(bw, "radius_acct_batch_size", "Accounting records per group commit.", &m.batchSize)
	writeHistogram(bw, "radius_acct_commit_seconds", "Duration of accounting group commits.", &m.commitTime)
	header(bw, "radius_acct_commit_failures_total", "counter", "Accounting group commits that failed (no responses sent).")
	fmtSample(bw, "radius_acct_commit_failures_total", m.commitFailed.Load())

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
	header(bw, "radius_nas_requests_total", "counter", "RADIUS requests per NAS, by result.")
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
			fmtSample(bw, "radius_nas_requests_total", c.v.Load(), "tenant", k.tenant, "nas_id", id, "nas", k.name, "ip", ip, "result", c.r)
		}
	}

	writeNASHealth(bw, stats)

	header(bw, "radius_coa_requests_total", "counter", "Disconnect/CoA requests sent, by kind and outcome.")
	m.coaMu.Lock()
	coaKeys := make([][2]string, 0, len(m.coa))
	for k := range m.coa {
		coaKeys = append(coaKeys, k)
	}
	sort.Slice(coaKeys, func(i, j int) bool { return coaKeys[i][0]+coaKeys[i][1] < coaKeys[j][0]+coaKeys[j][1] })
	for _, k := range coaKeys {
		fmtSample(bw, "radius_coa_requests_total", m.coa[k].Load(), "kind", k[0], "outcome", k[1])
	}
	m.coaMu.Unlock()

	m.writeSessionTruth(bw) // see sessiontruth.go

	m.gaugeMu.Lock()
	names := make([]string, 0, len(m.gauges))
	for k := range m.gauges {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		header(bw, n, "gauge", "")
		bw.WriteString(n + " " + strconv.FormatFloat(m.gauges[n](), 'g', -1, 64) + "\n")
	}
	m.gaugeMu.Unlock()
}

func header(w *bufio.Writer, name, typ, help string) {
	if help != "" {
		w.WriteString("# HELP " + name + " " + help + "\n")
	}
	w.WriteString("# TYPE " + name + " " + typ + "\n")
}

func fmtSample(w *bufio.Writer, name string, v uint64, labels ...string) {
	w.WriteString(name)
	writeLabels(w, labels)
	w.WriteString(" ")
	w.WriteString(strconv.FormatUint(v, 10))
	w.WriteString("\n")
}

func writeLabels(w *bufio.Writer, labels []string) {
	if len(labels) == 0 {
		return
	}
	w.WriteString("{")
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			w.WriteString(",")
		}
		w.WriteString(labels[i])
		w.WriteString(`="`)
		w.WriteString(labelEscaper.Replace(labels[i+1]))
		w.WriteString(`"`)
	}
	w.WriteString("}")
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func writeHistogram(w *bufio.Writer, name, help string, h *histogram) {
	header(w, name, "histogram", help)
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		fmtSample(w, name+"_bucket", cum, "le", strconv.FormatFloat(b, 'g', -1, 64))
	}
	cum += h.counts[len(h.bounds)].Load()
	fmtSample(w, name+"_bucket", cum, "le", "+Inf")
	w.WriteString(name + "_sum " + strconv.FormatFloat(math.Float64frombits(h.sum.Load()), 'g', -1, 64) + "\n")
	fmtSample(w, name+"_count", h.count.Load())
}
