// Package egress is the one guard of every outbound address xr connects to
// for a tenant: webhook URLs, backup destinations, SMS gateways (policy
// Public), and NAS, monitored devices, consoles and probes (policy Device).
// The rules of DESIGN.md "Outbound calls": an address is checked when it is
// saved (an IP literal, or the addresses a name resolves to) and again at
// connect time, on the address actually dialled, so DNS rebinding cannot
// get around it.
package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"xr/app"
)

type netClass struct {
	prefix netip.Prefix
	class  string
}

var refusedNets = func() []netClass {
	var out []netClass
	for _, r := range []struct{ cidr, class string }{
		{"0.0.0.0/8", "unspecified"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "cgnat"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link_local"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "reserved"},
		{"192.0.2.0/24", "reserved"},
		{"192.168.0.0/16", "private"},
		{"198.18.0.0/15", "reserved"},
		{"198.51.100.0/24", "reserved"},
		{"203.0.113.0/24", "reserved"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved"}, // includes 255.255.255.255
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"::/96", "reserved"}, // IPv4-compatible (deprecated)
		{"64:ff9b:1::/48", "private"},
		{"100::/64", "reserved"},
		{"2001:db8::/32", "reserved"},
		{"fc00::/7", "private"},
		{"fe80::/10", "link_local"},
		{"fec0::/10", "private"}, // site-local (deprecated)
		{"ff00::/8", "multicast"},
	} {
		out = append(out, netClass{netip.MustParsePrefix(r.cidr), r.class})
	}
	return out
}()

var (
	future  = netip.MustParsePrefix("240.0.0.0/4") // future use, and the broadcast address
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixToFo = netip.MustParsePrefix("2002::/16")
)

// Class names the kind of address ip is: "" for a public address, else
// loopback, private, link_local, unspecified, multicast, cgnat, reserved
// or invalid. IPv4-mapped, NAT64 and 6to4 forms are judged by the IPv4
// address they carry.
func Class(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			return Class(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFo.Contains(ip):
			return Class(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	for _, n := range refusedNets {
		if n.prefix.Contains(ip) {
			return n.class
		}
	}
	return ""
}

// Policy is what kind of destination an address is for.
type Policy int

const (
	// Public: a service on the internet (webhook receivers, backup
	// destinations, SMS gateways): only public addresses.
	Public Policy = iota
	// Device: network equipment of the tenant (NAS, monitored devices,
	// consoles, probes), which lives in private, CGNAT and sometimes
	// documentation space: those pass; loopback, link-local (a cloud
	// metadata endpoint at 169.254.169.254), 240.0.0.0/4 (with the
	// broadcast address) and the host's own addresses (its own services)
	// do not, unspecified and multicast never.
	Device
)

// Guard applies a policy; AllowPrivate is the instance's
// --allow-private-egress (labs and tests: loopback and private pass).
type Guard struct {
	Policy       Policy
	AllowPrivate bool
}

// For is the guard of policy p on instance a.
func For(a *app.App, p Policy) Guard { return Guard{Policy: p, AllowPrivate: a.Cfg.AllowPrivateEgress} }

// Refusal is "" when g lets ip through, else the class that forbids it
// (Class's, or "self" for an address of this host).
func (g Guard) Refusal(ip netip.Addr) string {
	class := Class(ip)
	switch {
	case class == "invalid", g.Policy == Device && (class == "unspecified" || class == "multicast"):
		return class
	case g.AllowPrivate:
		return ""
	case g.Policy == Device && (class == "private" || class == "cgnat" || class == "reserved" && !future.Contains(ip.Unmap())):
		class = ""
	}
	if class == "" && isHostAddr(ip) {
		return "self"
	}
	return class
}

// RefusedError is the connect-time refusal of an address.
type RefusedError struct {
	Addr  string
	Class string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s address (allowed only with --allow-private-egress)", e.Addr, strings.ReplaceAll(e.Class, "_", "-"))
}

// Control checks the address a socket is about to connect to, after DNS
// resolution: the one place a rebinding name cannot slip past.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return &RefusedError{Addr: address, Class: "invalid"}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &RefusedError{Addr: address, Class: "invalid"}
	}
	if c := g.Refusal(ip); c != "" {
		return &RefusedError{Addr: ip.String(), Class: c}
	}
	return nil
}

// Dialer is a dialer enforcing g at connect time.
func (g Guard) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: g.Control}
}

// SafeDialer is the Public guard's dialer.
func SafeDialer(allowPrivate bool) *net.Dialer {
	return Guard{Policy: Public, AllowPrivate: allowPrivate}.Dialer(10 * time.Second)
}

