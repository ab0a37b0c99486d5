package web_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"xr/app"
	"xr/internal/webtest"
	"xr/internal/xrtest"
	"xr/web"
)

// logBuffer collects the server's log lines (written by its goroutines).
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// accessIPs are the "ip" of the access-log lines of path.
func (l *logBuffer) accessIPs(path string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		var e struct{ Msg, Path, IP string }
		if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "http" && e.Path == path {
			out = append(out, e.IP)
		}
	}
	return out
}

// fwKit is a kit whose server trusts the given proxies, logging to a
// buffer, with tunnel login on in acme: subscriber "tina" has a live
// session holding 100.64.0.5.
func fwKit(t *testing.T, trusted ...string) (*webtest.Kit, *logBuffer) {
	logs := &logBuffer{}
	cfg := app.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))}
	// A limiter without windows: the counts must not straddle two minutes.
	k := webtest.NewWith(t, cfg, newIDStickyLimiter(), func(s *web.Server) {
		for _, p := range trusted {
			s.TrustedProxies = append(s.TrustedProxies, netip.MustParsePrefix(p))
		}
	})
	tok := k.Owner("acme")
	r := k.Do("POST", "acme", "/api/v1/users", tok, map[string]any{"username": "tina", "password": "pw-tina"})
	if r.Status != 201 {
		t.Fatalf("user: %d %s", r.Status, r.Body)
	}
	uid := int64(r.Data()["id"].(float64))
	r = k.Do("PUT", "acme", "/api/v1/admin/portal-entry/settings", tok, map[string]any{"tunnel": true, "tunnel_ranges": []string{"100.64.0.0/24"}})
	if r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	xrtest.Exec(t, k.Acquire("acme"), `INSERT INTO radius_sessions(acct_session_id, user_id, username, framed_ip, start_time, update_time)
		VALUES ('tun-1', ?, 'tina', '100.64.0.5', '2025-01-01 00:00:00', '2025-01-01 00:00:00')`, uid)
	return k, logs
}

// fwDo sends a public request from the kit's client (127.0.0.1) with
// X-Forwarded-For xff (and X-Forwarded-Proto https).
func fwDo(k *webtest.Kit, method, path, xff string) webtest.Resp {
	k.T.Helper()
	return k.Do(method, "acme", path, "", nil, "X-Forwarded-For", xff, "X-Forwarded-Proto", "https")
}

// From an address that is not a trusted proxy, X-Forwarded-For counts for
// nothing: a client writing a new address each time still spends one
// bucket, is logged and identified by its own address.
func TestForwardedHeadersIgnoredFromUntrustedPeers(t *testing.T) {
	t.Parallel()
	for _, trusted := range [][]string{nil, {"10.0.0.0/8", "::1/128"}} {
		t.Run(fmt.Sprint(trusted), func(t *testing.T) {
			t.Parallel()
			k, logs := fwKit(t, trusted...)
			limit := k.App.Buckets()["public"].Limit
			for i := 0; i < limit; i++ {
				if r := fwDo(k, "GET", "/api/v1/auth/context", fmt.Sprintf("203.0.113.%d", i+1)); r.Status != 200 {
					t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
				}
			}
			webtest.ExpectErr(t, fwDo(k, "GET", "/api/v1/auth/context", "203.0.113.200"), 429, app.CodeRateLimited, "rate_limited")
			for _, ip := range logs.accessIPs("/api/v1/auth/context") {
				if ip != "127.0.0.1" {
					t.Fatalf("logged ip %q", ip)
				}
			}
			webtest.ExpectErr(t, fwDo(k, "POST", "/api/v1/portal/tunnel-identify", "100.64.0.5"), 404, app.CodeNotFound, "subscriber_not_identified")
		})
	}
}

