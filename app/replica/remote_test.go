package replica_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"xr/app/replica"
	"xr/internal/storetest"
	"xr/internal/xrtest"
)

// remoteTarget starts an in-process server of scheme and returns a target
// on it with working credentials (not yet checked by Prepare).
func remoteTarget(t *testing.T, scheme string) replica.Target {
	t.Helper()
	var raw string
	var c replica.Credentials
	switch scheme {
	case "sftp":
		srv := storetest.StartSFTP(t, "", storetest.NewHostKey(t))
		raw = "sftp://" + srv.User + "@" + srv.Addr + filepath.ToSlash(t.TempDir()) + "/replica"
		c.Password = srv.Pass
	case "s3":
		srv := storetest.StartS3(t)
		raw = "s3://" + srv.Bucket + "/xr/replica?endpoint=" + srv.URL + "&path-style=true"
		c.AccessKeyID, c.SecretAccessKey = storetest.WriteKey, storetest.Secret
	}
	tg, err := replica.ParseTarget(raw)
	if err != nil {
		t.Fatal(err)
	}
	return tg.WithCredentials(c)
}

// TestRemoteTargets: through Litestream's own sftp and s3 clients, a
// tenant file and instance.db written on a primary reach the replica and
// restore, and a follower (a standby's) restores them and then applies
// what the primary writes next.
func TestRemoteTargets(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"sftp", "s3"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			target, err := replica.Prepare(ctx, remoteTarget(t, scheme), true)
			if err != nil {
				t.Fatal(err)
			}
			if scheme == "sftp" && target.Credentials().HostKey == "" {
				t.Fatal("Prepare did not pin the SFTP host key")
			}
			a, _, _ := primaryTo(t, target, replica.Options{SyncEvery: 50 * time.Millisecond})
			xrtest.Tenant(t, a, "acme")
			createSubscriber(t, a, "acme", "alice")
			xrtest.Eventually(t, "the tenant row in the replica of instance.db", func() bool {
				n, ok := restoredCount(t, target, "instance.db", `SELECT COUNT(*) FROM tenants WHERE slug = ?`, "acme")
				return ok && n == 1
			})
			xrtest.Eventually(t, "alice in the replica of the tenant file", func() bool {
				n, ok := restoredCount(t, target, "tenants/acme.db", `SELECT COUNT(*) FROM users WHERE username = ?`, "alice")
				return ok && n == 1
			})

			// A standby's follower, in two runs: the first restores, the
			// second resumes from the copy and applies what came since.
			standby := t.TempDir()
			follow(t, target, standby)
			if n := countIn(t, filepath.Join(standby, "tenants", "acme.db"), "alice"); n != 1 {
				t.Fatalf("the followed copy has %d rows for alice, want 1", n)
			}
			createSubscriber(t, a, "acme", "bob")
			xrtest.Eventually(t, "bob in the replica of the tenant file", func() bool {
				n, ok := restoredCount(t, target, "tenants/acme.db", `SELECT COUNT(*) FROM users WHERE username = ?`, "bob")
				return ok && n == 1
			})
			follow(t, target, standby)
			if n := countIn(t, filepath.Join(standby, "tenants", "acme.db"), "bob"); n != 1 {
				t.Fatalf("the followed copy has %d rows for bob after catching up, want 1", n)
			}
		})
	}
}

