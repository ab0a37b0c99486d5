package monitoring

import (
	"context"
	"database/sql"
	"math"
	"net/netip"
	"sort"
	"time"

	"xr/app"
	"xr/app/probes"
)

// PingInput is the body of POST .../{kind}/{ref}/ping.
type PingInput struct {
	Count int `json:"count"` // echoes, 1-10 (default 4)
}

// Echo is one echo's line of a ping.
type Echo struct {
	Seq    int      `json:"seq"`
	OK     bool     `json:"ok"`
	RTTMs  *float64 `json:"rtt_ms"`
	Method string   `json:"method"`
	Error  string   `json:"error,omitempty"`
}

// PingResult is the answer of POST .../ping.
type PingResult struct {
	Address  string  `json:"address"`
	Method   string  `json:"method"`
	Sent     int     `json:"sent"`
	Received int     `json:"received"`
	LossPct  float64 `json:"loss_percent"`
	RTTMinMs float64 `json:"rtt_min_ms"`
	RTTAvgMs float64 `json:"rtt_avg_ms"`
	RTTMaxMs float64 `json:"rtt_max_ms"`
	Echoes   []Echo  `json:"echoes"`
}

// Pinger is a checked target: PingTarget resolves and guards it, then
// Echo sends one echo at a time (the stream row paces them).
type Pinger struct {
	t      *app.Tenant
	target probes.Target
}

// PingTarget resolves {kind}/{ref} among the caller's devices and checks
// the SSRF rule (409 target_not_allowed when the tenant's ranges no longer
// cover its address).
func PingTarget(ctx context.Context, act *app.Actor, kind string, ref int64) (*Pinger, error) {
	if err := act.Require(PermMonitoringManage); err != nil {
		return nil, err
	}
	var p *Pinger
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		addr, err := netip.ParseAddr(d.Address)
		if err != nil {
			return app.ErrConflict("target_not_allowed")
		}
		g, err := probes.TenantGuard(ctx, act.Tenant.App, tx)
		if err != nil {
			return err
		}
		if !g.Allow(addr) {
			return app.ErrConflict("target_not_allowed")
		}
		p = &Pinger{t: act.Tenant, target: g.Target(addr, d.ProbePort)}
		return nil
	})
	return p, err
}

// Echo sends echo number seq.
func (p *Pinger) Echo(ctx context.Context, seq int) Echo {
	var r probes.Result
	if err := pool(p.t.App).Do(ctx, func() { r = probes.Echo(ctx, p.target, ProbeTimeout) }); err != nil {
		return Echo{Seq: seq, Error: "cancelled"}
	}
	e := Echo{Seq: seq, OK: r.OK, Method: r.Method, Error: r.Error}
	if r.OK {
		ms := r.RTTms()
		e.RTTMs = &ms
	}
	return e
}

// Ping answers POST .../{kind}/{ref}/ping: count echoes, one after the
// other, each waiting up to ProbeTimeout.
func Ping(ctx context.Context, act *app.Actor, kind string, ref int64, in PingInput) (*PingResult, error) {
	if err := act.Require(PermMonitoringManage); err != nil {
		return nil, err
	}
	if in.Count == 0 {
		in.Count = 4
	}
	if in.Count < 1 || in.Count > 10 {
		return nil, app.ErrValidation("out_of_range", "count")
	}
	p, err := PingTarget(ctx, act, kind, ref)
	if err != nil {
		return nil, err
	}
	res := &PingResult{Address: p.target.Addr.String(), Echoes: []Echo{}}
	var total float64
	for seq := 1; seq <= in.Count && ctx.Err() == nil; seq++ {
		e := p.Echo(ctx, seq)
		res.Echoes = append(res.Echoes, e)
		res.Sent++
		res.Method = e.Method
		if e.OK {
			ms := *e.RTTMs
			if res.Received == 0 || ms < res.RTTMinMs {
				res.RTTMinMs = ms
			}
			res.RTTMaxMs = math.Max(res.RTTMaxMs, ms)
			total += ms
			res.Received++
		}
	}
	if res.Sent > 0 {
		res.LossPct = float64(res.Sent-res.Received) * 100 / float64(res.Sent)
	}
	if res.Received > 0 {
		res.RTTAvgMs = total / float64(res.Received)
	}
	return res, nil
}

