package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"

	"xr/internal/xrtest"
)

// pebbleCA is Pebble, Let's Encrypt's test CA, in this process: its ACME
// directory on a TLS server on loopback (xr trusts it through
// --tls-acme-ca), its validation authority resolving every name to
// 127.0.0.1 through a DNS server of the test and connecting to the ports
// it is started with, the ports of the xr under test.
type pebbleCA struct {
	t       *testing.T
	dir     *httptest.Server
	handler atomic.Pointer[http.Handler]
	caFile  string
	dnsAddr string
	ca      *ca.CAImpl
}

func newPebbleCA(t *testing.T) *pebbleCA {
	// Read by Pebble when it starts: validate at once (no random wait),
	// refuse no nonce on purpose.
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	t.Setenv("PEBBLE_WFE_NONCEREJECT", "0")
	p := &pebbleCA{t: t}
	p.dir = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := p.handler.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		http.Error(w, "the CA is down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(p.dir.Close)
	p.caFile = filepath.Join(t.TempDir(), "acme-ca.pem")
	writePEM(t, p.caFile, "CERTIFICATE", p.dir.Certificate().Raw)

	// Pebble asks its resolver over TCP.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ds := &dns.Server{Listener: ln, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		for _, qq := range q.Question {
			if qq.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: qq.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(127, 0, 0, 1)})
			}
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = ds.ActivateAndServe() }()
	t.Cleanup(func() { _ = ds.Shutdown() })
	p.dnsAddr = ln.Addr().String()
	return p
}

// directory is the ACME directory URL.
func (p *pebbleCA) directory() string { return p.dir.URL + wfe.DirectoryPath }

// start opens the CA: its validation authority checks HTTP-01 challenges
// on httpPort and TLS-ALPN-01 on tlsPort of 127.0.0.1.
func (p *pebbleCA) start(httpPort, tlsPort int) {
	lg := log.New(io.Discard, "", 0)
	store := db.NewMemoryStore()
	p.ca = ca.New(lg, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	v := va.New(lg, httpPort, tlsPort, false, p.dnsAddr, store)
	w := wfe.New(lg, store, v, p.ca, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)
	h := w.Handler()
	p.handler.Store(&h)
}

// stop makes the directory answer 503.
func (p *pebbleCA) stop() { p.handler.Store(nil) }

// roots trusts the certificates the CA issues.
func (p *pebbleCA) roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.ca.GetRootCert(0).Cert)
	return pool
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// servedXR is an xr serve running on its data directory.
type servedXR struct {
	http, https string
	stop        func()
}

func serveXR(t *testing.T, dir string, o serveOpts) *servedXR {
	t.Helper()
	o.http, o.domain, o.noRadius = "127.0.0.1:0", "xr.test", true
	if o.tls.https == "" {
		o.tls.https = "127.0.0.1:0"
	}
	g := &globals{data: dir, out: io.Discard, errOut: io.Discard, logLevel: "error"}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, g, o, func(h, s string) { addrs <- [2]string{h, s} }) }()
	s := &servedXR{}
	select {
	case a := <-addrs:
		s.http, s.https = a[0], a[1]
	case err := <-done:
		cancel()
		t.Fatalf("serve ended: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	stopped := false
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve returned %v", err)
		}
	}
	t.Cleanup(s.stop)
	return s
}

func port(t *testing.T, addr string) int {
	_, p, err := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	if err != nil || n == 0 {
		t.Fatalf("address %q", addr)
	}
	return n
}

// get requests https://host/path from the HTTPS listener on a new
// connection, trusting roots; redirects are not followed.
func (s *servedXR) get(host, path string, roots *x509.CertPool) (*http.Response, error) {
	return s.do("GET", host, path, "", roots)
}

func (s *servedXR) do(method, host, path, form string, roots *x509.CertPool) (*http.Response, error) {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, s.https)
		}}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(method, "https://"+host+path, strings.NewReader(form))
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	c := &http.Client{Transport: tr, Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	return res, err
}

