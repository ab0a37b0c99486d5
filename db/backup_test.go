package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A snapshot taken while several goroutines keep committing is a
// consistent file: it passes the checks, and holds exactly a prefix of the
// commits (ids 1..n without a gap, never half a transaction).
func TestSnapshotDuringConcurrentWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openTenantFile(t, filepath.Join(dir, "live.db"))
	ctx := context.Background()
	d.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`CREATE TABLE rows(id INTEGER PRIMARY KEY, txn INTEGER NOT NULL, pad TEXT NOT NULL)`)
		return err
	})
	var committed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr atomic.Value
	pad := strings.Repeat("x", 200)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// Two rows per transaction: a snapshot must hold both or neither.
				err := d.Write(ctx, func(tx *sql.Tx) error {
					for k := 0; k < 2; k++ {
						if _, err := tx.Exec(`INSERT INTO rows(txn, pad) VALUES (?, ?)`, g*1_000_000+i, pad); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					writeErr.Store(err)
					return
				}
				committed.Add(1)
			}
		}(g)
	}
	waitFor := func(n int64) {
		deadline := time.Now().Add(10 * time.Second)
		for committed.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("writers stalled at %d commits", committed.Load())
			}
			time.Sleep(time.Millisecond)
		}
	}
	var snaps []string
	for s := 0; s < 3; s++ {
		waitFor(int64(200 * (s + 1)))
		path := filepath.Join(dir, fmt.Sprintf("snap%d.db", s))
		before := committed.Load()
		if err := Snapshot(ctx, d, path); err != nil {
			t.Fatalf("snapshot %d: %v", s, err)
		}
		if committed.Load() == before {
			t.Log("no commit landed during the snapshot")
		}
		snaps = append(snaps, path)
	}
	close(stop)
	wg.Wait()
	if err := writeErr.Load(); err != nil {
		t.Fatalf("a writer failed during the snapshots: %v", err)
	}

	prev := 0
	for _, path := range snaps {
		v, err := CheckTenantFile(ctx, path)
		if err != nil || v != LatestVersion("tenant") {
			t.Fatalf("%s: version %d, %v", path, v, err)
		}
		c, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var n, max, txns, halves int
		c.QueryRow(`SELECT COUNT(*), COALESCE(MAX(id), 0), COUNT(DISTINCT txn) FROM rows`).Scan(&n, &max, &txns)
		c.QueryRow(`SELECT COUNT(*) FROM (SELECT txn FROM rows GROUP BY txn HAVING COUNT(*) != 2)`).Scan(&halves)
		c.Close()
		if n == 0 || n != max || n != 2*txns || halves != 0 {
			t.Fatalf("%s: %d rows, max id %d, %d transactions, %d halves: not a prefix of the commits", filepath.Base(path), n, max, txns, halves)
		}
		if n < prev {
			t.Fatalf("snapshots went backwards: %d after %d", n, prev)
		}
		prev = n
	}
	var final int
	d.R.QueryRow(`SELECT COUNT(*) FROM rows`).Scan(&final)
	if final != int(2*committed.Load()) || final < prev {
		t.Fatalf("live file: %d rows for %d commits", final, committed.Load())
	}
	// Snapshot never overwrites.
	if err := Snapshot(ctx, d, snaps[0]); err == nil {
		t.Fatal("snapshot overwrote an existing file")
	}
}

