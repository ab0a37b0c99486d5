package backups

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"xr/app"
)

// CopyJobKind is the job that copies one verified backup file to one
// destination. It is retried with the runner's backoff; each failed run
// counts towards the destination's failure streak.
const CopyJobKind = "backup.copy"

// copyMaxAttempts bounds the runs of one copy (backoff 30 s, 1 min, 2 min…
// up to 30 min between runs: about 3 hours of outage are ridden out).
const copyMaxAttempts = 10

type backoffKey struct{}

// copyBackoff is the wait after the n-th failed run of a copy.
func copyBackoff(a *app.App, n int) time.Duration {
	base := 30 * time.Second
	if v, ok := a.Value(backoffKey{}).(time.Duration); ok {
		base = v
	}
	d := base << min(n-1, 10)
	return min(d, 60*base)
}

// SetCopyBackoff sets the first wait between the runs of a failing copy
// for this App (tests shorten it); it doubles after each failed run.
func SetCopyBackoff(a *app.App, first time.Duration) { a.SetValue(backoffKey{}, first) }

// FailStreakAlert is the number of copy runs failed in a row after which a
// destination raises backup.failed and shows on /metrics.
const FailStreakAlert = 3

// CopyJobs are the job kinds of the destinations part of the backups area
// (joined into the area's Module).
var CopyJobs = map[string]app.JobHandler{CopyJobKind: runCopy}

// CopyState is the state of one backup's copy to one destination.
type CopyState struct {
	DestinationID int64    `json:"destination_id"`
	Name          string   `json:"name"`
	State         string   `json:"state"` // queued|copying|done|failed
	Error         string   `json:"error,omitempty"`
	Attempts      int      `json:"attempts"`
	UpdatedAt     app.Time `json:"updated_at"`
}

type copyPayload struct {
	BackupID      int64  `json:"backup_id"`
	DestinationID int64  `json:"destination_id"`
	Path          string `json:"path"`
}

