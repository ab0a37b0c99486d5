package aaa

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strings"
	"time"

	"xr/app"
)

// The instance's certificate authority (instance table radsec_ca): it
// issues the NAS client certificates of RadSec and the server certificates
// of the RadSec listener and of PEAP/TTLS. It is created on first use; its
// private key is sealed with the instance key (xr keys rotate re-seals it).
// Everything cryptographic is crypto/x509's.

// Certificate lifetimes.
const (
	caValidity     = 20 * 365 * 24 * time.Hour
	nasValidity    = 5 * 365 * 24 * time.Hour // routers are re-provisioned rarely; revocation is instant
	serverValidity = 825 * 24 * time.Hour     // the longest TLS server certificate Apple's clients accept
	serverRenew    = 30 * 24 * time.Hour      // a server certificate this close to expiry is replaced
)

// Server certificate purposes (radsec_server_certs.purpose).
const (
	PurposeRadSec = "radsec"
	PurposeEAP    = "eap"
)

type certAuthority struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  string
}

// loadCA returns the instance CA, creating it on first use. Two processes
// creating it at once agree on the one stored first.
func loadCA(ctx context.Context, a *app.App) (*certAuthority, error) {
	ca, err := readCA(ctx, a)
	if !errors.Is(err, sql.ErrNoRows) {
		return ca, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := a.Now()
	tmpl := &x509.Certificate{SerialNumber: serial,
		Subject:   pkix.Name{CommonName: "xr RADIUS CA " + serial.Text(16)[:8], Organization: []string{"xr"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(caValidity),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO radsec_ca(id, cert_pem, key_sealed, created_at) VALUES (1, ?, ?, ?) ON CONFLICT(id) DO NOTHING`,
			certPEM(der), a.Keys.Seal(keyDER), app.FormatTime(now))
		return err
	})
	if err != nil {
		return nil, err
	}
	return readCA(ctx, a)
}

func readCA(ctx context.Context, a *app.App) (*certAuthority, error) {
	var certText string
	var sealed []byte
	if err := a.Inst.R.QueryRowContext(ctx, `SELECT cert_pem, key_sealed FROM radsec_ca WHERE id = 1`).Scan(&certText, &sealed); err != nil {
		return nil, err
	}
	cert, key, err := openKeyPair(a, certText, sealed)
	if err != nil {
		return nil, fmt.Errorf("radsec CA: %w", err)
	}
	return &certAuthority{cert: cert, key: key, pem: certText}, nil
}

// openKeyPair parses a stored certificate and opens its sealed key.
func openKeyPair(a *app.App, certText string, sealed []byte) (*x509.Certificate, crypto.Signer, error) {
	blk, _ := pem.Decode([]byte(certText))
	if blk == nil {
		return nil, nil, errors.New("stored certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := a.Keys.Open(sealed)
	if err != nil {
		return nil, nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return nil, nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, nil, errors.New("stored key cannot sign")
	}
	return cert, signer, nil
}

// CACertificatePEM is the instance CA's certificate (ca.pem), created on
// first use.
func CACertificatePEM(ctx context.Context, a *app.App) (string, error) {
	ca, err := loadCA(ctx, a)
	if err != nil {
		return "", err
	}
	return ca.pem, nil
}

// CAPool is a pool holding the instance CA: what RadSec client
// certificates must chain to.
func CAPool(ctx context.Context, a *app.App) (*x509.CertPool, error) {
	ca, err := loadCA(ctx, a)
	if err != nil {
		return nil, err
	}
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p, nil
}

// CAInfo is GET /admin/radsec/ca.
type CAInfo struct {
	CAPEM       string   `json:"ca_pem"`
	Subject     string   `json:"subject"`
	Fingerprint string   `json:"fingerprint_sha256"`
	NotAfter    app.Time `json:"not_after"`
}

// GetCA answers the instance CA's certificate (what NAS and EAP clients
// trust) to a caller who may read NAS.
func GetCA(ctx context.Context, act *app.Actor) (*CAInfo, error) {
	if err := act.Require(PermNasIndex); err != nil {
		return nil, err
	}
	ca, err := loadCA(ctx, act.Tenant.App)
	if err != nil {
		return nil, err
	}
	fp := sha256.Sum256(ca.cert.Raw)
	return &CAInfo{CAPEM: ca.pem, Subject: ca.cert.Subject.CommonName, Fingerprint: hex.EncodeToString(fp[:]),
		NotAfter: app.T(ca.cert.NotAfter.UTC())}, nil
}

// ServerCertificate is the instance's server certificate for a purpose
// (PurposeRadSec, PurposeEAP), issued by the instance CA for names (DNS
// names or addresses). The stored one serves while it is for the same
// names and more than 30 days from expiry; otherwise a new one is issued
// and stored. RadSec gets an ECDSA P-256 key; EAP an RSA 2048 key, which
// every supplicant accepts.
func ServerCertificate(ctx context.Context, a *app.App, purpose string, names []string) (tls.Certificate, error) {
	names = normNames(names)
	joined := strings.Join(names, ",")
	var certText, stored string
	var sealed []byte
	err := a.Inst.R.QueryRowContext(ctx, `SELECT cert_pem, key_sealed, names FROM radsec_server_certs WHERE purpose = ?`, purpose).Scan(&certText, &sealed, &stored)
	if err == nil && stored == joined {
		cert, key, err := openKeyPair(a, certText, sealed)
		if err == nil && a.Now().Add(serverRenew).Before(cert.NotAfter) {
			return tlsCert(ctx, a, cert, key)
		}
	} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return tls.Certificate{}, err
	}
	ca, err := loadCA(ctx, a)
	if err != nil {
		return tls.Certificate{}, err
	}
	var key crypto.Signer
	if purpose == PurposeEAP {
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		return tls.Certificate{}, err
	}
	now := a.Now()
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: names[0], Organization: []string{"xr"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(serverValidity),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	cert, keyDER, err := ca.sign(tmpl, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO radsec_server_certs(purpose, cert_pem, key_sealed, names, not_after, created_at) VALUES (?,?,?,?,?,?)
			ON CONFLICT(purpose) DO UPDATE SET cert_pem = excluded.cert_pem, key_sealed = excluded.key_sealed, names = excluded.names,
			not_after = excluded.not_after, created_at = excluded.created_at`,
			purpose, certPEM(cert.Raw), a.Keys.Seal(keyDER), joined, app.FormatTime(cert.NotAfter), app.FormatTime(now))
		return err
	})
	if err != nil {
		return tls.Certificate{}, err
	}
	return tlsCert(ctx, a, cert, key)
}

// tlsCert is a leaf with the CA after it (the chain a peer is sent).
func tlsCert(ctx context.Context, a *app.App, cert *x509.Certificate, key crypto.Signer) (tls.Certificate, error) {
	ca, err := loadCA(ctx, a)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{cert.Raw, ca.cert.Raw}, PrivateKey: key, Leaf: cert}, nil
}

// sign issues a certificate for key's public half, with a fresh serial.
func (ca *certAuthority) sign(tmpl *x509.Certificate, key crypto.Signer) (*x509.Certificate, []byte, error) {
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return cert, keyDER, nil
}

// randomSerial is a positive 127-bit serial (RFC 5280: at most 20 octets).
func randomSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func certPEM(der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// normNames cleans a certificate's names: trimmed, lower-case, unique,
// sorted; "xr" when none is left.
func normNames(names []string) []string {
	out := []string{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if h, _, ok := parseServerAddress(n); ok && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		out = []string{"xr"}
	}
	return out
}
