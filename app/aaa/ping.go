package aaa

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"

	"xr/app"
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
// up to timeout. It uses an unprivileged ICMP socket where the kernel
// allows one (net.ipv4.ping_group_range), else a raw socket (root).
func Ping(ctx context.Context, ip netip.Addr, count int, timeout time.Duration) (*PingResult, error) {
	if !ip.Is4() {
		return nil, app.ErrValidation("ipv4_only", "framed_ip")
	}
	network, laddr := "udp4", "0.0.0.0"
	conn, err := icmp.ListenPacket(network, laddr)
	if err != nil {
		network = "ip4:icmp"
		if conn, err = icmp.ListenPacket(network, laddr); err != nil {
			return nil, app.ErrUnavailable("ping_unavailable")
		}
	}
	defer func() { _ = conn.Close() }() // a datagram socket: closing it loses nothing
	res := &PingResult{IP: ip.String()}
	var dst net.Addr = &net.IPAddr{IP: ip.AsSlice()}
	if network == "udp4" {
		dst = &net.UDPAddr{IP: ip.AsSlice()}
	}
	id := os.Getpid() & 0xffff
	var total time.Duration
	buf := make([]byte, 1500)
	for seq := 1; seq <= count && ctx.Err() == nil; seq++ {
		msg := icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: id, Seq: seq, Data: []byte("xr-ping")}}
		b, _ := msg.Marshal(nil)
		start := time.Now()
		if _, err := conn.WriteTo(b, dst); err != nil {
			return nil, app.ErrBadGateway("ping_send_failed")
		}
		res.Sent++
		// Without the deadline the read below could wait forever.
		if err := conn.SetReadDeadline(start.Add(timeout)); err != nil {
			return nil, fmt.Errorf("ping: set read deadline: %w", err)
		}
		for {
			n, _, err := conn.ReadFrom(buf)
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					break
				}
				return nil, app.ErrBadGateway("ping_failed")
			}
			reply, err := icmp.ParseMessage(1, buf[:n])
			if err != nil || reply.Type != ipv4.ICMPTypeEchoReply {
				continue
			}
			// An unprivileged socket gets its id rewritten by the kernel:
			// match on the sequence.
			if echo, ok := reply.Body.(*icmp.Echo); !ok || echo.Seq != seq {
				continue
			}
			rtt := time.Since(start)
			ms := float64(rtt.Microseconds()) / 1000
			if res.Received == 0 || ms < res.RTTMinMs {
				res.RTTMinMs = ms
			}
			res.RTTMaxMs = max(res.RTTMaxMs, ms)
			total += rtt
			res.Received++
			break
		}
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
	s, err := GetSession(ctx, act, id)
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
	return Ping(ctx, ip, 3, time.Second)
}
