package replica

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/benbjohnson/litestream"
	"github.com/benbjohnson/litestream/file"
	ls3 "github.com/benbjohnson/litestream/s3"
	lsftp "github.com/benbjohnson/litestream/sftp"
)

// Target is where the replicas of an instance's files live: one Litestream
// replica per file, under the file's path relative to the data directory
// (DIR/instance.db/, DIR/tenants/<slug>.db/), in a directory (file://), on
// an SFTP server (sftp://) or in an S3-compatible bucket (s3://).
type Target struct {
	URL    string // as the operator wrote it
	Scheme string // file, sftp or s3
	dir    string // file://: the directory
	gen    uint64 // the generation whose files client names (generation.go); 0: the root

	host string // sftp: host:port; s3: the endpoint's host:port ("" for AWS)
	user string // sftp
	root string // sftp: the directory; s3: the key prefix ("" for the bucket's root)

	bucket, region string // s3
	endpoint       string // s3: the endpoint URL ("" for AWS)
	pathStyle      bool   // s3

	creds Credentials

	clients *clients // remote: one client per file, shared by the copies of t
}

// WithCredentials is t opening with c.
func (t Target) WithCredentials(c Credentials) Target {
	t.creds, t.clients = c, &clients{m: map[string]litestream.ReplicaClient{}}
	return t
}

// Credentials are what t opens with.
func (t Target) Credentials() Credentials { return t.creds }

// clients keeps a remote target's Litestream clients: Litestream's sftp
// client has no Close (its SSH connection lasts as long as the client), so
// each file gets one client for the life of the process, reused by every
// opening of the file, instead of a connection left behind at each.
type clients struct {
	mu sync.Mutex
	m  map[string]litestream.ReplicaClient
	ls lister // lists the tenant files (the follower)
}

// Credentials open a remote replica. They never come on the command line
// (process lists show it): the operator gives them in the environment or
// on standard input, and xr keeps them sealed (SaveCredentials).
type Credentials struct {
	Password        string `json:"password,omitempty"`          // sftp
	KeyFile         string `json:"key_file,omitempty"`          // sftp: a private key file (OpenSSH or PEM)
	AccessKeyID     string `json:"access_key_id,omitempty"`     // s3
	SecretAccessKey string `json:"secret_access_key,omitempty"` // s3
	// HostKey is the SFTP server's key, pinned at the first connect
	// (an authorized_keys line); another key is refused afterwards.
	HostKey string `json:"host_key,omitempty"`
}

// ParseTarget reads a --replicate-to / --standby-of URL:
//
//	file://DIR                          a directory (file:///mnt/replica, or relative: file://replica)
//	sftp://USER@HOST[:PORT]/DIR         an SFTP server (port 22 by default)
//	s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path-style=true]
//
// A URL never carries a secret: a password in it is refused.
func ParseTarget(raw string) (Target, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Target{}, fmt.Errorf("replica %q: want scheme://location, e.g. file:///mnt/xr-replica", raw)
	}
	t := Target{URL: raw, Scheme: scheme, clients: &clients{m: map[string]litestream.ReplicaClient{}}}
	var err error
	switch scheme {
	case "file":
		if rest == "" {
			return Target{}, fmt.Errorf("replica %q: file:// needs a directory", raw)
		}
		t.dir, err = filepath.Abs(filepath.FromSlash(rest))
	case "sftp":
		err = t.parseSFTP()
	case "s3":
		err = t.parseS3()
	default:
		return Target{}, fmt.Errorf("replica %q: unknown scheme %q (file://, sftp:// or s3://)", raw, scheme)
	}
	if err != nil {
		return Target{}, fmt.Errorf("replica %q: %w", raw, err)
	}
	return t, nil
}

func (t *Target) parseSFTP() error {
	u, err := url.Parse(t.URL)
	if err != nil {
		return err
	}
	if err := noSecretIn(u); err != nil {
		return err
	}
	if len(u.Query()) > 0 {
		return errors.New("sftp:// takes no query parameters")
	}
	if u.User == nil || u.User.Username() == "" {
		return errors.New("sftp:// needs a user: sftp://USER@HOST/DIR")
	}
	if u.Hostname() == "" {
		return errors.New("sftp:// needs a host: sftp://USER@HOST/DIR")
	}
	if u.Path == "" || u.Path == "/" {
		return errors.New("sftp:// needs a directory: sftp://USER@HOST/DIR")
	}
	port := u.Port()
	if port == "" {
		port = "22"
	}
	t.user, t.host, t.root = u.User.Username(), net.JoinHostPort(u.Hostname(), port), path.Clean(u.Path)
	return nil
}

var s3Params = map[string]bool{"endpoint": true, "region": true, "path-style": true}

