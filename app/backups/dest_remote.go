package backups

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"xr/app"
	"xr/app/egress"
)

// StepError is a classified failure of a destination: the step that
// failed (dns, tcp, tls, host_key, auth, permission, storage) and the
// stable reason the API answers.
type StepError struct {
	Step   string
	Reason string
	Err    error
}

func (e *StepError) Error() string {
	if e.Err == nil {
		return e.Step + ": " + e.Reason
	}
	return e.Step + ": " + e.Reason + ": " + e.Err.Error()
}

func (e *StepError) Unwrap() error { return e.Err }

// APIError is the 502 a failed test or connect answers, naming the step.
func (e *StepError) APIError() *app.Error {
	return app.ErrBadGateway(e.Reason).With("step", e.Step)
}

func stepErr(step, reason string, err error) *StepError {
	return &StepError{Step: step, Reason: reason, Err: err}
}

// errHostKeyChanged: the SFTP server showed a key other than the pinned one.
var errHostKeyChanged = errors.New("the server's host key is not the pinned one")

// classifyNet names the network step an error comes from.
func classifyNet(err error) *StepError {
	var se *StepError
	if errors.As(err, &se) {
		return se
	}
	var refused *egress.RefusedError
	var dnsErr *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var rec tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.As(err, &refused):
		return stepErr("tcp", "backup_destination_address_not_allowed", err)
	case errors.As(err, &dnsErr):
		return stepErr("dns", "backup_destination_dns_failed", err)
	case errors.As(err, &unknownCA), errors.As(err, &hostErr), errors.As(err, &invalid), errors.As(err, &verify),
		errors.As(err, &rec), errors.As(err, &alert):
		return stepErr("tls", "backup_destination_tls_failed", err)
	}
	return nil
}

// remote is an open connection to a destination.
type remote interface {
	Put(ctx context.Context, name string, r io.Reader, size int64) error
	Get(ctx context.Context, name string) ([]byte, error) // small objects (the probe)
	Delete(ctx context.Context, name string) error
	Close() error
}

// dialTimeout bounds connecting and authenticating.
var dialTimeout = 15 * time.Second

// dialRemote opens d: the connect-time egress rules apply to the address
// dialled (after DNS resolution); an SFTP host key is pinned on the first
// connect and a different one refused afterwards.
func dialRemote(ctx context.Context, a *app.App, d *destination) (remote, error) {
	if !d.Enabled {
		return nil, stepErr("config", "backup_destination_disabled", nil)
	}
	switch d.Kind {
	case "s3":
		return dialS3(ctx, a, d, 2)
	case "sftp":
		return dialSFTP(ctx, a, d)
	case "local":
		// Checked again at use: the operator may have narrowed the folders.
		ti, ok := a.TenantByID(d.TenantID)
		if !ok {
			return nil, app.ErrNotFound()
		}
		base, err := confineLocal(a, ti.Slug, d.str("path"))
		if err != nil {
			return nil, err
		}
		return &localRemote{dir: d.str("path"), base: base}, nil
	}
	return nil, fmt.Errorf("unknown destination kind %q", d.Kind)
}

// ---- S3 ----

type s3Remote struct {
	c      *minio.Client
	bucket string
	prefix string
}

func dialS3(ctx context.Context, a *app.App, d *destination, retries int) (*s3Remote, error) {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           egress.SafeDialer(a.Cfg.AllowPrivateEgress).DialContext,
		TLSHandshakeTimeout:   dialTimeout,
		ResponseHeaderTimeout: time.Minute,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
	}
	lookup := minio.BucketLookupAuto
	if d.boolean("path_style", false) {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(d.str("endpoint"), &minio.Options{
		Creds:        credentials.NewStaticV4(d.secrets["access_key"], d.secrets["secret_key"], ""),
		Secure:       d.boolean("use_tls", true),
		Transport:    tr,
		Region:       d.str("region"),
		BucketLookup: lookup,
		MaxRetries:   retries,
	})
	if err != nil {
		return nil, stepErr("config", "backup_destination_host_invalid", err)
	}
	return &s3Remote{c: c, bucket: d.str("bucket"), prefix: d.str("prefix")}, nil
}

func (r *s3Remote) key(name string) string {
	if r.prefix == "" {
		return name
	}
	return r.prefix + "/" + name
}

