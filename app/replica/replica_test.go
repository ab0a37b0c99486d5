package replica_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"xr/app"
	"xr/app/replica"
	"xr/app/subs"
	"xr/db"
	"xr/internal/xrtest"
)

// primary is an instance whose files replicate to a file:// replica in a
// temp dir, closed (replicator first) when the test ends.
func primary(t *testing.T, opt replica.Options) (*app.App, replica.Target, *replica.Replicator) {
	t.Helper()
	target, err := replica.ParseTarget("file://" + t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return primaryTo(t, target, opt)
}

// primaryTo is primary replicating to target.
func primaryTo(t *testing.T, target replica.Target, opt replica.Options) (*app.App, replica.Target, *replica.Replicator) {
	t.Helper()
	a := xrtest.Open(t, app.Config{Checkpoints: db.CheckpointExternal}, subs.Module)
	rep, err := replica.Start(context.Background(), a, target, opt)
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rep.Close(context.Background()); err != nil {
			t.Error(err)
		}
		a.Close()
		if n := rep.Failed(); n != 0 {
			t.Errorf("%d tenant openings ran without replication", n)
		}
	})
	return a, target, rep
}

// createSubscriber creates username in slug through the app, holding the
// tenant only for the call.
func createSubscriber(t *testing.T, a *app.App, slug, username string) {
	t.Helper()
	ten, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := subs.Create(context.Background(), xrtest.System(t, ten), subs.CreateInput{Username: username, Password: "pw-" + username}); err != nil {
		t.Fatal(err)
	}
}

// restoredCount restores the replica of rel into a fresh file and counts
// the rows of query there; ok is false while the replica has nothing to
// restore yet.
func restoredCount(t *testing.T, target replica.Target, rel, query string, args ...any) (n int, ok bool) {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(rel))
	if err := replica.Restore(context.Background(), target, rel, out); err != nil {
		if errors.Is(err, replica.ErrNothingToRestore) {
			return 0, false
		}
		t.Fatal(err)
	}
	c, err := sql.Open("sqlite", "file:"+out+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n, true
}

func TestPrimaryStreamsInstanceAndTenantFiles(t *testing.T) {
	t.Parallel()
	a, target, _ := primary(t, replica.Options{SyncEvery: 50 * time.Millisecond})
	xrtest.Tenant(t, a, "acme")
	createSubscriber(t, a, "acme", "alice")

	// The files stay open: only the continuous streaming can bring these.
	xrtest.Eventually(t, "the tenant row in the replica of instance.db", func() bool {
		n, ok := restoredCount(t, target, "instance.db", `SELECT COUNT(*) FROM tenants WHERE slug = ?`, "acme")
		return ok && n == 1
	})
	xrtest.Eventually(t, "the subscriber in the replica of the tenant file", func() bool {
		n, ok := restoredCount(t, target, "tenants/acme.db", `SELECT COUNT(*) FROM users WHERE username = ?`, "alice")
		return ok && n == 1
	})
}

