package db

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func openWith(t *testing.T, opt Options) *DB {
	t.Helper()
	d, err := Open(filepath.Join(t.TempDir(), "c.db"), "tenant", opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

const blobSize = 12000

func insertBlob(t *testing.T, d *DB, i int) {
	t.Helper()
	err := d.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO settings(key, value) VALUES (?, ?)`, "k"+strconv.Itoa(i), string(make([]byte, blobSize)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The writer never checkpoints on its own commit; the background
// checkpointer keeps the WAL near its limits while a writer commits without
// pause and readers hold snapshots, and nothing committed is lost.
func TestCheckpointerBoundsWAL(t *testing.T) {
	t.Parallel()
	lim := WALLimits{Soft: 64 << 10, Hard: 256 << 10}
	d := openWith(t, Options{Durable: true, WAL: lim})
	var auto int
	if err := d.W.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("writer's wal_autocheckpoint = %d (%v), want 0", auto, err)
	}
	// From an empty WAL: the migrations at open wrote a large one.
	if _, err := d.W.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			tick := time.NewTicker(time.Millisecond) // API reads, not a spin
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				d.Read(context.Background(), func(tx *sql.Tx) error {
					var n int
					return tx.QueryRow(`SELECT COUNT(*) FROM settings`).Scan(&n)
				})
			}
		}()
	}
	const n = 250 // about 5 MB of WAL frames, 20 × Hard
	var peak int64
	for i := range n {
		insertBlob(t, d, i)
		peak = max(peak, walSize(d.Path))
	}
	close(stop)
	readers.Wait()
	passes, hard, failed, last := d.CheckpointStats()
	t.Logf("peak WAL %d KiB, %d passes (%d hard), %d failed", peak>>10, passes, hard, failed)
	if failed > 0 {
		t.Fatalf("checkpoint failed: %v", last)
	}
	if passes == 0 {
		t.Fatal("no checkpoint ran")
	}
	// A pass runs after the commit that crossed a limit; what the writer
	// appends meanwhile is the slack above Hard.
	if peak > 2*lim.Hard {
		t.Fatalf("WAL peaked at %d bytes, limit %d", peak, lim.Hard)
	}
	var count int
	if err := d.R.QueryRow(`SELECT COUNT(*) FROM settings WHERE key LIKE 'k%'`).Scan(&count); err != nil || count != n {
		t.Fatalf("%d of %d rows (%v)", count, n, err)
	}
}

// A file whose checkpoints belong to another component (Litestream) never
// checkpoints itself: its WAL keeps every frame until the owner acts.
func TestCheckpointExternalLeavesTheWAL(t *testing.T) {
	t.Parallel()
	d := openWith(t, Options{Durable: true, Checkpoints: CheckpointExternal, WAL: WALLimits{Soft: 16 << 10}})
	var last int64
	for i := range 200 {
		insertBlob(t, d, i)
		size := walSize(d.Path)
		if size < last {
			t.Fatalf("WAL shrank from %d to %d: something checkpointed", last, size)
		}
		last = size
	}
	if last < 200*blobSize {
		t.Fatalf("WAL %d bytes for %d KB of rows", last, 200*blobSize>>10)
	}
	if p, _, _, _ := d.CheckpointStats(); p != 0 {
		t.Fatalf("%d checkpoints of an externally checkpointed file", p)
	}
	// The owner's checkpoint works on it.
	var busy, frames, done int
	if err := d.W.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &done); err != nil || busy != 0 || walSize(d.Path) != 0 {
		t.Fatalf("owner's checkpoint: busy %d, WAL %d (%v)", busy, walSize(d.Path), err)
	}
}

// crashChildEnv makes the test binary a writer that prints the key of
// every acknowledged commit, until it is killed.
const crashChildEnv = "XR_DB_CRASH_CHILD"

func TestCrashWriterChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("the child of TestCrashKeepsEveryAcknowledgedCommit")
	}
	d, err := Open(path, "tenant", Options{Durable: true, WAL: WALLimits{Soft: 32 << 10, Hard: 128 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		insertBlob(t, d, i)
		fmt.Fprintln(w, i) // acknowledged: committed and synced
		w.Flush()
	}
}

// kill -9 in the middle of commits and background checkpoints: the file
// reopens intact with every commit that was acknowledged.
func TestCrashKeepsEveryAcknowledgedCommit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns a writer process")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriterChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := -1
	sc := bufio.NewScanner(out)
	var lines atomic.Int64
	deadline := time.Now().Add(60 * time.Second)
	for sc.Scan() {
		i, err := strconv.Atoi(sc.Text())
		if err != nil {
			continue // test framework output
		}
		acked = i
		// Enough commits for several checkpoints.
		if lines.Add(1) >= 200 || time.Now().After(deadline) {
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // killed: its exit status says so
	if acked < 0 {
		t.Fatal("the writer acknowledged nothing")
	}
	d, err := Open(path, "tenant", Options{Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var res string
	if err := d.R.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q %v", res, err)
	}
	var n int
	d.R.QueryRow(`SELECT COUNT(*) FROM settings WHERE key LIKE 'k%' AND CAST(substr(key, 2) AS INTEGER) <= ?`, acked).Scan(&n)
	if n != acked+1 {
		t.Fatalf("%d of the %d acknowledged commits survived", n, acked+1)
	}
}
