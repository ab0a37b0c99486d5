package radiusd

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"xr/app/aaa"
)

// Per-NAS health: when the NAS last sent an Access-Request and an
// Accounting-Request, whether its Access-Requests carry a
// Message-Authenticator, its clock skew seen in Event-Timestamp, the last
// Disconnect/CoA exchange, and bad-authenticator drops over the last hour.
// It lives in nasStats (reached from the packet without a lookup), is
// read by app/aaa through aaa.WireStatus.Health and is written to /metrics.

// nasHealth is updated lock-free on the hot path, except the drop window
// (drops for a bad authenticator are rare).
type nasHealth struct {
	lastAuth atomic.Int64 // unix nanoseconds, 0 = never
	authMA   atomic.Bool  // the last Access-Request carried a Message-Authenticator
	lastAcct atomic.Int64
	skewAt   atomic.Int64 // unix nanoseconds of the packet the skew is from, 0 = none
	skew     atomic.Int64 // seconds: server time − Event-Timestamp
	coa      atomic.Pointer[coaSeen]
	badAuth  minuteWindow
}

type coaSeen struct {
	at      time.Time
	outcome string
}

// minuteWindow counts events per minute over the last hour: 60 buckets,
// each tagged with the minute it counts, reused when the hour wraps.
type minuteWindow struct {
	mu     sync.Mutex
	minute [60]int64
	n      [60]uint64
}

func (w *minuteWindow) add(t time.Time) {
	m := t.Unix() / 60
	i := m % 60
	w.mu.Lock()
	if w.minute[i] != m {
		w.minute[i], w.n[i] = m, 0
	}
	w.n[i]++
	w.mu.Unlock()
}

// sum counts the events of the current minute and the 59 before it.
func (w *minuteWindow) sum(now time.Time) uint64 {
	cur := now.Unix() / 60
	var s uint64
	w.mu.Lock()
	for i := range w.minute {
		if m := w.minute[i]; m > cur-60 && m <= cur {
			s += w.n[i]
		}
	}
	w.mu.Unlock()
	return s
}

// observe records a packet a worker handled. Packets dropped as malformed
// or for a bad authenticator say nothing about the NAS (they may be
// forged); the bad-authenticator drop itself is counted by dropPacket.
func (s *Server) observe(pb *packetBuf) {
	if pb.stats == nil || pb.dropped && (pb.dropWhy == dropBadAuthenticator || pb.dropWhy == dropMalformed) {
		return
	}
	h, p, ix := &pb.stats.health, pb.pkt, &pb.idx
	switch p[0] {
	case codeAccessRequest:
		h.authMA.Store(ix.ma >= 0)
		h.lastAuth.Store(pb.recv.UnixNano())
	case codeAccountingRequest:
		h.lastAcct.Store(pb.recv.UnixNano())
		ets, ok, err := ix.uint32(p, attrEventTimestamp)
		if !ok || err != nil {
			return
		}
		delay, _, _ := ix.uint32(p, attrAcctDelayTime)
		// The event happened Acct-Delay-Time before this transmission.
		h.skew.Store(pb.recv.Unix() - int64(delay) - int64(ets))
		h.skewAt.Store(pb.recv.UnixNano())
	}
}

const attrAcctDelayTime = 41 // RFC 2866 §5.2

// coaDone records the end of a Disconnect/CoA exchange with a NAS.
func (m *Metrics) coaDone(n *NAS, outcome string, err error) {
	if m == nil || n == nil {
		return
	}
	if err != nil {
		outcome = "error"
	}
	if outcome == "" {
		outcome = OutcomeUnreachable
	}
	m.nasFor(n).health.coa.Store(&coaSeen{at: time.Now(), outcome: outcome})
}

// NASHealth merges the counters of every series of one NAS (a renamed or
// moved NAS has several) into what app/aaa shows.
func (m *Metrics) NASHealth(slug string, id int64) aaa.WireHealth {
	m.nasMu.RLock()
	var list []*nasStats
	for k, s := range m.nas {
		if k.tenant == slug && k.id == id {
			list = append(list, s)
		}
	}
	m.nasMu.RUnlock()
	return mergeHealth(list, time.Now())
}

func mergeHealth(list []*nasStats, now time.Time) aaa.WireHealth {
	var out aaa.WireHealth
	var lastAuth, lastAcct, skewAt int64
	var coa *coaSeen
	for _, s := range list {
		h := &s.health
		if t := h.lastAuth.Load(); t > lastAuth {
			lastAuth = t
			ma := h.authMA.Load()
			out.SendsMessageAuthenticator = &ma
		}
		lastAcct = max(lastAcct, h.lastAcct.Load())
		if t := h.skewAt.Load(); t > skewAt {
			skewAt = t
			sk := h.skew.Load()
			out.ClockSkew = &sk
		}
		if c := h.coa.Load(); c != nil && (coa == nil || c.at.After(coa.at)) {
			coa = c
		}
		out.BadAuthenticatorLastHour += h.badAuth.sum(now)
	}
	if lastAuth > 0 {
		out.LastAccessRequest = time.Unix(0, lastAuth)
	}
	if lastAcct > 0 {
		out.LastAccounting = time.Unix(0, lastAcct)
	}
	if coa != nil {
		out.LastCoA, out.LastCoAOutcome = coa.at, coa.outcome
	}
	return out
}

