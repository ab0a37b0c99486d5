package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"xr/app/egress"
)

// dialTimeout bounds connecting and authenticating to a remote target.
const dialTimeout = 15 * time.Second

// ErrAddressNotAllowed: the target's address is loopback, private or
// otherwise internal, and the operator did not allow such addresses.
var ErrAddressNotAllowed = errors.New("address not allowed")

// ErrHostKeyChanged: the SFTP server showed another key than the one
// pinned at the first connect.
var ErrHostKeyChanged = errors.New("the SFTP server's host key is not the one pinned at the first connect (if it was changed on purpose, pin the new one: xr serve --replica-host-key 'ssh-ed25519 AAAA...')")

// Prepare checks a remote target before anything starts, and returns it
// with the SFTP host key pinned: the credentials are there, its address
// passes the egress rules backup destinations follow (a loopback or
// private address only with allowPrivate, xr serve --allow-private-egress),
// an SFTP server shows the pinned host key (the one it shows now, on the
// first connect: the caller saves the credentials with it), and the
// credentials open the replica.
//
// The check of the address is made here, once: Litestream's clients dial
// on their own afterwards.
func Prepare(ctx context.Context, t Target, allowPrivate bool) (Target, error) {
	if !t.Remote() {
		return t, nil
	}
	if err := t.CheckCredentials(); err != nil {
		return t, err
	}
	if h := t.Hostname(); h != "" {
		valid, addr, class := egress.CheckHost(ctx, h, allowPrivate)
		if !valid {
			return t, fmt.Errorf("replica %s: %q is not a valid host name", t.URL, h)
		}
		if class != "" {
			return t, fmt.Errorf("replica %s: %w: %s is a %s address (xr serve --allow-private-egress allows it)", t.URL, ErrAddressNotAllowed, addr, class)
		}
	}
	if t.Scheme == "sftp" {
		key, err := t.sftpHostKey(ctx, allowPrivate)
		if err != nil {
			return t, fmt.Errorf("replica %s: %w", t.URL, err)
		}
		if t.creds.HostKey == "" {
			c := t.creds
			c.HostKey = key
			t = t.WithCredentials(c)
		}
	}
	if _, err := t.holds(ctx, "instance.db"); err != nil {
		return t, fmt.Errorf("replica %s: the credentials do not open it: %w", t.URL, err)
	}
	return t, nil
}

var errKeySeen = errors.New("host key seen")

// sftpHostKey connects to the SFTP server through the egress guard and
// returns the host key it shows (an authorized_keys line), refusing one
// other than the pinned key.
func (t Target) sftpHostKey(ctx context.Context, allowPrivate bool) (string, error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn, err := egress.SafeDialer(allowPrivate).DialContext(dctx, "tcp", t.host)
	if err != nil {
		var refused *egress.RefusedError
		if errors.As(err, &refused) {
			return "", fmt.Errorf("%w: %v (xr serve --allow-private-egress allows it)", ErrAddressNotAllowed, err)
		}
		return "", err
	}
	defer func() { _ = conn.Close() }() // the handshake stops at the key
	if err := conn.SetDeadline(time.Now().Add(dialTimeout)); err != nil {
		return "", err
	}
	var seen string
	cfg := &ssh.ClientConfig{User: t.user, HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
		seen = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key)))
		return errKeySeen
	}, Timeout: dialTimeout}
	if _, _, _, err := ssh.NewClientConn(conn, t.host, cfg); !errors.Is(err, errKeySeen) {
		return "", fmt.Errorf("ssh handshake: %w", err)
	}
	if pinned := t.creds.HostKey; pinned != "" {
		pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(pinned))
		sk, _, _, _, err2 := ssh.ParseAuthorizedKey([]byte(seen))
		if err != nil || err2 != nil || !bytes.Equal(pk.Marshal(), sk.Marshal()) {
			return "", ErrHostKeyChanged
		}
	}
	return seen, nil
}