// follow runs a follower on dataDir until it has instance.db and the
// tenant file acme and has applied everything the replica holds, then
// stops it (the copies are read only once no follower writes them: a
// follower's page writes and this process's readers share fcntl locks).
func follow(t *testing.T, target replica.Target, dataDir string) {
	t.Helper()
	// The status of a former run must not count (xr serve removes it too).
	if err := os.Remove(replica.StatusPath(dataDir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var ferr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		ferr = replica.Follow(ctx, target, dataDir, replica.FollowOptions{Every: 50 * time.Millisecond})
	}()
	defer func() {
		cancel()
		wg.Wait()
		if ferr != nil {
			t.Fatal(ferr)
		}
	}()
	xrtest.Eventually(t, "the follower caught up with instance.db and acme", func() bool {
		st, err := replica.ReadStatus(dataDir)
		if err != nil {
			return false
		}
		for _, rel := range []string{"instance.db", "tenants/acme.db"} {
			f, ok := st.Files[rel]
			if !ok || !f.Pending.IsZero() || f.Commit.IsZero() {
				return false
			}
		}
		return true
	})
}

func countIn(t *testing.T, path, username string) (n int) {
	t.Helper()
	c, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.QueryRow(`SELECT COUNT(*) FROM users WHERE username = ?`, username).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Prepare refuses, before anything starts, a remote target without its
// credentials, on an address the egress rules refuse, whose SFTP server
// shows another key than the pinned one, or whose credentials fail.
func TestPrepareRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sftpOK := remoteTarget(t, "sftp")
	s3OK := remoteTarget(t, "s3")
	otherKey := storetest.NewHostKey(t).PublicKey()
	withCreds := func(tg replica.Target, edit func(*replica.Credentials)) replica.Target {
		c := tg.Credentials()
		edit(&c)
		return tg.WithCredentials(c)
	}
	for _, tc := range []struct {
		name         string
		target       replica.Target
		allowPrivate bool
		want         error // nil: any error
	}{
		{"sftp without credentials", withCreds(sftpOK, func(c *replica.Credentials) { *c = replica.Credentials{} }), true, replica.ErrNoCredentials},
		{"s3 without its secret", withCreds(s3OK, func(c *replica.Credentials) { c.SecretAccessKey = "" }), true, replica.ErrNoCredentials},
		{"sftp on loopback", sftpOK, false, replica.ErrAddressNotAllowed},
		{"s3 on loopback", s3OK, false, replica.ErrAddressNotAllowed},
		{"sftp host key changed", withCreds(sftpOK, func(c *replica.Credentials) {
			c.HostKey = authorizedKey(otherKey)
		}), true, replica.ErrHostKeyChanged},
		{"sftp wrong password", withCreds(sftpOK, func(c *replica.Credentials) { c.Password = "wrong" }), true, nil},
		{"s3 unknown key", withCreds(s3OK, func(c *replica.Credentials) { c.AccessKeyID = "AKNOBODY" }), true, nil},
		{"sftp key file missing", withCreds(sftpOK, func(c *replica.Credentials) {
			c.Password, c.KeyFile = "", filepath.Join(t.TempDir(), "absent")
		}), true, os.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := replica.Prepare(ctx, tc.target, tc.allowPrivate)
			if err == nil {
				t.Fatal("Prepare accepted it")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}

func authorizedKey(k ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// TestMain drops AWS_CA_BUNDLE (set on some build machines): Litestream's
// s3 client builds its own HTTP client, which the AWS SDK refuses to give
// a custom CA bundle (docs/ha.md says so for operators).
func TestMain(m *testing.M) {
	os.Unsetenv("AWS_CA_BUNDLE")
	os.Exit(m.Run())
}

// An SFTP replica opens with a private key file (--replica-key-file), and
// a host key pinned before (Prepare keeps it) is accepted again.
func TestPrepareSFTPKeyFile(t *testing.T) {
	t.Parallel()
	srv := storetest.StartSFTP(t, "", storetest.NewHostKey(t))
	keyFile := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(keyFile, []byte(srv.ClientKeyPEM(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	tg, err := replica.ParseTarget("sftp://" + srv.User + "@" + srv.Addr + filepath.ToSlash(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	first, err := replica.Prepare(context.Background(), tg.WithCredentials(replica.Credentials{KeyFile: keyFile}), true)
	if err != nil {
		t.Fatal(err)
	}
	pinned := first.Credentials().HostKey
	again, err := replica.Prepare(context.Background(), tg.WithCredentials(first.Credentials()), true)
	if err != nil || again.Credentials().HostKey != pinned {
		t.Fatalf("a second start with the pinned key: %v, host key %q, want %q", err, again.Credentials().HostKey, pinned)
	}
}