func classifyS3(err error) error {
	if err == nil {
		return nil
	}
	if se := classifyNet(err); se != nil {
		return se
	}
	er := minio.ToErrorResponse(err)
	switch er.Code {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "AuthorizationHeaderMalformed", "InvalidSecurity", "Unauthorized":
		return stepErr("auth", "backup_destination_auth_failed", err)
	case "AccessDenied", "AllAccessDisabled", "AccountProblem", "Forbidden":
		return stepErr("permission", "backup_destination_permission_denied", err)
	case "NoSuchBucket":
		return stepErr("storage", "backup_destination_not_found", err)
	}
	switch er.StatusCode {
	case http.StatusUnauthorized:
		return stepErr("auth", "backup_destination_auth_failed", err)
	case http.StatusForbidden:
		return stepErr("permission", "backup_destination_permission_denied", err)
	}
	if er.Code == "" {
		// No S3 answer at all: the connection failed.
		return stepErr("tcp", "backup_destination_tcp_failed", err)
	}
	return stepErr("storage", "backup_destination_io_failed", err)
}

func (r *s3Remote) Put(ctx context.Context, name string, body io.Reader, size int64) error {
	_, err := r.c.PutObject(ctx, r.bucket, r.key(name), body, size, minio.PutObjectOptions{ContentType: "application/octet-stream"})
	return classifyS3(err)
}

func (r *s3Remote) Get(ctx context.Context, name string) ([]byte, error) {
	o, err := r.c.GetObject(ctx, r.bucket, r.key(name), minio.GetObjectOptions{})
	if err != nil {
		return nil, classifyS3(err)
	}
	defer func() { _ = o.Close() }() // a read: nothing to lose
	b, err := io.ReadAll(io.LimitReader(o, 1<<20))
	return b, classifyS3(err)
}

func (r *s3Remote) Delete(ctx context.Context, name string) error {
	return classifyS3(r.c.RemoveObject(ctx, r.bucket, r.key(name), minio.RemoveObjectOptions{}))
}

func (r *s3Remote) Close() error { return nil }

// ---- SFTP ----

type sftpRemote struct {
	ssh *ssh.Client
	c   *sftp.Client
	dir string
}

func dialSFTP(ctx context.Context, a *app.App, d *destination) (*sftpRemote, error) {
	port := d.str("port")
	if port == "" {
		port = "22"
	}
	addr := net.JoinHostPort(strings.Trim(d.str("host"), "[]"), port)
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn, err := egress.SafeDialer(a.Cfg.AllowPrivateEgress).DialContext(dctx, "tcp", addr)
	if err != nil {
		if se := classifyNet(err); se != nil {
			return nil, se
		}
		return nil, stepErr("tcp", "backup_destination_tcp_failed", err)
	}
	var auth []ssh.AuthMethod
	if k := d.secrets["private_key"]; k != "" {
		signer, err := ssh.ParsePrivateKey([]byte(k))
		if err != nil {
			_ = conn.Close() // failing already
			return nil, stepErr("auth", "backup_destination_auth_failed", err)
		}
		auth = append(auth, ssh.PublicKeys(signer))
	}
	if pw := d.secrets["password"]; pw != "" {
		auth = append(auth, ssh.Password(pw))
	}
	var seen ssh.PublicKey
	hostKeyOK := false
	cfg := &ssh.ClientConfig{
		User: d.str("username"),
		Auth: auth,
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			if d.hostKey != "" {
				pinned, _, _, _, err := ssh.ParseAuthorizedKey([]byte(d.hostKey))
				if err != nil || !bytes.Equal(pinned.Marshal(), key.Marshal()) {
					return errHostKeyChanged
				}
			}
			seen, hostKeyOK = key, true
			return nil
		},
		Timeout: dialTimeout,
	}
	if err := conn.SetDeadline(time.Now().Add(dialTimeout)); err != nil {
		_ = conn.Close() // failing already
		return nil, stepErr("tcp", "backup_destination_tcp_failed", err)
	}
	cc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		_ = conn.Close() // failing already
		switch {
		case errors.Is(err, errHostKeyChanged):
			return nil, stepErr("host_key", "backup_destination_host_key_changed", err)
		case hostKeyOK:
			// Key exchange done and the host verified: what failed is
			// the authentication.
			return nil, stepErr("auth", "backup_destination_auth_failed", err)
		}
		return nil, stepErr("tls", "backup_destination_tls_failed", err)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		_ = cc.Close() // failing already
		return nil, stepErr("tcp", "backup_destination_tcp_failed", err)
	}
	client := ssh.NewClient(cc, chans, reqs)
	sc, err := sftp.NewClient(client)
	if err != nil {
		_ = client.Close() // failing already
		return nil, stepErr("permission", "backup_destination_permission_denied", err)
	}
	if d.hostKey == "" && seen != nil {
		if err := pinHostKey(ctx, a, d, seen); err != nil {
			_ = errors.Join(sc.Close(), client.Close()) // failing already
			return nil, err
		}
	}
	dir := d.str("path")
	if dir == "" {
		dir = "."
	}
	return &sftpRemote{ssh: client, c: sc, dir: dir}, nil
}

