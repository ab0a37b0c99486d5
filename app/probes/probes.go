// Package probes is the one way xr reaches out to network equipment: ICMP
// echo (unprivileged where the kernel allows it, raw when root), a TCP
// connect fallback that says so (method "tcp"), and SNMP get/walk through
// gosnmp. Every probe has a timeout, runs under a Pool's bounded
// concurrency, and is aimed only at targets a Guard allows (the tenant's
// NAS, its monitored devices, its declared network ranges): a caller can
// not turn xr into a scanner of someone else's network or of the host's
// own services (loopback, link-local metadata endpoints) unless the tenant
// declared those ranges itself.
package probes

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"

	"xr/app"
	"xr/app/egress"
)

// Methods a Result names.
const (
	MethodICMP = "icmp"
	MethodTCP  = "tcp"
)

// Target is what a probe is aimed at. Port, when set, makes the echo a TCP
// connect to that port (a device that drops ICMP); FallbackPorts are tried
// when no ICMP socket can be opened. Egress is the instance's guard
// (egress.For(app, egress.Device)), checked again as every probe connects;
// its zero value is the strict Public policy.
type Target struct {
	Addr   netip.Addr
	Port   int
	Egress egress.Guard
}

// refused is the Result of a probe the egress guard stopped.
func refused(method, class string) Result {
	return Result{Method: method, Error: "refused: " + class + " address"}
}

// FallbackPorts are connected to, all at once, when ICMP is unavailable and
// the target names no port; the first that accepts answers.
var FallbackPorts = []int{22, 80, 443, 8291}

// Result is one echo's outcome.
type Result struct {
	OK     bool          `json:"ok"`
	RTT    time.Duration `json:"-"`
	Method string        `json:"method"`
	Error  string        `json:"error,omitempty"`
}

// RTTms is the round trip in milliseconds (0 when it failed).
func (r Result) RTTms() float64 { return float64(r.RTT.Microseconds()) / 1000 }

// icmpMode caches which ICMP socket the process may open: 0 unknown,
// 1 unprivileged (udp4), 2 raw, 3 none.
var (
	icmpOnce sync.Once
	icmpNet  string
)

func icmpNetwork() string {
	icmpOnce.Do(func() {
		for _, n := range []string{"udp4", "ip4:icmp"} {
			if c, err := icmp.ListenPacket(n, "0.0.0.0"); err == nil {
				_ = c.Close() // a probe socket: nothing to flush
				icmpNet = n
				return
			}
		}
	})
	return icmpNet
}

// ICMPAvailable reports whether this process can send ICMP echoes, and how
// ("udp4" unprivileged, "ip4:icmp" raw).
func ICMPAvailable() (string, bool) { n := icmpNetwork(); return n, n != "" }

// Echo sends one echo to t: a TCP connect when t.Port is set or ICMP is
// unavailable, else an ICMP echo request. A failure is a Result with OK
// false, never an error: an unreachable device is an answer.
func Echo(ctx context.Context, t Target, timeout time.Duration) Result {
	if t.Port > 0 {
		return tcpEcho(ctx, t, []int{t.Port}, false, timeout)
	}
	network := icmpNetwork()
	if network == "" || !t.Addr.Is4() {
		return tcpEcho(ctx, t, FallbackPorts, true, timeout)
	}
	if c := t.Egress.Refusal(t.Addr); c != "" {
		return refused(MethodICMP, c)
	}
	return icmpEcho(ctx, network, t, timeout)
}

// tcpEcho connects to the ports at once. With refusedIsAlive (the host
// liveness fallback, no port named) a refused connection counts: the host
// answered with a reset, as a TCP ping reads it. A named port is a service
// check, so there only an accepted connection does.
func tcpEcho(ctx context.Context, t Target, ports []int, refusedIsAlive bool, timeout time.Duration) Result {
	addr := t.Addr
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type answer struct {
		rtt time.Duration
		err error
	}
	ch := make(chan answer, len(ports))
	start := time.Now()
	for _, p := range ports {
		go func(p int) {
			d := net.Dialer{Control: t.Egress.Control}
			c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addr.String(), strconv.Itoa(p)))
			if err == nil {
				_ = c.Close() // a connect probe sends nothing
			}
			ch <- answer{time.Since(start), err}
		}(p)
	}
	var last error
	for range ports {
		a := <-ch
		if a.err == nil || refusedIsAlive && errors.Is(a.err, syscall.ECONNREFUSED) {
			return Result{OK: true, RTT: a.rtt, Method: MethodTCP}
		}
		var re *egress.RefusedError
		if errors.As(a.err, &re) {
			return refused(MethodTCP, re.Class)
		}
		last = a.err
	}
	return Result{Method: MethodTCP, Error: shortErr(last)}
}

var seqCounter struct {
	sync.Mutex
	n int
}

func nextSeq() int {
	seqCounter.Lock()
	defer seqCounter.Unlock()
	seqCounter.n = (seqCounter.n + 1) & 0xffff
	return seqCounter.n
}

