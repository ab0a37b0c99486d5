package aaa_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"xr/app/aaa"
)

// TestNASSetupStandby: with a standby configured every script lists it as
// the NAS's second RADIUS server; without one none mentions a standby.
func TestNASSetupStandby(t *testing.T) {
	t.Parallel()
	r := newCertRig(t)
	ctx := context.Background()
	r.svc.SetWire(&aaa.WireStatus{AuthPort: 1812, AcctPort: 1813, RadSecPort: 2083})
	if err := r.svc.SetStandbyAddress("not an address!"); err == nil {
		t.Fatal("a bad standby address was taken")
	}
	for _, c := range []struct {
		standby, vendor, transport string
		want                       []string
		warn                       string
	}{
		{"", "mikrotik", "udp", nil, ""},
		{"", "cisco", "udp", nil, ""},
		{"198.51.100.7", "mikrotik", "udp", []string{"address=198.51.100.7 secret=", "comment=xr-standby", "set [find comment=xr-standby] require-message-auth"}, ""},
		{"198.51.100.7", "cisco", "udp", []string{"radius server xr-standby\n address ipv4 198.51.100.7 auth-port 1812 acct-port 1813", " server name xr-standby", " client 198.51.100.7 server-key"}, ""},
		{"198.51.100.7", "generic", "udp", []string{"standby                198.51.100.7"}, ""},
		{"standby.isp.example", "mikrotik", "udp", []string{"address=standby.isp.example", "standby.isp.example is not an IP address"}, "standby_address_not_ip"},
		{"198.51.100.7", "mikrotik", "radsec", []string{"address=198.51.100.7 protocol=radsec", "comment=xr-standby"}, ""},
		{"198.51.100.7", "generic", "radsec", []string{"server 198.51.100.7 {", "\tserver 198.51.100.7\n\taccountingServer 198.51.100.7"}, ""},
	} {
		t.Run(c.vendor+"/"+c.transport+"/"+c.standby, func(t *testing.T) {
			if err := r.svc.SetStandbyAddress(c.standby); err != nil {
				t.Fatal(err)
			}
			s, err := aaa.NASSetupScript(ctx, r.svc, r.act, r.nasID, aaa.NASSetupInput{Vendor: c.vendor, Transport: c.transport, Server: "203.0.113.5"})
			if err != nil {
				t.Fatal(err)
			}
			if s.Standby != c.standby {
				t.Fatalf("standby %q", s.Standby)
			}
			if c.standby == "" && strings.Contains(s.Script, "standby") {
				t.Fatalf("a standby in a setup without one:\n%s", s.Script)
			}
			for _, w := range c.want {
				if !strings.Contains(s.Script, w) {
					t.Errorf("no %q in:\n%s", w, s.Script)
				}
			}
			if got := slices.Contains(s.Warnings, "standby_address_not_ip"); got != (c.warn != "") {
				t.Errorf("warnings %v", s.Warnings)
			}
		})
	}
}
