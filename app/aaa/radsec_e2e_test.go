package aaa_test

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2869"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/xrtest"
	"xr/radiusd"
)

// The RADIUS server of a real instance (subscribers, plans, the policy,
// the auth log) with EAP and RadSec on, driven by clients no one here
// wrote: eapol_test, and radsecproxy carrying radclient's requests with
// the certificate the instance issued.

// newTLSRig serves UDP (the NAS "lo" on 127.0.0.1), EAP with the
// instance's EAP certificate, and RadSec with its RadSec certificate.
func newTLSRig(t *testing.T) (*rig, string) {
	t.Helper()
	var radsecAddr string
	r := newRigWith(t, func(r *rig, s *radiusd.Server) net.Listener {
		ctx := context.Background()
		eapCert, err := aaa.ServerCertificate(ctx, r.a, aaa.PurposeEAP, []string{"radius.test"})
		if err != nil {
			t.Fatal(err)
		}
		rsCert, err := aaa.ServerCertificate(ctx, r.a, aaa.PurposeRadSec, []string{"127.0.0.1", "localhost"})
		if err != nil {
			t.Fatal(err)
		}
		pool, err := aaa.CAPool(ctx, r.a)
		if err != nil {
			t.Fatal(err)
		}
		s.EAPTLS = &tls.Config{Certificates: []tls.Certificate{eapCert}}
		s.RadSec = &radiusd.RadSecConfig{TLS: &tls.Config{Certificates: []tls.Certificate{rsCert}, ClientCAs: pool},
			Directory: s.Directory.(radiusd.RadSecDirectory)}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		radsecAddr = ln.Addr().String()
		return ln
	})
	return r, radsecAddr
}

