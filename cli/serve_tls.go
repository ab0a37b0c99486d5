package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"xr/app"
)

// tlsOpts are how xr serve speaks HTTPS itself: with certificates from an
// ACME CA (--tls-acme) or the operator's files (--tls-cert, --tls-key) on
// --https, --http then redirecting to it; and which reverse proxies'
// forwarding headers count (--trusted-proxy).
type tlsOpts struct {
	acme              bool
	acmeEmail         string
	acmeDirectory     string
	acmeCA            string
	certFile, keyFile string
	https             string
	trustedProxies    []string
}

func (o *tlsOpts) flags(f *pflag.FlagSet) {
	f.BoolVar(&o.acme, "tls-acme", false, "serve HTTPS on --https with certificates obtained and renewed from an ACME CA (Let's Encrypt) "+
		"for --domain and each existing tenant's host, kept in DATA/tls; --http then redirects to HTTPS and answers the CA's HTTP-01 challenges")
	f.StringVar(&o.acmeEmail, "tls-acme-email", "", "contact address of the ACME account (expiry notices)")
	f.StringVar(&o.acmeDirectory, "tls-acme-directory", acme.LetsEncryptURL, "directory URL of the ACME CA")
	f.StringVar(&o.acmeCA, "tls-acme-ca", "", "PEM file of CA certificates the ACME directory's HTTPS is trusted by, beside the system's (a private ACME CA)")
	f.StringVar(&o.certFile, "tls-cert", "", "serve HTTPS on --https with this certificate chain (PEM; read again when it changes); needs --tls-key")
	f.StringVar(&o.keyFile, "tls-key", "", "private key (PEM) of --tls-cert")
	f.StringVar(&o.https, "https", ":443", "HTTPS listen address (with --tls-acme or --tls-cert)")
	f.StringArrayVar(&o.trustedProxies, "trusted-proxy", nil, "address or CIDR of a reverse proxy whose X-Forwarded-For and X-Forwarded-Proto count "+
		"(rate limits, logs, tunnel identification); repeatable; from any other address they are ignored")
}

// on tells whether xr serves HTTPS itself.
func (o *tlsOpts) on() bool { return o.acme || o.certFile != "" || o.keyFile != "" }

// check refuses contradictory or unusable flags before anything opens.
func (o *tlsOpts) check(domain string) error {
	switch {
	case o.acme && (o.certFile != "" || o.keyFile != ""):
		return errors.New("--tls-acme and --tls-cert/--tls-key exclude each other")
	case (o.certFile == "") != (o.keyFile == ""):
		return errors.New("--tls-cert and --tls-key go together")
	case o.acme && (!strings.Contains(domain, ".") || net.ParseIP(domain) != nil):
		return fmt.Errorf("--tls-acme: --domain %q is not a public DNS name a CA can issue certificates for", domain)
	}
	if _, err := o.proxies(); err != nil {
		return err
	}
	return nil
}

// proxies parses --trusted-proxy: CIDRs, or single addresses.
func (o *tlsOpts) proxies() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range o.trustedProxies {
		s = strings.TrimSpace(s)
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("--trusted-proxy %q: not an address or CIDR", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// config is the HTTPS listener's TLS configuration and the handler of
// the plain-HTTP listener (the ACME HTTP-01 challenges, then a redirect to
// HTTPS on httpsPort).
func (o *tlsOpts) config(a *app.App, dataDir, httpsPort string) (*tls.Config, http.Handler, error) {
	redirect := redirectHTTPS(httpsPort)
	// HTTP/1.1 only: the connections are wrapped (web.JSONErrorListener),
	// so net/http could not speak HTTP/2 on them.
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if !o.acme {
		cf := &certFiles{cert: o.certFile, key: o.keyFile}
		if _, err := cf.get(nil); err != nil {
			return nil, nil, err
		}
		cfg.GetCertificate = cf.get
		return cfg, redirect, nil
	}
	client, err := acmeHTTPClient(o.acmeCA)
	if err != nil {
		return nil, nil, err
	}
	m := &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      autocert.DirCache(filepath.Join(dataDir, "tls", "acme")),
		HostPolicy: acmeHostPolicy(a),
		Email:      o.acmeEmail,
		Client:     &acme.Client{DirectoryURL: o.acmeDirectory, HTTPClient: client},
	}
	cfg.GetCertificate = m.GetCertificate
	cfg.NextProtos = append(cfg.NextProtos, acme.ALPNProto) // TLS-ALPN-01 challenges
	return cfg, m.HTTPHandler(redirect), nil
}

// acmeHostPolicy admits the names a certificate may be asked for: the
// instance domain and <slug>.<domain> of an existing tenant. Any other
// name a client sends (an unknown slug, a name pointed at the box) is
// refused before the CA is asked, so nobody can spend the instance's
// issuance limits.
func acmeHostPolicy(a *app.App) autocert.HostPolicy {
	return func(_ context.Context, host string) error {
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h // the Host of an HTTP-01 request to a port other than 80
		}
		domain := strings.ToLower(a.Cfg.Domain)
		host = strings.ToLower(host)
		if host == domain {
			return nil
		}
		if slug, ok := strings.CutSuffix(host, "."+domain); ok && !strings.Contains(slug, ".") {
			if _, ok := a.TenantBySlug(slug); ok {
				return nil
			}
		}
		return fmt.Errorf("xr: no certificate for %q: not the instance domain or an existing tenant's host", host)
	}
}

// acmeHTTPClient is the ACME client's HTTP client: the system's roots,
// plus those of caFile when set.
func acmeHTTPClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-acme-ca: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-acme-ca %s: no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: time.Minute}, nil
}

// certFiles serves the operator's certificate, read again on the first
// handshake after either file changed (a renewal by certbot or another
// tool needs no restart). A pair that does not load keeps the last good
// one.
type certFiles struct {
	cert, key string
	mu        sync.Mutex
	loaded    *tls.Certificate
	stamp     string
}

func (f *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	stamp, err := fileStamp(f.cert, f.key)
	if err != nil && f.loaded == nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	if err != nil || stamp == f.stamp {
		return f.loaded, nil
	}
	c, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		if f.loaded == nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		return f.loaded, nil
	}
	f.loaded, f.stamp = &c, stamp
	return f.loaded, nil
}

// fileStamp names the versions of files: size and modification time.
func fileStamp(paths ...string) (string, error) {
	var b strings.Builder
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%d.%d;", st.Size(), st.ModTime().UnixNano())
	}
	return b.String(), nil
}

// redirectHTTPS sends a plain-HTTP request to the same URL on HTTPS
// (308: the method and body are kept).
func redirectHTTPS(httpsPort string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if httpsPort != "443" {
			host = net.JoinHostPort(host, httpsPort)
		} else if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect)
	})
}

// strictTransport tells browsers to use HTTPS only for the host from now
// on (Strict-Transport-Security, one year; not its subdomains: those may
// be served elsewhere).
func strictTransport(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		h.ServeHTTP(w, r)
	})
}
