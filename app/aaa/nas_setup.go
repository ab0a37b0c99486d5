package aaa

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"xr/app"
)

// NAS onboarding: GET /admin/nas/{id}/setup renders the configuration a NAS
// needs to use this server, for RouterOS, Cisco IOS or as a generic summary
// with a FreeRADIUS-style clients.conf entry. The secret is write-only in the
// API, so every script carries SecretPlaceholder instead.

// SetupVendors are the vendors GET /admin/nas/{id}/setup renders.
var SetupVendors = []string{"mikrotik", "cisco", "generic"}

// SecretPlaceholder stands for the NAS's shared secret in every script.
const SecretPlaceholder = "<NAS-SECRET>"

// ServerPlaceholder stands for the server address when none is known.
const ServerPlaceholder = "<XR-SERVER-ADDRESS>"

// Default RADIUS ports, used when no server reports its listeners.
const (
	DefaultAuthPort = 1812
	DefaultAcctPort = 1813
)

// NASSetupInput is the query of GET /admin/nas/{id}/setup.
type NASSetupInput struct {
	// Vendor is mikrotik, cisco or generic; "" picks the NAS's type
	// (anything but mikrotik and cisco is generic).
	Vendor string
	// Server is the address the NAS must reach (an IP or a host name);
	// "" falls back to the tenant setting radius_public_address, then Host.
	Server string
	// Host is the request's Host header.
	Host string
	// Transport is udp (the default) or radsec: RADIUS over TLS with the
	// NAS's client certificate (RFC 6614).
	Transport string
}

// SetupTransports are the transports GET /admin/nas/{id}/setup renders.
var SetupTransports = []string{"udp", "radsec"}

// NASSetup is the answer of GET /admin/nas/{id}/setup.
type NASSetup struct {
	NASID  int64  `json:"nas_id"`
	Vendor string `json:"vendor"`
	// Transport is udp or radsec; RadSecPort the server's RadSec port
	// (TCP, default 2083), 0 with udp.
	Transport  string `json:"transport"`
	RadSecPort int    `json:"radsec_port"`
	// Server is the RADIUS server address written into the script, and
	// ServerSource where it came from: query (the server parameter),
	// setting (radius_public_address), host (the request's Host) or none
	// (a placeholder to replace).
	Server       string `json:"server"`
	ServerSource string `json:"server_source"`
	// Standby is the standby server's address (xr serve --standby-address:
	// the box running xr serve --standby-of), written into the script as
	// the NAS's second RADIUS server; "" when none is configured.
	Standby         string `json:"standby"`
	AuthPort        int    `json:"auth_port"`
	AcctPort        int    `json:"acct_port"`
	CoAPort         int    `json:"coa_port"`
	InterimInterval int    `json:"interim_interval"`
	// SecretPlaceholder is the text to replace with the NAS's secret.
	SecretPlaceholder string `json:"secret_placeholder"`
	Script            string `json:"script"`
	// Warnings: server_address_not_ip (RouterOS needs an IP address),
	// server_address_unknown (the script has a placeholder),
	// radius_public_address_invalid (the setting was ignored); with
	// standby_address_not_ip (RouterOS needs an IP address there too);
	// with radsec: radsec_not_serving (the running server has no RadSec
	// listener: xr serve --radsec), radsec_cert_missing (the NAS has no
	// current certificate yet), radsec_generic_for_vendor (no RadSec
	// script for the vendor: the generic settings).
	Warnings []string `json:"warnings"`
}

// setupData is what the templates see. Every string in it is validated or
// sanitized: nothing an operator typed can break out of a comment or a
// quoted value.
type setupData struct {
	Name       string // NAS name for comments (control characters removed)
	ClientName string // NAS name as an identifier ([A-Za-z0-9_.-])
	NASIP      string
	Server     string
	ServerIsIP bool
	Standby    string // "" without a standby
	StandbyIP  bool
	AuthPort   int
	AcctPort   int
	CoAPort    int
	Interim    int // seconds
	RequireMA  bool
	Secret     string
	Tenant     string // the tenant's slug (for the radsec-cert command)
	RadSecPort int
}

