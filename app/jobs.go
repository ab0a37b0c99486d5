package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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
		_, err := tx.ExecContext(ctx, `UPDATE jobs SET progress = ?, progress_total = ?, updated_at = ? WHERE id = ?`, done, total, jc.Tenant.NowText(), jc.Job.ID)
		return err
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

// Runner claims due jobs of every tenant and runs them on a bounded pool.
// It keeps, per tenant, the time the next job is due, so idle tenants'
// files are not opened to poll.
type Runner struct {
	app     *App
	Workers int
	Lease   time.Duration

	mu   sync.Mutex
	due  map[string]time.Time // slug → earliest run_at known
	wake chan struct{}
}

func newRunner(a *App) *Runner {
	return &Runner{app: a, Workers: 4, Lease: 30 * time.Second, due: map[string]time.Time{},
		wake: make(chan struct{}, 1)}
}

// Notify tells the runner a tenant has a job due at `at`.
func (r *Runner) Notify(slug string, at time.Time) {
	r.mu.Lock()
	if cur, ok := r.due[slug]; !ok || at.Before(cur) {
		r.due[slug] = at
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Recover re-queues jobs whose lease lapsed (their process died) and learns
// when each tenant's next job is due. Run at start.
func (r *Runner) Recover(ctx context.Context) error {
	for _, slug := range r.app.TenantSlugs() {
		t, release, err := r.app.Acquire(slug)
		if err != nil {
			continue
		}
		var next sql.NullString
		err = t.Write(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', lease_until = NULL, updated_at = ? WHERE state = 'running'`, t.NowText()); err != nil {
				return err
			}
			return tx.QueryRowContext(ctx, `SELECT MIN(run_at) FROM jobs WHERE state = 'queued'`).Scan(&next)
		})
		release()
		if err != nil {
			return fmt.Errorf("recover jobs of %s: %w", slug, err)
		}
		if next.Valid {
			at, _ := ParseTime(next.String, false)
			r.Notify(slug, at)
		}
	}
	return nil
}

type claimed struct {
	slug string
	id   int64
}

// Run claims and runs jobs until ctx ends; then it waits for running jobs
// to finish their current step (their context is cancelled) and returns.
func (r *Runner) Run(ctx context.Context) {
	sem := make(chan struct{}, max(r.Workers, 1))
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		wait := time.Second
		now := r.app.Now()
		r.mu.Lock()
		var ready []string
		for slug, at := range r.due {
			if !at.After(now) {
				ready = append(ready, slug)
				// Taken while claiming: a Notify that arrives meanwhile,
				// for a job the claim's transaction may not see, puts
				// the slug back and is kept below.
				delete(r.due, slug)
			} else if d := at.Sub(now); d < wait {
				wait = d
			}
		}
		r.mu.Unlock()
		for _, slug := range ready {
			jobs, next, err := r.claim(ctx, slug, cap(sem)-len(sem))
			if err != nil {
				r.app.Log.Error("claim jobs", "tenant", slug, "err", err)
				next = now.Add(time.Second) // try again
			}
			r.mu.Lock()
			if cur, notified := r.due[slug]; !next.IsZero() && (!notified || next.Before(cur)) {
				r.due[slug] = next
			}
			r.mu.Unlock()
			for _, c := range jobs {
				sem <- struct{}{}
				wg.Add(1)
				go func(c claimed) {
					defer wg.Done()
					defer func() { <-sem }()
					r.runOne(ctx, c)
					// The job may have been rescheduled or left others due.
					r.Notify(c.slug, r.app.Now())
				}(c)
			}
		}
		if len(ready) > 0 && len(sem) == cap(sem) {
			wait = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-time.After(wait):
		}
	}
}

// claim leases up to n due jobs of a tenant and returns when the next
// unclaimed one is due (zero if none).
func (r *Runner) claim(ctx context.Context, slug string, n int) ([]claimed, time.Time, error) {
	t, release, err := r.app.Acquire(slug)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer release()
	var out []claimed
	var next time.Time
	now := t.Now()
	err = t.Write(ctx, func(tx *sql.Tx) error {
		if n > 0 {
			ids, err := QueryIDs(ctx, tx, `SELECT id FROM jobs WHERE state = 'queued' AND run_at <= ? ORDER BY run_at, id LIMIT ?`, FormatTime(now), n)
			if err != nil {
				return err
			}
			for _, id := range ids {
				if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_until = ?, updated_at = ? WHERE id = ?`,
					FormatTime(now.Add(r.Lease)), FormatTime(now), id); err != nil {
					return err
				}
				out = append(out, claimed{slug, id})
			}
		}
		var s sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT MIN(run_at) FROM jobs WHERE state = 'queued'`).Scan(&s); err != nil {
			return err
		}
		if s.Valid {
			next, _ = ParseTime(s.String, false)
		}
		return nil
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