// hostKind is GET /auth/context's host_kind over HTTPS.
func (s *servedXR) hostKind(t *testing.T, host string, roots *x509.CertPool) (string, *http.Response) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, s.https)
		}}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Get("https://" + host + "/api/v1/auth/context")
	if err != nil {
		t.Fatalf("%s: %v", host, err)
	}
	defer res.Body.Close()
	var body struct {
		Data struct {
			HostKind string `json:"host_kind"`
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 200 {
		t.Fatalf("%s: %d %v", host, res.StatusCode, err)
	}
	return body.Data.HostKind, res
}

// plainGet sends a plain-HTTP request to the HTTP listener.
func (s *servedXR) plainGet(t *testing.T, host, path string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+s.http+path, nil)
	req.Host = host
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// The HTTPS answers every xr serve with TLS gives: the tenant's and the
// apex's hosts, HSTS, plain HTTP redirected with the port, console cookies
// Secure.
func checkHTTPS(t *testing.T, s *servedXR, roots *x509.CertPool) {
	t.Helper()
	for host, kind := range map[string]string{"acme.xr.test": "tenant", "xr.test": "apex"} {
		got, res := s.hostKind(t, host, roots)
		if got != kind || res.Header.Get("Strict-Transport-Security") != "max-age=31536000" {
			t.Fatalf("%s: host kind %q, headers %v", host, got, res.Header)
		}
		if err := res.TLS.PeerCertificates[0].VerifyHostname(host); err != nil {
			t.Fatal(err)
		}
	}
	res := s.plainGet(t, "acme.xr.test", "/api/v1/auth/context?x=1")
	want := "https://acme.xr.test:" + strconv.Itoa(port(t, s.https)) + "/api/v1/auth/context?x=1"
	if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != want {
		t.Fatalf("plain HTTP: %d %q, want 308 %q", res.StatusCode, res.Header.Get("Location"), want)
	}
	res, err := s.do("POST", "acme.xr.test", "/login", url.Values{"email": {"owner"}, "password": {cliPassword}}.Encode(), roots)
	if err != nil {
		t.Fatal(err)
	}
	var session *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "xr_console" {
			session = c
		}
	}
	if res.StatusCode != http.StatusSeeOther || session == nil || !session.Secure {
		t.Fatalf("console login: %d %v", res.StatusCode, res.Header["Set-Cookie"])
	}
}

