package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Job is one row of a tenant's jobs table.
type Job struct {
	ID            int64           `json:"id"`
	Kind          string          `json:"kind"`
	Payload       json.RawMessage `json:"payload"`
	State         string          `json:"state"`
	Attempts      int             `json:"attempts"`
	MaxAttempts   int             `json:"max_attempts"`
	RunAt         Time            `json:"run_at"`
	Progress      int64           `json:"progress"`
	ProgressTotal int64           `json:"progress_total"`
	Result        json.RawMessage `json:"result"`
	Error         string          `json:"error"`
	CreatedBy     *int64          `json:"created_by"`
	CreatedAt     Time            `json:"created_at"`
	UpdatedAt     Time            `json:"updated_at"`
	FinishedAt    Time            `json:"finished_at"`
}

// JobContext is what a job handler gets: its tenant, its row, and ways to
// report progress and store a result.
type JobContext struct {
	Tenant *Tenant
	Job    *Job
	runner *Runner
}

// Progress records done out of total (visible to clients polling the job).
func (jc *JobContext) Progress(ctx context.Context, done, total int64) error {
	return jc.Tenant.Write(ctx, func(tx *sql.Tx) error {
		return SetJobProgress(ctx, tx, jc.Job.ID, done, total, jc.Tenant.Now())
	})
}

// NoteProgress is Progress for handlers that go on when it fails: progress
// is advisory (the next update or the outcome supersedes it), so a failed
// update is logged rather than failing the job.
func (jc *JobContext) NoteProgress(ctx context.Context, done, total int64) {
	if err := jc.Progress(ctx, done, total); err != nil {
		jc.Tenant.App.Log.Warn("job progress", "tenant", jc.Tenant.Slug, "job", jc.Job.ID, "err", err)
	}
}

// JobHandler runs one job. Returning nil marks it done; RetryAt reschedules
// it; any other error counts an attempt and retries with backoff until
// max_attempts, then marks it failed. The result is stored as JSON.
type JobHandler func(ctx context.Context, jc *JobContext) (result any, err error)

// RetryLater asks the runner to run the job again at At without counting
// it as a failure (a webhook waiting for its next backoff slot).
type RetryLater struct {
	At     time.Time
	Reason string
}

func (r *RetryLater) Error() string { return "retry at " + FormatTime(r.At) + ": " + r.Reason }

