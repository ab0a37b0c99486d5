package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recAttacher records attaches and detaches, and checks they alternate
// per tenant and that Detach sees a usable file.
type recAttacher struct {
	name string
	log  *[]string
	mu   *sync.Mutex
	fail atomic.Bool
}

func (r *recAttacher) Attach(ctx context.Context, t *Tenant) error {
	if r.fail.Load() {
		return errors.New("replica unreachable")
	}
	r.mu.Lock()
	*r.log = append(*r.log, "attach "+r.name+" "+t.Slug)
	r.mu.Unlock()
	return nil
}

func (r *recAttacher) Detach(ctx context.Context, t *Tenant) {
	var n int
	err := t.DB.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM managers`).Scan(&n)
	r.mu.Lock()
	*r.log = append(*r.log, fmt.Sprintf("detach %s %s (file readable: %v)", r.name, t.Slug, err == nil))
	r.mu.Unlock()
}

// closedCache counts the closes of a cached value.
type closedCache struct{ closed *atomic.Int64 }

func (c closedCache) Close() { c.closed.Add(1) }

// Attachers run on every opening, in order, and detach in reverse when
// the files close (while the file is still readable); an attacher's error
// fails the opening and the next use retries; caches leave with the files.
func TestTenantAttachersAndCaches(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	fndCreate(t, a, "att")
	closeAll(t, a)
	var mu sync.Mutex
	var log []string
	first := &recAttacher{name: "replica", log: &log, mu: &mu}
	second := &recAttacher{name: "watch", log: &log, mu: &mu}
	a.AttachToTenants("replica", first)
	a.AttachToTenants("watch", second)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a second attacher under one name was accepted")
			}
		}()
		a.AttachToTenants("replica", first)
	}()

	var closes atomic.Int64
	tt, release, err := a.Acquire("att")
	if err != nil {
		t.Fatal(err)
	}
	made := 0
	for range 3 {
		tt.Cache("k", func() any { made++; return closedCache{&closes} })
	}
	if made != 1 {
		t.Fatalf("cache made %d values for one opening", made)
	}
	release()
	closeAll(t, a)
	if closes.Load() != 1 {
		t.Fatalf("cached value closed %d times at close", closes.Load())
	}
	// A new opening has a fresh cache.
	tt, release, err = a.Acquire("att")
	if err != nil {
		t.Fatal(err)
	}
	tt.Cache("k", func() any { made++; return closedCache{&closes} })
	release()
	if made != 2 {
		t.Fatal("a reopened tenant kept the old opening's cache")
	}
	closeAll(t, a)

	mu.Lock()
	want := []string{"attach replica att", "attach watch att", "detach watch att (file readable: true)", "detach replica att (file readable: true)"}
	got := append([]string{}, log...)
	mu.Unlock()
	if len(got) != 8 || fmt.Sprint(got[:4]) != fmt.Sprint(want) || fmt.Sprint(got[4:]) != fmt.Sprint(want) {
		t.Fatalf("attach/detach order:\n%v", got)
	}

	// An attacher failing: the use fails, nothing stays open, the next
	// use (the attacher healthy again) works.
	second.fail.Store(true)
	if _, _, err := a.Acquire("att"); err == nil {
		t.Fatal("an opening whose attacher failed was handed out")
	}
	if n := a.Pool.OpenCount(); n != 0 {
		t.Fatalf("%d files open after a failed opening", n)
	}
	mu.Lock()
	last := log[len(log)-1]
	mu.Unlock()
	if last != "detach replica att (file readable: true)" {
		t.Fatalf("the attachers before the failing one were not detached: %s", last)
	}
	second.fail.Store(false)
	if _, release, err := a.Acquire("att"); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
}

// Many goroutines use tenants while they are closed as fast as possible
// (a cap of one open tenant, CloseIdle in a loop): no request fails, no
// write is lost, and the jobs they enqueue are all known to the scheduler
// or stored as due. Run it with -race.
func TestTenantCloseUnderLoadLosesNothing(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	a.Pool.SetMaxOpen(1)
	slugs := []string{"ld-a", "ld-b", "ld-c"}
	for _, s := range slugs {
		fndCreate(t, a, s)
	}
	a.RunDueTasks(context.Background()) // this process schedules
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
				a.Pool.CloseIdle()
			}
		}
	}()
	const workers, rounds = 12, 8
	var failures atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				slug := slugs[(w+i)%len(slugs)]
				tt, release, err := a.Acquire(slug)
				if err != nil {
					failures.Add(1)
					t.Errorf("acquire %s: %v", slug, err)
					continue
				}
				err = tt.Write(context.Background(), func(tx *sql.Tx) error {
					_, err := EnqueueJob(context.Background(), tx, "load.never", nil, time.Now().UTC().Add(time.Hour), 0, 1)
					return err
				})
				if err != nil {
					failures.Add(1)
					t.Errorf("write %s: %v", slug, err)
				}
				release()
			}
		}()
	}
	wg.Wait()
	close(stop)
	closer.Wait()
	if failures.Load() != 0 {
		t.Fatalf("%d operations failed", failures.Load())
	}
	total := 0
	for _, s := range slugs {
		tt, release, err := a.Acquire(s)
		if err != nil {
			t.Fatal(err)
		}
		total += fndCount(t, tt, `SELECT COUNT(*) FROM jobs WHERE kind = 'load.never'`)
		release()
		if _, ok := a.DueTimes(s)[JobsTask]; !ok {
			t.Errorf("%s: its jobs are due and the scheduler does not know", s)
		}
	}
	if total != workers*rounds {
		t.Fatalf("%d jobs stored, %d written", total, workers*rounds)
	}
	closeAll(t, a)
	for _, s := range slugs {
		if got := storedDue(t, a, s); got[JobsTask] == "" || got[dirtyMarker] != "" {
			t.Errorf("%s: stored due times after close %v", s, got)
		}
	}
}
