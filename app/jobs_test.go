package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fndEnqueue enqueues a job due now (the commit tells the runner).
func fndEnqueue(t testing.TB, tt *Tenant, kind string, payload any, maxAttempts int) int64 {
	t.Helper()
	var id int64
	err := tt.Write(context.Background(), func(tx *sql.Tx) error {
		var err error
		id, err = EnqueueJob(context.Background(), tx, kind, payload, time.Now().UTC(), 1, maxAttempts)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func fndJob(t testing.TB, tt *Tenant, id int64) *Job {
	t.Helper()
	j, err := GetJob(context.Background(), tt.DB.R, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// fndRunner starts the runner of a until the test ends.
func fndRunner(t testing.TB, a *App) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.Jobs.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func fndWaitState(t testing.TB, tt *Tenant, id int64, state string) *Job {
	t.Helper()
	var j *Job
	fndEventually(t, 10*time.Second, "job state "+state, func() bool {
		j = fndJob(t, tt, id)
		return j.State == state
	})
	return j
}

func TestJobEnqueueRunProgressResult(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "jobs")
	type payload struct {
		N int `json:"n"`
	}
	fndInstallJob(a, "fnd.sum", func(ctx context.Context, jc *JobContext) (any, error) {
		var p payload
		if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
			return nil, err
		}
		sum := 0
		for i := 1; i <= p.N; i++ {
			sum += i
			if err := jc.Progress(ctx, int64(i), int64(p.N)); err != nil {
				return nil, err
			}
		}
		return map[string]any{"sum": sum, "tenant": jc.Tenant.Slug}, nil
	})
	id := fndEnqueue(t, tt, "fnd.sum", payload{N: 10}, 0)
	j := fndJob(t, tt, id)
	if j.State != "queued" || j.Attempts != 0 || j.MaxAttempts != 3 || j.Kind != "fnd.sum" || string(j.Payload) != `{"n":10}` ||
		j.CreatedBy == nil || *j.CreatedBy != 1 || !j.FinishedAt.IsZero() {
		t.Fatalf("queued job: %+v", j)
	}

	fndRunner(t, a)
	j = fndWaitState(t, tt, id, "done")
	if j.Progress != 10 || j.ProgressTotal != 10 || j.Attempts != 1 || j.Error != "" || j.FinishedAt.IsZero() {
		t.Fatalf("done job: %+v", j)
	}
	var res map[string]any
	if err := json.Unmarshal(j.Result, &res); err != nil || res["sum"] != float64(55) || res["tenant"] != "jobs" {
		t.Fatalf("result %s", j.Result)
	}
	if n := fndCount(t, tt, `SELECT COUNT(*) FROM jobs WHERE lease_until IS NOT NULL`); n != 0 {
		t.Fatalf("a finished job keeps its lease (%d)", n)
	}
}

// A handler error retries with backoff and fails after max_attempts; the
// claim/run steps are driven by hand so the backoff need not be waited for.
func TestJobRetriesThenFails(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "jobs")
	var calls atomic.Int64
	fndInstallJob(a, "fnd.flaky", func(ctx context.Context, jc *JobContext) (any, error) {
		n := calls.Add(1)
		return nil, errors.New("upstream said no #" + string(rune('0'+n)))
	})
	id := fndEnqueue(t, tt, "fnd.flaky", nil, 3)
	ctx := context.Background()
	for attempt := 1; attempt <= 3; attempt++ {
		// Make the job due now (the backoff put it in the future).
		fndExec(t, tt, `UPDATE jobs SET run_at = '2000-01-01 00:00:00' WHERE state = 'queued'`)
		got, _, err := a.Jobs.claim(ctx, tt, 4)
		if err != nil || len(got) != 1 || got[0].id != id {
			t.Fatalf("attempt %d: claimed %v %v", attempt, got, err)
		}
		if j := fndJob(t, tt, id); j.State != "running" || j.Attempts != attempt {
			t.Fatalf("claimed job: %+v", j)
		}
		a.Jobs.runOne(ctx, got[0])
		j := fndJob(t, tt, id)
		if attempt < 3 {
			if j.State != "queued" || j.Attempts != attempt || !strings.Contains(j.Error, "upstream said no") {
				t.Fatalf("after attempt %d: %+v", attempt, j)
			}
			// Backoff: run_at moved into the future.
			if !j.RunAt.After(time.Now().UTC().Add(time.Second / 2)) {
				t.Fatalf("no backoff after attempt %d: run_at %v", attempt, j.RunAt)
			}
		} else if j.State != "failed" || j.Attempts != 3 || j.FinishedAt.IsZero() || !strings.Contains(j.Error, "#3") {
			t.Fatalf("after the last attempt: %+v", j)
		}
	}
	// A failed job is never claimed again.
	fndExec(t, tt, `UPDATE jobs SET run_at = '2000-01-01 00:00:00'`)
	if got, _, _ := a.Jobs.claim(ctx, tt, 4); len(got) != 0 {
		t.Fatalf("failed job claimed again: %v", got)
	}
	if calls.Load() != 3 {
		t.Fatalf("handler ran %d times", calls.Load())
	}
}

// RetryLater reschedules without counting an attempt.
func TestJobRetryLater(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "jobs")
	at := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	var calls atomic.Int64
	fndInstallJob(a, "fnd.later", func(ctx context.Context, jc *JobContext) (any, error) {
		if calls.Add(1) <= 5 {
			return nil, &RetryLater{At: at, Reason: "next backoff slot"}
		}
		return "ok", nil
	})
	id := fndEnqueue(t, tt, "fnd.later", nil, 1) // one attempt only: RetryLater must not spend it
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		fndExec(t, tt, `UPDATE jobs SET run_at = '2000-01-01 00:00:00'`)
		got, _, err := a.Jobs.claim(ctx, tt, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("claim %d: %v %v", i, got, err)
		}
		a.Jobs.runOne(ctx, got[0])
		j := fndJob(t, tt, id)
		if j.State != "queued" || j.Attempts != 0 || !j.RunAt.Equal(at) || j.Error != "next backoff slot" {
			t.Fatalf("after RetryLater %d: %+v (run_at want %v)", i, j, at)
		}
	}
	// Not due before At.
	if got, next, _ := a.Jobs.claim(ctx, tt, 1); len(got) != 0 || !next.Equal(at) {
		t.Fatalf("claimed before its time: %v next %v", got, next)
	}
	fndExec(t, tt, `UPDATE jobs SET run_at = '2000-01-01 00:00:00'`)
	got, _, _ := a.Jobs.claim(ctx, tt, 1)
	a.Jobs.runOne(ctx, got[0])
	if j := fndJob(t, tt, id); j.State != "done" || string(j.Result) != `"ok"` || j.Attempts != 1 {
		t.Fatalf("final: %+v", j)
	}
}