// Window is one stability window.
type Window struct {
	Window      string   `json:"window"` // 24h, 7d, 30d
	Probes      int64    `json:"probes"`
	UptimePct   *float64 `json:"uptime_percent"`
	Outages     int      `json:"outages"`
	DownSeconds int64    `json:"down_seconds"`
	Flaps       int      `json:"flaps"`
	LatencyP50  *float64 `json:"latency_p50_ms"`
	LatencyP95  *float64 `json:"latency_p95_ms"`
	LatencyP99  *float64 `json:"latency_p99_ms"`
	// LatencySource is "samples" (raw echoes, 24 h) or "hourly" (the
	// percentiles of hourly means: raw samples are kept 48 h).
	LatencySource string `json:"latency_source"`
}

// Stability is the answer of GET .../stability.
type Stability struct {
	Device  Device   `json:"device"`
	Windows []Window `json:"windows"`
}

// GetStability answers GET .../{kind}/{ref}/stability: uptime, outages,
// flaps and latency percentiles over 24 h, 7 d and 30 d.
func GetStability(ctx context.Context, act *app.Actor, kind string, ref int64) (*Stability, error) {
	if err := act.Require(PermMonitoringView); err != nil {
		return nil, err
	}
	t := act.Tenant
	now := t.Now()
	var out Stability
	err := t.Read(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		out.Device = d
		for _, w := range []struct {
			name string
			dur  time.Duration
		}{{"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}, {"30d", 30 * 24 * time.Hour}} {
			from := now.Add(-w.dur)
			win := Window{Window: w.name}
			var ok int64
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(probes), 0), COALESCE(SUM(ok), 0) FROM mon_hourly WHERE device_id = ? AND hour >= ?`,
				d.ID, from.UTC().Format("2006-01-02 15")).Scan(&win.Probes, &ok); err != nil {
				return err
			}
			if win.Probes > 0 {
				pct := math.Round(float64(ok)*10000/float64(win.Probes)) / 100
				win.UptimePct = &pct
			}
			rows, err := tx.QueryContext(ctx, `SELECT started_at, ended_at FROM mon_outages WHERE device_id = ? AND (ended_at IS NULL OR ended_at >= ?)`,
				d.ID, app.FormatTime(from))
			if err != nil {
				return err
			}
			for rows.Next() {
				var s, e app.Time
				if err := rows.Scan(&s, &e); err != nil {
					rows.Close()
					return err
				}
				win.Outages++
				if !s.Before(from) {
					win.Flaps++
				}
				start, end := s.Time, e.Time
				if start.Before(from) {
					start = from
				}
				if e.IsZero() {
					end = now
				}
				if end.After(start) {
					win.DownSeconds += int64(end.Sub(start) / time.Second)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			var q string
			var args []any
			if w.name == "24h" {
				win.LatencySource = "samples"
				q, args = `SELECT rtt_ms FROM mon_samples WHERE device_id = ? AND at >= ? AND ok = 1 ORDER BY rtt_ms`, []any{d.ID, app.FormatTime(from)}
			} else {
				win.LatencySource = "hourly"
				q, args = `SELECT rtt_sum / ok FROM mon_hourly WHERE device_id = ? AND hour >= ? AND ok > 0 ORDER BY 1`, []any{d.ID, from.UTC().Format("2006-01-02 15")}
			}
			vals, err := floats(ctx, tx, q, args...)
			if err != nil {
				return err
			}
			win.LatencyP50, win.LatencyP95, win.LatencyP99 = pctl(vals, 50), pctl(vals, 95), pctl(vals, 99)
			out.Windows = append(out.Windows, win)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func floats(ctx context.Context, q app.Querier, query string, args ...any) ([]float64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []float64
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// pctl is the nearest-rank percentile of sorted values (nil when none).
func pctl(sorted []float64, p float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	if !sort.Float64sAreSorted(sorted) {
		sort.Float64s(sorted)
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	v := sorted[min(max(i, 0), len(sorted)-1)]
	return &v
}
