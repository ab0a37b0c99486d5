package db

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func openTenantFile(t testing.TB, path string) *DB {
	t.Helper()
	d, err := Open(path, "tenant", Options{Durable: true, Readers: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestOpenMigratesAndPragmas(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "t.db")
	d := openTenantFile(t, path)
	ctx := context.Background()
	v, err := SchemaVersion(ctx, d.R)
	if err != nil || v != LatestVersion("tenant") || v == 0 {
		t.Fatalf("schema version %d, latest %d, %v", v, LatestVersion("tenant"), err)
	}
	ms, _ := Migrations("tenant")
	var n int
	d.R.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n)
	if n != len(ms) {
		t.Fatalf("%d migrations recorded, %d embedded", n, len(ms))
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].Version <= ms[i-1].Version {
			t.Fatalf("migrations out of order: %v", ms)
		}
	}
	var kind string
	d.R.QueryRow(`SELECT value FROM meta WHERE key = 'file_kind'`).Scan(&kind)
	if kind != "xr-tenant" {
		t.Fatalf("file_kind %q", kind)
	}
	// Every pooled connection carries the DSN's pragmas.
	for _, c := range []struct {
		db   *sql.DB
		name string
	}{{d.W, "writer"}, {d.R, "reader"}} {
		var mode string
		var fk, busy, sync int
		c.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
		c.db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk)
		c.db.QueryRow(`PRAGMA busy_timeout`).Scan(&busy)
		c.db.QueryRow(`PRAGMA synchronous`).Scan(&sync)
		if mode != "wal" || fk != 1 || busy < 1000 || sync != 1 { // NORMAL: durability comes from walSync
			t.Errorf("%s: journal_mode %s foreign_keys %d busy_timeout %d synchronous %d", c.name, mode, fk, busy, sync)
		}
	}
	// Readers cannot write.
	if _, err := d.R.Exec(`INSERT INTO settings(key, value) VALUES ('x', '1')`); err == nil {
		t.Fatal("a reader connection wrote")
	}
	// Re-opening is idempotent: no migration runs twice.
	d.Close()
	d2 := openTenantFile(t, path)
	d2.R.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n)
	if n != len(ms) {
		t.Fatalf("after reopen: %d migrations recorded", n)
	}
	if LatestVersion("nope") != 0 {
		t.Fatal("LatestVersion of an unknown set")
	}
}

func TestWriteCommitsRollsBackAndIgnoresCancel(t *testing.T) {
	t.Parallel()
	d := openTenantFile(t, filepath.Join(t.TempDir(), "t.db"))
	ctx := context.Background()
	if err := d.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`CREATE TABLE w(id INTEGER PRIMARY KEY, v TEXT UNIQUE, p INTEGER REFERENCES w(id))`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) { d.R.QueryRow(`SELECT COUNT(*) FROM w`).Scan(&n); return }

	boom := errors.New("boom")
	err := d.Write(ctx, func(tx *sql.Tx) error {
		tx.Exec(`INSERT INTO w(v) VALUES ('a')`)
		return boom
	})
	if !errors.Is(err, boom) || count() != 0 {
		t.Fatalf("rollback: %v, %d rows", err, count())
	}

	// A client hanging up does not abort the transaction or its commit:
	// neither when it is gone before Write starts, nor when it hangs up
	// between the last statement and the commit.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.Write(cctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO w(v) VALUES ('pre')`)
		return err
	}); err != nil || count() != 1 {
		t.Fatalf("write on a cancelled context: %v, %d rows", err, count())
	}
	cctx, cancel = context.WithCancel(ctx)
	if err := d.Write(cctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO w(v) VALUES ('a')`)
		cancel()
		time.Sleep(10 * time.Millisecond) // let database/sql notice, if it watches cctx
		return err
	}); err != nil || count() != 2 {
		t.Fatalf("hang-up before commit: %v, %d rows", err, count())
	}
	// The writer connection is healthy afterwards.
	if err := d.Write(ctx, func(tx *sql.Tx) error { _, err := tx.Exec(`DELETE FROM w WHERE v = 'pre'`); return err }); err != nil || count() != 1 {
		t.Fatalf("writer after hang-ups: %v", err)
	}

	// Errors are mapped by result code.
	err = d.Write(ctx, func(tx *sql.Tx) error { _, err := tx.Exec(`INSERT INTO w(v) VALUES ('a')`); return err })
	if !IsUnique(err) || IsForeignKey(err) || IsBusy(err) {
		t.Fatalf("unique violation: %v", err)
	}
	err = d.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO w(id, v) VALUES ((SELECT id FROM w WHERE v = 'a'), 'b')`)
		return err
	})
	if !IsUnique(err) {
		t.Fatalf("primary key violation: %v", err)
	}
	err = d.Write(ctx, func(tx *sql.Tx) error { _, err := tx.Exec(`INSERT INTO w(v, p) VALUES ('c', 999)`); return err })
	if !IsForeignKey(err) || IsUnique(err) {
		t.Fatalf("foreign key violation: %v", err)
	}
	if IsUnique(nil) || IsUnique(errors.New("UNIQUE constraint failed")) {
		t.Fatal("IsUnique matched something that is not a driver error")
	}

	// Read runs one snapshot.
	var a, b int
	if err := d.Read(ctx, func(tx *sql.Tx) error {
		tx.QueryRow(`SELECT COUNT(*) FROM w`).Scan(&a)
		d.Write(ctx, func(wtx *sql.Tx) error { _, err := wtx.Exec(`INSERT INTO w(v) VALUES ('late')`); return err })
		return tx.QueryRow(`SELECT COUNT(*) FROM w`).Scan(&b)
	}); err != nil {
		t.Fatal(err)
	}
	if a != b || count() != a+1 {
		t.Fatalf("snapshot moved: %d then %d (now %d)", a, b, count())
	}
}