// A panicking handler fails its job and the runner keeps running others.
func TestJobPanicDoesNotKillRunner(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "jobs")
	fndInstallJob(a, "fnd.panic", func(ctx context.Context, jc *JobContext) (any, error) {
		panic("boom")
	})
	fndInstallJob(a, "fnd.fine", func(ctx context.Context, jc *JobContext) (any, error) { return map[string]bool{"ok": true}, nil })
	fndRunner(t, a)
	p := fndEnqueue(t, tt, "fnd.panic", nil, 1)
	j := fndWaitState(t, tt, p, "failed")
	if !strings.Contains(j.Error, "panic") || j.Attempts != 1 {
		t.Fatalf("panicked job: %+v", j)
	}
	// The runner is alive: later jobs still run.
	for i := 0; i < 3; i++ {
		id := fndEnqueue(t, tt, "fnd.fine", nil, 1)
		if j := fndWaitState(t, tt, id, "done"); string(j.Result) != `{"ok":true}` {
			t.Fatalf("after a panic: %+v", j)
		}
	}
	// A kind nobody registered fails at once, without burning retries.
	id := fndEnqueue(t, tt, "fnd.unregistered", nil, 5)
	if j := fndWaitState(t, tt, id, "failed"); !strings.Contains(j.Error, "no handler") {
		t.Fatalf("unknown kind: %+v", j)
	}
}