// QueueCopies enqueues the copy of a verified backup file to each
// destination id (job kind "backup.copy"). An id that is not (or no
// longer) a destination of t is skipped with a warning, so a destination
// deleted after a schedule named it does not hold back the others.
func QueueCopies(ctx context.Context, a *app.App, t *app.Tenant, backupID int64, path string, destIDs []int64) error {
	if len(destIDs) == 0 {
		return nil
	}
	seen := map[int64]bool{}
	var ids []int64
	for _, id := range destIDs {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	now := t.NowText()
	var queued []int64
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		queued = queued[:0]
		for _, id := range ids {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM backup_destinations WHERE id = ? AND tenant_id = ?`, id, t.ID).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				a.Log.Warn("backup copy to a missing destination skipped", "tenant", t.Slug, "backup", backupID, "destination", id)
				continue
			}
			queued = append(queued, id)
			if _, err := tx.ExecContext(ctx, `INSERT INTO backup_copies(tenant_id, backup_id, destination_id, state, attempts, error, updated_at)
				VALUES (?,?,?,'queued',0,'',?)
				ON CONFLICT(backup_id, destination_id) DO UPDATE SET state = 'queued', attempts = 0, error = '', updated_at = excluded.updated_at`,
				t.ID, backupID, id, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || len(queued) == 0 {
		return err
	}
	runAt := t.Now()
	err = t.Write(ctx, func(tx *sql.Tx) error {
		for _, id := range queued {
			// One job run per attempt at most: the copy counts its own
			// attempts and asks for the next run with RetryLater.
			if _, err := app.EnqueueJob(ctx, tx, CopyJobKind, copyPayload{BackupID: backupID, DestinationID: id, Path: path}, runAt, 0, 1); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

// CopyStates answers, per backup id, the copy state per destination (for
// the list of backups).
func CopyStates(ctx context.Context, a *app.App, t *app.Tenant, backupIDs []int64) (map[int64][]CopyState, error) {
	out := map[int64][]CopyState{}
	if len(backupIDs) == 0 {
		return out, nil
	}
	args := []any{t.ID}
	marks := make([]string, len(backupIDs))
	for i, id := range backupIDs {
		marks[i] = "?"
		args = append(args, id)
	}
	rows, err := a.Inst.R.QueryContext(ctx, `SELECT c.backup_id, c.destination_id, d.name, c.state, c.error, c.attempts, c.updated_at
		FROM backup_copies c JOIN backup_destinations d ON d.id = c.destination_id
		WHERE c.tenant_id = ? AND c.backup_id IN (`+strings.Join(marks, ",")+`) ORDER BY c.backup_id, d.name, d.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var bid int64
		var s CopyState
		if err := rows.Scan(&bid, &s.DestinationID, &s.Name, &s.State, &s.Error, &s.Attempts, &s.UpdatedAt); err != nil {
			return nil, err
		}
		out[bid] = append(out[bid], s)
	}
	return out, rows.Err()
}

// runCopy is the backup.copy job: one run copies the file to the
// destination (encrypted first when the tenant has a passphrase).
func runCopy(ctx context.Context, jc *app.JobContext) (any, error) {
	var p copyPayload
	if err := jsonUnmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	a := t.App
	d, err := loadDestination(ctx, a, t.ID, p.DestinationID)
	if err != nil {
		// The destination was deleted: nothing to copy to any more.
		var ae *app.Error
		if errors.As(err, &ae) && ae.Status == 404 {
			return map[string]any{"skipped": "destination_deleted"}, nil
		}
		return nil, err
	}
	attempts, err := startCopy(ctx, a, t.ID, p.BackupID, d.ID)
	if err != nil {
		return nil, err
	}
	last := attempts >= copyMaxAttempts
	remoteName, cerr := copyOnce(ctx, a, t, d, p.Path)
	if cerr == nil {
		err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
			now := t.NowText()
			if _, err := tx.ExecContext(ctx, `UPDATE backup_copies SET state = 'done', error = '', remote_name = ?, updated_at = ? WHERE backup_id = ? AND destination_id = ?`,
				remoteName, now, p.BackupID, d.ID); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE backup_destinations SET fail_streak = 0, last_error = '', last_ok_at = ? WHERE id = ?`, now, d.ID)
			return err
		})
		if err != nil {
			return nil, err
		}
		return map[string]any{"destination_id": d.ID, "remote_name": remoteName}, nil
	}
	if ctx.Err() != nil {
		// Shutdown: the runner puts the job back without counting it.
		return nil, cerr
	}
	msg := copyErrorText(cerr)
	state := "queued"
	destFault := !errors.Is(cerr, errBackupGone)
	if !destFault {
		// Pruned or deleted before its copy ran: nothing left to retry,
		// and not the destination's failure.
		last = true
	}
	if e := app.AsError(cerr); e != nil && e.Status < 500 {
		last = true // refused by the instance's rules (a local path no longer allowed)
	}
	if last {
		state = "failed"
	}
	var streak int
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		now := t.NowText()
		if _, err := tx.ExecContext(ctx, `UPDATE backup_copies SET state = ?, error = ?, updated_at = ? WHERE backup_id = ? AND destination_id = ?`,
			state, msg, now, p.BackupID, d.ID); err != nil {
			return err
		}
		if !destFault {
			return nil
		}
		return tx.QueryRowContext(ctx, `UPDATE backup_destinations SET fail_streak = fail_streak + 1, last_error = ?, updated_at = updated_at WHERE id = ? RETURNING fail_streak`,
			msg, d.ID).Scan(&streak)
	})
	if err != nil {
		return nil, errors.Join(cerr, err)
	}
	if streak == FailStreakAlert {
		a.Log.Warn("backup destination failing", "tenant", t.Slug, "destination", d.Name, "failures", streak, "err", msg)
		err := t.Write(ctx, func(tx *sql.Tx) error {
			return app.Emit(ctx, tx, "backup.failed", map[string]any{
				"stage": "copy", "backup_id": p.BackupID, "destination_id": d.ID, "destination": d.Name,
				"destination_kind": d.Kind, "failures": streak, "error": msg,
			})
		})
		if err != nil {
			a.Log.Error("emit backup.failed", "tenant", t.Slug, "destination", d.ID, "err", err)
		}
	}
	if !last {
		return nil, &app.RetryLater{At: t.Now().Add(copyBackoff(a, attempts)), Reason: msg}
	}
	return nil, cerr
}

// startCopy marks a copy running and counts the attempt.
func startCopy(ctx context.Context, a *app.App, tenantID, backupID, destID int64) (int, error) {
	var n int
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `INSERT INTO backup_copies(tenant_id, backup_id, destination_id, state, attempts, error, updated_at) VALUES (?,?,?,'copying',1,'',?)
			ON CONFLICT(backup_id, destination_id) DO UPDATE SET state = 'copying', attempts = attempts + 1, updated_at = excluded.updated_at
			RETURNING attempts`, tenantID, backupID, destID, a.NowText()).Scan(&n)
	})
	return n, err
}

// copyOnce uploads the file (encrypted when the tenant has a passphrase)
// and returns the remote object name.
func copyOnce(ctx context.Context, a *app.App, t *app.Tenant, d *destination, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", errBackupGone
		}
		return "", fmt.Errorf("open backup file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	pass, err := tenantPassphrase(ctx, a, t.ID)
	if err != nil {
		return "", err
	}
	name := t.Slug + "/" + filepath.Base(path)
	var body io.Reader = f
	size := st.Size()
	if pass != "" {
		// Encrypted into a temporary file among the tenant's job
		// artifacts: its size is then known, so S3 uploads stream from
		// disk in parts instead of buffering an unknown length in memory.
		name += ".age"
		dir := a.FilesDir(t.Slug)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
		tmp, err := os.CreateTemp(dir, ".copy-*.age")
		if err != nil {
			return "", err
		}
		defer func() {
			tmp.Close()
			if err := os.Remove(tmp.Name()); err != nil {
				a.Log.Warn("remove encrypted copy", "file", tmp.Name(), "err", err)
			}
		}()
		if err := encryptTo(tmp, f, pass, workFactor(a)); err != nil {
			return "", err
		}
		if size, err = tmp.Seek(0, io.SeekCurrent); err != nil {
			return "", err
		}
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return "", err
		}
		body = tmp
	}
	r, err := dialRemote(ctx, a, d)
	if err != nil {
		return "", err
	}
	if err := r.Put(ctx, name, body, size); err != nil {
		_ = r.Close() // failing already
		return "", err
	}
	if err := r.Close(); err != nil {
		// The object is stored (renamed into place, or acknowledged).
		a.Log.Warn("close backup destination", "destination", d.Name, "err", err)
	}
	return name, nil
}

// errBackupGone: the backup file was deleted before its copy ran.
var errBackupGone = errors.New("the backup file no longer exists")

// copyErrorText is what the copy state shows: the step and reason of a
// classified failure, else the error text.
func copyErrorText(err error) string {
	var se *StepError
	if errors.As(err, &se) {
		return se.Step + ": " + se.Reason
	}
	if e := app.AsError(err); e != nil && e.Status < 500 {
		return "config: " + e.Reason // the instance's rules refuse it: retrying cannot help
	}
	s := err.Error()
	if len(s) > 500 {
		s = s[:500]
	}
	return s
}

// FailingDestinations counts the destinations whose last FailStreakAlert
// or more copy runs failed (all tenants; for /metrics).
func FailingDestinations(ctx context.Context, a *app.App) (int, error) {
	var n int
	err := a.Inst.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM backup_destinations WHERE fail_streak >= ?`, FailStreakAlert).Scan(&n)
	return n, err
}

// WriteMetrics appends the destinations' series to /metrics.
func WriteMetrics(ctx context.Context, a *app.App, w io.Writer) {
	n, err := FailingDestinations(ctx, a)
	if err != nil {
		a.Log.Warn("metrics: failing backup destinations", "err", err)
		return
	}
	fmt.Fprintf(w, "# HELP xr_backup_destinations_failing Backup destinations whose last %d or more copy runs failed.\n# TYPE xr_backup_destinations_failing gauge\nxr_backup_destinations_failing %d\n", FailStreakAlert, n)
}
