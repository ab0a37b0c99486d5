package db

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Every durable commit is followed by an fsync of the WAL before Write
// returns, and concurrent committers share fsyncs.
func TestDurableWriteGroupsFsyncs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "g.db")
	d, err := Open(path, "tenant", Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	write := func(i int) {
		if err := d.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.Exec(`INSERT INTO settings(key, value) VALUES (?, '1')`, "k"+string(rune('a'+i%26))+string(rune('a'+i/26)))
			return err
		}); err != nil {
			t.Error(err)
		}
	}
	write(0)
	if d.wal.synced != 1 || d.wal.fsyncs.Load() != 1 {
		t.Fatalf("after one commit: synced %d fsyncs %d", d.wal.synced, d.wal.fsyncs.Load())
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no WAL: %v", err)
	}
	var wg sync.WaitGroup
	for i := 1; i <= 200; i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); write(i) }(i)
	}
	wg.Wait()
	if d.wal.synced != 201 {
		t.Fatalf("synced %d of 201 commits", d.wal.synced)
	}
	if f := d.wal.fsyncs.Load(); f > 201 {
		t.Fatalf("%d fsyncs for 201 commits", f)
	}
	t.Logf("201 commits, %d fsyncs", d.wal.fsyncs.Load())
	// A failed transaction syncs nothing and stores nothing.
	before := d.wal.committed.Load()
	d.Write(ctx, func(tx *sql.Tx) error {
		tx.Exec(`INSERT INTO settings(key, value) VALUES ('zz', '1')`)
		return sql.ErrTxDone
	})
	var n int
	d.R.QueryRow(`SELECT COUNT(*) FROM settings WHERE key = 'zz'`).Scan(&n)
	if n != 0 || d.wal.committed.Load() != before {
		t.Fatal("a rolled-back write was stored or counted")
	}
}

// When the WAL file is replaced (last connection closed, file recreated),
// the syncer follows the new file instead of syncing a deleted one.
func TestWalSyncFollowsRecreatedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := &walSync{path: filepath.Join(dir, "x-wal")}
	defer w.close()
	if err := w.sync(); err != nil { // no file yet: nothing to sync
		t.Fatal(err)
	}
	os.WriteFile(w.path, []byte("a"), 0o600)
	if err := w.sync(); err != nil || w.f == nil {
		t.Fatalf("sync: %v", err)
	}
	old := w.f
	os.Remove(w.path)
	os.WriteFile(w.path, []byte("b"), 0o600)
	if err := w.sync(); err != nil {
		t.Fatal(err)
	}
	if w.f == old {
		t.Fatal("kept syncing the deleted file")
	}
}