// Concurrent writers queue on the one writer connection: no SQLITE_BUSY,
// no lost update.
func TestConcurrentWritersSerialize(t *testing.T) {
	t.Parallel()
	d := openTenantFile(t, filepath.Join(t.TempDir(), "t.db"))
	ctx := context.Background()
	d.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`CREATE TABLE c(id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO c VALUES (1, 0)`)
		return err
	})
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for g := 0; g < 20; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				errs <- d.Write(ctx, func(tx *sql.Tx) error {
					var n int
					if err := tx.QueryRow(`SELECT n FROM c WHERE id = 1`).Scan(&n); err != nil {
						return err
					}
					_, err := tx.Exec(`UPDATE c SET n = ? WHERE id = 1`, n+1)
					return err
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int
	d.R.QueryRow(`SELECT n FROM c`).Scan(&n)
	if n != 400 {
		t.Fatalf("lost updates: %d of 400", n)
	}
}

func TestPoolAcquireReleaseEvictReap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := NewPool(dir, 100*time.Millisecond)
	defer p.Close()
	if _, _, err := p.Acquire("ghost", false); !errors.Is(err, ErrNoTenantFile) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := os.Stat(TenantPath(dir, "ghost")); err == nil {
		t.Fatal("Acquire(create=false) created a file")
	}

	// Concurrent first opens of one file share one *DB.
	var wg sync.WaitGroup
	dbs := make([]*DB, 16)
	rels := make([]func(), 16)
	for i := range dbs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			d, rel, err := p.Acquire("acme", true)
			if err != nil {
				t.Error(err)
				return
			}
			dbs[i], rels[i] = d, rel
		}(i)
	}
	wg.Wait()
	for i := range dbs {
		if dbs[i] != dbs[0] {
			t.Fatal("two handles for one file")
		}
	}
	if p.OpenCount() != 1 || dbs[0].Path != TenantPath(dir, "acme") || p.Path("acme") != TenantPath(dir, "acme") {
		t.Fatalf("open %d path %s", p.OpenCount(), dbs[0].Path)
	}
	// In use: the reaper leaves it open however long it idles.
	time.Sleep(300 * time.Millisecond)
	if p.OpenCount() != 1 {
		t.Fatal("reaped while in use")
	}
	for _, rel := range rels {
		rel()
		rel() // release is idempotent
	}
	// Idle and released: closed by the reaper.
	deadline := time.Now().Add(20 * time.Second)
	for p.OpenCount() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("idle file never closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Re-acquired after the reap: a working handle again.
	d, rel, err := p.Acquire("acme", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.R.Ping(); err != nil {
		t.Fatal(err)
	}
	// Evict waits for the user to release.
	evicted := make(chan struct{})
	go func() { p.Evict(context.Background(), "acme"); close(evicted) }()
	select {
	case <-evicted:
		t.Fatal("evicted while in use")
	case <-time.After(100 * time.Millisecond):
	}
	rel()
	select {
	case <-evicted:
	case <-time.After(20 * time.Second):
		t.Fatal("Evict did not finish after release")
	}
	if p.OpenCount() != 0 {
		t.Fatal("evicted file still open")
	}
}
