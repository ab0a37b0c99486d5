package db

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// observed collects what DB.Observe hears.
type observed struct {
	mu   sync.Mutex
	errs []error
}

func (o *observed) hook(_ *DB, err error) { o.mu.Lock(); o.errs = append(o.errs, err); o.mu.Unlock() }
func (o *observed) last() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.errs) == 0 {
		return errors.New("nothing observed")
	}
	return o.errs[len(o.errs)-1]
}

func countRows(t *testing.T, d *DB) int {
	t.Helper()
	var n int
	if err := d.R.QueryRow(`SELECT COUNT(*) FROM filler`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// insertPair writes a small row, then a blob of size bytes, in one
// transaction: a refused blob must take the small row with it.
func insertPair(d *DB, size int) error {
	return d.Write(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO filler(b) VALUES (x'00')`); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO filler(b) VALUES (?)`, make([]byte, size))
		return err
	})
}

// TestIsFullOnMaxPageCount: a file at its max_page_count refuses a write
// with SQLITE_FULL (IsFull, by code), nothing of the transaction is kept,
// HasRoom says so, and raising the limit lets the same write through with
// everything committed before intact.
func TestIsFullOnMaxPageCount(t *testing.T) {
	t.Parallel()
	d := openTenantFile(t, filepath.Join(t.TempDir(), "t.db"))
	var o observed
	d.Observe = o.hook
	ctx := context.Background()
	if _, err := d.W.Exec(`CREATE TABLE filler(id INTEGER PRIMARY KEY, b BLOB)`); err != nil {
		t.Fatal(err)
	}
	if err := insertPair(d, 100); err != nil {
		t.Fatal(err)
	}
	if o.last() != nil {
		t.Fatalf("a commit observed as %v", o.last())
	}
	var pages int64
	if err := d.W.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	// The writer is one connection: the limit holds for every Write.
	if _, err := d.W.Exec(`PRAGMA max_page_count = ` + itoa(pages)); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.HasRoom(ctx); err != nil || ok {
		t.Fatalf("HasRoom at the limit: %v %v", ok, err)
	}
	err := insertPair(d, 64<<10)
	if !IsFull(err) {
		t.Fatalf("write past max_page_count: %v, want SQLITE_FULL", err)
	}
	if IsBusy(err) || IsUnique(err) || IsForeignKey(err) {
		t.Fatalf("SQLITE_FULL also classified as another error: %v", err)
	}
	if !IsFull(o.last()) {
		t.Fatalf("Observe heard %v", o.last())
	}
	if n := countRows(t, d); n != 2 {
		t.Fatalf("%d rows after the refused write, want the 2 committed before", n)
	}
	if IsFull(nil) || IsFull(errors.New("database or disk is full")) {
		t.Fatal("IsFull must go by the result code, never the text")
	}
	if _, err := d.W.Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.HasRoom(ctx); err != nil || !ok {
		t.Fatalf("HasRoom after raising the limit: %v %v", ok, err)
	}
	if err := insertPair(d, 64<<10); err != nil {
		t.Fatalf("the same write once there is room: %v", err)
	}
	if n := countRows(t, d); n != 4 {
		t.Fatalf("%d rows, want 4", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestIsFullOnTinyTmpfs: a real full filesystem (a 4 MiB tmpfs, root
// only) gives the same SQLITE_FULL, and freeing space lets writes resume.
func TestIsFullOnTinyTmpfs(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	d, err := Open(filepath.Join(dir, "t.db"), "tenant", Options{Durable: true, Readers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.W.Exec(`CREATE TABLE filler(id INTEGER PRIMARY KEY, b BLOB)`); err != nil {
		t.Fatal(err)
	}
	if err := insertPair(d, 100); err != nil {
		t.Fatal(err)
	}
	// Take (nearly) all the space left.
	pad := filepath.Join(dir, "pad")
	f, err := os.Create(pad)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	if ok, err := d.HasRoom(context.Background()); err != nil || ok {
		t.Fatalf("HasRoom on a full filesystem: %v %v", ok, err)
	}
	err = insertPair(d, 512<<10)
	if !IsFull(err) {
		t.Fatalf("write on a full filesystem: %v, want SQLITE_FULL", err)
	}
	if n := countRows(t, d); n != 2 {
		t.Fatalf("%d rows after the refused write, want 2", n)
	}
	if err := os.Remove(pad); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.HasRoom(context.Background()); err != nil || !ok {
		t.Fatalf("HasRoom after freeing space: %v %v", ok, err)
	}
	if err := insertPair(d, 512<<10); err != nil {
		t.Fatalf("write after freeing space: %v", err)
	}
	if n := countRows(t, d); n != 4 {
		t.Fatalf("%d rows, want 4", n)
	}
}