// A job interrupted by a crash (claimed, lease held, process gone) is
// re-queued by Recover on the next start and completes there.
func TestJobResumesAfterCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var calls atomic.Int64
	resume := func(ctx context.Context, jc *JobContext) (any, error) {
		calls.Add(1)
		if err := jc.Progress(ctx, 1, 1); err != nil {
			return nil, err
		}
		return map[string]string{"ran_in": jc.Tenant.Slug}, nil
	}

	a1 := fndOpen(t, dir)
	fndInstallJob(a1, "fnd.resume", resume)
	fndCreate(t, a1, "crash")
	t1, release, err := a1.Acquire("crash")
	if err != nil {
		t.Fatal(err)
	}
	id := fndEnqueue(t, t1, "fnd.resume", map[string]int{"x": 1}, 3)
	// A second job, written as a running row whose lease lapsed long ago.
	var id2 int64
	t1.Write(context.Background(), func(tx *sql.Tx) error {
		id2, _ = EnqueueJob(context.Background(), tx, "fnd.resume", nil, time.Now().UTC(), 0, 3)
		_, err := tx.Exec(`UPDATE jobs SET state = 'running', attempts = 1, lease_until = '2000-01-01 00:00:00' WHERE id = ?`, id2)
		return err
	})
	got, _, err := a1.Jobs.claim(context.Background(), t1, 1)
	if err != nil || len(got) != 1 || got[0].id != id {
		t.Fatalf("claim: %v %v", got, err)
	}
	// The process dies here: the handler never ran, the row says running.
	release()
	a1.Close()
	if calls.Load() != 0 {
		t.Fatal("handler ran before the crash")
	}

	a2 := fndOpen(t, dir)
	fndInstallJob(a2, "fnd.resume", resume)
	t.Cleanup(a2.Close) // after the runner stops (cleanups run last-in first-out)
	t2 := fndAcquire(t, a2, "crash")
	if j := fndJob(t, t2, id); j.State != "running" {
		t.Fatalf("before recovery: %+v", j)
	}
	if err := a2.Jobs.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, jid := range []int64{id, id2} {
		if j := fndJob(t, t2, jid); j.State != "queued" {
			t.Fatalf("job %d after Recover: %+v", jid, j)
		}
	}
	fndRunner(t, a2)
	for _, jid := range []int64{id, id2} {
		j := fndWaitState(t, t2, jid, "done")
		if j.Attempts != 2 || string(j.Result) != `{"ran_in":"crash"}` || j.Progress != 1 {
			t.Fatalf("job %d after restart: %+v", jid, j)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("handler ran %d times", calls.Load())
	}
}

// A shutdown while a job runs: its context is cancelled, it is put back
// without spending an attempt, and the next start completes it.
func TestJobInterruptedByShutdownCompletesAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var calls atomic.Int64
	started := make(chan struct{})
	var once sync.Once
	long := func(ctx context.Context, jc *JobContext) (any, error) {
		if calls.Add(1) == 1 {
			jc.Progress(ctx, 3, 10)
			once.Do(func() { close(started) })
			<-ctx.Done() // the current step ends with the shutdown
			return nil, ctx.Err()
		}
		return map[string]int{"steps": 10}, nil
	}

	a1 := fndOpen(t, dir)
	fndInstallJob(a1, "fnd.long", long)
	fndCreate(t, a1, "restart")
	t1, release, err := a1.Acquire("restart")
	if err != nil {
		t.Fatal(err)
	}
	id := fndEnqueue(t, t1, "fnd.long", nil, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a1.Jobs.Run(ctx) }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("job never started")
	}
	cancel()
	<-done // Run waits for the job's current step
	j := fndJob(t, t1, id)
	if j.State != "queued" || j.Attempts != 0 || j.Progress != 3 {
		t.Fatalf("after shutdown: %+v", j)
	}
	release()
	a1.Close()

	a2 := fndOpen(t, dir)
	fndInstallJob(a2, "fnd.long", long)
	t.Cleanup(a2.Close)
	if err := a2.Jobs.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	fndRunner(t, a2)
	t2 := fndAcquire(t, a2, "restart")
	j = fndWaitState(t, t2, id, "done")
	if j.Attempts != 1 || string(j.Result) != `{"steps":10}` {
		t.Fatalf("after restart: %+v", j)
	}
}