// pinHostKey records the host key seen on the first connect; a concurrent
// first connect that pinned another key wins, and this one is refused.
func pinHostKey(ctx context.Context, a *app.App, d *destination, key ssh.PublicKey) error {
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
	var pinned string
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE backup_destinations SET host_key = ? WHERE id = ? AND host_key = ''`, line, d.ID); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT host_key FROM backup_destinations WHERE id = ?`, d.ID).Scan(&pinned)
	})
	if err != nil {
		return err
	}
	if pinned != line {
		return stepErr("host_key", "backup_destination_host_key_changed", errHostKeyChanged)
	}
	d.hostKey = line
	d.HostKey = ssh.FingerprintSHA256(key)
	return nil
}

func classifyFS(err error) error {
	if err == nil {
		return nil
	}
	var st *sftp.StatusError
	if errors.Is(err, fs.ErrPermission) || (errors.As(err, &st) && st.FxCode() == sftp.ErrSSHFxPermissionDenied) {
		return stepErr("permission", "backup_destination_permission_denied", err)
	}
	if isNotExist(err) {
		return stepErr("storage", "backup_destination_not_found", err)
	}
	if se := classifyNet(err); se != nil {
		return se
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, sftp.ErrSSHFxConnectionLost) {
		return stepErr("tcp", "backup_destination_tcp_failed", err)
	}
	return stepErr("storage", "backup_destination_io_failed", err)
}

func isNotExist(err error) bool {
	var st *sftp.StatusError
	return errors.Is(err, fs.ErrNotExist) || (errors.As(err, &st) && st.FxCode() == sftp.ErrSSHFxNoSuchFile)
}

func (r *sftpRemote) full(name string) string { return path.Join(r.dir, name) }

func (r *sftpRemote) Put(ctx context.Context, name string, body io.Reader, _ int64) error {
	p := r.full(name)
	if err := r.c.MkdirAll(path.Dir(p)); err != nil {
		return classifyFS(err)
	}
	tmp := p + ".part"
	f, err := r.c.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return classifyFS(err)
	}
	stop := context.AfterFunc(ctx, func() { _ = r.ssh.Close() }) // cancelled: abort the transfer
	defer stop()
	if _, err := f.ReadFrom(body); err != nil {
		_ = f.Close()       // failing already
		_ = r.c.Remove(tmp) // best effort; the next run truncates it
		return classifyFS(err)
	}
	if err := f.Close(); err != nil {
		return classifyFS(err)
	}
	if err := r.c.PosixRename(tmp, p); err != nil {
		// A server without the posix-rename extension: plain SFTP rename
		// refuses an existing target, so remove it first.
		if rerr := r.c.Remove(p); rerr != nil && !isNotExist(rerr) {
			return classifyFS(err)
		}
		if err := r.c.Rename(tmp, p); err != nil {
			return classifyFS(err)
		}
	}
	return nil
}

func (r *sftpRemote) Get(ctx context.Context, name string) ([]byte, error) {
	f, err := r.c.Open(r.full(name))
	if err != nil {
		return nil, classifyFS(err)
	}
	defer func() { _ = f.Close() }() // a read: nothing to lose
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	return b, classifyFS(err)
}

func (r *sftpRemote) Delete(ctx context.Context, name string) error {
	return classifyFS(r.c.Remove(r.full(name)))
}

func (r *sftpRemote) Close() error {
	return errors.Join(r.c.Close(), r.ssh.Close())
}

// ---- local directory ----

// localRemote is a folder of the host inside base, a folder the operator
// allowed (--backup-dirs). base must exist (an unmounted disk is not
// written through to the root disk); the tenant's folders below it are
// made as needed.
type localRemote struct{ dir, base string }

func (r *localRemote) full(name string) string { return filepath.Join(r.dir, filepath.FromSlash(name)) }

func (r *localRemote) Put(ctx context.Context, name string, body io.Reader, _ int64) error {
	st, err := os.Stat(r.base)
	if err != nil {
		return classifyFS(err)
	}
	if !st.IsDir() {
		return stepErr("storage", "backup_destination_not_found", fmt.Errorf("%s is not a directory", r.base))
	}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return classifyFS(err)
	}
	p := r.full(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return classifyFS(err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".xr-copy-*")
	if err != nil {
		return classifyFS(err)
	}
	_, err = io.Copy(f, body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name()) // best effort: a temporary name
		return classifyFS(err)
	}
	return nil
}

func (r *localRemote) Get(ctx context.Context, name string) ([]byte, error) {
	f, err := os.Open(r.full(name))
	if err != nil {
		return nil, classifyFS(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	return b, classifyFS(err)
}

func (r *localRemote) Delete(ctx context.Context, name string) error {
	return classifyFS(os.Remove(r.full(name)))
}

func (r *localRemote) Close() error { return nil }
