package app

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"
)

// commitRecorder is a module that records its OnEvents wake-ups and
// declares the event it emits.
type commitRecorder struct {
	mu    sync.Mutex
	woken []string
}

func (r *commitRecorder) module() Module {
	return Module{
		Name:   "commit-test",
		Events: []EventType{{Key: "commit.test", Category: "test"}},
		OnEvents: func(t *Tenant) {
			r.mu.Lock()
			r.woken = append(r.woken, t.Slug)
			r.mu.Unlock()
		},
	}
}

func (r *commitRecorder) wakeups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.woken...)
}

// An event emitted in a committed Write wakes the OnEvents hooks once the
// transaction has committed (once per transaction, however many events),
// before Write returns, with no call of the writer's; AfterCommit work
// runs after it in order. A rolled-back Write wakes nothing and runs none
// of its after-commit work.
func TestAfterCommitWakesOnlyCommittedWrites(t *testing.T) {
	t.Parallel()
	a := kernelApp(t)
	rec := &commitRecorder{}
	a.Use(rec.module())
	tt := fndTenant(t, a, "commit")
	ctx := context.Background()

	var order []string
	err := tt.Write(ctx, func(tx *sql.Tx) error {
		for i := range 3 {
			if err := Emit(ctx, tx, "commit.test", map[string]int{"n": i}); err != nil {
				return err
			}
		}
		if len(rec.wakeups()) != 0 {
			t.Error("woken before the commit")
		}
		AfterCommit(tx, func() {
			var n int
			// Committed: a reader sees the rows.
			if err := tt.DB.R.QueryRow(`SELECT COUNT(*) FROM events WHERE type = 'commit.test'`).Scan(&n); err != nil || n != 3 {
				t.Errorf("after commit a reader sees %d events (%v)", n, err)
			}
			order = append(order, "first")
		})
		AfterCommit(tx, func() { order = append(order, "second") })
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.wakeups(); len(got) != 1 || got[0] != "commit" {
		t.Fatalf("OnEvents after a committed write: %v, want one wake-up of commit", got)
	}
	if len(order) != 2 || order[0] != "first" || order[1] != "second" {
		t.Fatalf("AfterCommit ran %v", order)
	}

	// Rolled back: nothing wakes, nothing runs, nothing is written.
	failed := errors.New("effect failed")
	ran := false
	err = tt.Write(ctx, func(tx *sql.Tx) error {
		if err := Emit(ctx, tx, "commit.test", nil); err != nil {
			return err
		}
		AfterCommit(tx, func() { ran = true })
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("rolled-back write: %v", err)
	}
	if len(rec.wakeups()) != 1 || ran || fndCount(t, tt, `SELECT COUNT(*) FROM events`) != 3 {
		t.Fatalf("after a rollback: wake-ups %v, after-commit ran %v", rec.wakeups(), ran)
	}

	// A write without events wakes nothing; WriteNoHooks (RADIUS
	// accounting) still wakes for its own events.
	if err := tt.Write(ctx, func(tx *sql.Tx) error { _, err := tx.Exec(`DELETE FROM events`); return err }); err != nil {
		t.Fatal(err)
	}
	if err := tt.WriteNoHooks(ctx, func(tx *sql.Tx) error { return Emit(ctx, tx, "commit.test", nil) }); err != nil {
		t.Fatal(err)
	}
	if got := rec.wakeups(); len(got) != 2 {
		t.Fatalf("wake-ups %v, want one more for WriteNoHooks' event only", got)
	}

	// Outside a tenant write there is no commit to wait for: Emit refuses
	// (it could wake nobody), AfterCommit says so.
	err = tt.DB.Write(ctx, func(tx *sql.Tx) error {
		if AfterCommit(tx, func() { t.Error("ran on a bare transaction") }) {
			t.Error("AfterCommit accepted a bare transaction")
		}
		JobsDue(tx, time.Now()) // no tenant to tell: ignored
		return Emit(ctx, tx, "commit.test", nil)
	})
	if err == nil {
		t.Fatal("Emit on a bare transaction succeeded")
	}
}

// A job enqueued in a Write is picked up by a running runner with no
// Notify call: the commit tells the runner it is due. One rolled back
// never runs.
func TestEnqueuedJobWakesTheRunner(t *testing.T) {
	t.Parallel()
	a := kernelApp(t)
	ran := make(chan string, 4)
	fndInstallJob(a, "commit.job", func(_ context.Context, jc *JobContext) (any, error) {
		ran <- string(jc.Job.Payload)
		return nil, nil
	})
	tt := fndTenant(t, a, "jobs")
	fndRunner(t, a)
	ctx := context.Background()
	err := tt.Write(ctx, func(tx *sql.Tx) error {
		_, err := EnqueueJob(ctx, tx, "commit.job", "rolled back", time.Now(), 0, 1)
		if err != nil {
			return err
		}
		return errors.New("no")
	})
	if err == nil {
		t.Fatal("the rollback did not happen")
	}
	var id int64
	err = tt.Write(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = EnqueueJob(ctx, tx, "commit.job", "committed", time.Now(), 0, 1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-ran:
		if p != `"committed"` {
			t.Fatalf("ran %s", p)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the runner never picked the job up")
	}
	fndWaitState(t, tt, id, "done")
	if n := fndCount(t, tt, `SELECT COUNT(*) FROM jobs`); n != 1 {
		t.Fatalf("%d jobs stored, want the committed one", n)
	}
	select {
	case p := <-ran:
		t.Fatalf("ran %s too", p)
	default:
	}
}
