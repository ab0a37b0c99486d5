package app

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock(a *App) *fakeClock {
	c := &fakeClock{now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	a.SetClock(c.Now)
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// storedDue reads tenant slug's rows of tenant_due: task → due_at.
func storedDue(t testing.TB, a *App, slug string) map[string]string {
	t.Helper()
	rows, err := a.Inst.R.Query(`SELECT d.task, d.due_at FROM tenant_due d JOIN tenants t ON t.id = d.tenant_id WHERE t.slug = ?`, slug)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var task, at string
		if err := rows.Scan(&task, &at); err != nil {
			t.Fatal(err)
		}
		out[task] = at
	}
	return out
}

// enqueueAt enqueues a job of kind due at `at` in a tenant acquired for
// the call only.
func enqueueAt(t testing.TB, a *App, slug, kind string, at time.Time) int64 {
	t.Helper()
	tt, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var id int64
	if err := tt.Write(context.Background(), func(tx *sql.Tx) error {
		id, err = EnqueueJob(context.Background(), tx, kind, nil, at, 0, 3)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

// onOpenDone waits until the open tenant slug's on-open work has run (its
// first due times are marked).
func onOpenDone(t testing.TB, a *App, slug string) {
	t.Helper()
	tt, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	a.sched.waitOnOpen(context.Background(), tt)
}

// closeAll closes every tenant, once the work that holds them (a tenant's
// on-open tasks) let go.
func closeAll(t testing.TB, a *App) {
	t.Helper()
	fndEventually(t, 20*time.Second, "every tenant to close", func() bool {
		a.Pool.CloseIdle()
		return a.Pool.OpenCount() == 0
	})
}

func jobState(t testing.TB, a *App, slug string, id int64) string {
	t.Helper()
	tt, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	return fndJob(t, tt, id).State
}

// A job due in an hour survives its tenant's close: the due time is
// stored in instance.db when the files close, nothing opens the tenant
// before it is due, and at the hour the scheduler opens it and the job
// runs (a fake clock throughout).
func TestSchedulerJobDueAcrossClose(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	clock := newFakeClock(a)
	fndCreate(t, a, "sleepy")
	fndCreate(t, a, "other")
	var ran atomic.Int64
	fndInstallJob(a, "sch.later", func(ctx context.Context, jc *JobContext) (any, error) { ran.Add(1); return nil, nil })
	ctx := context.Background()
	a.RunDueTasks(ctx) // this process schedules
	onOpenDone(t, a, "sleepy")
	onOpenDone(t, a, "other")
	due := clock.Now().Add(time.Hour)
	id := enqueueAt(t, a, "sleepy", "sch.later", due)
	if got := storedDue(t, a, "sleepy"); got[dirtyMarker] == "" {
		t.Fatalf("a due time only memory knew was not marked before the commit: %v", got)
	}
	// Let what the opening made due run (housekeeping a minute after it).
	clock.Add(2 * time.Minute)
	fndEventually(t, 20*time.Second, "the openings' first runs", func() bool {
		a.RunDueTasks(ctx)
		for _, slug := range []string{"sleepy", "other"} {
			if len(a.DueTimes(slug)) == 0 {
				return false // its on-open work has not marked anything yet
			}
			for _, at := range a.DueTimes(slug) {
				if !at.After(clock.Now()) {
					return false
				}
			}
		}
		return a.DueTimes("sleepy")[JobsTask].Equal(due)
	})

	closeAll(t, a)
	got := storedDue(t, a, "sleepy")
	if got[JobsTask] != FormatTime(due) || got[dirtyMarker] != "" {
		t.Fatalf("stored at close: %v, want %s = %s and no dirty mark", got, JobsTask, FormatTime(due))
	}
	opens := a.Pool.Stats().Opens

	// Before the hour: nothing is due, nothing opens.
	clock.Add(57 * time.Minute)
	a.RunDueTasks(ctx)
	if st := a.Pool.Stats(); st.Opens != opens || st.Open != 0 {
		t.Fatalf("a tenant opened with nothing due: %+v (opens before %d)", st, opens)
	}
	// At the hour the tenant opens and its job runs, once.
	clock.Add(time.Minute)
	if n := a.RunDueTasks(ctx); n == 0 {
		t.Fatal("nothing ran at the due time")
	}
	fndEventually(t, 20*time.Second, "the job to finish", func() bool { return jobState(t, a, "sleepy", id) == "done" })
	if ran.Load() != 1 {
		t.Fatalf("handler ran %d times", ran.Load())
	}
	for _, s := range a.Pool.OpenSlugs() {
		if s == "other" {
			t.Fatal("a tenant with nothing due was opened")
		}
	}
	if lag := a.SchedulerStats().LastLag; lag != 0 {
		t.Fatalf("run started %v late by the fake clock", lag)
	}
}

// A process that stopped without closing a tenant left its dirty mark:
// the next one reconciles that tenant (runs its tasks, which read their
// due times from the file), so the job it knew of only in memory runs.
func TestSchedulerReconcilesAfterCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a1 := fndOpen(t, dir)
	t.Cleanup(a1.Close)
	fndCreate(t, a1, "crashy")
	c1 := newFakeClock(a1)
	ctx := context.Background()
	a1.RunDueTasks(ctx)
	due := c1.Now().Add(time.Hour)
	id := enqueueAt(t, a1, "crashy", "sch.crash", due)
	// a1 "dies" here: it never closes the tenant, its memory is lost.

	a2 := fndOpen(t, dir)
	t.Cleanup(a2.Close)
	var ran atomic.Int64
	fndInstallJob(a2, "sch.crash", func(ctx context.Context, jc *JobContext) (any, error) { ran.Add(1); return nil, nil })
	c2 := newFakeClock(a2)
	a2.RunDueTasks(ctx) // loads the dirty mark: reconciles crashy
	fndEventually(t, 20*time.Second, "the reconcile to learn the job's due time", func() bool {
		a2.RunDueTasks(ctx)
		return a2.DueTimes("crashy")[JobsTask].Equal(due)
	})
	c2.Add(time.Hour)
	a2.RunDueTasks(ctx)
	fndEventually(t, 20*time.Second, "the job to run", func() bool { return jobState(t, a2, "crashy", id) == "done" })
	if ran.Load() != 1 {
		t.Fatalf("ran %d times", ran.Load())
	}
}

// A command-line process (no scheduler) that queues work leaves a wake
// request; the serving process's loop takes it and runs the job.
func TestSchedulerWakeRequestFromAnotherProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	serve := fndOpen(t, dir)
	t.Cleanup(serve.Close)
	fndCreate(t, serve, "woken")
	var ran atomic.Int64
	fndInstallJob(serve, "sch.cli", func(ctx context.Context, jc *JobContext) (any, error) { ran.Add(1); return nil, nil })
	closeAll(t, serve)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { serve.Jobs.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	cli := fndOpen(t, dir)
	defer cli.Close()
	id := enqueueAt(t, cli, "woken", "sch.cli", time.Now().UTC())
	var n int
	if err := cli.Inst.R.QueryRow(`SELECT COUNT(*) FROM tenant_wake`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("wake requests %d %v", n, err)
	}
	fndEventually(t, 20*time.Second, "the serving process to run the job", func() bool { return ran.Load() == 1 })
	if s := jobState(t, cli, "woken", id); s != "done" && s != "running" {
		t.Fatalf("job %s", s)
	}
	if err := cli.Inst.R.QueryRow(`SELECT COUNT(*) FROM tenant_wake`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("wake request not taken: %d %v", n, err)
	}
}

// Tasks: on-open tasks run first when a tenant opens; a periodic task runs
// when due and answers its next time; one that answers zero sleeps until
// a transaction says TaskDue; After delays a task's first run; a failed
// run comes back after Every.
func TestSchedulerTaskLifecycle(t *testing.T) {
	t.Parallel()
	a := kernelApp(t)
	clock := newFakeClock(a)
	fndCreate(t, a, "ta")
	type run struct{ task, slug string }
	var mu sync.Mutex
	var order []run
	record := func(name string, next time.Duration, err error) func(context.Context, *Tenant) (time.Time, error) {
		return func(_ context.Context, t *Tenant) (time.Time, error) {
			mu.Lock()
			order = append(order, run{name, t.Slug})
			mu.Unlock()
			if next == 0 {
				return time.Time{}, err
			}
			return t.Now().Add(next), err
		}
	}
	count := func(name string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, r := range order {
			if r.task == name {
				n++
			}
		}
		return n
	}
	a.Use(Module{Name: "tasks", TenantTasks: []TenantTask{
		{Name: "tasks.tick", Every: time.Minute, Run: record("tick", 10*time.Second, nil)},
		{Name: "tasks.start", Run: record("start", 0, nil)},
		{Name: "tasks.later", Every: time.Hour, After: time.Hour, Run: record("later", 0, nil)},
		{Name: "tasks.sleepy", Every: time.Minute, Run: record("sleepy", 0, nil)},
		{Name: "tasks.failing", Every: 5 * time.Minute, Run: record("failing", 0, errors.New("boom"))},
	}})
	closeAll(t, a)
	ctx := context.Background()
	a.RunDueTasks(ctx)
	if a.Pool.Stats().Opens != 1 || a.Pool.OpenCount() != 0 {
		t.Fatalf("a closed tenant with nothing due opened: %+v", a.Pool.Stats())
	}
	// A request opens it: the on-open task runs, then each periodic task
	// without a due time is due (after its After).
	tt, release, err := a.Acquire("ta")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	fndEventually(t, 20*time.Second, "the on-open task", func() bool { return count("start") == 1 })
	fndEventually(t, 20*time.Second, "the first due times", func() bool { return len(a.DueTimes("ta")) >= 4 })
	a.RunDueTasks(ctx)
	if count("tick") != 1 || count("sleepy") != 1 || count("failing") != 1 || count("later") != 0 {
		t.Fatalf("first pass: %v", order)
	}
	mu.Lock()
	if order[0].task != "start" {
		t.Fatalf("on-open task not first: %v", order)
	}
	mu.Unlock()
	due := a.DueTimes("ta")
	if !due["tasks.tick"].Equal(clock.Now().Add(10*time.Second)) || !due["tasks.failing"].Equal(clock.Now().Add(5*time.Minute)) {
		t.Fatalf("next due times: %v", due)
	}
	if _, ok := due["tasks.sleepy"]; ok {
		t.Fatal("a task that answered zero is still due")
	}
	clock.Add(10 * time.Second)
	a.RunDueTasks(ctx)
	if count("tick") != 2 || count("sleepy") != 1 {
		t.Fatalf("second pass: %v", order)
	}
	// A transaction says the sleepy task has work: it runs at that time.
	if err := tt.Write(ctx, func(tx *sql.Tx) error {
		TaskDue(tx, "tasks.sleepy", clock.Now().Add(time.Second))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	a.RunDueTasks(ctx)
	if count("sleepy") != 1 {
		t.Fatal("ran before its time")
	}
	clock.Add(time.Second)
	a.RunDueTasks(ctx)
	if count("sleepy") != 2 {
		t.Fatalf("TaskDue did not wake the task: %v", order)
	}
	clock.Add(time.Hour)
	a.RunDueTasks(ctx)
	if count("later") != 1 || count("failing") < 2 {
		t.Fatalf("after an hour: later %d failing %d", count("later"), count("failing"))
	}
}

// The scheduler's loop runs due work by itself (real clock): jobs
// enqueued in a tenant run, and the tenant may close in between.
func TestSchedulerLoopRunsJobs(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	fndCreate(t, a, "loop")
	var ran atomic.Int64
	fndInstallJob(a, "sch.loop", func(ctx context.Context, jc *JobContext) (any, error) { ran.Add(1); return nil, nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Jobs.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	for i := 1; i <= 3; i++ {
		enqueueAt(t, a, "loop", "sch.loop", time.Now().UTC())
		fndEventually(t, 20*time.Second, "the job", func() bool { return ran.Load() == int64(i) })
		a.Pool.CloseIdle()
	}
}

// A restore replaces the file under the scheduler: the job the snapshot
// holds (queued by nothing this process saw) is found and runs when due.
func TestSchedulerLearnsARestoredFilesJobs(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	clock := newFakeClock(a)
	fndCreate(t, a, "rest")
	var ran atomic.Int64
	fndInstallJob(a, "sch.restored", func(ctx context.Context, jc *JobContext) (any, error) { ran.Add(1); return nil, nil })
	ctx := context.Background()
	tt, release, err := a.Acquire("rest")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	// The snapshot: a job due in an hour, written under another process's
	// nose (a bare write: no scheduler hears of it).
	if err := tt.DB.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO jobs(kind, payload, run_at, max_attempts, created_at, updated_at) VALUES ('sch.restored', '{}', ?, 3, ?, ?)`,
			FormatTime(clock.Now().Add(time.Hour)), StampNow(), StampNow())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/snap.db"
	if err := a.BackupTenant(ctx, tt, file); err != nil {
		t.Fatal(err)
	}
	fndExec(t, tt, `DELETE FROM jobs`)
	a.RunDueTasks(ctx) // this process schedules
	onOpenDone(t, a, "rest")
	a.RunDueTasks(ctx)
	if _, ok := a.DueTimes("rest")[JobsTask]; ok {
		t.Fatal("jobs due before the restore")
	}
	if err := a.RestoreTenant(ctx, tt, file, false); err != nil {
		t.Fatal(err)
	}
	if got := storedDue(t, a, "rest"); got[dirtyMarker] == "" {
		t.Fatalf("a restore did not mark the tenant for a reconcile: %v", got)
	}
	a.RunDueTasks(ctx)
	if at := a.DueTimes("rest")[JobsTask]; !at.Equal(clock.Now().Add(time.Hour)) {
		t.Fatalf("jobs due %v after the restore", at)
	}
	clock.Add(time.Hour)
	a.RunDueTasks(ctx)
	fndEventually(t, 20*time.Second, "the restored job", func() bool { return ran.Load() == 1 })
}