// EnqueueJob inserts a job in tx (the transaction of the operation that
// asks for it) and returns its id. Once tx commits the runner knows the job
// is due (JobsDue); nothing more to call.
func EnqueueJob(ctx context.Context, tx *sql.Tx, kind string, payload any, runAt time.Time, createdBy int64, maxAttempts int) (int64, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return 0, err
	}
	if maxAttempts <= 0 {
		maxAttempts = 3
	}
	now := stampNow()
	var by any
	if createdBy > 0 {
		by = createdBy
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO jobs(kind, payload, run_at, max_attempts, created_by, created_at, updated_at) VALUES (?,?,?,?,?,?,?)`,
		kind, string(b), FormatTime(runAt), maxAttempts, by, now, now)
	if err != nil {
		return 0, err
	}
	JobsDue(tx, runAt)
	return r.LastInsertId()
}

// JobOf reads a job for a caller (GET /jobs/{id}): a job belongs to
// whoever created it, or to a tenant-wide caller; anyone else gets the 404
// of a missing job.
func JobOf(ctx context.Context, act *Actor, id int64) (*Job, error) {
	j, err := GetJob(ctx, act.Tenant.DB.R, id)
	if err != nil {
		return nil, err
	}
	if !act.TenantWide && (j.CreatedBy == nil || *j.CreatedBy != act.ManagerID) {
		return nil, ErrNotFound()
	}
	return j, nil
}

// GetJob reads one job.
func GetJob(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id int64) (*Job, error) {
	j := &Job{}
	var payload, result string
	err := q.QueryRowContext(ctx, `SELECT id, kind, payload, state, attempts, max_attempts, run_at, progress, progress_total, result, error, created_by, created_at, updated_at, finished_at FROM jobs WHERE id = ?`, id).
		Scan(&j.ID, &j.Kind, &payload, &j.State, &j.Attempts, &j.MaxAttempts, &j.RunAt, &j.Progress, &j.ProgressTotal, &result, &j.Error, &j.CreatedBy, &j.CreatedAt, &j.UpdatedAt, &j.FinishedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound()
	}
	j.Payload, j.Result = json.RawMessage(payload), json.RawMessage(result)
	return j, err
}

// Runner runs the tenants' jobs on a bounded pool. It does not look for
// them: the scheduler's kernel.jobs task claims a tenant's due jobs when
// the tenant's earliest queued job is due (its due time is the tenant's
// earliest run_at, told by EnqueueJob at the commit), so idle tenants'
// files are not opened to poll.
type Runner struct {
	app     *App
	Workers int
	Lease   time.Duration

	busy atomic.Int64   // jobs running now
	jobs sync.WaitGroup // the running jobs, for Run to wait on
}

func newRunner(a *App) *Runner {
	return &Runner{app: a, Workers: 4, Lease: 30 * time.Second}
}

// Notify tells the runner a tenant has a job due at `at` (a job that
// arrived without EnqueueJob in this process).
func (r *Runner) Notify(slug string, at time.Time) { r.app.sched.mark(slug, JobsTask, at) }

// Recover re-queues the jobs every tenant left running (their process
// died) and tells the scheduler when each tenant's next job is due. xr
// serve needs none of it: a tenant opening in the serving process
// recovers its own jobs (kernel.jobs_recover) and the due times are kept
// in instance.db. Tests and tools that run jobs without serving call it.
func (r *Runner) Recover(ctx context.Context) error {
	for _, slug := range r.app.TenantSlugs() {
		t, release, err := r.app.Acquire(slug)
		if err != nil {
			continue
		}
		_, err = recoverJobs(ctx, t)
		if err == nil {
			NotifySchedule(ctx, t)
		}
		release()
		if err != nil {
			return fmt.Errorf("recover jobs of %s: %w", slug, err)
		}
	}
	return nil
}

// recoverJobs re-queues t's running jobs: run when t opens in the serving
// process, no job of t can be running in it yet.
func recoverJobs(ctx context.Context, t *Tenant) (time.Time, error) {
	var running bool
	if err := t.DB.R.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM jobs WHERE state = 'running')`).Scan(&running); err != nil || !running {
		return time.Time{}, err
	}
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', lease_until = NULL, updated_at = ? WHERE state = 'running'`, t.NowText()); err != nil {
			return err
		}
		JobsDue(tx, t.Now())
		return nil
	})
	return time.Time{}, err
}

type claimed struct {
	slug string
	id   int64
}

// Run runs jobs until ctx ends: the scheduler's loop for the job tasks
// claims them, and each runs in its own goroutine, Workers at a time. At
// the end it waits for running jobs to finish their current step (their
// context is cancelled).
func (r *Runner) Run(ctx context.Context) {
	defer r.jobs.Wait()
	r.app.sched.run(ctx, []string{JobsTask}, 2)
}

// claimTask is the kernel.jobs task: it claims as many of t's due jobs as
// the runner has free workers, starts them, and answers when t's next
// queued job is due.
func (r *Runner) claimTask(ctx context.Context, t *Tenant) (time.Time, error) {
	free := r.Workers - int(r.busy.Load())
	if free <= 0 {
		// Full: look again soon (a job ending also marks its tenant due).
		return t.Now().Add(50 * time.Millisecond), nil
	}
	jobs, next, err := r.claim(ctx, t, free)
	for _, c := range jobs {
		r.busy.Add(1)
		r.jobs.Add(1)
		go func(c claimed) {
			defer r.jobs.Done()
			defer r.busy.Add(-1)
			r.runOne(ctx, c)
		}(c)
	}
	return next, err
}

// claim leases up to n due jobs of a tenant and returns when the next
// unclaimed one is due (zero if none). Nothing due: one read, no write.
func (r *Runner) claim(ctx context.Context, t *Tenant, n int) ([]claimed, time.Time, error) {
	var out []claimed
	var next time.Time
	now := t.Now()
	nextQueued := func(q Querier) error {
		var s sql.NullString
		if err := q.QueryRowContext(ctx, `SELECT MIN(run_at) FROM jobs WHERE state = 'queued'`).Scan(&s); err != nil {
			return err
		}
		next = time.Time{}
		if s.Valid {
			next, _ = ParseTime(s.String, false)
		}
		return nil
	}
	if err := nextQueued(t.DB.R); err != nil || next.IsZero() || next.After(now) {
		return nil, next, err
	}
	err := t.Write(ctx, func(tx *sql.Tx) error {
		ids, err := claimDue(ctx, tx, now, r.Lease, n)
		if err != nil {
			return err
		}
		for _, id := range ids {
			out = append(out, claimed{t.Slug, id})
		}
		return nextQueued(tx)
	})
	return out, next, err
}