func icmpEcho(ctx context.Context, network string, t Target, timeout time.Duration) Result {
	addr := t.Addr
	conn, err := icmp.ListenPacket(network, "0.0.0.0")
	if err != nil {
		return tcpEcho(ctx, t, FallbackPorts, true, timeout)
	}
	defer func() { _ = conn.Close() }() // a datagram socket: closing loses nothing
	var dst net.Addr = &net.IPAddr{IP: addr.AsSlice()}
	if network == "udp4" {
		dst = &net.UDPAddr{IP: addr.AsSlice()}
	}
	id, seq := rand.IntN(0xffff), nextSeq()
	payload := []byte("xr-probe-" + strconv.Itoa(id))
	msg := icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: id, Seq: seq, Data: payload}}
	b, err := msg.Marshal(nil)
	if err != nil {
		return Result{Method: MethodICMP, Error: shortErr(err)}
	}
	start := time.Now()
	deadline := start.Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetReadDeadline(deadline); err != nil {
		return Result{Method: MethodICMP, Error: shortErr(err)}
	}
	if _, err := conn.WriteTo(b, dst); err != nil {
		return Result{Method: MethodICMP, Error: shortErr(err)}
	}
	buf := make([]byte, 1500)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			return Result{Method: MethodICMP, Error: "timeout"}
		}
		reply, err := icmp.ParseMessage(1, buf[:n])
		if err != nil || reply.Type != ipv4.ICMPTypeEchoReply {
			continue
		}
		echo, ok := reply.Body.(*icmp.Echo)
		// An unprivileged socket has its id rewritten by the kernel (and
		// sees only its own replies); a raw socket sees every reply, so
		// the id, sequence, payload and source must all match.
		if !ok || echo.Seq != seq || string(echo.Data) != string(payload) || !sameHost(from, addr) {
			continue
		}
		return Result{OK: true, RTT: time.Since(start), Method: MethodICMP}
	}
}

func sameHost(from net.Addr, addr netip.Addr) bool {
	var ip net.IP
	switch a := from.(type) {
	case *net.IPAddr:
		ip = a.IP
	case *net.UDPAddr:
		ip = a.IP
	default:
		return false
	}
	got, ok := netip.AddrFromSlice(ip)
	return ok && got.Unmap() == addr.Unmap()
}

func shortErr(err error) string {
	if err == nil {
		return ""
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// Pool bounds how many probes run at once (per App: the poller and the
// on-demand rows share it).
type Pool struct{ sem chan struct{} }

// NewPool is a pool running at most n probes at once.
func NewPool(n int) *Pool { return &Pool{sem: make(chan struct{}, max(n, 1))} }

// Do runs fn when a slot is free (or returns ctx's error first).
func (p *Pool) Do(ctx context.Context, fn func()) error {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.sem }()
	fn()
	return nil
}

// DefaultRanges are the declared network ranges of a tenant that declared
// none: private (RFC 1918) and carrier-grade NAT space. Loopback,
// link-local (cloud metadata) and public addresses need a declaration.
const DefaultRanges = "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10"

// Guard is the SSRF rule of a tenant: a target must be one of its NAS or
// fall in its declared ranges, and pass the instance's egress guard
// (policy Device: never loopback, link-local, reserved or the host's own
// addresses without --allow-private-egress, whatever the NAS rows or the
// declared ranges say).
type Guard struct {
	Ranges []netip.Prefix
	NAS    map[netip.Addr]bool
	Egress egress.Guard
}

// ParseRanges reads a comma-separated CIDR list ("" → DefaultRanges).
func ParseRanges(s string) ([]netip.Prefix, error) {
	if strings.TrimSpace(s) == "" {
		s = DefaultRanges
	}
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("range %q: %w", f, err)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// TenantGuard reads tenant t's guard: its NAS addresses and the ranges of
// the monitoring_network_ranges setting.
func TenantGuard(ctx context.Context, a *app.App, q app.Querier) (*Guard, error) {
	raw, err := SettingMonitoringRanges.Get(ctx, q)
	if err != nil {
		return nil, err
	}
	ranges, err := ParseRanges(raw)
	if err != nil {
		return nil, err
	}
	g := &Guard{Ranges: ranges, NAS: map[netip.Addr]bool{}, Egress: egress.For(a, egress.Device)}
	rows, err := q.QueryContext(ctx, `SELECT ip FROM nas`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var ip string
		if err := rows.Scan(&ip); err != nil {
			return nil, err
		}
		if a, err := netip.ParseAddr(ip); err == nil {
			g.NAS[a.Unmap()] = true
		}
	}
	return g, rows.Err()
}

// Target is a probe of addr (port: see Target) under the guard's egress
// rule.
func (g *Guard) Target(addr netip.Addr, port int) Target {
	return Target{Addr: addr, Port: port, Egress: g.Egress}
}

// Allow reports whether addr may be probed: never an unspecified,
// multicast or broadcast address; a NAS of the tenant; else an address in
// a declared range.
func (g *Guard) Allow(addr netip.Addr) bool {
	addr = addr.Unmap()
	if !addr.IsValid() || addr.IsUnspecified() || addr.IsMulticast() || addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return false
	}
	if g.Egress.Refusal(addr) != "" {
		return false
	}
	if g.NAS[addr] {
		return true
	}
	for _, p := range g.Ranges {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
