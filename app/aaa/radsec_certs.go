package aaa

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"xr/app"
	"xr/db"
)

// RadSec client certificates of NAS (instance table radsec_certs): issued
// by the instance CA for one NAS, whose row names the current one's
// fingerprint. The private key is generated here and kept sealed until it
// is downloaded, once; then only the certificate remains. Revoking (by
// hand, by re-issuing, or by deleting the NAS) takes effect at once: the
// directory reloads and the NAS's RadSec connections end at their next
// packet.

// RadSecCert is a NAS's RadSec client certificate (never its key).
type RadSecCert struct {
	NASID       int64  `json:"nas_id"`
	Serial      string `json:"serial"`
	Fingerprint string `json:"fingerprint_sha256"`
	Subject     string `json:"subject"`
	// State is awaiting_download (issued, its key not taken yet), active,
	// expired or revoked.
	State        string   `json:"state"`
	NotBefore    app.Time `json:"not_before"`
	NotAfter     app.Time `json:"not_after"`
	IssuedAt     app.Time `json:"issued_at"`
	DownloadedAt app.Time `json:"downloaded_at"`
	RevokedAt    app.Time `json:"revoked_at"`
}

// RadSecBundle is the one download of a certificate: the files a NAS (or
// radsecproxy) needs, PEM-encoded.
type RadSecBundle struct {
	Certificate RadSecCert `json:"certificate"`
	ClientPEM   string     `json:"client_pem"` // client.pem
	ClientKey   string     `json:"client_key"` // client.key: PKCS#8, unencrypted
	CAPEM       string     `json:"ca_pem"`     // ca.pem: the instance CA
}

// RadSec certificate states.
const (
	CertAwaitingDownload = "awaiting_download"
	CertActive           = "active"
	CertExpired          = "expired"
	CertRevoked          = "revoked"
)

const radsecCertCols = `nas_id, serial, fingerprint, cert_pem, not_before, not_after, issued_at, downloaded_at, revoked_at, key_sealed IS NOT NULL`

// scanRadSecCert reads a certificate row. nasFP is the fingerprint its NAS
// row names: a row not revoked that the NAS row does not name (the tenant
// file was restored or reset since) is in force nowhere, and reads as
// revoked.
func scanRadSecCert(row interface{ Scan(...any) error }, now time.Time, nasFP string) (*RadSecCert, error) {
	c := &RadSecCert{}
	var certText string
	var keyHeld bool
	err := row.Scan(&c.NASID, &c.Serial, &c.Fingerprint, &certText, &c.NotBefore, &c.NotAfter, &c.IssuedAt, &c.DownloadedAt, &c.RevokedAt, &keyHeld)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoRadSecCert()
	}
	if err != nil {
		return nil, err
	}
	if blk, _ := pem.Decode([]byte(certText)); blk != nil {
		if cert, err := x509.ParseCertificate(blk.Bytes); err == nil {
			c.Subject = cert.Subject.String()
		}
	}
	switch {
	case !c.RevokedAt.IsZero() || c.Fingerprint != nasFP:
		c.State = CertRevoked
	case !now.Before(c.NotAfter.Time):
		c.State = CertExpired
	case keyHeld:
		c.State = CertAwaitingDownload
	default:
		c.State = CertActive
	}
	return c, nil
}

func errNoRadSecCert() error {
	return &app.Error{Code: app.CodeNotFound, Status: 404, Reason: "radsec_cert_none"}
}

// GetRadSecCert reads a NAS's current certificate, else its last revoked
// one (404 radsec_cert_none when it never had one).
func GetRadSecCert(ctx context.Context, act *app.Actor, nasID int64) (*RadSecCert, error) {
	if _, err := GetNAS(ctx, act, nasID); err != nil {
		return nil, err
	}
	fp, err := nasFingerprint(ctx, act.Tenant.DB.R, nasID)
	if err != nil {
		return nil, err
	}
	a := act.Tenant.App
	return scanRadSecCert(a.Inst.R.QueryRowContext(ctx, `SELECT `+radsecCertCols+` FROM radsec_certs WHERE tenant_id = ? AND nas_id = ?
		ORDER BY revoked_at IS NULL AND fingerprint = ? DESC, id DESC LIMIT 1`, act.Tenant.ID, nasID, fp), a.Now(), fp)
}

