package cli

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	rad "layeh.com/radius"
	"layeh.com/radius/rfc2869"

	"xr/internal/xrtest"
	"xr/radiusd"
)

func TestNASRadSecCert(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	mustOK(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--name", "tower-1", "--ip", "10.0.0.1", "--secret", "a-much-longer-random-secret"))

	out := filepath.Join(t.TempDir(), "tower-1")
	r := mustOK(t, runXR(t, dir, "nas", "radsec-cert", "--tenant", "acme", "--name", "tower-1", "--out", out, "--json"))
	c, _ := r.json(t)["certificate"].(map[string]any)
	if c["state"] != "active" || c["nas_id"] != float64(1) || len(c["fingerprint_sha256"].(string)) != 64 {
		t.Fatalf("certificate %v", c)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(out, "client.pem"), filepath.Join(out, "client.key"))
	if err != nil {
		t.Fatalf("written key pair: %v", err)
	}
	caPEM, _ := os.ReadFile(filepath.Join(out, "ca.pem"))
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.pem")
	}
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(out, "client.key")); st.Mode().Perm() != 0o600 {
		t.Fatalf("client.key mode %v", st.Mode())
	}
	key, _ := os.ReadFile(filepath.Join(out, "client.key"))

	// A second certificate needs --reissue; nothing is written, the files
	// already there are left as they are.
	other := filepath.Join(t.TempDir(), "again")
	mustFail(t, runXR(t, dir, "nas", "radsec-cert", "--tenant", "acme", "--name", "tower-1", "--out", other), "radsec_cert_exists")
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Fatalf("a refusal left files: %v", entries)
	}
	mustFail(t, runXR(t, dir, "nas", "radsec-cert", "--tenant", "acme", "--name", "tower-1", "--out", out, "--reissue"), "file_exists")
	if k, _ := os.ReadFile(filepath.Join(out, "client.key")); string(k) != string(key) {
		t.Fatal("an existing key file was overwritten")
	}
	mustFail(t, runXR(t, dir, "nas", "radsec-cert", "--tenant", "acme", "--name", "ghost", "--out", other), "nas_not_found")
	mustFail(t, runXR(t, dir, "nas", "radsec-cert", "--tenant", "acme", "--name", "tower-1"), "out_required")

	re := mustOK(t, runXR(t, dir, "nas", "radsec-cert", "--tenant", "acme", "--name", "tower-1", "--out", other, "--reissue", "--json"))
	c2, _ := re.json(t)["certificate"].(map[string]any)
	if c2["fingerprint_sha256"] == c["fingerprint_sha256"] {
		t.Fatal("re-issue kept the certificate")
	}
	rv := mustOK(t, runXR(t, dir, "nas", "radsec-cert", "--tenant", "acme", "--name", "tower-1", "--revoke", "--json")).json(t)
	if rv["state"] != "revoked" || rv["fingerprint_sha256"] != c2["fingerprint_sha256"] {
		t.Fatalf("revoke %v", rv)
	}
	mustFail(t, runXR(t, dir, "nas", "radsec-cert", "--tenant", "acme", "--name", "tower-1", "--revoke"), "radsec_cert_none")
}

// TestServeRadSec: `xr serve --radsec` answers a NAS presenting the
// certificate `xr nas radsec-cert` wrote, and refuses it once revoked.
func TestServeRadSec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	mustOK(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--name", "tower-1", "--ip", "10.0.0.1", "--secret", "a-much-longer-random-secret"))
	files := filepath.Join(t.TempDir(), "tower-1")
	mustOK(t, runXR(t, dir, "nas", "radsec-cert", "--tenant", "acme", "--name", "tower-1", "--out", files))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	g := &globals{data: dir, out: io.Discard, errOut: io.Discard, logLevel: "error"}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- runServe(ctx, g, serveOpts{http: "127.0.0.1:0", domain: "xr.test", radiusAuth: "127.0.0.1:0", radiusAcct: "127.0.0.1:0",
			radiusTLS: radiusTLSOpts{radsec: addr, names: []string{"127.0.0.1"}}}, func(httpAddr, _ string) { ready <- httpAddr })
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	})
	pair, err := tls.LoadX509KeyPair(filepath.Join(files, "client.pem"), filepath.Join(files, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(filepath.Join(files, "ca.pem"))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	status := func() []byte {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{pair}})
		if err != nil {
			return nil
		}
		defer c.Close()
		p := rad.New(rad.CodeStatusServer, []byte(radiusd.RadSecSecret))
		rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
		b, _ := p.Encode()
		m := hmac.New(md5.New, []byte(radiusd.RadSecSecret))
		m.Write(b)
		copy(b[len(b)-16:], m.Sum(nil))
		c.Write(b)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return nil
		}
		resp := make([]byte, binary.BigEndian.Uint16(hdr[2:]))
		copy(resp, hdr[:])
		if _, err := io.ReadFull(c, resp[4:]); err != nil {
			return nil
		}
		return resp
	}
	if resp := status(); resp == nil || rad.Code(resp[0]) != rad.CodeAccessAccept {
		t.Fatalf("Status-Server over RadSec answered % x", resp)
	}
	// Revoked by another process: the running server sees it (registry
	// generation) and refuses the certificate.
	mustOK(t, runXR(t, dir, "nas", "radsec-cert", "--tenant", "acme", "--name", "tower-1", "--revoke"))
	xrtest.Eventually(t, "the running server refuses the revoked certificate", func() bool { return status() == nil })
}