func TestClosingTenantShipsItsLastWrites(t *testing.T) {
	t.Parallel()
	// Nothing is shipped on a timer within the test: what reaches the
	// replica of the tenant file is the close's final sync.
	a, target, rep := primary(t, replica.Options{SyncEvery: time.Hour})
	xrtest.Tenant(t, a, "acme")
	createSubscriber(t, a, "acme", "bob")

	const q = `SELECT COUNT(*) FROM users WHERE username = ?`
	if n, ok := restoredCount(t, target, "tenants/acme.db", q, "bob"); ok {
		t.Fatalf("the tenant reached the replica before the close (%d rows for bob): the test proves nothing", n)
	}
	if n := a.Pool.CloseIdle(); n != 1 {
		t.Fatalf("closed %d tenant files, want 1", n)
	}
	if n, ok := restoredCount(t, target, "tenants/acme.db", q, "bob"); !ok || n != 1 {
		t.Fatalf("after the close the replica has %d rows for bob (restorable: %v), want 1", n, ok)
	}

	// The next opening replicates again: a write after it ships at the
	// next close too.
	createSubscriber(t, a, "acme", "carol")
	if n := a.Pool.CloseIdle(); n != 1 {
		t.Fatalf("closed %d tenant files, want 1", n)
	}
	if n, ok := restoredCount(t, target, "tenants/acme.db", `SELECT COUNT(*) FROM users WHERE username IN ('bob', 'carol')`); !ok || n != 2 {
		t.Fatalf("after the second close the replica has %d of bob and carol, want 2", n)
	}

	// Stopping the replicator (xr serve's shutdown) ships the files still
	// open, taken on by Litestream or not.
	createSubscriber(t, a, "acme", "dave")
	if err := rep.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, ok := restoredCount(t, target, "tenants/acme.db", q, "dave"); !ok || n != 1 {
		t.Fatalf("after the replicator stopped the replica has %d rows for dave, want 1", n)
	}
	if n, ok := restoredCount(t, target, "instance.db", `SELECT COUNT(*) FROM tenants WHERE slug = ?`, "acme"); !ok || n != 1 {
		t.Fatalf("after the replicator stopped the replica of instance.db has %d rows for acme, want 1", n)
	}
}

func TestParseTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw     string
		wantErr error // nil: parses; errAny: any error
	}{
		{"file:///mnt/xr-replica", nil},
		{"file://replica", nil},
		{"file://", errAny},
		{"/mnt/xr-replica", errAny},
		{"sftp://backup@host/srv/xr", nil},
		{"sftp://backup@host:2222/srv/xr", nil},
		{"sftp://host/srv/xr", errAny},           // no user
		{"sftp://backup:pw@host/srv/xr", errAny}, // a password in the URL
		{"sftp://backup@host", errAny},           // no directory
		{"sftp://backup@host/xr?x=1", errAny},    // no parameters
		{"s3://bucket/xr?region=eu-west-1", nil}, // AWS
		{"s3://bucket?endpoint=https://s3.example.net", nil},
		{"s3://bucket/xr?endpoint=http://10.0.0.5:9000&path-style=true", nil},
		{"s3://bucket/xr", errAny},                     // AWS without a region
		{"s3://key:secret@bucket/xr?region=x", errAny}, // a secret in the URL
		{"s3://bucket/xr?endpoint=ftp://host", errAny},
		{"s3://bucket/xr?region=x&acl=public", errAny},
		{"s3://bucket/xr?region=x&path-style=yes", errAny},
		{"s3:///xr?region=x", errAny}, // no bucket
		{"http://host/xr", errAny},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			t.Parallel()
			tg, err := replica.ParseTarget(tc.raw)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr == nil && tg.URL != tc.raw:
				t.Fatalf("URL %q", tg.URL)
			case tc.wantErr == errAny && err == nil, tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
}

var errAny = errors.New("any error")

// TestSeedsTenantsTheReplicaLacks: a tenant written before replication
// began and not opened since still reaches the replica (a standby would
// otherwise lack it until someone used it on the primary).
func TestSeedsTenantsTheReplicaLacks(t *testing.T) {
	t.Parallel()
	a := xrtest.Open(t, app.Config{Checkpoints: db.CheckpointExternal}, subs.Module)
	xrtest.Tenant(t, a, "acme")
	createSubscriber(t, a, "acme", "erin")
	if n := a.Pool.CloseIdle(); n != 1 {
		t.Fatalf("closed %d tenant files, want 1", n)
	}
	target, err := replica.ParseTarget("file://" + t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replica.Start(context.Background(), a, target, replica.Options{SyncEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rep.Close(context.Background()); err != nil {
			t.Error(err)
		}
		a.Close()
	})
	xrtest.Eventually(t, "the unopened tenant's subscriber in the replica", func() bool {
		n, ok := restoredCount(t, target, "tenants/acme.db", `SELECT COUNT(*) FROM users WHERE username = ?`, "erin")
		return ok && n == 1
	})
	if n := rep.Failed(); n != 0 {
		t.Fatalf("%d tenant openings ran without replication", n)
	}
}