func (t *Target) parseS3() error {
	u, err := url.Parse(t.URL)
	if err != nil {
		return err
	}
	if err := noSecretIn(u); err != nil {
		return err
	}
	if u.User != nil {
		return errors.New("s3:// takes no user: the access key goes in XR_REPLICA_ACCESS_KEY_ID")
	}
	if u.Host == "" {
		return errors.New("s3:// needs a bucket: s3://BUCKET/PREFIX")
	}
	q := u.Query()
	for k := range q {
		if !s3Params[k] {
			return fmt.Errorf("s3:// query parameter %q is unknown (endpoint, region, path-style)", k)
		}
	}
	t.bucket, t.root, t.region = u.Host, strings.Trim(u.Path, "/"), q.Get("region")
	switch q.Get("path-style") {
	case "", "false":
	case "true":
		t.pathStyle = true
	default:
		return errors.New("s3:// path-style is true or false")
	}
	if e := q.Get("endpoint"); e != "" {
		eu, err := url.Parse(e)
		if err != nil || (eu.Scheme != "https" && eu.Scheme != "http") || eu.Host == "" || (eu.Path != "" && eu.Path != "/") || eu.User != nil {
			return fmt.Errorf("s3:// endpoint %q: want https://HOST[:PORT] (or http://)", e)
		}
		t.endpoint, t.host = eu.Scheme+"://"+eu.Host, eu.Host
		if t.region == "" {
			t.region = "us-east-1" // what S3-compatible servers expect when they care at all
		}
	} else if t.region == "" {
		return errors.New("s3:// on AWS needs a region: s3://BUCKET/PREFIX?region=eu-west-1")
	}
	return nil
}

func noSecretIn(u *url.URL) error {
	if _, ok := u.User.Password(); ok {
		return errors.New("a password in the URL would show in the process list: give it in XR_REPLICA_SECRET or with --replica-secret-stdin")
	}
	return nil
}

// Remote reports whether the target is reached over the network (sftp://,
// s3://): it needs credentials and the egress rules apply to its address.
func (t Target) Remote() bool { return t.Scheme == "sftp" || t.Scheme == "s3" }

// Hostname is the name or address the target connects to ("" for a
// directory or AWS).
func (t Target) Hostname() string {
	h, _, err := net.SplitHostPort(t.host)
	if err != nil {
		return t.host
	}
	return h
}

// ErrNoCredentials: a remote target was given without its credentials.
var ErrNoCredentials = errors.New("no credentials")

// CheckCredentials reports what a remote target lacks.
func (t Target) CheckCredentials() error {
	c := t.creds
	switch t.Scheme {
	case "sftp":
		if c.Password == "" && c.KeyFile == "" {
			return fmt.Errorf("replica %s: %w: give the SFTP password in XR_REPLICA_SECRET (or --replica-secret-stdin), or a private key with --replica-key-file", t.URL, ErrNoCredentials)
		}
	case "s3":
		if c.AccessKeyID == "" || c.SecretAccessKey == "" {
			return fmt.Errorf("replica %s: %w: give the access key in XR_REPLICA_ACCESS_KEY_ID and its secret in XR_REPLICA_SECRET (or --replica-secret-stdin)", t.URL, ErrNoCredentials)
		}
	}
	return nil
}

// client is the replica client of the file at rel (relative to the data
// directory, e.g. "tenants/acme.db") in the target's generation
// (g<N>/tenants/acme.db).
func (t Target) client(rel string) litestream.ReplicaClient {
	return t.rootClient(t.genDir() + rel)
}

// genDir is the folder of the target's generation ("g3/"; "" for none).
func (t Target) genDir() string {
	if t.gen == 0 {
		return ""
	}
	return fmt.Sprintf("g%d/", t.gen)
}

// rootClient is a replica client at rel from the replica's root:
// Litestream's own file, sftp or s3 client (a remote one kept for the
// process's life: Litestream's sftp client has no Close).
func (t Target) rootClient(rel string) litestream.ReplicaClient {
	if !t.Remote() {
		return file.NewReplicaClient(filepath.Join(t.dir, filepath.FromSlash(rel)))
	}
	t.clients.mu.Lock()
	defer t.clients.mu.Unlock()
	c := t.clients.m[rel]
	if c == nil {
		c = t.newClient(rel)
		t.clients.m[rel] = c
	}
	return c
}

func (t Target) newClient(rel string) litestream.ReplicaClient {
	switch t.Scheme {
	case "sftp":
		c := lsftp.NewReplicaClient()
		c.Host, c.User, c.Path = t.host, t.user, path.Join(t.root, rel)
		c.Password, c.KeyPath, c.HostKey = t.creds.Password, t.creds.KeyFile, t.creds.HostKey
		c.DialTimeout = dialTimeout
		return c
	case "s3":
		c := ls3.NewReplicaClient()
		c.Bucket, c.Path, c.Region = t.bucket, path.Join(t.root, rel), t.region
		c.Endpoint, c.ForcePathStyle = t.endpoint, t.pathStyle
		c.AccessKeyID, c.SecretAccessKey = t.creds.AccessKeyID, t.creds.SecretAccessKey
		return c
	}
	panic("replica: no client for scheme " + t.Scheme)
}

// holds reports whether the replica holds any copy of the file at rel
// (an LTX file at any level, snapshots included).
func (t Target) holds(ctx context.Context, rel string) (bool, error) {
	c := t.client(rel)
	for level := 0; level <= litestream.SnapshotLevel; level++ {
		itr, err := c.LTXFiles(ctx, level, 0, false)
		if err != nil {
			return false, err
		}
		found := itr.Next()
		if err := errors.Join(itr.Err(), itr.Close()); err != nil {
			return false, err
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}
