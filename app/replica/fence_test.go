package replica_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/app/replica"
	"xr/app/subs"
	"xr/db"
	"xr/internal/xrtest"
)

// A primary holds its replica's generation; once another box takes the
// replica over (a promotion), the primary stops shipping and refuses every
// write with ERR_MAINTENANCE fenced, storing nothing; a primary that finds
// the replica held by another at its start is fenced from the start.
func TestPrimaryFencedWhenAnotherTakesOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, target, _ := primary(t, replica.Options{SyncEvery: 50 * time.Millisecond, StampEvery: 20 * time.Millisecond})
	xrtest.Tenant(t, a, "acme")
	createSubscriber(t, a, "acme", "alice")

	holder, err := replica.HolderID(a.Cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	st, ok, err := replica.ReadStamp(ctx, target)
	if err != nil || !ok || st.Gen != 1 || st.Holder != holder {
		t.Fatalf("stamp of a new replica = %+v %v %v; want generation 1 held by %s", st, ok, err, holder)
	}
	xrtest.Eventually(t, "alice in generation 1", func() bool {
		n, ok := restoredCount(t, target, "tenants/acme.db", `SELECT COUNT(*) FROM users WHERE username = 'alice'`)
		return ok && n == 1
	})
	if _, fenced := a.Fenced(); fenced {
		t.Fatal("fenced while it holds the replica")
	}

	next, err := replica.TakeOver(ctx, target, "the-promoted-box")
	if err != nil || next.Gen != 2 {
		t.Fatalf("take over: %+v %v", next, err)
	}
	xrtest.Eventually(t, "the primary fenced", func() bool { _, f := a.Fenced(); return f })
	if f, _ := a.Fenced(); f.Holder != "the-promoted-box" || f.Generation != 2 {
		t.Fatalf("fencing = %+v", f)
	}

	ten, release, err := a.Acquire("acme")
	if err != nil {
		t.Fatal(err)
	}
	_, err = subs.Create(ctx, xrtest.System(t, ten), subs.CreateInput{Username: "bob", Password: "pw-bob"})
	if e := app.Classify(err); e == nil || e.Status != 503 || e.Reason != "fenced" {
		t.Fatalf("a write on the fenced primary: %v (%+v)", err, e)
	}
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM users WHERE username = 'bob'`); n != 0 {
		t.Fatalf("bob stored on the fenced primary (%d rows)", n)
	}
	release()
	if err := a.Inst.Write(ctx, func(tx *sql.Tx) error { return nil }); !errors.Is(err, db.ErrFenced) {
		t.Fatalf("a write of instance.db on the fenced primary: %v", err)
	}

	// Generations never mix: the replica now follows generation 2, which
	// holds nothing of the fenced primary's.
	if _, err := os.Stat(filepath.Join(targetDir(t, target), "g1", "tenants", "acme.db")); err != nil {
		t.Fatalf("generation 1's files: %v", err)
	}
	if err := replica.Restore(ctx, target, "tenants/acme.db", filepath.Join(t.TempDir(), "x.db")); !errors.Is(err, replica.ErrNothingToRestore) {
		t.Fatalf("restore from generation 2 before its holder shipped anything: %v", err)
	}

	// Another box starting with the replica held by someone else: fenced
	// from its start, nothing replicated.
	b := xrtest.Open(t, app.Config{Checkpoints: db.CheckpointExternal}, subs.Module)
	t.Cleanup(b.Close)
	if _, err := replica.Start(ctx, b, target, replica.Options{}); !errors.Is(err, replica.ErrFenced) {
		t.Fatalf("start against a replica another holds: %v", err)
	}
	if f, ok := b.Fenced(); !ok || f.Holder != "the-promoted-box" {
		t.Fatalf("fencing at start = %+v %v", f, ok)
	}
	if st, _, _ := replica.ReadStamp(ctx, target); st.Holder != "the-promoted-box" || st.Gen != 2 {
		t.Fatalf("the refused start changed the stamp: %+v", st)
	}
}

// targetDir is the directory of a file:// target.
func targetDir(t *testing.T, target replica.Target) string {
	t.Helper()
	dir, ok := strings.CutPrefix(target.URL, "file://")
	if !ok {
		t.Fatalf("not a file:// target: %s", target.URL)
	}
	return dir
}
