package aaa

import (
	"context"
	"net"
	"net/netip"
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
}

// NASSetup is the answer of GET /admin/nas/{id}/setup.
type NASSetup struct {
	NASID  int64  `json:"nas_id"`
	Vendor string `json:"vendor"`
	// Server is the RADIUS server address written into the script, and
	// ServerSource where it came from: query (the server parameter),
	// setting (radius_public_address), host (the request's Host) or none
	// (a placeholder to replace).
	Server          string `json:"server"`
	ServerSource    string `json:"server_source"`
	AuthPort        int    `json:"auth_port"`
	AcctPort        int    `json:"acct_port"`
	CoAPort         int    `json:"coa_port"`
	InterimInterval int    `json:"interim_interval"`
	// SecretPlaceholder is the text to replace with the NAS's secret.
	SecretPlaceholder string `json:"secret_placeholder"`
	Script            string `json:"script"`
	// Warnings: server_address_not_ip (RouterOS needs an IP address),
	// server_address_unknown (the script has a placeholder),
	// radius_public_address_invalid (the setting was ignored).
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
	AuthPort   int
	AcctPort   int
	CoAPort    int
	Interim    int // seconds
	RequireMA  bool
	Secret     string
}

// NASSetupScript renders the setup of one NAS of the caller's tenant. svc
// may be nil (no RADIUS server in this process: the default ports).
func NASSetupScript(ctx context.Context, svc *Service, act *app.Actor, id int64, in NASSetupInput) (*NASSetup, error) {
	vendor := strings.TrimSpace(in.Vendor)
	if vendor != "" && !validVendor(vendor) {
		return nil, app.ErrValidation("invalid_enum", "vendor").With("allowed", SetupVendors)
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
	out := &NASSetup{NASID: n.ID, Vendor: vendor, AuthPort: DefaultAuthPort, AcctPort: DefaultAcctPort,
		CoAPort: n.CoAPort, SecretPlaceholder: SecretPlaceholder, Warnings: []string{}}
	if w := svc.Wire(); w != nil {
		if w.AuthPort > 0 {
			out.AuthPort = w.AuthPort
		}
		if w.AcctPort > 0 {
			out.AcctPort = w.AcctPort
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
	if vendor == "mikrotik" && !isIP && out.ServerSource != "none" {
		out.Warnings = append(out.Warnings, "server_address_not_ip")
	}

	d := setupData{Name: commentSafe(n.Name), ClientName: identSafe(n.Name), NASIP: n.IP, Server: out.Server,
		ServerIsIP: isIP, AuthPort: out.AuthPort, AcctPort: out.AcctPort, CoAPort: out.CoAPort,
		Interim: out.InterimInterval, RequireMA: n.RequireMessageAuthenticator, Secret: SecretPlaceholder}
	if out.Script, err = renderSetup(vendor, d); err != nil {
		return nil, err
	}
	return out, nil
}

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
# "login" only matters with /user aaa use-radius=yes: leave that off, subscribers
# are not router administrators.
# Message-Authenticator (RFC 3579, BlastRADIUS CVE-2024-3596): RouterOS 7.15 and
# later sign Access-Requests and demand signed answers with the next line; older
# versions reject it (upgrade{{if .RequireMA}}, or set require_message_authenticator=false on
# this NAS in xr: xr drops its Access-Requests without one{{end}}).
set [find comment=xr] require-message-auth=yes-for-request-resp
# Disconnect and CoA from xr (RFC 5176) arrive on UDP {{.CoAPort}}.
/radius incoming
set accept=yes port={{.CoAPort}}
# PPP (PPPoE, L2TP, SSTP, ...): RADIUS authentication and accounting, interim
# updates every {{.Interim}} s.
/ppp aaa
set use-radius=yes accounting=yes interim-update={{ros .Interim}}
# Hotspot: every server profile uses RADIUS with the same interim interval.
/ip hotspot profile
set [find] use-radius=yes radius-accounting=yes radius-interim-update={{ros .Interim}}
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
aaa group server radius XR
 server name xr
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