// hostAddrs caches this host's own addresses (its interfaces').
var hostAddrs struct {
	sync.Mutex
	at    time.Time
	addrs []netip.Addr
}

// isHostAddr reports whether ip is one of this host's addresses (read
// again every 30 seconds).
func isHostAddr(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	hostAddrs.Lock()
	defer hostAddrs.Unlock()
	if time.Since(hostAddrs.at) > 30*time.Second {
		hostAddrs.addrs = hostAddrs.addrs[:0]
		if ifas, err := net.InterfaceAddrs(); err == nil {
			for _, a := range ifas {
				if p, err := netip.ParsePrefix(a.String()); err == nil {
					hostAddrs.addrs = append(hostAddrs.addrs, p.Addr().Unmap())
				}
			}
		}
		hostAddrs.at = time.Now()
	}
	return slices.Contains(hostAddrs.addrs, ip)
}

// MaxURLLen bounds an endpoint URL.
const MaxURLLen = 2048

// saveLookupTimeout bounds the DNS lookup of a URL check on save.
var saveLookupTimeout = 2 * time.Second

// lookup resolves a host name on save; replaceable in tests.
var lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// ValidateURL checks a webhook URL on save: http or https, a host, no
// credentials, and (unless allowPrivate) no address the egress rules
// refuse, for an IP literal or for any address a name resolves to. A name
// that does not resolve now is accepted: the connect-time check still
// applies to whatever it resolves to later. It returns the trimmed URL.
func ValidateURL(ctx context.Context, raw string, allowPrivate bool) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", app.ErrValidation("url_required", "url")
	}
	if len(raw) > MaxURLLen {
		return "", app.ErrValidation("url_too_long", "url")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", app.ErrValidation("invalid_url", "url")
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return "", app.ErrValidation("url_scheme_not_allowed", "url").With("allowed", []string{"http", "https"})
	}
	if u.Opaque != "" {
		return "", app.ErrValidation("invalid_url", "url")
	}
	if u.User != nil {
		return "", app.ErrValidation("url_credentials_not_allowed", "url")
	}
	host := u.Hostname()
	if host == "" {
		return "", app.ErrValidation("url_host_required", "url")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", app.ErrValidation("invalid_url", "url")
		}
	}
	valid, addr, class := CheckHost(ctx, host, allowPrivate)
	if !valid {
		return "", app.ErrValidation("url_host_invalid", "url")
	}
	if class != "" {
		return "", refusedURL(addr, class)
	}
	return raw, nil
}

// CheckHost applies the save-time egress rules to the host (a name or an
// IP literal) of any user-supplied outbound destination (webhook URLs,
// backup destinations): valid is false for a malformed name; class names
// the refused class of addr ("" when allowed). A name that does not
// resolve now is allowed: the connect-time check (SafeDialer) still
// applies to whatever it resolves to later.
func CheckHost(ctx context.Context, host string, allowPrivate bool) (valid bool, addr, class string) {
	g := Guard{Policy: Public, AllowPrivate: allowPrivate}
	if ip, err := netip.ParseAddr(host); err == nil {
		if c := g.Refusal(ip); c != "" {
			return true, ip.String(), c
		}
		return true, "", ""
	}
	if !validHostname(host) {
		return false, "", ""
	}
	if allowPrivate {
		return true, "", ""
	}
	lh := strings.ToLower(strings.TrimSuffix(host, "."))
	if lh == "localhost" || strings.HasSuffix(lh, ".localhost") {
		return true, host, "loopback"
	}
	lctx, cancel := context.WithTimeout(ctx, saveLookupTimeout)
	defer cancel()
	addrs, err := lookup(lctx, host)
	if err != nil {
		return true, "", ""
	}
	for _, a := range addrs {
		if c := g.Refusal(a); c != "" {
			return true, a.Unmap().String(), c
		}
	}
	return true, "", ""
}

func refusedURL(addr, class string) error {
	return app.ErrValidation("url_address_not_allowed", "url").With("address", addr).With("class", class)
}

// validHostname accepts an ASCII DNS name (IDNs in punycode) that is not
// a numeric shorthand some resolvers read as an IPv4 address (2130706433,
// 0x7f.1, 127.1): a name whose every label is a number is refused.
func validHostname(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	numeric := true
	for _, label := range strings.Split(strings.ToLower(h), ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			default:
				return false
			}
		}
		if !numericLabel(label) {
			numeric = false
		}
	}
	return !numeric
}

func numericLabel(l string) bool {
	digits := "0123456789"
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		l, digits = rest, "0123456789abcdef"
	}
	for _, r := range l {
		if !strings.ContainsRune(digits, r) {
			return false
		}
	}
	return true
}