// From a trusted proxy the client it names is the request's address: its
// own bucket, its address in the log, its tunnel identified. The address
// is the last the proxies did not add: writing more in front changes
// nothing.
func TestForwardedHeadersCountFromTrustedProxies(t *testing.T) {
	t.Parallel()
	k, logs := fwKit(t, "127.0.0.0/8")
	limit := k.App.Buckets()["public"].Limit
	for i := 0; i <= limit; i++ {
		if r := fwDo(k, "GET", "/api/v1/auth/context", fmt.Sprintf("203.0.113.%d", i+1)); r.Status != 200 {
			t.Fatalf("client %d: %d %s", i, r.Status, r.Body)
		}
	}
	// One client behind two proxies (the second trusted), forging heads.
	for i := 0; i < limit; i++ {
		xff := fmt.Sprintf("10.9.9.%d, 198.51.100.7, 127.0.0.9", i+1)
		if r := fwDo(k, "GET", "/api/v1/auth/context", xff); r.Status != 200 {
			t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, fwDo(k, "GET", "/api/v1/auth/context", "10.9.9.250, 198.51.100.7"), 429, app.CodeRateLimited, "rate_limited")
	ips := logs.accessIPs("/api/v1/auth/context")
	if len(ips) != 2*limit+2 || ips[0] != "203.0.113.1" || ips[limit] != "203.0.113.21" || ips[len(ips)-1] != "198.51.100.7" {
		t.Fatalf("logged %v", ips)
	}
	r := fwDo(k, "POST", "/api/v1/portal/tunnel-identify", "100.64.0.5")
	if r.Status != 200 || r.Data()["username"] != "tina" {
		t.Fatalf("tunnel: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, fwDo(k, "POST", "/api/v1/portal/tunnel-identify", "100.64.0.6"), 404, app.CodeNotFound, "subscriber_not_identified")
}

// How one request's headers are read.
func TestForwardedParsing(t *testing.T) {
	t.Parallel()
	s := &web.Server{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}}
	for _, c := range []struct {
		name, peer, proto string
		xff               []string
		want              string
		https             bool
	}{
		{"untrusted peer", "192.0.2.1:4000", "https", []string{"203.0.113.5"}, "192.0.2.1", false},
		{"trusted peer", "10.0.0.2:4000", "https", []string{"203.0.113.5"}, "203.0.113.5", true},
		{"trusted, plain http", "10.0.0.2:4000", "http", []string{"203.0.113.5"}, "203.0.113.5", false},
		{"chain of proxies", "10.0.0.2:4000", "http, https", []string{"198.51.100.1, 203.0.113.5, 10.0.0.3"}, "203.0.113.5", true},
		{"several header lines", "10.0.0.2:4000", "", []string{"198.51.100.1", "203.0.113.5"}, "203.0.113.5", false},
		{"garbage stops the walk", "10.0.0.2:4000", "", []string{"203.0.113.5, unknown"}, "10.0.0.2", false},
		{"entry with a port", "10.0.0.2:4000", "", []string{"203.0.113.5:5555"}, "203.0.113.5", false},
		{"only proxies", "10.0.0.2:4000", "", []string{"10.0.0.7"}, "10.0.0.7", false},
		{"ipv6 proxy and client", "[fd00::1]:4000", "HTTPS", []string{"2001:db8::5"}, "2001:db8::5", true},
		{"mapped ipv4 peer", "[::ffff:10.0.0.2]:4000", "", []string{"203.0.113.5"}, "203.0.113.5", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = c.peer
			for _, v := range c.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if c.proto != "" {
				r.Header.Set("X-Forwarded-Proto", c.proto)
			}
			r = s.Forwarded(r)
			if got := web.ClientIP(r); got != c.want || web.IsHTTPS(r) != c.https {
				t.Fatalf("client %s https %v, want %s %v", got, web.IsHTTPS(r), c.want, c.https)
			}
			if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("X-Forwarded-Proto") != "" {
				t.Fatal("headers left for others to read")
			}
		})
	}
}

// A connection xr serves HTTPS on itself (TLS under the JSON error
// wrapper) makes its requests HTTPS; a plain one does not.
func TestConnContextMarksTLS(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	for _, c := range []struct {
		conn net.Conn
		want bool
	}{
		{web.JSONErrConn(tls.Server(a, &tls.Config{})), true},
		{web.JSONErrConn(b), false},
		{tls.Server(b, &tls.Config{}), true},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r = r.WithContext(web.ConnContext(r.Context(), c.conn))
		if web.IsHTTPS(r) != c.want {
			t.Fatalf("%T: https %v", c.conn, !c.want)
		}
	}
}