func TestCancelJob(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "jobs")
	id := fndEnqueue(t, tt, "fnd.never", nil, 1)
	cancelIt := func() error {
		return tt.Write(context.Background(), func(tx *sql.Tx) error { return CancelJob(context.Background(), tx, id) })
	}
	if err := cancelIt(); err != nil {
		t.Fatal(err)
	}
	if j := fndJob(t, tt, id); j.State != "cancelled" || j.FinishedAt.IsZero() {
		t.Fatalf("%+v", j)
	}
	fndErr(t, cancelIt(), 409, CodeConflict, "job_not_cancellable")
	if got, _, _ := a.Jobs.claim(context.Background(), tt, 4); len(got) != 0 {
		t.Fatal("a cancelled job was claimed")
	}
	if _, err := GetJob(context.Background(), tt.DB.R, 999); AsError(err) == nil || AsError(err).Code != CodeNotFound {
		t.Fatalf("missing job: %v", err)
	}
}

// fndInstallJob installs a job kind on a, as a module would.
func fndInstallJob(a *App, kind string, h JobHandler) {
	a.Use(Module{Name: "test " + kind, Jobs: map[string]JobHandler{kind: h}})
}

// TestJobOwnerWrites: the functions other areas change their jobs with
// touch only the jobs they name, in the states they name.
func TestJobOwnerWrites(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "jobs")
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	later := now.Add(time.Hour)
	var queued, retried, running, other int64
	write := func(fn func(tx *sql.Tx) error) {
		t.Helper()
		if err := tt.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	write(func(tx *sql.Tx) (err error) {
		for _, p := range []*int64{&queued, &retried, &running, &other} {
			if *p, err = EnqueueJob(ctx, tx, "fnd.owner", nil, later, 1, 3); err != nil {
				return err
			}
		}
		return nil
	})
	fndExec(t, tt, `UPDATE jobs SET error = 'first attempt failed' WHERE id = `+itoa(retried),
		`UPDATE jobs SET state = 'running' WHERE id = `+itoa(running))

	var woken int64
	write(func(tx *sql.Tx) (err error) {
		woken, err = WakeJobs(ctx, tx, now, queued, running)
		return err
	})
	if woken != 1 || !fndJob(t, tt, queued).RunAt.Time.Equal(now) || !fndJob(t, tt, other).RunAt.Time.Equal(later) {
		t.Fatalf("WakeJobs: woke %d; queued at %v, other at %v", woken, fndJob(t, tt, queued).RunAt, fndJob(t, tt, other).RunAt)
	}
	write(func(tx *sql.Tx) (err error) {
		woken, err = WakeKind(ctx, tx, "fnd.owner", now)
		return err
	})
	if woken != 2 || !fndJob(t, tt, other).RunAt.Time.Equal(now) { // retried and other were due later
		t.Fatalf("WakeKind moved %d", woken)
	}

	write(func(tx *sql.Tx) error { return SetJobProgress(ctx, tx, other, 3, 7, now) })
	if j := fndJob(t, tt, other); j.Progress != 3 || j.ProgressTotal != 7 {
		t.Fatalf("progress %d/%d", j.Progress, j.ProgressTotal)
	}

	write(func(tx *sql.Tx) error { return CancelQueued(ctx, tx, now, "", retried, running) })
	write(func(tx *sql.Tx) error { return CancelQueued(ctx, tx, now, "schedule changed", queued) })
	for _, c := range []struct {
		id           int64
		state, error string
	}{
		{retried, "cancelled", "first attempt failed"}, // no reason: the error it had stays
		{queued, "cancelled", "schedule changed"},
		{running, "running", ""}, // started: not cancelled here
		{other, "queued", ""},
	} {
		if j := fndJob(t, tt, c.id); j.State != c.state || j.Error != c.error {
			t.Errorf("job %d: %s %q, want %s %q", c.id, j.State, j.Error, c.state, c.error)
		}
	}

	write(func(tx *sql.Tx) error { return CancelRunning(ctx, tx, now, "restored from a backup", "fnd.owner") })
	if j := fndJob(t, tt, running); j.State != "cancelled" || j.Error != "restored from a backup" || j.FinishedAt.IsZero() {
		t.Fatalf("CancelRunning: %+v", j)
	}
	if j := fndJob(t, tt, other); j.State != "queued" {
		t.Fatalf("CancelRunning touched a queued job: %s", j.State)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