// NASSetupScript renders the setup of one NAS of the caller's tenant. svc
// may be nil (no RADIUS server in this process: the default ports).
func NASSetupScript(ctx context.Context, svc *Service, act *app.Actor, id int64, in NASSetupInput) (*NASSetup, error) {
	vendor := strings.TrimSpace(in.Vendor)
	if vendor != "" && !validVendor(vendor) {
		return nil, app.ErrValidation("invalid_enum", "vendor").With("allowed", SetupVendors)
	}
	transport := strings.TrimSpace(in.Transport)
	if transport == "" {
		transport = "udp"
	}
	if !slices.Contains(SetupTransports, transport) {
		return nil, app.ErrValidation("invalid_enum", "transport").With("allowed", SetupTransports)
	}
	var fromQuery string
	var fromQueryIsIP bool
	if s := strings.TrimSpace(in.Server); s != "" {
		h, isIP, ok := parseServerAddress(s)
		if !ok {
			return nil, app.ErrValidation("invalid_server_address", "server")
		}
		fromQuery, fromQueryIsIP = h, isIP
	}
	t := act.Tenant
	n, err := GetNAS(ctx, act, id)
	if err != nil {
		return nil, err
	}
	if vendor == "" {
		vendor = "generic"
		if validVendor(n.Type) {
			vendor = n.Type
		}
	}
	out := &NASSetup{NASID: n.ID, Vendor: vendor, Transport: transport, AuthPort: DefaultAuthPort, AcctPort: DefaultAcctPort,
		CoAPort: n.CoAPort, SecretPlaceholder: SecretPlaceholder, Warnings: []string{}}
	w := svc.Wire()
	if w != nil {
		if w.AuthPort > 0 {
			out.AuthPort = w.AuthPort
		}
		if w.AcctPort > 0 {
			out.AcctPort = w.AcctPort
		}
	}
	tmpl := vendor
	if transport == "radsec" {
		if tmpl, err = radsecSetup(ctx, act, n.ID, w, out); err != nil {
			return nil, err
		}
	}
	if out.CoAPort <= 0 {
		out.CoAPort = 3799
	}
	interim, err := SettingRadiusInterimInterval.Get(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	out.InterimInterval = int(interim)
	if out.InterimInterval <= 0 {
		out.InterimInterval = 300
	}

	var isIP bool
	switch {
	case fromQuery != "":
		out.Server, isIP, out.ServerSource = fromQuery, fromQueryIsIP, "query"
	default:
		addr, err := SettingRadiusPublicAddress.Get(ctx, t.DB.R)
		if err != nil {
			return nil, err
		}
		if s := strings.TrimSpace(addr); s != "" {
			if h, ip, ok := parseServerAddress(s); ok {
				out.Server, isIP, out.ServerSource = h, ip, "setting"
				break
			}
			out.Warnings = append(out.Warnings, "radius_public_address_invalid")
		}
		host := in.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if h, ip, ok := parseServerAddress(host); ok && host != "" {
			out.Server, isIP, out.ServerSource = h, ip, "host"
		} else {
			out.Server, out.ServerSource = ServerPlaceholder, "none"
			out.Warnings = append(out.Warnings, "server_address_unknown")
		}
	}
	if vendor == "mikrotik" && !isIP && out.ServerSource != "none" && transport == "udp" {
		out.Warnings = append(out.Warnings, "server_address_not_ip")
	}
	standby, standbyIP, _ := parseServerAddress(svc.StandbyAddress())
	if out.Standby = standby; vendor == "mikrotik" && standby != "" && !standbyIP && transport == "udp" {
		out.Warnings = append(out.Warnings, "standby_address_not_ip")
	}

	d := setupData{Name: commentSafe(n.Name), ClientName: identSafe(n.Name), NASIP: n.IP, Server: out.Server,
		ServerIsIP: isIP, Standby: standby, StandbyIP: standbyIP, AuthPort: out.AuthPort, AcctPort: out.AcctPort, CoAPort: out.CoAPort,
		Interim: out.InterimInterval, RequireMA: n.RequireMessageAuthenticator, Secret: SecretPlaceholder,
		Tenant: t.Slug, RadSecPort: out.RadSecPort}
	if out.Script, err = renderSetup(tmpl, d); err != nil {
		return nil, err
	}
	return out, nil
}

// radsecSetup fills the RadSec part of a setup and names its template.
// The secret is no secret with RadSec (RFC 6614 fixes it): the
// placeholder is left empty.
func radsecSetup(ctx context.Context, act *app.Actor, nasID int64, w *WireStatus, out *NASSetup) (string, error) {
	out.RadSecPort, out.SecretPlaceholder = DefaultRadSecPort, ""
	switch {
	case w != nil && w.RadSecPort > 0:
		out.RadSecPort = w.RadSecPort
	case w != nil:
		out.Warnings = append(out.Warnings, "radsec_not_serving")
	}
	c, err := GetRadSecCert(ctx, act, nasID)
	var ae *app.Error
	switch {
	case errors.As(err, &ae) && ae.Reason == "radsec_cert_none", err == nil && (c.State == CertRevoked || c.State == CertExpired):
		out.Warnings = append(out.Warnings, "radsec_cert_missing")
	case err != nil:
		return "", err
	}
	if out.Vendor == "mikrotik" {
		return "mikrotik-radsec", nil
	}
	if out.Vendor != "generic" {
		out.Warnings = append(out.Warnings, "radsec_generic_for_vendor")
	}
	return "generic-radsec", nil
}

// DefaultRadSecPort is RadSec's TCP port (RFC 6614), shown when no server
// reports its listener.
const DefaultRadSecPort = 2083

func validVendor(v string) bool {
	for _, s := range SetupVendors {
		if v == s {
			return true
		}
	}
	return false
}

// parseServerAddress accepts an IP address (IPv6 optionally in brackets, no
// zone) or a DNS host name, and returns its canonical form.
func parseServerAddress(s string) (host string, isIP bool, ok bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Zone() != "" || a.IsUnspecified() {
			return "", false, false
		}
		return a.Unmap().String(), true, true
	}
	s = strings.TrimSuffix(strings.ToLower(s), ".")
	if s == "" || len(s) > 253 {
		return "", false, false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", false, false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", false, false
			}
		}
	}
	return s, false, true
}

