package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/radiusd"
)

// The TLS side of `xr serve`: RadSec (--radsec) and the certificate of
// PEAP/TTLS. Each server certificate comes from files the operator names,
// or else from the instance CA for the names given by --radius-name (by
// default the host name), renewed by the CA before it expires. RadSec
// clients must present a certificate of the instance CA bound to a NAS
// (xr nas radsec-cert).

// radiusTLSOpts are serve's TLS flags.
type radiusTLSOpts struct {
	radsec                string // listen address; "" = off
	radsecCert, radsecKey string
	eapCert, eapKey       string
	names                 []string
}

func (o *radiusTLSOpts) flags(f interface {
	StringVar(*string, string, string, string)
	StringArrayVar(*[]string, string, []string, string)
}) {
	f.StringVar(&o.radsec, "radsec", "", "RadSec (RADIUS over TLS, RFC 6614) listen address, e.g. :2083 (empty: no RadSec)")
	f.StringVar(&o.radsecCert, "radsec-cert", "", "RadSec server certificate, PEM with its chain (default: issued by the instance CA)")
	f.StringVar(&o.radsecKey, "radsec-key", "", "private key of --radsec-cert, PEM")
	f.StringVar(&o.eapCert, "eap-cert", "", "PEAP/TTLS server certificate, PEM with its chain (default: issued by the instance CA)")
	f.StringVar(&o.eapKey, "eap-key", "", "private key of --eap-cert, PEM")
	f.StringArrayVar(&o.names, "radius-name", nil, "a DNS name or address the instance CA's RADIUS server certificates (RadSec, EAP) are issued for; repeat for more (default: the host name)")
}

// certNames are the names of the instance-issued server certificates.
func (o *radiusTLSOpts) certNames() []string {
	if len(o.names) > 0 {
		return o.names
	}
	var names []string
	if h, err := os.Hostname(); err == nil && h != "" {
		names = append(names, h)
	}
	if host, _, err := net.SplitHostPort(o.radsec); err == nil && host != "" {
		names = append(names, host)
	}
	return names
}

// certSource serves a server certificate: from files, or from the
// instance CA (asked again at most hourly, so a renewal is picked up).
type certSource struct {
	a       *app.App
	purpose string
	names   []string
	mu      sync.Mutex
	cert    *tls.Certificate
	at      time.Time
}

func newCertSource(ctx context.Context, a *app.App, purpose string, names []string, certFile, keyFile string) (*certSource, error) {
	s := &certSource{a: a, purpose: purpose, names: names}
	if certFile != "" || keyFile != "" {
		if certFile == "" || keyFile == "" {
			return nil, fmt.Errorf("--%[1]s-cert and --%[1]s-key go together", purpose)
		}
		c, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%s certificate: %w", purpose, err)
		}
		s.cert, s.a = &c, nil // fixed: the operator renews the files and restarts
		return s, nil
	}
	if _, err := s.get(ctx); err != nil {
		return nil, fmt.Errorf("%s certificate from the instance CA: %w", purpose, err)
	}
	return s, nil
}

func (s *certSource) get(ctx context.Context) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.a == nil || s.cert != nil && time.Since(s.at) < time.Hour {
		return s.cert, nil
	}
	c, err := aaa.ServerCertificate(ctx, s.a, s.purpose, s.names)
	if err != nil {
		if s.cert != nil {
			s.a.Log.Warn("radius: server certificate not renewed", "purpose", s.purpose, "err", err)
			return s.cert, nil // keep serving the one we have
		}
		return nil, err
	}
	s.cert, s.at = &c, time.Now()
	return s.cert, nil
}

func (s *certSource) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	return s.get(hello.Context())
}

// configureTLS sets the server's EAP certificate and, with --radsec, its
// RadSec configuration, and returns the RadSec listener (nil without).
func (r *radius) configureTLS(ctx context.Context, a *app.App, srv *radiusd.Server, socks *sockets, o radiusTLSOpts) (net.Listener, error) {
	names := o.certNames()
	eap, err := newCertSource(ctx, a, aaa.PurposeEAP, names, o.eapCert, o.eapKey)
	if err != nil {
		return nil, err
	}
	srv.EAPTLS = &tls.Config{GetCertificate: eap.getCertificate}
	if o.radsec == "" {
		return nil, nil
	}
	rs, err := newCertSource(ctx, a, aaa.PurposeRadSec, names, o.radsecCert, o.radsecKey)
	if err != nil {
		return nil, err
	}
	pool, err := aaa.CAPool(ctx, a)
	if err != nil {
		return nil, err
	}
	srv.RadSec = &radiusd.RadSecConfig{TLS: &tls.Config{GetCertificate: rs.getCertificate, ClientCAs: pool}, Directory: r.backend}
	ln, err := socks.listen(o.radsec)
	if err != nil {
		return nil, fmt.Errorf("radsec listener: %w", err)
	}
	return ln, nil
}