func (r *Runner) runOne(ctx context.Context, c claimed) {
	t, release, err := r.app.Acquire(c.slug)
	if err != nil {
		return
	}
	defer release()
	job, err := GetJob(ctx, t.DB.R, c.id)
	if err != nil {
		return
	}
	h := r.app.jobHandler(job.Kind)

	// Keep the lease alive while the handler works.
	leaseCtx, stopLease := context.WithCancel(context.Background())
	go func() {
		tk := time.NewTicker(r.Lease / 3)
		defer tk.Stop()
		for {
			select {
			case <-leaseCtx.Done():
				return
			case <-tk.C:
				err := t.Write(leaseCtx, func(tx *sql.Tx) error {
					_, err := tx.Exec(`UPDATE jobs SET lease_until = ? WHERE id = ? AND state = 'running'`, FormatTime(t.Now().Add(r.Lease)), c.id)
					return err
				})
				// Best effort: the next tick tries again, and the lease
				// only matters to Recover at the next start.
				if err != nil {
					r.app.Log.Warn("renew job lease", "tenant", t.Slug, "job", c.id, "err", err)
				}
			}
		}
	}()
	var result any
	if h == nil {
		err = fmt.Errorf("no handler for job kind %q", job.Kind)
		job.Attempts = job.MaxAttempts
	} else {
		result, err = safeRun(ctx, h, &JobContext{Tenant: t, Job: job, runner: r})
	}
	stopLease()

	if ctx.Err() != nil && err != nil {
		// Shutdown interrupted the job: put it back for the next start
		// without counting the attempt.
		werr := t.Write(context.Background(), func(tx *sql.Tx) error {
			_, err := tx.Exec(`UPDATE jobs SET state = 'queued', attempts = attempts - 1, lease_until = NULL, updated_at = ? WHERE id = ?`, t.NowText(), c.id)
			JobsDue(tx, t.Now())
			return err
		})
		// Shutting down, nobody to return it to: the job stays running
		// and Recover re-queues it at the next start.
		if werr != nil {
			r.app.Log.Error("requeue interrupted job", "tenant", t.Slug, "job", c.id, "err", werr)
		}
		return
	}
	finish(t, job, result, err)
	// The job may have been rescheduled or left others due: the tenant's
	// claim runs again (before release, while the tenant is surely open).
	r.Notify(c.slug, r.app.Now())
}

func safeRun(ctx context.Context, h JobHandler, jc *JobContext) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("job panicked: %v", p)
		}
	}()
	return h(ctx, jc)
}

func finish(t *Tenant, job *Job, result any, err error) {
	now := t.Now()
	var later *RetryLater
	werr := t.Write(context.Background(), func(tx *sql.Tx) error {
		switch {
		case err == nil:
			b, _ := json.Marshal(result)
			if result == nil {
				b = []byte("{}")
			}
			_, e := tx.Exec(`UPDATE jobs SET state = 'done', result = ?, error = '', lease_until = NULL, updated_at = ?, finished_at = ? WHERE id = ?`,
				string(b), FormatTime(now), FormatTime(now), job.ID)
			return e
		case errors.As(err, &later):
			_, e := tx.Exec(`UPDATE jobs SET state = 'queued', attempts = attempts - 1, run_at = ?, error = ?, lease_until = NULL, updated_at = ? WHERE id = ?`,
				FormatTime(later.At), later.Reason, FormatTime(now), job.ID)
			return e
		case job.Attempts >= job.MaxAttempts:
			_, e := tx.Exec(`UPDATE jobs SET state = 'failed', error = ?, lease_until = NULL, updated_at = ?, finished_at = ? WHERE id = ?`,
				err.Error(), FormatTime(now), FormatTime(now), job.ID)
			return e
		default:
			backoff := time.Duration(1<<min(job.Attempts, 10)) * time.Second
			_, e := tx.Exec(`UPDATE jobs SET state = 'queued', run_at = ?, error = ?, lease_until = NULL, updated_at = ? WHERE id = ?`,
				FormatTime(now.Add(backoff)), err.Error(), FormatTime(now), job.ID)
			return e
		}
	})
	// No caller to return it to (the runner): the job stays running and
	// Recover re-queues it at the next start.
	if werr != nil {
		t.App.Log.Error("record job outcome", "tenant", t.Slug, "job", job.ID, "kind", job.Kind, "err", werr)
	}
	if err != nil && later == nil {
		t.App.Log.Warn("job failed", "tenant", t.Slug, "job", job.ID, "kind", job.Kind, "attempt", job.Attempts, "err", err)
	}
}