// nasFingerprint is the fingerprint of the certificate a NAS row names.
func nasFingerprint(ctx context.Context, q app.Querier, nasID int64) (string, error) {
	var fp string
	err := q.QueryRowContext(ctx, `SELECT radsec_fingerprint FROM nas WHERE id = ?`, nasID).Scan(&fp)
	if errors.Is(err, sql.ErrNoRows) {
		return "", app.ErrNotFound()
	}
	return fp, err
}

// IssueRadSecCert issues a NAS its first certificate, or one after the last
// was revoked (409 radsec_cert_exists while one is current: re-issue it).
func IssueRadSecCert(ctx context.Context, act *app.Actor, nasID int64) (*RadSecCert, error) {
	return issueRadSecCert(ctx, act, nasID, false)
}

// ReissueRadSecCert revokes a NAS's current certificate (if any) and issues
// a new one.
func ReissueRadSecCert(ctx context.Context, act *app.Actor, nasID int64) (*RadSecCert, error) {
	return issueRadSecCert(ctx, act, nasID, true)
}

func issueRadSecCert(ctx context.Context, act *app.Actor, nasID int64, replace bool) (*RadSecCert, error) {
	if err := act.Require(PermNasManage); err != nil {
		return nil, err
	}
	t := act.Tenant
	a := t.App
	ca, err := loadCA(ctx, a)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	var out *RadSecCert
	err = t.Write(ctx, func(tx *sql.Tx) error {
		n, err := scanNAS(tx.QueryRowContext(ctx, `SELECT `+nasCols+` FROM nas WHERE id = ?`, nasID))
		if err != nil {
			return err
		}
		oldFP, err := nasFingerprint(ctx, tx, nasID)
		if err != nil {
			return err
		}
		now := a.Now()
		tmpl := &x509.Certificate{
			Subject:   pkix.Name{CommonName: commentSafe(n.Name), Organization: []string{t.Slug}, OrganizationalUnit: []string{"xr NAS"}},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(nasValidity),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			// Informational: the binding is the fingerprint, kept by xr.
			URIs: []*url.URL{{Scheme: "urn", Opaque: "xr:nas:" + t.Slug + ":" + strconv.FormatInt(n.ID, 10)}},
		}
		cert, keyDER, err := ca.sign(tmpl, key)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(cert.Raw)
		fp := hex.EncodeToString(sum[:])
		var p app.Patch
		p.Set("radsec_fingerprint", fp)
		if _, err := p.Exec(ctx, tx, "nas", nasID, t.NowText()); err != nil {
			return err
		}
		// The directory binds RadSec connections by this fingerprint.
		if err := indexNAS(ctx, t, tx, nasID); err != nil {
			return err
		}
		stamp := app.FormatTime(now)
		return a.Inst.Write(ctx, func(itx *sql.Tx) error {
			// A current row the NAS row does not name (a restored or reset
			// tenant file) is in force nowhere: retire it.
			if _, err := itx.ExecContext(ctx, `UPDATE radsec_certs SET revoked_at = ?, key_sealed = NULL
				WHERE tenant_id = ? AND nas_id = ? AND revoked_at IS NULL AND fingerprint != ?`, stamp, t.ID, nasID, oldFP); err != nil {
				return err
			}
			if replace {
				if err := revokeNASCerts(ctx, itx, t.ID, nasID, stamp); err != nil {
					return err
				}
			}
			_, err := itx.ExecContext(ctx, `INSERT INTO radsec_certs(tenant_id, nas_id, serial, fingerprint, cert_pem, key_sealed, not_before, not_after, issued_at)
				VALUES (?,?,?,?,?,?,?,?,?)`, t.ID, nasID, cert.SerialNumber.Text(16), fp, certPEM(cert.Raw), a.Keys.Seal(keyDER),
				app.FormatTime(cert.NotBefore), app.FormatTime(cert.NotAfter), stamp)
			if db.IsUnique(err) {
				return app.ErrConflict("radsec_cert_exists")
			}
			if err != nil {
				return err
			}
			out, err = scanRadSecCert(itx.QueryRowContext(ctx, `SELECT `+radsecCertCols+` FROM radsec_certs WHERE fingerprint = ?`, fp), now, fp)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	// Read-your-writes: RadSec knows the certificate once this answers.
	if err := a.Reload(ctx); err != nil {
		return nil, fmt.Errorf("certificate issued, reload registry: %w", err)
	}
	return out, nil
}

// DownloadRadSecCert hands out a NAS's current certificate with its private
// key and the CA, once: the key is erased as it is read (409
// radsec_key_downloaded afterwards: re-issue to get a new one).
func DownloadRadSecCert(ctx context.Context, act *app.Actor, nasID int64) (*RadSecBundle, error) {
	if err := act.Require(PermNasManage); err != nil {
		return nil, err
	}
	t := act.Tenant
	a := t.App
	nasFP, err := nasFingerprint(ctx, t.DB.R, nasID)
	if err != nil {
		return nil, err
	}
	ca, err := loadCA(ctx, a)
	if err != nil {
		return nil, err
	}
	out := &RadSecBundle{CAPEM: ca.pem}
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		var id int64
		var sealed []byte
		err := tx.QueryRowContext(ctx, `SELECT id, cert_pem, key_sealed FROM radsec_certs WHERE tenant_id = ? AND nas_id = ? AND revoked_at IS NULL AND fingerprint = ?`,
			t.ID, nasID, nasFP).Scan(&id, &out.ClientPEM, &sealed)
		if errors.Is(err, sql.ErrNoRows) {
			return errNoRadSecCert()
		}
		if err != nil {
			return err
		}
		if sealed == nil {
			return app.ErrConflict("radsec_key_downloaded")
		}
		keyDER, err := a.Keys.Open(sealed)
		if err != nil {
			return err
		}
		out.ClientKey = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
		if _, err := tx.ExecContext(ctx, `UPDATE radsec_certs SET key_sealed = NULL, downloaded_at = ? WHERE id = ?`, a.NowText(), id); err != nil {
			return err
		}
		c, err := scanRadSecCert(tx.QueryRowContext(ctx, `SELECT `+radsecCertCols+` FROM radsec_certs WHERE id = ?`, id), a.Now(), nasFP)
		if err != nil {
			return err
		}
		out.Certificate = *c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RevokeRadSecCert revokes a NAS's current certificate (404
// radsec_cert_none when it has none); its connections end.
func RevokeRadSecCert(ctx context.Context, act *app.Actor, nasID int64) (*RadSecCert, error) {
	if err := act.Require(PermNasManage); err != nil {
		return nil, err
	}
	t := act.Tenant
	a := t.App
	var out *RadSecCert
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := scanNAS(tx.QueryRowContext(ctx, `SELECT `+nasCols+` FROM nas WHERE id = ?`, nasID)); err != nil {
			return err
		}
		var p app.Patch
		p.Set("radsec_fingerprint", "")
		if _, err := p.Exec(ctx, tx, "nas", nasID, t.NowText()); err != nil {
			return err
		}
		// The directory binds RadSec connections by this fingerprint.
		if err := indexNAS(ctx, t, tx, nasID); err != nil {
			return err
		}
		return a.Inst.Write(ctx, func(itx *sql.Tx) error {
			var id int64
			err := itx.QueryRowContext(ctx, `SELECT id FROM radsec_certs WHERE tenant_id = ? AND nas_id = ? AND revoked_at IS NULL`, t.ID, nasID).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				return errNoRadSecCert()
			}
			if err != nil {
				return err
			}
			if err := revokeNASCerts(ctx, itx, t.ID, nasID, a.NowText()); err != nil {
				return err
			}
			out, err = scanRadSecCert(itx.QueryRowContext(ctx, `SELECT `+radsecCertCols+` FROM radsec_certs WHERE id = ?`, id), a.Now(), "")
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	if err := a.Reload(ctx); err != nil {
		return nil, fmt.Errorf("certificate revoked, reload registry: %w", err)
	}
	return out, nil
}

// revokeNASCerts revokes a NAS's current certificate in the instance
// transaction (and forgets a key never downloaded).
func revokeNASCerts(ctx context.Context, itx *sql.Tx, tenantID, nasID int64, now string) error {
	_, err := itx.ExecContext(ctx, `UPDATE radsec_certs SET revoked_at = ?, key_sealed = NULL WHERE tenant_id = ? AND nas_id = ? AND revoked_at IS NULL`,
		now, tenantID, nasID)
	return err
}
