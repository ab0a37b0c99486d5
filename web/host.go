package web

import (
	"net"
	"net/http"
	"strings"

	"xr/app/payments"
)

// HostKind says what the Host header named.
type HostKind string

const (
	HostTenant  HostKind = "tenant"
	HostApex    HostKind = "apex"
	HostUnknown HostKind = "unknown"
)

// HostInfo is the tenant resolution of one request.
type HostInfo struct {
	Kind HostKind
	Slug string // set when Kind is tenant
}

// resolveHost maps Host to a tenant: <slug>.<domain> names a tenant (known
// or not); the apex, an IP or another name names none and falls to the
// default tenant when one is configured.
func (s *Server) resolveHost(host string) HostInfo {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	domain := strings.ToLower(s.app.Cfg.Domain)
	var named string
	if domain != "" && strings.HasSuffix(host, "."+domain) {
		named = strings.TrimSuffix(host, "."+domain)
		if strings.Contains(named, ".") {
			return HostInfo{Kind: HostUnknown}
		}
		if _, ok := s.app.TenantBySlug(named); ok {
			return HostInfo{Kind: HostTenant, Slug: named}
		}
		return HostInfo{Kind: HostUnknown}
	}
	if def := s.app.Cfg.DefaultTenant; def != "" {
		if _, ok := s.app.TenantBySlug(def); ok {
			return HostInfo{Kind: HostTenant, Slug: def}
		}
	}
	if host == domain {
		return HostInfo{Kind: HostApex}
	}
	return HostInfo{Kind: HostUnknown}
}

// RequestOrigin is scheme://host of the request as the client sent it.
func RequestOrigin(r *http.Request) string {
	if IsHTTPS(r) {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// PaymentReturnURL is where a payment provider sends the payer back: the
// payment's page of the subscriber pages (web/my), on the host the
// request came to.
func PaymentReturnURL(r *http.Request) string {
	return RequestOrigin(r) + "/my/payments/" + payments.ReferencePlaceholder
}