// CancelJob marks a queued job cancelled; a running job is asked to stop
// by the state it reads between steps.
func CancelJob(ctx context.Context, tx *sql.Tx, id int64) error {
	r, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'cancelled', updated_at = ?, finished_at = ? WHERE id = ? AND state IN ('queued','running')`, stampNow(), stampNow(), id)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return ErrConflict("job_not_cancellable")
	}
	return nil
}

// claimDue leases up to limit (-1: every) queued jobs due at now, oldest
// first, and returns their ids.
func claimDue(ctx context.Context, tx *sql.Tx, now time.Time, lease time.Duration, limit int) ([]int64, error) {
	ids, err := QueryIDs(ctx, tx, `SELECT id FROM jobs WHERE state = 'queued' AND run_at <= ? ORDER BY run_at, id LIMIT ?`, FormatTime(now), limit)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_until = ?, updated_at = ? WHERE id = ?`,
			FormatTime(now.Add(lease)), FormatTime(now), id); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// The jobs table is written here only: the areas that queue, cancel,
// wake or follow their jobs call these in their own transactions.

// SetJobProgress records done out of total for job id.
func SetJobProgress(ctx context.Context, tx *sql.Tx, id, done, total int64, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET progress = ?, progress_total = ?, updated_at = ? WHERE id = ?`, done, total, FormatTime(now), id)
	return err
}

// CancelQueued cancels those of ids that have not started (a running or
// finished job is left as it is); reason, when set, is recorded as the
// job's error.
func CancelQueued(ctx context.Context, tx *sql.Tx, now time.Time, reason string, ids ...int64) error {
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'cancelled', error = CASE WHEN ?1 = '' THEN error ELSE ?1 END,
			updated_at = ?2, finished_at = ?2 WHERE id = ?3 AND state = 'queued'`, reason, FormatTime(now), id); err != nil {
			return err
		}
	}
	return nil
}

// CancelRunning cancels the running jobs of kinds, with reason: they must
// not run again (a restore brought back the file they were running in).
func CancelRunning(ctx context.Context, tx *sql.Tx, now time.Time, reason string, kinds ...string) error {
	for _, kind := range kinds {
		if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'cancelled', error = ?1, lease_until = NULL, updated_at = ?2, finished_at = ?2
			WHERE state = 'running' AND kind = ?3`, reason, FormatTime(now), kind); err != nil {
			return err
		}
	}
	return nil
}

// WakeJobs brings those of ids still queued forward to now (a job due
// earlier keeps its time) and returns how many are queued, so due now.
func WakeJobs(ctx context.Context, tx *sql.Tx, now time.Time, ids ...int64) (int64, error) {
	var n int64
	for _, id := range ids {
		r, err := tx.ExecContext(ctx, `UPDATE jobs SET run_at = min(run_at, ?) WHERE id = ? AND state = 'queued'`, FormatTime(now), id)
		if err != nil {
			return n, err
		}
		k, _ := r.RowsAffected()
		n += k
	}
	if n > 0 {
		JobsDue(tx, now)
	}
	return n, nil
}

// WakeKind brings the queued jobs of kind due after now forward to now and
// returns how many moved.
func WakeKind(ctx context.Context, tx *sql.Tx, kind string, now time.Time) (int64, error) {
	at := FormatTime(now)
	r, err := tx.ExecContext(ctx, `UPDATE jobs SET run_at = ? WHERE kind = ? AND state = 'queued' AND run_at > ?`, at, kind, at)
	if err != nil {
		return 0, err
	}
	n, err := r.RowsAffected()
	if n > 0 {
		JobsDue(tx, now)
	}
	return n, err
}

// markScheduledRun records in a job's result that it is a run of the
// schedule key (lastRunOf reads it back on a retry).
func markScheduledRun(ctx context.Context, tx *sql.Tx, jobID int64, key string) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET result = json_object('schedule', ?) WHERE id = ?`, key, jobID)
	return err
}