// xr serve --tls-acme obtains a certificate from the ACME CA for the
// instance domain and an existing tenant's host on their first handshake
// (the CA validates TLS-ALPN-01 against xr's HTTPS listener), keeps it in
// the data directory, serves from there after a restart with the CA down,
// and asks for no certificate of a host that names no tenant.
func TestServeHTTPSFromACME(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	pb := newPebbleCA(t)
	o := serveOpts{tls: tlsOpts{acme: true, acmeDirectory: pb.directory(), acmeCA: pb.caFile}}
	s := serveXR(t, dir, o)
	pb.start(port(t, s.http), port(t, s.https))
	checkHTTPS(t, s, pb.roots())

	for _, host := range []string{"nope.xr.test", "a.b.xr.test", "elsewhere.test"} {
		if _, err := s.get(host, "/healthz", pb.roots()); err == nil {
			t.Fatalf("%s: a certificate was served", host)
		}
	}
	cache := filepath.Join(dir, "tls", "acme")
	for _, name := range []string{"acme.xr.test", "xr.test"} {
		if _, err := os.Stat(filepath.Join(cache, name)); err != nil {
			t.Fatalf("certificate of %s not kept: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "nope.xr.test")); !os.IsNotExist(err) {
		t.Fatalf("a certificate for a host of no tenant: %v", err)
	}
	_, res := s.hostKind(t, "acme.xr.test", pb.roots())
	serial := res.TLS.PeerCertificates[0].SerialNumber

	// Restarted with the CA down: the kept certificate is served.
	s.stop()
	pb.stop()
	s = serveXR(t, dir, o)
	if _, res := s.hostKind(t, "acme.xr.test", pb.roots()); res.TLS.PeerCertificates[0].SerialNumber.Cmp(serial) != 0 {
		t.Fatal("the certificate was not the kept one")
	}
}

// With nothing answering TLS-ALPN-01 where the CA checks it, the
// certificate comes through HTTP-01, answered on xr's plain-HTTP listener.
func TestServeHTTPSFromACMEOverHTTP01(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	pb := newPebbleCA(t)
	s := serveXR(t, dir, serveOpts{tls: tlsOpts{acme: true, acmeDirectory: pb.directory(), acmeCA: pb.caFile}})
	dead, err := net.Listen("tcp", "127.0.0.1:0") // accepts and hangs up
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	go func() {
		for {
			c, err := dead.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	pb.start(port(t, s.http), port(t, dead.Addr().String()))
	checkHTTPS(t, s, pb.roots())
}

// selfSigned writes a certificate for xr.test and *.xr.test and its key.
func selfSigned(t *testing.T, certFile, keyFile string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "xr.test"}, DNSNames: []string{"xr.test", "*.xr.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, keyFile+".tmp", "EC PRIVATE KEY", kder)
	writePEM(t, certFile+".tmp", "CERTIFICATE", der)
	for _, f := range []string{keyFile, certFile} {
		if err := os.Rename(f+".tmp", f); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := x509.ParseCertificate(der)
	return c
}

// xr serve --tls-cert/--tls-key serves the operator's certificate, and a
// renewed one from the next handshake, without a restart.
func TestServeHTTPSWithOperatorCertificate(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	certDir := t.TempDir()
	certFile, keyFile := filepath.Join(certDir, "cert.pem"), filepath.Join(certDir, "key.pem")
	first := selfSigned(t, certFile, keyFile)
	s := serveXR(t, dir, serveOpts{tls: tlsOpts{certFile: certFile, keyFile: keyFile}})
	pool := x509.NewCertPool()
	pool.AddCert(first)
	checkHTTPS(t, s, pool)

	// Go's own answers before any handler are the JSON error over TLS too.
	conn, err := tls.Dial("tcp", s.https, &tls.Config{RootCAs: pool, ServerName: "acme.xr.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Just past the 1 MB limit, written while the answer is read: the
	// server stops reading at the limit.
	go func() {
		_, _ = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: acme.xr.test\r\nX-Big: "+strings.Repeat("a", 1<<20+8<<10)+"\r\n\r\n")
	}()
	answer, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(answer), "HTTP/1.1 431 ") || !strings.Contains(string(answer), `"reason":"headers_too_large"`) {
		t.Fatalf("431 over TLS: %q", answer)
	}

	second := selfSigned(t, certFile, keyFile)
	pool.AddCert(second)
	xrtest.Eventually(t, "the renewed certificate served", func() bool {
		res, err := s.get("acme.xr.test", "/healthz", pool)
		return err == nil && res.TLS.PeerCertificates[0].SerialNumber.Cmp(second.SerialNumber) == 0
	})
	// A broken renewal keeps the last good certificate.
	if err := os.WriteFile(certFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := s.get("acme.xr.test", "/healthz", pool); err != nil || res.TLS.PeerCertificates[0].SerialNumber.Cmp(second.SerialNumber) != 0 {
		t.Fatalf("after a broken renewal: %v", err)
	}
}

// xr serve does not start on contradictory or unusable HTTPS flags, and
// names the flag; nothing listens.
func TestServeRefusesBadTLSFlags(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	g := &globals{data: dir, out: io.Discard, errOut: io.Discard, logLevel: "error"}
	for _, c := range []struct {
		o    serveOpts
		flag string
	}{
		{serveOpts{domain: "xr.test", tls: tlsOpts{acme: true, certFile: "c.pem", keyFile: "k.pem"}}, "--tls-acme"},
		{serveOpts{domain: "xr.test", tls: tlsOpts{certFile: "c.pem"}}, "--tls-key"},
		{serveOpts{domain: "xr.test", tls: tlsOpts{keyFile: "k.pem"}}, "--tls-cert"},
		{serveOpts{domain: "xr.test", tls: tlsOpts{certFile: filepath.Join(dir, "none.pem"), keyFile: filepath.Join(dir, "none.key")}}, "--tls-cert"},
		{serveOpts{domain: "localhost", tls: tlsOpts{acme: true}}, "--domain"},
		{serveOpts{domain: "192.0.2.7", tls: tlsOpts{acme: true}}, "--domain"},
		{serveOpts{domain: "xr.test", tls: tlsOpts{trustedProxies: []string{"10.0.0.0/33"}}}, "--trusted-proxy"},
		{serveOpts{domain: "xr.test", tls: tlsOpts{trustedProxies: []string{"proxy.example"}}}, "--trusted-proxy"},
	} {
		c.o.http, c.o.noRadius, c.o.tls.https = "127.0.0.1:0", true, "127.0.0.1:0"
		err := runServe(context.Background(), g, c.o, func(string, string) { t.Errorf("serve started with %+v", c.o) })
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Fatalf("%s: %v", c.flag, err)
		}
	}
}

// --trusted-proxy takes CIDRs and single addresses.
func TestTrustedProxyFlag(t *testing.T) {
	t.Parallel()
	o := tlsOpts{trustedProxies: []string{"10.1.2.3/8", "192.0.2.7", "2001:db8::1", " fd00::/8 "}}
	ps, err := o.proxies()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if strings.Join(got, " ") != "10.0.0.0/8 192.0.2.7/32 2001:db8::1/128 fd00::/8" {
		t.Fatalf("got %v", got)
	}
}
