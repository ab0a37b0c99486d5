package aaa_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/hex"
	"encoding/pem"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/xrtest"
)

// certRig is a tenant with one NAS and the RADIUS directory.
type certRig struct {
	a     *app.App
	ten   *app.Tenant
	act   *app.Actor
	svc   *aaa.Service
	nasID int64
}

func newCertRig(t *testing.T) *certRig {
	t.Helper()
	a := xrtest.App(t, aaa.Module)
	xrtest.CreateTenant(t, a, app.NewTenant{Slug: "isp"})
	ten := xrtest.Acquire(t, a, "isp")
	r := &certRig{a: a, ten: ten, act: xrtest.System(t, ten)}
	r.svc = aaa.New(a)
	t.Cleanup(r.svc.Close)
	n, err := aaa.CreateNAS(context.Background(), r.act, aaa.NASInput{Name: app.Opt[string]{Set: true, V: "tower-1"},
		IP: app.Opt[string]{Set: true, V: "192.0.2.10"}, Secret: app.Opt[string]{Set: true, V: "a-long-shared-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	r.nasID = n.ID
	return r
}

// bound reports the NAS the directory binds a certificate to.
func (r *certRig) bound(fp string) (*aaa.NAS, bool) {
	b, _ := hex.DecodeString(fp)
	var k [32]byte
	copy(k[:], b)
	return r.svc.LookupRadSec(k)
}

func (r *certRig) certRows(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := r.a.Inst.R.QueryRow(`SELECT COUNT(*) FROM radsec_certs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRadSecCertLifecycle(t *testing.T) {
	t.Parallel()
	r := newCertRig(t)
	ctx := context.Background()
	_, err := aaa.GetRadSecCert(ctx, r.act, r.nasID)
	xrtest.WantReason(t, err, 404, "radsec_cert_none")

	c, err := aaa.IssueRadSecCert(ctx, r.act, r.nasID)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != aaa.CertAwaitingDownload || c.NASID != r.nasID || len(c.Fingerprint) != 64 || !strings.Contains(c.Subject, "tower-1") {
		t.Fatalf("issued %+v", c)
	}
	if n, ok := r.bound(c.Fingerprint); !ok || n.ID != r.nasID || n.TenantSlug != "isp" {
		t.Fatalf("directory binds %v %v", n, ok)
	}
	// A second issue is refused: re-issue replaces.
	_, err = aaa.IssueRadSecCert(ctx, r.act, r.nasID)
	xrtest.WantReason(t, err, 409, "radsec_cert_exists")
	if n := r.certRows(t); n != 1 {
		t.Fatalf("%d certificate rows after a refused issue", n)
	}
	var sealed []byte
	if err := r.a.Inst.R.QueryRow(`SELECT key_sealed FROM radsec_certs`).Scan(&sealed); err != nil || strings.Contains(string(sealed), "PRIVATE KEY") || len(sealed) == 0 {
		t.Fatalf("key stored %q %v", sealed, err)
	}

	// The one download: a key pair that matches, chaining to the CA, for
	// client authentication.
	b, err := aaa.DownloadRadSecCert(ctx, r.act, r.nasID)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair([]byte(b.ClientPEM), []byte(b.ClientKey))
	if err != nil {
		t.Fatalf("bundle key pair: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(b.CAPEM)) {
		t.Fatal("ca.pem holds no certificate")
	}
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client certificate does not chain to the CA: %v", err)
	}
	if sum := sha256.Sum256(pair.Leaf.Raw); hex.EncodeToString(sum[:]) != c.Fingerprint {
		t.Fatal("downloaded certificate is not the issued one")
	}
	if b.Certificate.State != aaa.CertActive || b.Certificate.DownloadedAt.IsZero() {
		t.Fatalf("after download %+v", b.Certificate)
	}
	_, err = aaa.DownloadRadSecCert(ctx, r.act, r.nasID)
	xrtest.WantReason(t, err, 409, "radsec_key_downloaded")
	if err := r.a.Inst.R.QueryRow(`SELECT key_sealed FROM radsec_certs`).Scan(&sealed); err != nil || sealed != nil {
		t.Fatalf("key kept after download: %v %v", sealed, err)
	}

	// Re-issue: the old certificate is revoked and unbound at once.
	c2, err := aaa.ReissueRadSecCert(ctx, r.act, r.nasID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.bound(c.Fingerprint); ok {
		t.Fatal("re-issued certificate's predecessor still bound")
	}
	if _, ok := r.bound(c2.Fingerprint); !ok || c2.Fingerprint == c.Fingerprint {
		t.Fatal("new certificate not bound")
	}

	// Revoke: unbound; a second revoke finds nothing current.
	rv, err := aaa.RevokeRadSecCert(ctx, r.act, r.nasID)
	if err != nil || rv.State != aaa.CertRevoked || rv.Fingerprint != c2.Fingerprint || rv.RevokedAt.IsZero() {
		t.Fatalf("revoke %+v %v", rv, err)
	}
	if _, ok := r.bound(c2.Fingerprint); ok {
		t.Fatal("revoked certificate still bound")
	}
	_, err = aaa.RevokeRadSecCert(ctx, r.act, r.nasID)
	xrtest.WantReason(t, err, 404, "radsec_cert_none")
	_, err = aaa.DownloadRadSecCert(ctx, r.act, r.nasID)
	xrtest.WantReason(t, err, 404, "radsec_cert_none")
	if g, err := aaa.GetRadSecCert(ctx, r.act, r.nasID); err != nil || g.State != aaa.CertRevoked {
		t.Fatalf("get after revoke %+v %v", g, err)
	}
	// A NAS whose certificate was revoked may get a new one.
	c3, err := aaa.IssueRadSecCert(ctx, r.act, r.nasID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.bound(c3.Fingerprint); !ok {
		t.Fatal("certificate after a revocation not bound")
	}

	// The NAS row and the instance must agree: a tenant file restored from
	// before the issue (no fingerprint) lends the certificate to no NAS.
	// A restore leaves the tenant's directory rows to be filled from the
	// restored file (app/backup.go); the reload fills them.
	xrtest.Exec(t, r.ten, `UPDATE nas SET radsec_fingerprint = '' WHERE id = ?`, r.nasID)
	if err := r.a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE nas_index SET secret_sealed = NULL WHERE tenant_id = ? AND nas_id = ?`, r.ten.ID, r.nasID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := r.a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.bound(c3.Fingerprint); ok {
		t.Fatal("certificate bound although the NAS row names none")
	}
	if g, err := aaa.GetRadSecCert(ctx, r.act, r.nasID); err != nil || g.State != aaa.CertRevoked {
		t.Fatalf("a certificate the NAS row does not name reads %+v %v", g, err)
	}
	_, err = aaa.DownloadRadSecCert(ctx, r.act, r.nasID)
	xrtest.WantReason(t, err, 404, "radsec_cert_none")
	c4, err := aaa.IssueRadSecCert(ctx, r.act, r.nasID) // not a conflict: the old one is in force nowhere
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.bound(c4.Fingerprint); !ok {
		t.Fatal("certificate issued after a restore not bound")
	}

	// Deleting the NAS revokes its certificate (a later NAS may get its id).
	if err := aaa.DeleteNAS(ctx, r.act, r.nasID); err != nil {
		t.Fatal(err)
	}
	var open int64
	if err := r.a.Inst.R.QueryRow(`SELECT COUNT(*) FROM radsec_certs WHERE revoked_at IS NULL`).Scan(&open); err != nil || open != 0 {
		t.Fatalf("%d certificates current after the NAS was deleted (%v)", open, err)
	}
}

// TestRadSecCertRefusals: permissions and tenants.
func TestRadSecCertRefusals(t *testing.T) {
	t.Parallel()
	r := newCertRig(t)
	ctx := context.Background()
	reader := &app.Actor{Tenant: r.ten, Kind: app.CredSession, TenantWide: true, Perms: map[app.Perm]bool{aaa.PermNasIndex: true}}
	for name, call := range map[string]func() error{
		"issue":    func() error { _, err := aaa.IssueRadSecCert(ctx, reader, r.nasID); return err },
		"reissue":  func() error { _, err := aaa.ReissueRadSecCert(ctx, reader, r.nasID); return err },
		"download": func() error { _, err := aaa.DownloadRadSecCert(ctx, reader, r.nasID); return err },
		"revoke":   func() error { _, err := aaa.RevokeRadSecCert(ctx, reader, r.nasID); return err },
	} {
		xrtest.WantReason(t, call(), 403, "insufficient_permissions")
		_ = name
	}
	if n := r.certRows(t); n != 0 {
		t.Fatalf("%d certificates stored by refused calls", n)
	}
	// Another tenant's NAS answers like a missing one.
	xrtest.CreateTenant(t, r.a, app.NewTenant{Slug: "other"})
	other := xrtest.System(t, xrtest.Acquire(t, r.a, "other"))
	_, err := aaa.IssueRadSecCert(ctx, other, r.nasID)
	xrtest.WantReason(t, err, 404, "not_found")
	_, err = aaa.GetRadSecCert(ctx, other, r.nasID)
	xrtest.WantReason(t, err, 404, "not_found")
	if n := r.certRows(t); n != 0 {
		t.Fatalf("%d certificates stored by refused calls", n)
	}
}

// TestServerCertificate: the instance's server certificates are kept for
// the same names, replaced for other names and near expiry.
func TestServerCertificate(t *testing.T) {
	t.Parallel()
	a := xrtest.App(t, aaa.Module)
	ctx := context.Background()
	names := []string{"radius.example.net", "192.0.2.1"}
	c1, err := aaa.ServerCertificate(ctx, a, aaa.PurposeRadSec, names)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := aaa.CAPool(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range names {
		if _, err := c1.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	if ip := net.ParseIP("192.0.2.1"); !c1.Leaf.IPAddresses[0].Equal(ip) {
		t.Errorf("IP SANs %v", c1.Leaf.IPAddresses)
	}
	again, _ := aaa.ServerCertificate(ctx, a, aaa.PurposeRadSec, []string{"192.0.2.1", "RADIUS.example.net"})
	if again.Leaf.SerialNumber.Cmp(c1.Leaf.SerialNumber) != 0 {
		t.Error("same names issued a new certificate")
	}
	eap, _ := aaa.ServerCertificate(ctx, a, aaa.PurposeEAP, names)
	if _, ok := eap.PrivateKey.(interface{ Size() int }); !ok || eap.Leaf.SerialNumber.Cmp(c1.Leaf.SerialNumber) == 0 {
		t.Errorf("EAP certificate %T is not its own RSA one", eap.PrivateKey)
	}
	other, _ := aaa.ServerCertificate(ctx, a, aaa.PurposeRadSec, []string{"radius2.example.net"})
	if other.Leaf.SerialNumber.Cmp(c1.Leaf.SerialNumber) == 0 {
		t.Error("new names kept the old certificate")
	}
	a.SetClock(func() time.Time { return other.Leaf.NotAfter.Add(-24 * time.Hour) })
	renewed, _ := aaa.ServerCertificate(ctx, a, aaa.PurposeRadSec, []string{"radius2.example.net"})
	if renewed.Leaf.SerialNumber.Cmp(other.Leaf.SerialNumber) == 0 {
		t.Error("a certificate a day from expiry was kept")
	}
	// The CA as ca.pem: the one the certificates chain to.
	text, err := aaa.CACertificatePEM(ctx, a)
	if blk, _ := pem.Decode([]byte(text)); err != nil || blk == nil || len(renewed.Certificate) != 2 || string(blk.Bytes) != string(renewed.Certificate[1]) {
		t.Fatal("the chain's CA is not ca.pem")
	}
}

// TestNASSetupRadSec: the RadSec variant of the NAS's setup, and what it
// warns about.
func TestNASSetupRadSec(t *testing.T) {
	t.Parallel()
	r := newCertRig(t)
	ctx := context.Background()
	setup := func(vendor, transport string) (*aaa.NASSetup, error) {
		return aaa.NASSetupScript(ctx, r.svc, r.act, r.nasID, aaa.NASSetupInput{Vendor: vendor, Transport: transport, Server: "203.0.113.5"})
	}
	_, err := setup("mikrotik", "tcp")
	xrtest.WantReason(t, err, 400, "invalid_enum")

	r.svc.SetWire(&aaa.WireStatus{AuthPort: 1812, AcctPort: 1813})
	s, err := setup("mikrotik", "radsec")
	if err != nil {
		t.Fatal(err)
	}
	if s.Transport != "radsec" || s.RadSecPort != 2083 || !strings.Contains(s.Script, "protocol=radsec") ||
		!slices.Contains(s.Warnings, "radsec_not_serving") || !slices.Contains(s.Warnings, "radsec_cert_missing") {
		t.Fatalf("setup %+v", s)
	}
	if _, err := aaa.IssueRadSecCert(ctx, r.act, r.nasID); err != nil {
		t.Fatal(err)
	}
	r.svc.SetWire(&aaa.WireStatus{AuthPort: 1812, AcctPort: 1813, RadSecPort: 12083})
	s, _ = setup("cisco", "radsec")
	if s.RadSecPort != 12083 || len(s.Warnings) != 1 || s.Warnings[0] != "radsec_generic_for_vendor" || !strings.Contains(s.Script, "port 12083") {
		t.Fatalf("setup %+v", s)
	}
	// The UDP setup is unchanged by all this.
	u, _ := setup("mikrotik", "")
	if u.Transport != "udp" || u.RadSecPort != 0 || strings.Contains(u.Script, "radsec") {
		t.Fatalf("udp setup %+v", u)
	}
}
