package db

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolCloseNeverCutsAUser hammers a few tenant files from many
// goroutines while the pool closes them as fast as it can (a cap of one
// open file, CloseIdle in a loop, an idle time of nothing): every write
// must succeed and be kept, a file must never close while someone holds
// it, and Opened/Closing must alternate per file. Run it with -race.
func TestPoolCloseNeverCutsAUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := NewPool(dir, time.Nanosecond)
	defer p.Close()
	p.SetMaxOpen(1)

	slugs := []string{"a1", "b2", "c3", "d4"}
	var mu sync.Mutex
	users := map[string]int{}   // holders right now, by slug
	openNow := map[string]*DB{} // the opening Opened announced
	violations := []string{}    // what must never happen
	violate := func(f string, args ...any) {
		mu.Lock()
		violations = append(violations, fmt.Sprintf(f, args...))
		mu.Unlock()
	}
	p.Opened = func(slug string, d *DB) error {
		mu.Lock()
		defer mu.Unlock()
		if openNow[slug] != nil {
			violations = append(violations, "opened twice without a close: "+slug)
		}
		openNow[slug] = d
		return nil
	}
	p.Closing = func(slug string, d *DB) {
		mu.Lock()
		defer mu.Unlock()
		if users[slug] != 0 {
			violations = append(violations, fmt.Sprintf("closing %s with %d users", slug, users[slug]))
		}
		if openNow[slug] != d {
			violations = append(violations, "closing an opening Opened did not announce: "+slug)
		}
		delete(openNow, slug)
	}
	for _, s := range slugs {
		d, rel, err := p.Acquire(s, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.W.Exec(`CREATE TABLE IF NOT EXISTS hits(n INTEGER NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		rel()
	}

	stop := make(chan struct{})
	var closer sync.WaitGroup
	closer.Add(1)
	go func() {
		defer closer.Done()
		for {
			select {
			case <-stop:
				return
			default:
				p.CloseIdle()
			}
		}
	}()

	const workers, rounds = 16, 12
	var writes atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				slug := slugs[(w+i)%len(slugs)]
				d, rel, err := p.Acquire(slug, false)
				if err != nil {
					violate("acquire %s: %v", slug, err)
					return
				}
				mu.Lock()
				users[slug]++
				if openNow[slug] != d {
					violations = append(violations, "handed out a handle that is not the open one: "+slug)
				}
				mu.Unlock()
				err = d.Write(context.Background(), func(tx *sql.Tx) error {
					_, err := tx.Exec(`INSERT INTO hits(n) VALUES (1)`)
					return err
				})
				if err != nil {
					violate("write %s: %v", slug, err)
				} else {
					writes.Add(1)
				}
				var n int
				if err := d.R.QueryRow(`SELECT COUNT(*) FROM hits`).Scan(&n); err != nil {
					violate("read %s: %v", slug, err)
				}
				mu.Lock()
				users[slug]--
				mu.Unlock()
				rel()
			}
		}()
	}
	wg.Wait()
	close(stop)
	closer.Wait()

	for _, v := range violations {
		t.Error(v)
	}
	var total int64
	for _, s := range slugs {
		d, rel, err := p.Acquire(s, false)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := d.R.QueryRow(`SELECT COUNT(*) FROM hits`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		rel()
		total += n
	}
	if total != writes.Load() || total != workers*rounds {
		t.Fatalf("rows %d, acknowledged writes %d, attempted %d", total, writes.Load(), workers*rounds)
	}
	st := p.Stats()
	if st.Opens < uint64(len(slugs)+1) || st.Closes == 0 {
		t.Fatalf("the files were not closed and reopened under load: %+v", st)
	}
}

// TestPoolCapClosesLeastRecentlyUsed: over the cap, the idle file used
// longest ago closes first; a file in use never does.
func TestPoolCapClosesLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	p := NewPool(t.TempDir(), time.Hour)
	defer p.Close()
	p.SetMaxOpen(2)
	closed := make(chan string, 8)
	p.Closing = func(slug string, _ *DB) { closed <- slug }

	_, relA, err := p.Acquire("aa", true) // held throughout
	if err != nil {
		t.Fatal(err)
	}
	defer relA()
	_, relB, err := p.Acquire("bb", true)
	if err != nil {
		t.Fatal(err)
	}
	relB()
	_, relC, err := p.Acquire("cc", true) // third: bb (idle) goes, aa (held) stays
	if err != nil {
		t.Fatal(err)
	}
	if got := <-closed; got != "bb" {
		t.Fatalf("closed %s, want the idle bb", got)
	}
	relC()
	time.Sleep(time.Millisecond) // cc's release is now older than dd's
	_, relD, err := p.Acquire("dd", true)
	if err != nil {
		t.Fatal(err)
	}
	defer relD()
	if got := <-closed; got != "cc" {
		t.Fatalf("closed %s, want cc", got)
	}
	open := map[string]bool{}
	for _, s := range p.OpenSlugs() {
		open[s] = true
	}
	if len(open) != 2 || !open["aa"] || !open["dd"] {
		t.Fatalf("open %v, want aa and dd", open)
	}
	if _, _, ok := p.AcquireOpen("bb"); ok {
		t.Fatal("AcquireOpen opened a closed file")
	}
	d, rel, ok := p.AcquireOpen("aa")
	if !ok || d == nil {
		t.Fatal("AcquireOpen missed an open file")
	}
	rel()
}

// TestPoolFileCheckpointsAndStopsWithItsFile: a file the pool opens on
// first use runs its background checkpointer (its WAL is checkpointed past
// the soft limit without any call), and the pool's close of the idle file
// stops it with the file: the goroutine has returned and its connection is
// closed; the next use starts a new one.
func TestPoolFileCheckpointsAndStopsWithItsFile(t *testing.T) {
	t.Parallel()
	p := NewPool(t.TempDir(), time.Hour)
	defer p.Close()
	d, rel, err := p.Acquire("ck", true)
	if err != nil {
		t.Fatal(err)
	}
	cp := d.ckpt
	if cp == nil {
		t.Fatal("a pooled tenant file has no checkpointer")
	}
	// Past the default soft limit in a few commits of 1.2 MB.
	var soft WALLimits
	soft.defaults()
	row := string(make([]byte, blobSize))
	for i := 0; walLive(d.Path) < soft.Soft; i++ {
		err := d.Write(context.Background(), func(tx *sql.Tx) error {
			for j := range 100 {
				if _, err := tx.Exec(`INSERT INTO settings(key, value) VALUES (?, ?)`, fmt.Sprintf("k%d.%d", i, j), row); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	d.ckpt.committed() // the last commit's wake may have found a pass running
	deadline := time.Now().Add(30 * time.Second)
	for passes, _, _, _ := d.CheckpointStats(); passes == 0; passes, _, _, _ = d.CheckpointStats() {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint of a pooled file past its soft limit")
		}
		d.ckpt.committed()
		time.Sleep(10 * time.Millisecond)
	}
	if _, _, failed, last := d.CheckpointStats(); failed != 0 {
		t.Fatalf("checkpoint failed: %v", last)
	}
	rel()
	if n := p.CloseIdle(); n != 1 {
		t.Fatalf("closed %d files, want 1", n)
	}
	select {
	case <-cp.done:
	default:
		t.Fatal("the checkpointer still runs after its file closed")
	}
	if n := cp.c.Stats().OpenConnections; n != 0 {
		t.Fatalf("the checkpointer keeps %d connections after close", n)
	}
	d2, rel2, err := p.Acquire("ck", false)
	if err != nil {
		t.Fatal(err)
	}
	defer rel2()
	if d2.ckpt == nil || d2.ckpt == cp {
		t.Fatal("the reopened file has no checkpointer of its own")
	}
	select {
	case <-d2.ckpt.done:
		t.Fatal("the reopened file's checkpointer is not running")
	default:
	}
}
