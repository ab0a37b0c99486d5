package app

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// storageFill inserts a row too large for a file capped at its current size.
func storageFill(tt *Tenant) error {
	return tt.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO fill(b) VALUES (?)`, strings.Repeat("x", 256<<10))
		return err
	})
}

// TestStorageFullFlag: a write refused with SQLITE_FULL maps to 503
// ERR_MAINTENANCE storage_full, raises the file's flag with one log line
// (not one per failure), counts every failure, and the flag clears with
// one log line once the file has room: by the probe or by the next write.
func TestStorageFullFlag(t *testing.T) {
	t.Parallel()
	var logs lockedBuf
	a, err := Open(Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tt := fndTenant(t, a, "acme")
	fndExec(t, tt, `CREATE TABLE fill(id INTEGER PRIMARY KEY, b TEXT)`)
	capFile := func(on bool) {
		t.Helper()
		q := `PRAGMA max_page_count = 1073741823`
		if on {
			var pages int
			if err := tt.DB.W.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
				t.Fatal(err)
			}
			q = `PRAGMA max_page_count = ` + strconv.Itoa(pages)
		}
		if _, err := tt.DB.W.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	before := fndCount(t, tt, `SELECT COUNT(*) FROM fill`)
	capFile(true)
	for range 2 {
		err := storageFill(tt)
		e := Classify(err)
		if e == nil || e.Status != 503 || e.Code != CodeMaintenance || e.Reason != "storage_full" {
			t.Fatalf("SQLITE_FULL classified as %v (%v)", e, err)
		}
	}
	if n := fndCount(t, tt, `SELECT COUNT(*) FROM fill`); n != before {
		t.Fatalf("%d rows after refused writes, want %d", n, before)
	}
	if st := a.StorageStatus(); len(st.Full) != 1 || st.Full[0] != "acme" || st.Failures != 2 {
		t.Fatalf("status %+v", st)
	}
	if n := logs.count("storage full"); n != 1 {
		t.Fatalf("%d 'storage full' log lines for two failures, want 1:\n%s", n, logs.b.String())
	}
	// Still full: the probe keeps the flag.
	a.ProbeStorage(context.Background())
	if len(a.StorageStatus().Full) != 1 {
		t.Fatal("the probe cleared a file that is still full")
	}
	capFile(false)
	a.ProbeStorage(context.Background())
	if st := a.StorageStatus(); len(st.Full) != 0 || st.Failures != 2 {
		t.Fatalf("after freeing: %+v", st)
	}
	if n := logs.count("room again"); n != 1 {
		t.Fatalf("%d recovery log lines, want 1", n)
	}
	// Again, cleared by the next successful write this time.
	capFile(true)
	if err := storageFill(tt); Classify(err) == nil {
		t.Fatalf("want storage_full, got %v", err)
	}
	capFile(false)
	if err := storageFill(tt); err != nil {
		t.Fatal(err)
	}
	if st := a.StorageStatus(); len(st.Full) != 0 || st.Failures != 3 {
		t.Fatalf("after a successful write: %+v", st)
	}
	if n := fndCount(t, tt, `SELECT COUNT(*) FROM fill`); n != before+1 {
		t.Fatalf("%d rows, want %d", n, before+1)
	}
	// Errors that are not SQLITE_FULL keep their own class.
	if e := Classify(ErrConflict("x")); e.Status != 409 {
		t.Fatal("Classify changed a 409")
	}
	if Classify(sql.ErrNoRows) != nil {
		t.Fatal("Classify invented an error")
	}
}