// commentSafe keeps a name fit for a comment line and a quoted value: no
// control characters, quotes, backslashes or '$' (RouterOS variables).
func commentSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || r == '"' || r == '\\' || r == '$':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	out := strings.TrimSpace(b.String())
	if len(out) > 64 {
		out = out[:64]
	}
	return strings.ToValidUTF8(out, "")
}

// identSafe turns a name into an identifier ([A-Za-z0-9_.-], else "-").
func identSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" {
		out = "nas"
	}
	if len(out) > 48 {
		out = out[:48]
	}
	return out
}

// routerOSDuration writes seconds the way RouterOS prints durations (5m,
// 1h30m, 45s).
func routerOSDuration(sec int) string {
	if sec <= 0 {
		return "0s"
	}
	var b strings.Builder
	if h := sec / 3600; h > 0 {
		b.WriteString(strconv.Itoa(h) + "h")
	}
	if m := sec % 3600 / 60; m > 0 {
		b.WriteString(strconv.Itoa(m) + "m")
	}
	if s := sec % 60; s > 0 {
		b.WriteString(strconv.Itoa(s) + "s")
	}
	return b.String()
}

// ciscoMinutes is the interim interval in whole minutes (IOS counts
// periodic updates in minutes), at least 1.
func ciscoMinutes(sec int) int { return max(1, (sec+59)/60) }

var setupTemplates = template.Must(template.New("setup").Funcs(template.FuncMap{
	"ros": routerOSDuration, "minutes": ciscoMinutes,
}).Parse(setupTemplateText))

func renderSetup(vendor string, d setupData) (string, error) {
	var b strings.Builder
	if err := setupTemplates.ExecuteTemplate(&b, vendor, d); err != nil {
		return "", err
	}
	return b.String(), nil
}