// RestoreInto swaps a checked file in; readers of the live file see the
// new content after it.
func TestRestoreIntoLiveFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	src := openTenantFile(t, filepath.Join(dir, "src.db"))
	src.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`CREATE TABLE r(id INTEGER PRIMARY KEY); INSERT INTO r VALUES (1),(2),(3); INSERT INTO meta(key, value) VALUES ('tenant_slug', 'src')`)
		return err
	})
	file := filepath.Join(dir, "backup.db")
	if err := Snapshot(ctx, src, file); err != nil {
		t.Fatal(err)
	}
	dst := openTenantFile(t, filepath.Join(dir, "dst.db"))
	dst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO meta(key, value) VALUES ('tenant_slug', 'dst'); INSERT INTO settings(key, value) VALUES ('only_in_dst', '1')`)
		return err
	})
	if err := RestoreInto(ctx, dst, file); err != nil {
		t.Fatal(err)
	}
	var n int
	dst.R.QueryRow(`SELECT COUNT(*) FROM r`).Scan(&n)
	var slug string
	dst.R.QueryRow(`SELECT value FROM meta WHERE key = 'tenant_slug'`).Scan(&slug)
	var left int
	dst.R.QueryRow(`SELECT COUNT(*) FROM settings WHERE key = 'only_in_dst'`).Scan(&left)
	if n != 3 || slug != "src" || left != 0 {
		t.Fatalf("after restore: %d rows, slug %q, %d leftovers", n, slug, left)
	}
	if v, _ := FileMeta(ctx, file, "tenant_slug"); v != "src" {
		t.Fatalf("FileMeta %q", v)
	}
	// The writer still works after the restore.
	if err := dst.Write(ctx, func(tx *sql.Tx) error { _, err := tx.Exec(`INSERT INTO r VALUES (4)`); return err }); err != nil {
		t.Fatal(err)
	}
}

func TestCheckTenantFileRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	d := openTenantFile(t, filepath.Join(dir, "live.db"))
	d.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`CREATE TABLE r(id INTEGER PRIMARY KEY, pad TEXT)`); err != nil {
			return err
		}
		for i := 0; i < 2000; i++ {
			if _, err := tx.Exec(`INSERT INTO r(pad) VALUES (?)`, strings.Repeat("p", 100)); err != nil {
				return err
			}
		}
		return nil
	})
	good := filepath.Join(dir, "good.db")
	if err := Snapshot(ctx, d, good); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckTenantFile(ctx, good); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(good)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	refuse := map[string]string{}
	refuse["text"] = write("text.db", []byte(strings.Repeat("hello, this is not sqlite\n", 300)))
	refuse["empty"] = write("empty.db", nil)
	refuse["truncated"] = write("truncated.db", raw[:len(raw)/3])
	hdr := append([]byte{}, raw...)
	copy(hdr, "NOT SQLITE AT ALL")
	refuse["header"] = write("header.db", hdr)
	// Garble the b-tree pages in the middle of the file (page size 4096).
	mid := append([]byte{}, raw...)
	for i := 4096 * 2; i < len(mid)-4096 && i < 4096*12; i++ {
		mid[i] = byte(i*7) ^ 0x5a
	}
	refuse["garbled"] = write("garbled.db", mid)

	plain := filepath.Join(dir, "plain.db")
	c, _ := sql.Open("sqlite", plain)
	c.Exec(`CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES ('file_kind', 'something-else')`)
	c.Close()
	refuse["foreign sqlite"] = plain

	inst, err := Open(filepath.Join(dir, "instance.db"), "instance", Options{})
	if err != nil {
		t.Fatal(err)
	}
	inst.Close()
	refuse["instance file"] = filepath.Join(dir, "instance.db")

	newer := write("newer.db", raw)
	c, _ = sql.Open("sqlite", newer)
	if _, err := c.Exec(`INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, 'future.sql', '2099-01-01 00:00:00')`, LatestVersion("tenant")+1); err != nil {
		t.Fatal(err)
	}
	c.Close()
	refuse["newer schema"] = newer

	for name, path := range refuse {
		if _, err := CheckTenantFile(ctx, path); err == nil {
			t.Errorf("%s: accepted", name)
		} else if name != "empty" && !errors.Is(err, ErrNotTenantFile) {
			t.Errorf("%s: %v does not wrap ErrNotTenantFile", name, err)
		}
	}
	if _, err := CheckTenantFile(ctx, filepath.Join(dir, "missing.db")); err == nil {
		t.Error("missing file accepted")
	}
	// The check is read-only: it did not create or change anything.
	if b, _ := os.ReadFile(good); len(b) != len(raw) {
		t.Fatal("check changed the file")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Fatal("check created a file")
	}
}
