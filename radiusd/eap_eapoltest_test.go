package radiusd

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xr/internal/xrtest"
)

// Tests with wpa_supplicant's eapol_test (Debian package eapoltest): a
// real peer, written by no one here, signs in through the server by PEAP,
// TTLS and EAP-MSCHAPv2, and compares the MS-MPPE keys of the Accept with
// the keys it derived itself (a mismatch fails it).

// testPKI is a CA and a server certificate signed by it, on disk.
type testPKI struct {
	dir    string
	caPEM  string // path
	server tls.Certificate
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &testPKI{dir: dir, caPEM: filepath.Join(dir, "ca.pem"), ca: ca, caKey: caKey}
	writePEM(t, p.caPEM, "CERTIFICATE", der)
	// The EAP server certificate is RSA, as most deployments' are.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p.server = p.issue(t, key, &key.PublicKey, "radius.test", x509.ExtKeyUsageServerAuth)
	return p
}

// issue signs a leaf certificate for pub.
func (p *testPKI) issue(t testing.TB, key any, pub any, cn string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	sn, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: sn, Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn, "localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:   time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, pub, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// eapolTest runs one sign-in and returns its output and whether it
// reported SUCCESS.
func eapolTest(t *testing.T, bin, addr, network string) (string, bool) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	conf := filepath.Join(t.TempDir(), "eapol.conf")
	if err := os.WriteFile(conf, []byte("network={\n"+network+"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-c", conf, "-a", host, "-p", port, "-s", testSecret, "-r", "0", "-t", "15").CombinedOutput()
	return string(out), err == nil && strings.Contains(string(out), "\nSUCCESS")
}

func TestEAPWithEapolTest(t *testing.T) {
	t.Parallel()
	bin := xrtest.Tool(t, "eapol_test", "eapoltest")
	pki := newTestPKI(t)
	e := newEnv(t, NASTypeMikrotik, true, func(s *Server) {
		s.EAPTLS = &tls.Config{Certificates: []tls.Certificate{pki.server}}
	})
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland", SessionTimeout: 3600, RateDownKbps: 4096, RateUpKbps: 1024})
	ca := `ca_cert="` + pki.caPEM + `"`
	for _, tc := range []struct {
		name, network string
		ok            bool
	}{
		{"peap-mschapv2", `key_mgmt=WPA-EAP
eap=PEAP
identity="alice"
anonymous_identity="anonymous"
password="wonderland"
phase2="auth=MSCHAPV2"
` + ca, true},
		{"peap-mschapv2 wrong password", `key_mgmt=WPA-EAP
eap=PEAP
identity="alice"
password="nope"
phase2="auth=MSCHAPV2"
` + ca, false},
		{"ttls-pap", `key_mgmt=WPA-EAP
eap=TTLS
identity="alice"
anonymous_identity="anonymous"
password="wonderland"
phase2="auth=PAP"
` + ca, true},
		{"ttls-pap wrong password", `key_mgmt=WPA-EAP
eap=TTLS
identity="alice"
password="nope"
phase2="auth=PAP"
` + ca, false},
		{"ttls-mschapv2", `key_mgmt=WPA-EAP
eap=TTLS
identity="alice"
password="wonderland"
phase2="auth=MSCHAPV2"
` + ca, true},
		{"ttls-eap-mschapv2", `key_mgmt=WPA-EAP
eap=TTLS
identity="alice"
password="wonderland"
phase2="autheap=MSCHAPV2"
` + ca, true},
		{"eap-mschapv2", `key_mgmt=WPA-EAP
eap=MSCHAPV2
identity="alice"
password="wonderland"`, true},
		{"eap-mschapv2 wrong password", `key_mgmt=WPA-EAP
eap=MSCHAPV2
identity="alice"
password="nope"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := eapolTest(t, bin, e.authAddr, tc.network)
			if ok != tc.ok {
				t.Fatalf("success %v, want %v\n%s", ok, tc.ok, tail(out, 60))
			}
			// eapol_test compares the Accept's MS-MPPE keys with its own.
			if ok && !strings.Contains(out, "MPPE keys OK: 1  mismatch: 0") {
				t.Fatalf("keys not confirmed:\n%s", tail(out, 20))
			}
		})
	}
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