const setupTemplateText = `{{define "mikrotik" -}}
# xr RADIUS setup for NAS "{{.Name}}" ({{.NASIP}}), RouterOS 7.
# Paste into the router's terminal, or import it as an .rsc file.
#
# {{.Secret}}: replace it with the shared secret entered for this NAS in xr.
# xr never shows a secret again (it is write-only); to change it, PATCH the NAS.
#
# xr knows this router by the source address {{.NASIP}}: RADIUS packets must come
# from it (add src-address={{.NASIP}} to the next line if the router has several).
{{- if not .ServerIsIP}}
# {{.Server}} is not an IP address: RouterOS wants one here, replace it.
{{- end}}
/radius
add service=ppp,hotspot,login address={{.Server}} secret="{{.Secret}}" authentication-port={{.AuthPort}} accounting-port={{.AcctPort}} timeout=3s comment=xr
{{- if .Standby}}
# The standby (xr serve --standby-of): RouterOS asks it when {{.Server}} does not
# answer in time, with the same secret, and takes its Disconnect and CoA too.
{{- if not .StandbyIP}}
# {{.Standby}} is not an IP address: RouterOS wants one here, replace it.
{{- end}}
add service=ppp,hotspot,login address={{.Standby}} secret="{{.Secret}}" authentication-port={{.AuthPort}} accounting-port={{.AcctPort}} timeout=3s comment=xr-standby
{{- end}}
# "login" only matters with /user aaa use-radius=yes: leave that off, subscribers
# are not router administrators.
# Message-Authenticator (RFC 3579, BlastRADIUS CVE-2024-3596): RouterOS 7.15 and
# later sign Access-Requests and demand signed answers with the next line; older
# versions reject it (upgrade{{if .RequireMA}}, or set require_message_authenticator=false on
# this NAS in xr: xr drops its Access-Requests without one{{end}}).
set [find comment=xr] require-message-auth=yes-for-request-resp
{{- if .Standby}}
set [find comment=xr-standby] require-message-auth=yes-for-request-resp
{{- end}}
# Disconnect and CoA from xr (RFC 5176) arrive on UDP {{.CoAPort}}.
/radius incoming
set accept=yes port={{.CoAPort}}
{{template "mikrotik-aaa" .}}{{end}}
{{- define "mikrotik-aaa" -}}
# PPP (PPPoE, L2TP, SSTP, ...): RADIUS authentication and accounting, interim
# updates every {{.Interim}} s.
/ppp aaa
set use-radius=yes accounting=yes interim-update={{ros .Interim}}
# Hotspot: every server profile uses RADIUS with the same interim interval.
/ip hotspot profile
set [find] use-radius=yes radius-accounting=yes radius-interim-update={{ros .Interim}}
{{end}}
{{- define "mikrotik-radsec" -}}
# xr RadSec setup for NAS "{{.Name}}", RouterOS 7: RADIUS over TLS (RFC 6614).
# The router connects to {{.Server}} on TCP {{.RadSecPort}} with its own client certificate;
# xr knows it by that certificate, from whatever address it connects.
#
# 1. Get the router's files once (xr keeps no copy of the key):
#      xr nas radsec-cert --tenant {{.Tenant}} --name "{{.Name}}" --out ./{{.ClientName}}
#    or Issue and Download on the NAS page in xr; upload client.pem, client.key and
#    ca.pem to the router (Files).
# 2. Import them; the key joins the certificate with the same public key.
/certificate import file-name=ca.pem passphrase="" name=xr-ca
/certificate import file-name=client.pem passphrase="" name=xr-{{.ClientName}}
/certificate import file-name=client.key passphrase=""
# 3. RADIUS over RadSec. The secret is fixed by RFC 6614: radsec. wireless and
#    dot1x let Wi-Fi (WPA2/WPA3-Enterprise: PEAP, TTLS) sign in through xr too.
/radius
add service=ppp,hotspot,wireless,dot1x address={{.Server}} protocol=radsec certificate=xr-{{.ClientName}} secret=radsec authentication-port={{.RadSecPort}} accounting-port={{.RadSecPort}} timeout=3s comment=xr
{{- if .Standby}}
# The standby (xr serve --standby-of) knows the same certificate: asked when
# {{.Server}} does not answer in time.
add service=ppp,hotspot,wireless,dot1x address={{.Standby}} protocol=radsec certificate=xr-{{.ClientName}} secret=radsec authentication-port={{.RadSecPort}} accounting-port={{.RadSecPort}} timeout=3s comment=xr-standby
{{- end}}
# Disconnect and CoA from xr come over the same connection while it is up.
/radius incoming
set accept=yes
{{template "mikrotik-aaa" .}}{{end}}
{{- define "generic-radsec" -}}
# xr RadSec settings for NAS "{{.Name}}": RADIUS over TLS (RFC 6614).
#
# RadSec server (what the NAS must reach)
#   address                {{.Server}}{{if .Standby}}, then the standby {{.Standby}} when it does not answer{{end}}
#   port                   TCP {{.RadSecPort}}: authentication, accounting and Status-Server on one connection
#   TLS                    1.2 or 1.3; the server's certificate chains to the instance CA (ca.pem)
#                          and must name {{.Server}} where the NAS checks names (radsecproxy does):
#                          start xr with --radius-name {{.Server}}, or give it --radsec-cert
#   client certificate     client.pem and client.key, bound to this NAS in xr; get them once with
#                            xr nas radsec-cert --tenant {{.Tenant}} --name "{{.Name}}" --out ./{{.ClientName}}
#                          or Issue and Download on the NAS page (xr keeps no copy of the key)
#   shared secret          radsec (fixed by RFC 6614)
#   interim updates        every {{.Interim}} s (Access-Accept also carries Acct-Interim-Interval)
#   methods                PAP, CHAP, MS-CHAPv2; EAP: PEAP and TTLS (MS-CHAPv2, PAP inside), EAP-MSCHAPv2
#
# The NAS, as xr knows it
#   identity               its certificate, whatever its source address
#   Disconnect/CoA         over the RadSec connection while it is up, else UDP {{.CoAPort}} on {{.NASIP}}
#
# A NAS that speaks only UDP RADIUS can reach xr through radsecproxy on its site
# (radsecproxy.conf; the NAS is its client on UDP):
tls xr {
	CACertificateFile /etc/radsecproxy/xr/ca.pem
	CertificateFile /etc/radsecproxy/xr/client.pem
	CertificateKeyFile /etc/radsecproxy/xr/client.key
}
server {{.Server}} {
	type tls
	port {{.RadSecPort}}
	tls xr
	secret radsec
	StatusServer on
}
{{- if .Standby}}
server {{.Standby}} {
	type tls
	port {{.RadSecPort}}
	tls xr
	secret radsec
	StatusServer on
}
{{- end}}
realm * {
	server {{.Server}}
	accountingServer {{.Server}}
{{- if .Standby}}
	# the standby (xr serve --standby-of), when {{.Server}} is down
	server {{.Standby}}
	accountingServer {{.Standby}}
{{- end}}
}
{{end}}
{{- define "cisco" -}}
! xr RADIUS setup for NAS "{{.Name}}" ({{.NASIP}}), Cisco IOS / IOS XE.
!
! {{.Secret}}: replace it with the shared secret entered for this NAS in xr.
! xr never shows a secret again (it is write-only); to change it, PATCH the NAS.
!
! xr knows this router by the source address {{.NASIP}}: RADIUS packets must come
! from it (ip radius source-interface <the interface with {{.NASIP}}>).
aaa new-model
aaa session-id common
!
radius server xr
 address ipv4 {{.Server}} auth-port {{.AuthPort}} acct-port {{.AcctPort}}
 key {{.Secret}}
 timeout 3
 retransmit 2
!
{{- if .Standby}}
! The standby (xr serve --standby-of): asked when xr does not answer in time.
radius server xr-standby
 address ipv4 {{.Standby}} auth-port {{.AuthPort}} acct-port {{.AcctPort}}
 key {{.Secret}}
 timeout 3
 retransmit 2
!
{{- end}}
aaa group server radius XR
 server name xr
{{- if .Standby}}
 server name xr-standby
{{- end}}
!
aaa authentication ppp default group XR
aaa authorization network default group XR
aaa accounting network default start-stop group XR
! Interim updates every {{.Interim}} s (IOS counts in minutes).
aaa accounting update periodic {{minutes .Interim}}
!
! Disconnect and CoA from xr (RFC 5176) arrive on UDP {{.CoAPort}}.
aaa server radius dynamic-author
 client {{.Server}} server-key {{.Secret}}
{{- if .Standby}}
 client {{.Standby}} server-key {{.Secret}}
{{- end}}
 port {{.CoAPort}}
 auth-type any
!
! Message-Authenticator (RFC 3579, BlastRADIUS CVE-2024-3596): {{if .RequireMA}}xr drops
! Access-Requests from this NAS without one. Releases with the BlastRADIUS fixes
! send it; on older ones set require_message_authenticator=false on this NAS in xr.
{{- else}}this NAS is set not
! to require it in xr; releases with the BlastRADIUS fixes send it anyway.
{{- end}}
{{end}}
{{- define "generic" -}}
# xr RADIUS settings for NAS "{{.Name}}" ({{.NASIP}}).
#
# RADIUS server (what the NAS must reach)
#   address                {{.Server}}
{{- if .Standby}}
#   standby                {{.Standby}}: the second server, same ports and secret; ask it
#                          when {{.Server}} does not answer (xr serve --standby-of)
{{- end}}
#   authentication         UDP {{.AuthPort}}
#   accounting             UDP {{.AcctPort}}
#   shared secret          {{.Secret}}: the secret entered for this NAS in xr
#                          (write-only: xr never shows it again)
#   interim updates        every {{.Interim}} s (Access-Accept also carries
#                          Acct-Interim-Interval)
#   Message-Authenticator  {{if .RequireMA}}required in every Access-Request{{else}}verified when present (not required for this NAS){{end}}
#                          (RFC 3579, BlastRADIUS CVE-2024-3596)
#   methods                PAP, CHAP, MS-CHAPv2
#
# The NAS, as xr knows it
#   source address         {{.NASIP}} (packets from other addresses are dropped)
#   Disconnect/CoA         xr sends RFC 5176 requests to UDP {{.CoAPort}} on {{.NASIP}}
#   clock                  keep it on NTP: xr reports the skew it sees in
#                          Event-Timestamp
#
# The same NAS as a FreeRADIUS-style clients.conf entry:
client {{.ClientName}} {
	ipaddr = {{.NASIP}}
	secret = {{.Secret}}
	require_message_authenticator = {{if .RequireMA}}yes{{else}}no{{end}}
	nas_type = other
}
{{end}}`
