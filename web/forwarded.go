package web

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// Behind a reverse proxy every request arrives from the proxy's address:
// its X-Forwarded-For names the client and X-Forwarded-Proto the scheme
// the client used. Those headers are anyone's to write, so they count only
// on a request from an address the operator trusts (xr serve
// --trusted-proxy); from any other they are removed before anything reads
// them. The client address they give is then the request's address for
// rate limits, logs, captchas and tunnel identification alike.

// httpsKey marks a request a trusted proxy received over HTTPS.
type httpsKey struct{}

// forwarded applies the forwarding headers of r (see above) and returns
// the request to serve.
func (s *Server) forwarded(r *http.Request) *http.Request {
	xff, proto := r.Header.Values("X-Forwarded-For"), r.Header.Get("X-Forwarded-Proto")
	if len(xff) == 0 && proto == "" {
		return r
	}
	r.Header.Del("X-Forwarded-For")
	r.Header.Del("X-Forwarded-Proto")
	peer, port, ok := remoteAddr(r.RemoteAddr)
	if !ok || !s.trustedProxy(peer) {
		return r
	}
	if client := s.forwardedClient(peer, xff); client != peer {
		r.RemoteAddr = net.JoinHostPort(client.String(), port)
	}
	// Each proxy of a chain may append its own; the last is the one of the
	// proxy that reached xr.
	if i := strings.LastIndexByte(proto, ','); i >= 0 {
		proto = proto[i+1:]
	}
	if strings.EqualFold(strings.TrimSpace(proto), "https") {
		r = r.WithContext(context.WithValue(r.Context(), httpsKey{}, true))
	}
	return r
}

// forwardedClient walks X-Forwarded-For from its end (the entry the
// trusted proxy appended) past the trusted proxies: the first address
// that is not one is the client. An entry that is not an address stops
// the walk at the last hop known, so no client can choose the answer by
// writing the header's head itself.
func (s *Server) forwardedClient(peer netip.Addr, values []string) netip.Addr {
	var hops []string
	for _, v := range values {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(strings.TrimSpace(hops[i]))
		if !ok {
			break
		}
		client = a
		if !s.trustedProxy(a) {
			break
		}
	}
	return client
}

func (s *Server) trustedProxy(a netip.Addr) bool {
	for _, p := range s.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHop reads one X-Forwarded-For entry: an address, or an address
// with a port (some proxies write one).
func parseHop(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(h); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}

// remoteAddr splits a connection's address.
func remoteAddr(s string) (netip.Addr, string, bool) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.Addr{}, "", false
	}
	return ap.Addr().Unmap().WithZone(""), strconv.Itoa(int(ap.Port())), true
}

// IsHTTPS tells whether the client reached xr over HTTPS: directly, or
// through a trusted proxy that said so.
func IsHTTPS(r *http.Request) bool {
	on, _ := r.Context().Value(httpsKey{}).(bool)
	return r.TLS != nil || on
}

// ConnContext is the http.Server's ConnContext when xr serves HTTPS
// itself: its connections are TLS under JSONErrorListener's wrapper, where
// net/http cannot see them (r.TLS stays nil), so the connection tells each
// of its requests that it is HTTPS.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if jc, ok := c.(*jsonErrConn); ok {
		c = jc.Conn
	}
	if _, ok := c.(*tls.Conn); ok {
		return context.WithValue(ctx, httpsKey{}, true)
	}
	return ctx
}
