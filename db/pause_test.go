package db

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func openPauseDB(t *testing.T) *DB {
	t.Helper()
	d, err := Open(filepath.Join(t.TempDir(), "t.db"), "tenant", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func insertMeta(ctx context.Context, d *DB, k string) error {
	return d.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES (?, 'v')`, k)
		return err
	})
}

func count(t *testing.T, d *DB, k string) int {
	t.Helper()
	var n int
	if err := d.R.QueryRow(`SELECT count(*) FROM meta WHERE key = ?`, k).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A pause waits for the write in flight, refuses every other write with
// its reason until Resume (nothing written), and lets the holder's own
// writes through; a second pause is refused with the first's error.
func TestPauseRefusesWritesUntilResume(t *testing.T) {
	t.Parallel()
	d := openPauseDB(t)
	ctx := context.Background()
	inTx, release := make(chan struct{}), make(chan struct{})
	inflight := make(chan error, 1)
	go func() {
		inflight <- d.Write(ctx, func(tx *sql.Tx) error {
			close(inTx)
			<-release
			_, err := tx.Exec(`INSERT INTO meta(key, value) VALUES ('inflight', 'v')`)
			return err
		})
	}()
	<-inTx
	paused := make(chan *Pause, 1)
	go func() {
		p, err := d.Pause(ctx, "restore_in_progress", 7*time.Second)
		if err != nil {
			t.Error(err)
		}
		paused <- p
	}()
	// The pause is announced at once: new writes are refused while the
	// one in flight finishes.
	for deadline := time.Now().Add(20 * time.Second); d.paused.Load() == nil; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("the pause was never announced")
		}
	}
	err := insertMeta(ctx, d, "refused")
	pe, ok := IsPaused(err)
	if !ok || pe.Reason != "restore_in_progress" || pe.RetryAfter != 7*time.Second {
		t.Fatalf("%v", err)
	}
	close(release)
	if err := <-inflight; err != nil {
		t.Fatal(err)
	}
	p := <-paused
	if _, err := d.Pause(ctx, "other", time.Second); err == nil {
		t.Fatal("a second pause was granted")
	}
	if err := insertMeta(p.Bind(ctx), d, "holder"); err != nil {
		t.Fatal(err)
	}
	if _, ok := IsPaused(insertMeta(ctx, d, "refused")); !ok {
		t.Fatal("written while paused")
	}
	p.Resume()
	p.Resume() // idempotent
	if err := insertMeta(ctx, d, "after"); err != nil {
		t.Fatal(err)
	}
	// After Resume the holder's context is an ordinary one.
	if err := insertMeta(p.Bind(ctx), d, "holder-after"); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int{"inflight": 1, "refused": 0, "holder": 1, "after": 1} {
		if n := count(t, d, k); n != want {
			t.Fatalf("%s: %d rows", k, n)
		}
	}
}

// A context bound to a file's content is refused its writes once a
// restore replaced that content; a context bound after writes.
func TestBindRefusesWritesAfterARestore(t *testing.T) {
	t.Parallel()
	d := openPauseDB(t)
	ctx := context.Background()
	snap := filepath.Join(t.TempDir(), "snap.db")
	if err := Snapshot(ctx, d, snap); err != nil {
		t.Fatal(err)
	}
	before := d.Bind(ctx)
	if err := insertMeta(before, d, "before"); err != nil {
		t.Fatal(err)
	}
	if err := RestoreInto(ctx, d, snap); err != nil {
		t.Fatal(err)
	}
	if err := insertMeta(before, d, "stale"); !errors.Is(err, ErrReplaced) {
		t.Fatalf("%v", err)
	}
	if err := insertMeta(d.Bind(ctx), d, "fresh"); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int{"before": 0, "stale": 0, "fresh": 1} {
		if n := count(t, d, k); n != want {
			t.Fatalf("%s: %d rows", k, n)
		}
	}
}