// authLog reads the tenant's auth log, newest first.
func (r *rig) authLog(t *testing.T) []aaa.AuthLogEntry {
	t.Helper()
	if err := r.svc.FlushAuthLog(context.Background()); err != nil {
		t.Fatal(err)
	}
	lq, err := app.ParseList(map[string][]string{"page_size": {"50"}, "sort": {"id"}, "order": {"desc"}}, aaa.AuthLogListSpec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := aaa.ListAuthLog(context.Background(), xrtest.System(t, r.ten), lq)
	if err != nil {
		t.Fatal(err)
	}
	return p.Rows
}

func TestEAPThroughTheInstance(t *testing.T) {
	t.Parallel()
	bin := xrtest.Tool(t, "eapol_test", "eapoltest")
	r, _ := newTLSRig(t)
	r.user("alice", "wonderland", r.planID, nil)
	r.user("bob", "builder", r.planID, map[string]any{"enabled": 0})
	ca, err := aaa.CACertificatePEM(context.Background(), r.a)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ca.pem"), []byte(ca), 0o600)
	host, port, _ := net.SplitHostPort(r.auth)
	for _, tc := range []struct {
		name, eap, phase2, user, pass string
		ok                            bool
		method, reason                string
	}{
		{"peap", "PEAP", "auth=MSCHAPV2", "alice", "wonderland", true, "eap-peap/mschapv2", ""},
		{"peap wrong password", "PEAP", "auth=MSCHAPV2", "alice", "nope", false, "eap-peap/mschapv2", "bad_password"},
		// The same policy as PAP: a disabled subscriber with the right
		// password is refused as disabled.
		{"peap disabled", "PEAP", "auth=MSCHAPV2", "bob", "builder", false, "eap-peap/mschapv2", "disabled"},
		{"ttls-pap", "TTLS", "auth=PAP", "alice", "wonderland", true, "eap-ttls/pap", ""},
		{"ttls-pap unknown", "TTLS", "auth=PAP", "carol", "x", false, "eap-ttls/pap", "unknown_user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "eapol.conf")
			os.WriteFile(conf, []byte(fmt.Sprintf("network={\n key_mgmt=WPA-EAP\n eap=%s\n identity=%q\n anonymous_identity=\"anonymous\"\n password=%q\n phase2=%q\n ca_cert=%q\n}\n",
				tc.eap, tc.user, tc.pass, tc.phase2, filepath.Join(dir, "ca.pem"))), 0o600)
			out, err := exec.Command(bin, "-c", conf, "-a", host, "-p", port, "-s", secret, "-r", "0", "-t", "15").CombinedOutput()
			ok := err == nil && strings.Contains(string(out), "\nSUCCESS")
			if ok != tc.ok {
				t.Fatalf("success %v, want %v:\n%s", ok, tc.ok, lastLines(string(out), 40))
			}
			if tc.ok && !strings.Contains(string(out), "MPPE keys OK: 1") {
				t.Fatalf("MPPE keys not confirmed:\n%s", lastLines(string(out), 20))
			}
			log := r.awaitAuthLog(t)
			e := log[0]
			wantResult := "accept"
			if !tc.ok {
				wantResult = "reject"
			}
			if e.Username != tc.user || e.Method != tc.method || e.Result != wantResult || e.Reason != tc.reason {
				t.Fatalf("auth log %+v, want %s %s %s %q", e, tc.user, tc.method, wantResult, tc.reason)
			}
		})
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// radsecNAS adds a NAS that only RadSec reaches and issues and downloads
// its certificate into dir (client.pem, client.key, ca.pem).
func radsecNAS(t *testing.T, r *rig, dir string) (int64, aaa.RadSecBundle) {
	t.Helper()
	ctx := context.Background()
	act := xrtest.System(t, r.ten)
	n, err := aaa.CreateNAS(ctx, act, aaa.NASInput{Name: app.Opt[string]{Set: true, V: "tower"}, IP: app.Opt[string]{Set: true, V: "198.51.100.7"},
		Secret: app.Opt[string]{Set: true, V: "unused-udp-secret"}, Type: app.Opt[aaa.NASType]{Set: true, V: "mikrotik"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := aaa.IssueRadSecCert(ctx, act, n.ID); err != nil {
		t.Fatal(err)
	}
	b, err := aaa.DownloadRadSecCert(ctx, act, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"client.pem": b.ClientPEM, "client.key": b.ClientKey, "ca.pem": b.CAPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return n.ID, *b
}

func TestRadSecThroughTheInstance(t *testing.T) {
	t.Parallel()
	r, addr := newTLSRig(t)
	r.user("alice", "wonderland", r.planID, nil)
	dir := t.TempDir()
	nasID, b := radsecNAS(t, r, dir)
	pair, err := tls.X509KeyPair([]byte(b.ClientPEM), []byte(b.ClientKey))
	if err != nil {
		t.Fatal(err)
	}
	pool, _ := aaa.CAPool(context.Background(), r.a)
	dial := func() *tls.Conn {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "localhost", Certificates: []tls.Certificate{pair}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c := dial()
	resp := radsecExchange(t, c, "alice", "wonderland")
	if resp == nil || radius.Code(resp[0]) != radius.CodeAccessAccept {
		t.Fatalf("answer % x", resp)
	}
	if e := r.awaitAuthLog(t); e[0].NASID == nil || *e[0].NASID != nasID || e[0].Method != "pap" || e[0].Result != "accept" {
		t.Fatalf("auth log %+v", e)
	}
	// Revoked: the open connection ends at its next packet, a new one is
	// refused in the handshake.
	if _, err := aaa.RevokeRadSecCert(context.Background(), xrtest.System(t, r.ten), nasID); err != nil {
		t.Fatal(err)
	}
	if resp := radsecExchange(t, c, "alice", "wonderland"); resp != nil {
		t.Fatal("answered on a revoked certificate's connection")
	}
	c2, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "localhost", Certificates: []tls.Certificate{pair}})
	if err == nil {
		defer c2.Close()
		if resp := radsecExchange(t, c2, "alice", "wonderland"); resp != nil {
			t.Fatal("a revoked certificate was served")
		}
	}
}

// radsecExchange sends a PAP request over a RadSec connection and reads
// the answer (nil when none comes).
func radsecExchange(t *testing.T, c net.Conn, user, pass string) []byte {
	t.Helper()
	p := radius.New(radius.CodeAccessRequest, []byte(radiusd.RadSecSecret))
	rfc2865.UserName_SetString(p, user)
	rfc2865.UserPassword_SetString(p, pass)
	rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
	b, _ := p.Encode()
	h := hmac.New(md5.New, []byte(radiusd.RadSecSecret))
	h.Write(b)
	rfc2869.MessageAuthenticator_Set(p, h.Sum(nil))
	b, _ = p.Encode()
	if _, err := c.Write(b); err != nil {
		return nil
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil
	}
	out := make([]byte, binary.BigEndian.Uint16(hdr[2:]))
	copy(out, hdr[:])
	if _, err := io.ReadFull(c, out[4:]); err != nil {
		return nil
	}
	return out
}

// startRadsecproxy runs Debian's radsecproxy: UDP on loopback (secret
// proxy-secret-123) to the server's RadSec address, with the files in dir
// (client.pem, client.key, ca.pem); it answers its UDP address.
func startRadsecproxy(t *testing.T, proxy, radsecAddr, dir string) string {
	t.Helper()
	pc, _ := net.ListenPacket("udp", "127.0.0.1:0")
	udp := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	host, port, _ := net.SplitHostPort(radsecAddr)
	conf := filepath.Join(dir, "radsecproxy.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(`ListenUDP 127.0.0.1:%d
LogLevel 3
LogDestination file:///%s/proxy.log
tls xr {
	CACertificateFile %[2]s/ca.pem
	CertificateFile %[2]s/client.pem
	CertificateKeyFile %[2]s/client.key
}
client 127.0.0.1 {
	type udp
	secret proxy-secret-123
}
server %[3]s {
	type tls
	port %[4]s
	tls xr
	secret radsec
	StatusServer on
}
realm * {
	server %[3]s
	accountingServer %[3]s
}
`, udp, dir, host, port)), 0o600)
	cmd := exec.Command(proxy, "-f", "-c", conf, "-i", filepath.Join(dir, "pid"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return fmt.Sprintf("127.0.0.1:%d", udp)
}

// newProxyRig is a TLS rig with subscriber alice (password wonderland), a
// RadSec NAS, and radsecproxy in front of it with that NAS's files in dir:
// the rig, the NAS, radsecproxy's UDP address and dir.
func newProxyRig(t *testing.T, proxy string) (*rig, int64, string, string) {
	t.Helper()
	r, addr := newTLSRig(t)
	r.user("alice", "wonderland", r.planID, nil)
	dir := t.TempDir()
	nasID, _ := radsecNAS(t, r, dir)
	return r, nasID, startRadsecproxy(t, proxy, addr, dir), dir
}

func TestRadSecProxyThroughTheInstance(t *testing.T) {
	t.Parallel()
	proxy := xrtest.Tool(t, "radsecproxy", "radsecproxy")
	radclient := xrtest.Tool(t, "radclient", "freeradius-utils")
	r, nasID, udp, dir := newProxyRig(t, proxy)
	run := func(input, kind string) string {
		c := exec.Command(radclient, "-x", "-r", "3", "-t", "3", udp, kind, "proxy-secret-123")
		c.Stdin = strings.NewReader(input)
		out, _ := c.CombinedOutput() // radclient exits 1 on Access-Reject
		return string(out)
	}
	for _, tc := range []struct{ name, input, kind, want string }{
		{"pap", "User-Name = alice, User-Password = wonderland, Message-Authenticator = 0x00", "auth", "Received Access-Accept"},
		{"pap wrong", "User-Name = alice, User-Password = nope, Message-Authenticator = 0x00", "auth", "Received Access-Reject"},
		{"acct", "Acct-Status-Type = Start, Acct-Session-Id = rp-1, User-Name = alice, Framed-IP-Address = 10.9.0.7", "acct", "Received Accounting-Response"},
	} {
		if out := run(tc.input, tc.kind); !strings.Contains(out, tc.want) {
			log, _ := os.ReadFile(filepath.Join(dir, "proxy.log"))
			t.Fatalf("%s: %q not in radclient output:\n%s\nradsecproxy log:\n%s", tc.name, tc.want, out, lastLines(string(log), 30))
		}
	}
	// The session is the RadSec NAS's, whatever address radsecproxy used.
	if n := xrtest.Scalar(t, r.ten, `SELECT COUNT(*) FROM radius_sessions WHERE acct_session_id = 'rp-1' AND nas_id = ?`, nasID); n != 1 {
		t.Fatalf("%d sessions rp-1 of the RadSec NAS", n)
	}
}

// TestEAPThroughRadSecProxy: a Wi-Fi sign-in (eapol_test, PEAP) behind
// radsecproxy, which carries it over RadSec with the NAS's certificate
// and re-encrypts the MS-MPPE keys for its UDP client.
func TestEAPThroughRadSecProxy(t *testing.T) {
	t.Parallel()
	proxy := xrtest.Tool(t, "radsecproxy", "radsecproxy")
	bin := xrtest.Tool(t, "eapol_test", "eapoltest")
	r, nasID, udp, dir := newProxyRig(t, proxy)
	host, port, _ := net.SplitHostPort(udp)
	conf := filepath.Join(dir, "eapol.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("network={\n key_mgmt=WPA-EAP\n eap=PEAP\n identity=\"alice\"\n anonymous_identity=\"anonymous\"\n password=\"wonderland\"\n phase2=\"auth=MSCHAPV2\"\n ca_cert=%q\n}\n",
		filepath.Join(dir, "ca.pem"))), 0o600)
	out, err := exec.Command(bin, "-c", conf, "-a", host, "-p", port, "-s", "proxy-secret-123", "-r", "0", "-t", "20").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\nSUCCESS") || !strings.Contains(string(out), "MPPE keys OK: 1") {
		log, _ := os.ReadFile(filepath.Join(dir, "proxy.log"))
		t.Fatalf("eapol_test through radsecproxy: %v\n%s\nradsecproxy log:\n%s", err, lastLines(string(out), 30), lastLines(string(log), 20))
	}
	if e := r.awaitAuthLog(t); e[0].Method != "eap-peap/mschapv2" || e[0].NASID == nil || *e[0].NASID != nasID || e[0].Username != "alice" {
		t.Fatalf("auth log %+v", e)
	}
}

// awaitAuthLog is the auth log once it has an entry: the log is written
// after the answer is sent.
func (r *rig) awaitAuthLog(t *testing.T) []aaa.AuthLogEntry {
	t.Helper()
	var log []aaa.AuthLogEntry
	xrtest.Eventually(t, "an auth log entry", func() bool {
		log = r.authLog(t)
		return len(log) > 0
	})
	return log
}
