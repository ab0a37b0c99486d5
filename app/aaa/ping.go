package aaa

import (
	"context"
	"net/netip"
	"time"

	"xr/app"
	"xr/app/egress"
	"xr/app/probes"
	"xr/app/subs"
)

// PingResult is the answer of POST /admin/sessions/{id}/ping.
type PingResult struct {
	IP       string  `json:"ip"`
	Sent     int     `json:"sent"`
	Received int     `json:"received"`
	LossPct  float64 `json:"loss_percent"`
	RTTMinMs float64 `json:"rtt_min_ms"`
	RTTAvgMs float64 `json:"rtt_avg_ms"`
	RTTMaxMs float64 `json:"rtt_max_ms"`
}

// Ping sends count ICMP echo requests to ip, one at a time, each waiting
// up to timeout, through the one probes mechanism (app/probes: an
// unprivileged ICMP socket where the kernel allows one, else a raw one).
// A subscriber's router rarely listens on TCP, so without ICMP the answer
// is 503 ping_unavailable rather than the probes' TCP fallback.
func Ping(ctx context.Context, g egress.Guard, ip netip.Addr, count int, timeout time.Duration) (*PingResult, error) {
	if !ip.Is4() {
		return nil, app.ErrValidation("ipv4_only", "framed_ip")
	}
	if c := g.Refusal(ip); c != "" { // a framed IP comes from the NAS: the Device rule
		return nil, app.ErrConflict("target_not_allowed").With("class", c)
	}
	if _, ok := probes.ICMPAvailable(); !ok {
		return nil, app.ErrUnavailable("ping_unavailable")
	}
	res := &PingResult{IP: ip.String()}
	var total time.Duration
	for seq := 1; seq <= count && ctx.Err() == nil; seq++ {
		r := probes.Echo(ctx, probes.Target{Addr: ip, Egress: g}, timeout)
		res.Sent++
		if !r.OK {
			continue
		}
		ms := r.RTTms()
		if res.Received == 0 || ms < res.RTTMinMs {
			res.RTTMinMs = ms
		}
		res.RTTMaxMs = max(res.RTTMaxMs, ms)
		total += r.RTT
		res.Received++
	}
	if res.Sent > 0 {
		res.LossPct = float64(res.Sent-res.Received) * 100 / float64(res.Sent)
	}
	if res.Received > 0 {
		res.RTTAvgMs = float64(total.Microseconds()) / 1000 / float64(res.Received)
	}
	return res, nil
}

// PingSession pings a live session's framed IP (three echoes).
func PingSession(ctx context.Context, act *app.Actor, id int64) (*PingResult, error) {
	if err := act.Require(subs.PermUsersPing); err != nil {
		return nil, err
	}
	s, err := getSession(ctx, act, id)
	if err != nil {
		return nil, err
	}
	if s.StopTime != nil {
		return nil, app.ErrConflict("session_not_live")
	}
	ip, err := netip.ParseAddr(s.FramedIP)
	if err != nil {
		return nil, app.ErrConflict("session_has_no_ip")
	}
	return Ping(ctx, egress.For(act.Tenant.App, egress.Device), ip, 3, time.Second)
}
