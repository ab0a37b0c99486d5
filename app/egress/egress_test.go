package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"xr/app"
)

func TestValidateURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := lookup
	lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "internal.example":
			return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.1.2.3")}, nil
		case "meta.example":
			return []netip.Addr{netip.MustParseAddr("::ffff:169.254.169.254")}, nil
		case "public.example":
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return old(ctx, host)
	}
	t.Cleanup(func() { lookup = old })
	cases := []struct{ url, reason string }{
		{"https://public.example/hook", ""},
		{"http://93.184.216.34:8080/x?y=1", ""},
		{"https://unresolvable.invalid/hook", ""}, // checked again at connect time
		{"", "url_required"},
		{"ftp://public.example/", "url_scheme_not_allowed"},
		{"javascript:alert(1)", "url_scheme_not_allowed"},
		{"https://user:pw@public.example/", "url_credentials_not_allowed"},
		{"https://user@public.example/", "url_credentials_not_allowed"},
		{"https:///path", "url_host_required"},
		{"https://public.example:99999/", "invalid_url"},
		{"http://127.0.0.1/", "url_address_not_allowed"},
		{"http://127.9.9.9:8080/", "url_address_not_allowed"},
		{"http://[::1]/", "url_address_not_allowed"},
		{"http://[::ffff:127.0.0.1]/", "url_address_not_allowed"},
		{"http://169.254.169.254/latest/meta-data", "url_address_not_allowed"},
		{"http://[fe80::1%25eth0]/", "url_address_not_allowed"},
		{"http://10.0.0.1/", "url_address_not_allowed"},
		{"http://172.16.5.4/", "url_address_not_allowed"},
		{"http://192.168.1.1/", "url_address_not_allowed"},
		{"http://[fd00::1]/", "url_address_not_allowed"},
		{"http://100.64.0.1/", "url_address_not_allowed"},
		{"http://0.0.0.0/", "url_address_not_allowed"},
		{"http://[::]/", "url_address_not_allowed"},
		{"http://224.0.0.1/", "url_address_not_allowed"},
		{"http://[64:ff9b::7f00:1]/", "url_address_not_allowed"},
		{"http://[2002:c0a8:0101::1]/", "url_address_not_allowed"},
		{"http://localhost:8080/", "url_address_not_allowed"},
		{"http://api.localhost/", "url_address_not_allowed"},
		{"http://internal.example/", "url_address_not_allowed"},
		{"http://meta.example/", "url_address_not_allowed"},
		{"http://2130706433/", "url_host_invalid"},
		{"http://0x7f.1/", "url_host_invalid"},
		{"http://127.1/", "url_host_invalid"},
	}
	for _, c := range cases {
		_, err := ValidateURL(ctx, c.url, false)
		got := ""
		if e := app.AsError(err); e != nil {
			got = e.Reason
			if e.Field != "url" {
				t.Errorf("%s: field %q", c.url, e.Field)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if got != c.reason {
			t.Errorf("%s: reason %q, want %q", c.url, got, c.reason)
		}
	}
	// The egress flag lets private addresses through, never bad shapes.
	if _, err := ValidateURL(ctx, "http://127.0.0.1:9/", true); err != nil {
		t.Fatal(err)
	}
	if _, err := ValidateURL(ctx, "http://u:p@127.0.0.1:9/", true); err == nil {
		t.Fatal("credentials accepted with the egress flag")
	}
}

// One guard, two policies: Public lets only public addresses through;
// Device lets the private, CGNAT and documentation space where routers
// live through too, never loopback, link-local (169.254.169.254),
// 240.0.0.0/4 or the host's own addresses unless the operator allowed
// private egress, and never unspecified or multicast.
func TestGuardPolicies(t *testing.T) {
	t.Parallel()
	var own netip.Addr
	ifas, _ := net.InterfaceAddrs()
	for _, a := range ifas {
		if p, err := netip.ParsePrefix(a.String()); err == nil && Class(p.Addr()) != "loopback" && Class(p.Addr()) != "link_local" {
			own = p.Addr()
		}
	}
	for _, c := range []struct {
		ip                                           string
		public, device, publicAllowed, deviceAllowed string
	}{
		{"93.184.216.34", "", "", "", ""},
		{"10.1.2.3", "private", "", "", ""},
		{"100.64.0.9", "cgnat", "", "", ""},
		{"127.0.0.1", "loopback", "loopback", "", ""},
		{"::1", "loopback", "loopback", "", ""},
		{"169.254.169.254", "link_local", "link_local", "", ""},
		{"::ffff:169.254.169.254", "link_local", "link_local", "", ""},
		{"192.0.2.10", "reserved", "", "", ""},
		{"255.255.255.255", "reserved", "reserved", "", ""},
		{"0.0.0.0", "unspecified", "unspecified", "", "unspecified"},
		{"224.0.0.1", "multicast", "multicast", "", "multicast"},
	} {
		ip := netip.MustParseAddr(c.ip)
		for _, g := range []struct {
			g    Guard
			want string
		}{{Guard{Public, false}, c.public}, {Guard{Device, false}, c.device}, {Guard{Public, true}, c.publicAllowed}, {Guard{Device, true}, c.deviceAllowed}} {
			if got := g.g.Refusal(ip); got != g.want {
				t.Errorf("%s %+v: %q, want %q", c.ip, g.g, got, g.want)
			}
		}
	}
	if own.IsValid() {
		want := Class(own)
		if want == "" || want == "private" || want == "cgnat" || want == "reserved" {
			want = "self"
		}
		if got := (Guard{Device, false}).Refusal(own); got != want {
			t.Errorf("this host's %s: %q, want %q", own, got, want)
		}
		if got := (Guard{Device, true}).Refusal(own); got != "" {
			t.Errorf("this host's %s with private egress: %q", own, got)
		}
	}
	// At connect time: the dialer refuses before a packet is sent.
	_, err := Guard{Device, false}.Dialer(0).DialContext(context.Background(), "tcp", "127.0.0.1:9")
	var re *RefusedError
	if !errors.As(err, &re) || re.Class != "loopback" {
		t.Fatalf("%v", err)
	}
}