// lister lists the tenant files a remote replica holds (their
// directories or key prefixes under tenants/).
type lister interface {
	tenants(ctx context.Context, dir string) ([]string, error) // dir: the tenants folder's key or path
}

// remoteFiles lists the files a remote replica holds: instance.db and
// tenants/*.db.
func (t Target) remoteFiles(ctx context.Context) ([]string, error) {
	var out []string
	has, err := t.holds(ctx, "instance.db")
	if err != nil {
		return nil, err
	}
	if has {
		out = append(out, "instance.db")
	}
	t.clients.mu.Lock()
	if t.clients.ls == nil {
		if t.Scheme == "s3" {
			t.clients.ls = &s3Lister{t: t}
		} else {
			t.clients.ls = &sftpLister{t: t}
		}
	}
	ls := t.clients.ls
	t.clients.mu.Unlock()
	names, err := ls.tenants(ctx, path.Join(t.root, t.genDir(), "tenants"))
	if err != nil {
		return out, err
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".db") {
			out = append(out, "tenants/"+n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// sftpLister keeps one SFTP session, opened again after a failure.
type sftpLister struct {
	t    Target
	ssh  *ssh.Client
	sftp *sftp.Client
}

func (l *sftpLister) tenants(ctx context.Context, dir string) ([]string, error) {
	if l.sftp == nil {
		if err := l.connect(); err != nil {
			return nil, err
		}
	}
	ents, err := l.sftp.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		_ = errors.Join(l.sftp.Close(), l.ssh.Close()) // failed already: reconnect next time
		l.sftp, l.ssh = nil, nil
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// connect opens an SSH session as Litestream's client does (the pinned
// host key, the password or the key file).
func (l *sftpLister) connect() error {
	c := l.t.creds
	pinned, _, _, _, err := ssh.ParseAuthorizedKey([]byte(c.HostKey))
	if err != nil {
		return fmt.Errorf("the SFTP host key is not pinned: %w", err)
	}
	cfg := &ssh.ClientConfig{User: l.t.user, HostKeyCallback: ssh.FixedHostKey(pinned), Timeout: dialTimeout}
	if c.Password != "" {
		cfg.Auth = append(cfg.Auth, ssh.Password(c.Password))
	}
	if c.KeyFile != "" {
		b, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return err
		}
		signer, err := ssh.ParsePrivateKey(b)
		if err != nil {
			return fmt.Errorf("%s: %w", c.KeyFile, err)
		}
		cfg.Auth = append(cfg.Auth, ssh.PublicKeys(signer))
	}
	sc, err := ssh.Dial("tcp", l.t.host, cfg)
	if err != nil {
		return err
	}
	fc, err := sftp.NewClient(sc)
	if err != nil {
		_ = sc.Close() // failing already
		return err
	}
	l.ssh, l.sftp = sc, fc
	return nil
}

// s3Lister lists the key prefixes under tenants/.
type s3Lister struct {
	t Target
	c *minio.Client
}

func (l *s3Lister) tenants(ctx context.Context, dir string) ([]string, error) {
	if l.c == nil {
		host, secure := "s3."+l.t.region+".amazonaws.com", true
		if l.t.endpoint != "" {
			host, secure = l.t.host, strings.HasPrefix(l.t.endpoint, "https://")
		}
		lookup := minio.BucketLookupAuto
		if l.t.pathStyle {
			lookup = minio.BucketLookupPath
		}
		c, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(l.t.creds.AccessKeyID, l.t.creds.SecretAccessKey, ""),
			Secure: secure, Region: l.t.region, BucketLookup: lookup})
		if err != nil {
			return nil, err
		}
		l.c = c
	}
	prefix := dir + "/"
	var out []string
	for obj := range l.c.ListObjects(ctx, l.t.bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if obj.Err != nil {
			return nil, obj.Err
		}
		if name, ok := strings.CutSuffix(strings.TrimPrefix(obj.Key, prefix), "/"); ok && name != "" {
			out = append(out, name)
		}
	}
	return out, nil
}