// writeNASHealth writes the health gauges, one series per NAS (labels
// tenant and nas_id). stats is sorted by tenant and id.
func collectNASHealth(e emitter, stats []*nasStats) {
	now := time.Now()
	type one struct {
		tenant, id string
		h          aaa.WireHealth
	}
	var all []one
	for i := 0; i < len(stats); {
		j := i + 1
		for j < len(stats) && stats[j].key.tenant == stats[i].key.tenant && stats[j].key.id == stats[i].key.id {
			j++
		}
		all = append(all, one{stats[i].key.tenant, strconv.FormatInt(stats[i].key.id, 10), mergeHealth(stats[i:j], now)})
		i = j
	}
	unix := func(t time.Time) float64 {
		if t.IsZero() {
			return 0
		}
		return float64(t.UnixMilli()) / 1000
	}
	gauge := func(name, help string, value func(h *aaa.WireHealth) (float64, []string, bool)) {
		for i := range all {
			v, extra, ok := value(&all[i].h)
			if !ok {
				continue
			}
			e.gauge(name, help, v, append([]string{"tenant", all[i].tenant, "nas_id", all[i].id}, extra...)...)
		}
	}
	gauge("radius_nas_last_access_request_timestamp_seconds", "When the NAS last sent an Access-Request (0 = not since start).",
		func(h *aaa.WireHealth) (float64, []string, bool) { return unix(h.LastAccessRequest), nil, true })
	gauge("radius_nas_last_accounting_timestamp_seconds", "When the NAS last sent an Accounting-Request (0 = not since start).",
		func(h *aaa.WireHealth) (float64, []string, bool) { return unix(h.LastAccounting), nil, true })
	gauge("radius_nas_last_coa_timestamp_seconds", "When the last Disconnect/CoA exchange with the NAS ended, by its outcome.",
		func(h *aaa.WireHealth) (float64, []string, bool) {
			return unix(h.LastCoA), []string{"outcome", h.LastCoAOutcome}, h.LastCoAOutcome != ""
		})
	gauge("radius_nas_message_authenticator", "1 when the NAS's last Access-Request carried a Message-Authenticator, else 0.",
		func(h *aaa.WireHealth) (float64, []string, bool) {
			if h.SendsMessageAuthenticator == nil {
				return 0, nil, false
			}
			if *h.SendsMessageAuthenticator {
				return 1, nil, true
			}
			return 0, nil, true
		})
	gauge("radius_nas_clock_skew_seconds", "Server time minus the NAS's Event-Timestamp in its last accounting packet that carried one.",
		func(h *aaa.WireHealth) (float64, []string, bool) {
			if h.ClockSkew == nil {
				return 0, nil, false
			}
			return float64(*h.ClockSkew), nil, true
		})
	gauge("radius_nas_bad_authenticator_drops_last_hour", "Packets from the NAS dropped for a bad authenticator in the last hour.",
		func(h *aaa.WireHealth) (float64, []string, bool) {
			return float64(h.BadAuthenticatorLastHour), nil, true
		})
}

// wireAttacher is implemented by a Directory that wants to know the server
// serving it (AppBackend hands it to app/aaa).
type wireAttacher interface {
	attachWire(s *Server, ls Listeners)
}

// attachWire tells app/aaa which ports this server listens on and where
// the per-NAS health counters are.
func (b *AppBackend) attachWire(s *Server, ls Listeners) {
	m := s.Metrics
	b.metrics.Store(m)
	if b.CoA != nil {
		b.CoA.streams.Store(s) // CoA over the NAS's RadSec connection when it has one
	}
	port := func(c net.PacketConn) int {
		if c == nil {
			return 0
		}
		if a, ok := c.LocalAddr().(*net.UDPAddr); ok {
			return a.Port
		}
		return 0
	}
	w := &aaa.WireStatus{AuthPort: port(ls.Auth), AcctPort: port(ls.Acct), Health: m.NASHealth}
	if ls.RadSec != nil {
		if a, ok := ls.RadSec.Addr().(*net.TCPAddr); ok {
			w.RadSecPort = a.Port
		}
	}
	b.Svc.SetWire(w)
}

// coaDone records a Disconnect/CoA outcome in the health of n.
func (b *AppBackend) coaDone(n *aaa.NAS, outcome string, err error) {
	m := b.metrics.Load()
	if m == nil {
		m = b.CoA.Metrics
	}
	m.coaDone(wireNAS(n), outcome, err)
}
