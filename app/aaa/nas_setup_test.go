package aaa

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenSetup is the NAS every golden file describes.
var goldenSetup = setupData{Name: "core-1", ClientName: "core-1", NASIP: "192.0.2.10", Server: "203.0.113.5", ServerIsIP: true,
	AuthPort: 1812, AcctPort: 1813, CoAPort: 3799, Interim: 300, RequireMA: true, Secret: SecretPlaceholder,
	Tenant: "acme", RadSecPort: 2083}

// TestNASSetupGolden: each vendor's script is exactly its golden file
// (go test ./app/aaa -run TestNASSetupGolden -update rewrites them).
func TestNASSetupGolden(t *testing.T) {
	t.Parallel()
	for vendor, file := range map[string]string{
		"mikrotik": "nas_setup_mikrotik.rsc",
		"cisco":    "nas_setup_cisco.txt",
		"generic":  "nas_setup_generic.txt",
		// RadSec (RFC 6614): the NAS's client certificate, TCP 2083.
		"mikrotik-radsec": "nas_setup_mikrotik_radsec.rsc",
		"generic-radsec":  "nas_setup_generic_radsec.txt",
	} {
		t.Run(vendor, func(t *testing.T) {
			got, err := renderSetup(vendor, goldenSetup)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", file)
			if *updateGolden {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("%s differs from %s (run with -update after checking):\n%s", vendor, path, got)
			}
			for _, must := range map[string][]string{
				"mikrotik": {"/radius\nadd service=ppp,hotspot,login address=203.0.113.5 secret=\"<NAS-SECRET>\" authentication-port=1812 accounting-port=1813 timeout=3s",
					"/radius incoming\nset accept=yes port=3799", "/ppp aaa\nset use-radius=yes accounting=yes interim-update=5m",
					"/ip hotspot profile\nset [find] use-radius=yes", "require-message-auth=yes-for-request-resp", "# Message-Authenticator"},
				"cisco": {"aaa new-model", "radius server xr\n address ipv4 203.0.113.5 auth-port 1812 acct-port 1813\n key <NAS-SECRET>",
					"aaa authentication ppp default group XR", "aaa accounting network default start-stop group XR",
					"aaa accounting update periodic 5", "aaa server radius dynamic-author\n client 203.0.113.5 server-key <NAS-SECRET>\n port 3799"},
				"generic": {"client core-1 {\n\tipaddr = 192.0.2.10\n\tsecret = <NAS-SECRET>\n\trequire_message_authenticator = yes",
					"address                203.0.113.5", "UDP 1812", "UDP 1813", "every 300 s", "UDP 3799 on 192.0.2.10"},
				"mikrotik-radsec": {"xr nas radsec-cert --tenant acme --name \"core-1\" --out ./core-1",
					"/certificate import file-name=client.pem passphrase=\"\" name=xr-core-1",
					"add service=ppp,hotspot,wireless,dot1x address=203.0.113.5 protocol=radsec certificate=xr-core-1 secret=radsec authentication-port=2083 accounting-port=2083",
					"/radius incoming\nset accept=yes", "interim-update=5m"},
				"generic-radsec": {"TCP 2083", "secret          radsec", "server 203.0.113.5 {\n\ttype tls\n\tport 2083\n\ttls xr\n\tsecret radsec",
					"xr nas radsec-cert --tenant acme --name \"core-1\""},
			}[vendor] {
				if !strings.Contains(got, must) {
					t.Errorf("%s script lacks %q", vendor, must)
				}
			}
		})
	}
}

func TestNASSetupHelpers(t *testing.T) {
	t.Parallel()
	for in, want := range map[int]string{300: "5m", 90: "1m30s", 3600: "1h", 3725: "1h2m5s", 45: "45s"} {
		if got := routerOSDuration(in); got != want {
			t.Errorf("routerOSDuration(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int]int{300: 5, 30: 1, 61: 2} {
		if got := ciscoMinutes(in); got != want {
			t.Errorf("ciscoMinutes(%d) = %d, want %d", in, got, want)
		}
	}
	for in, want := range map[string]string{"203.0.113.5": "203.0.113.5", "[2001:db8::1]": "2001:db8::1", "::ffff:192.0.2.1": "192.0.2.1",
		"Radius.Example.NET.": "radius.example.net"} {
		if got, _, ok := parseServerAddress(in); !ok || got != want {
			t.Errorf("parseServerAddress(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "0.0.0.0", "a b", "x\ny", "host:1812", "-bad.example", "fe80::1%eth0", `a"b`, strings.Repeat("a", 64) + ".com"} {
		if _, _, ok := parseServerAddress(bad); ok {
			t.Errorf("parseServerAddress(%q) accepted", bad)
		}
	}
	if got := commentSafe("edge \"1\"\n$x\\"); strings.ContainsAny(got, "\"\n$\\") {
		t.Errorf("commentSafe kept an unsafe character: %q", got)
	}
	if got := identSafe("Main tower #2"); got != "Main-tower--2" {
		t.Errorf("identSafe = %q", got)
	}
}
