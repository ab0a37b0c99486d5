package app

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// What happens after a tenant write commits is declared inside the
// transaction, by the code that makes it necessary: Emit wakes the
// modules' OnEvents hooks, EnqueueJob (JobsDue) and TaskDue tell the
// scheduler when work is due, and an area hands anything else to
// AfterCommit. Tenant.Write runs that work once the transaction has
// committed, before it returns; a rolled-back transaction runs none of
// it. Nobody calls a "now tell X" function after a commit by hand. What
// the commit makes due is made crash-safe before it commits
// (scheduler.beforeCommit).

// openWrite is what one open tenant write transaction has collected.
type openWrite struct {
	t *Tenant

	mu     sync.Mutex
	events bool                 // Emit wrote outbox rows
	due    map[string]time.Time // task → the earliest due time told (TaskDue)
	after  []func()
}

// openWrites maps each open tenant write transaction to its collector. An
// entry lives only while Tenant.Write runs its fn, so nothing is shared
// between Apps beyond the transactions each of them has open.
var openWrites sync.Map // *sql.Tx → *openWrite

// writeOf is the collector of tx, nil when tx is not a transaction of
// Tenant.Write (a bare database handle in a test, instance.db).
func writeOf(tx *sql.Tx) *openWrite {
	if w, ok := openWrites.Load(tx); ok {
		return w.(*openWrite)
	}
	return nil
}

// TenantOf is the tenant whose Write (or WriteNoHooks) opened tx, nil for
// any other transaction.
func TenantOf(tx *sql.Tx) *Tenant {
	if w := writeOf(tx); w != nil {
		return w.t
	}
	return nil
}

// AfterCommit runs fn once the tenant write transaction tx has committed,
// on the writer's goroutine before Write returns; never after a rollback.
// fn must be quick and must not write to the same tenant. It reports
// false (and fn never runs) when tx is not a transaction of Tenant.Write.
func AfterCommit(tx *sql.Tx, fn func()) bool {
	w := writeOf(tx)
	if w == nil {
		return false
	}
	w.mu.Lock()
	w.after = append(w.after, fn)
	w.mu.Unlock()
	return true
}

// JobsDue tells the job runner, once tx commits, that the tenant has a
// job due at `at`. EnqueueJob calls it; code that moves a queued job's
// run_at by hand calls it too.
func JobsDue(tx *sql.Tx, at time.Time) { TaskDue(tx, JobsTask, at) }

// TaskDue tells the scheduler, once tx commits, that the tenant's task
// has work due at `at` (a device added to the poller, a session opened for
// the sweep): the task runs then even if the tenant's files are closed by
// that time. The earliest time told for a task counts.
func TaskDue(tx *sql.Tx, task string, at time.Time) {
	w := writeOf(tx)
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.due == nil {
		w.due = map[string]time.Time{}
	}
	if cur, ok := w.due[task]; !ok || at.Before(cur) {
		w.due[task] = at
	}
	w.mu.Unlock()
}

// eventsWritten records that tx wrote outbox rows: the modules' OnEvents
// hooks run after it commits, once however many rows it wrote.
func (w *openWrite) eventsWritten() {
	w.mu.Lock()
	w.events = true
	w.mu.Unlock()
}

// write runs fn in one write transaction with tx's collector installed,
// then, committed, the collected work: the runner's wake-up, the OnEvents
// hooks, the AfterCommit functions in the order they were given.
func (t *Tenant) write(ctx context.Context, fn func(tx *sql.Tx) error, commitHooks bool) error {
	w := &openWrite{t: t}
	err := t.DB.Write(ctx, func(tx *sql.Tx) error {
		openWrites.Store(tx, w)
		defer openWrites.Delete(tx)
		if err := fn(tx); err != nil {
			return err
		}
		w.mu.Lock()
		due, events := w.due, w.events
		w.mu.Unlock()
		if len(due) == 0 && !events {
			return nil
		}
		return t.App.sched.beforeCommit(ctx, t, due, events)
	})
	if err != nil {
		return err
	}
	if commitHooks {
		t.App.mu.RLock()
		hooks := t.App.onCommit
		t.App.mu.RUnlock()
		for _, h := range hooks {
			h(t.Slug)
		}
	}
	w.mu.Lock()
	due, events, after := w.due, w.events, w.after
	w.mu.Unlock()
	for task, at := range due {
		// Made crash-safe before the commit (beforeCommit): memory only.
		t.App.sched.markLocal(t.Slug, task, at, false)
	}
	if events {
		t.eventsEmitted()
	}
	for _, fn := range after {
		fn()
	}
	return nil
}
