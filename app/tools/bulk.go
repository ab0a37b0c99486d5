package tools

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"xr/app"
	"xr/app/subs"
)

// BulkInput is POST /admin/tools/bulk/preview and /apply: a selection (ids
// and/or the filters of GET /users, within the caller's subtree; at least
// one of them) and the operations to apply to each selected subscriber,
// in order.
type BulkInput struct {
	subs.Selection
	Operations []subs.Change `json:"operations"`
}

// RefusedOperation is an operation the caller may not do, with the
// permission it needs.
type RefusedOperation struct {
	Index      int      `json:"index"`
	Op         string   `json:"op"`
	Permission app.Perm `json:"permission"`
}

// SampleRow is one subscriber of a preview: as it is, and as it would be
// (after is null when the row would fail, with the reason).
type SampleRow struct {
	ID     int64          `json:"id"`
	OK     bool           `json:"ok"`
	Reason string         `json:"reason,omitempty"`
	Before *subs.RowState `json:"before"`
	After  *subs.RowState `json:"after"`
}

// BulkPreview answers what an apply would do: how many match, a sample of
// before/after rows (computed by applying the operations in a transaction
// that is rolled back, so preview and apply are the same code), and the
// operations the caller may not do (apply refuses the call with 403 while
// any is listed).
type BulkPreview struct {
	Matched int                `json:"matched"`
	Sample  []SampleRow        `json:"sample"`
	Refused []RefusedOperation `json:"refused_operations"`
}

// PreviewSample is how many rows a preview shows.
const PreviewSample = 10

func refusedOps(act *app.Actor, cs []subs.Change) []RefusedOperation {
	out := []RefusedOperation{}
	for i, c := range cs {
		if p, ok := subs.ChangePerm(c.Op); ok && !act.Can(p) {
			out = append(out, RefusedOperation{Index: i, Op: c.Op, Permission: p})
		}
	}
	return out
}

func (in *BulkInput) check(ctx context.Context, act *app.Actor) error {
	if in.Selection.Empty() {
		return app.ErrValidation("selection_required", "ids")
	}
	return subs.CheckChanges(ctx, act.Tenant.DB.R, act, in.Operations)
}

var errRollback = errors.New("preview: roll back")

// reasonOf is the reason a row failed with, as the log shows it.
func reasonOf(err error) string {
	var e *app.Error
	if errors.As(err, &e) {
		if e.Code == app.CodeNotFound {
			return "not_found"
		}
		return e.Reason
	}
	return "internal_error"
}

// applyRow applies cs to one subscriber under a savepoint: a refusal rolls
// back that row only. It answers the row's state before and after.
func applyRow(ctx context.Context, tx *sql.Tx, act *app.Actor, id int64, cs []subs.Change) (before, after *subs.RowState, err error, fatal error) {
	if before, err = subs.ReadRowState(ctx, tx, id); err != nil {
		var e *app.Error
		if errors.As(err, &e) {
			return nil, nil, err, nil
		}
		return nil, nil, nil, err
	}
	if _, err := tx.ExecContext(ctx, `SAVEPOINT bulk_row`); err != nil {
		return nil, nil, nil, err
	}
	if err = subs.ApplyChanges(ctx, tx, act, id, cs); err != nil {
		var e *app.Error
		if !errors.As(err, &e) || e.Status >= 500 {
			return nil, nil, nil, err
		}
		if _, ferr := tx.ExecContext(ctx, `ROLLBACK TO bulk_row`); ferr != nil {
			return nil, nil, nil, ferr
		}
		if e.Code == app.CodeNotFound {
			before = nil // gone or outside the caller's subtree: show nothing of it
		}
	} else if after, fatal = subs.ReadRowState(ctx, tx, id); fatal != nil {
		return nil, nil, nil, fatal
	}
	if _, ferr := tx.ExecContext(ctx, `RELEASE bulk_row`); ferr != nil {
		return nil, nil, nil, ferr
	}
	return before, after, err, nil
}

// PreviewBulk is POST /admin/tools/bulk/preview: nothing is changed.
func PreviewBulk(ctx context.Context, act *app.Actor, in BulkInput) (*BulkPreview, error) {
	if err := act.Require(PermToolsBulkChanges); err != nil {
		return nil, err
	}
	if err := in.check(ctx, act); err != nil {
		return nil, err
	}
	t := act.Tenant
	p := &BulkPreview{Sample: []SampleRow{}, Refused: refusedOps(act, in.Operations)}
	err := t.Write(ctx, func(tx *sql.Tx) error {
		ids, err := subs.SelectUserIDs(ctx, tx, act, in.Selection, t.Now())
		if err != nil {
			return err
		}
		p.Matched = len(ids)
		for _, id := range ids[:min(len(ids), PreviewSample)] {
			row := SampleRow{ID: id}
			if len(p.Refused) > 0 {
				if row.Before, err = subs.ReadRowState(ctx, tx, id); err != nil {
					return err
				}
				row.Reason = "operation_not_permitted"
				p.Sample = append(p.Sample, row)
				continue
			}
			before, after, rerr, fatal := applyRow(ctx, tx, act, id, in.Operations)
			if fatal != nil {
				return fatal
			}
			row.Before, row.After, row.OK = before, after, rerr == nil
			if rerr != nil {
				row.Reason = reasonOf(rerr)
			}
			p.Sample = append(p.Sample, row)
		}
		return errRollback
	})
	if err != nil && !errors.Is(err, errRollback) {
		return nil, err
	}
	return p, nil
}

// BulkJob is a bulk change and its progress; GET .../jobs/{id} adds the
// per-row log.
type BulkJob struct {
	ID         int64          `json:"id"`
	Selection  subs.Selection `json:"selection"`
	Operations []subs.Change  `json:"operations"`
	State      string         `json:"state"`
	Total      int64          `json:"total"`
	Done       int64          `json:"done"`
	OK         int64          `json:"ok"`
	Failed     int64          `json:"failed"`
	JobID      *int64         `json:"job_id"`
	CreatedBy  *int64         `json:"created_by"`
	CreatedAt  app.Time       `json:"created_at"`
	FinishedAt app.Time       `json:"finished_at"`
	Rows       []BulkRow      `json:"rows,omitempty"`
}

// BulkRow is one subscriber of a bulk change's log.
type BulkRow struct {
	UserID int64           `json:"user_id"`
	Status string          `json:"status"` // pending, ok, failed
	Reason string          `json:"reason,omitempty"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// MaxLogRows bounds the rows GET .../jobs/{id} answers.
const MaxLogRows = 1000

// ApplyBulk is POST /admin/tools/bulk/apply: the selected ids are fixed now
// and a job applies the operations to each, in chunks (202 with the bulk
// change). Every operation needs its permission (403
// operation_not_permitted naming it).
func ApplyBulk(ctx context.Context, act *app.Actor, in BulkInput) (*BulkJob, error) {
	if err := act.Require(PermToolsBulkChanges); err != nil {
		return nil, err
	}
	if r := refusedOps(act, in.Operations); len(r) > 0 {
		return nil, app.ErrForbidden("operation_not_permitted").With("op", r[0].Op).With("permission", string(r[0].Permission))
	}
	if err := in.check(ctx, act); err != nil {
		return nil, err
	}
	t := act.Tenant
	var id int64
	err := t.Write(ctx, func(tx *sql.Tx) error {
		now := t.Now()
		ids, err := subs.SelectUserIDs(ctx, tx, act, in.Selection, now)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return app.ErrValidation("no_match", "ids")
		}
		sel, err := json.Marshal(in.Selection)
		if err != nil {
			return err
		}
		ops, err := json.Marshal(in.Operations)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO bulk_changes(selection, operations, total, created_by, created_at) VALUES (?,?,?,?,?)`,
			string(sel), string(ops), len(ids), nullID(act.ManagerID), app.FormatTime(now))
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		if err := insertIDs(ctx, tx, `INSERT INTO bulk_change_rows(bulk_id, user_id) SELECT ?, value FROM json_each(?)`, id, ids); err != nil {
			return err
		}
		jobID, err := app.EnqueueJob(ctx, tx, JobBulkApply, map[string]int64{"bulk_id": id}, now, act.ManagerID, 10)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE bulk_changes SET job_id = ? WHERE id = ?`, jobID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return getBulk(ctx, act, id, false)
}

const bulkCols = `id, selection, operations, state, total, done, ok, failed, job_id, created_by, created_at, finished_at`

func scanBulk(row interface{ Scan(...any) error }) (*BulkJob, sql.NullInt64, error) {
	b := &BulkJob{}
	var sel, ops string
	var job, by sql.NullInt64
	if err := row.Scan(&b.ID, &sel, &ops, &b.State, &b.Total, &b.Done, &b.OK, &b.Failed, &job, &by, &b.CreatedAt, &b.FinishedAt); err != nil {
		return nil, by, err
	}
	if err := json.Unmarshal([]byte(sel), &b.Selection); err != nil {
		return nil, by, err
	}
	if err := json.Unmarshal([]byte(ops), &b.Operations); err != nil {
		return nil, by, err
	}
	if job.Valid {
		b.JobID = &job.Int64
	}
	if by.Valid {
		b.CreatedBy = &by.Int64
	}
	return b, by, nil
}

// GetBulkJob is GET /admin/tools/bulk/jobs/{id}: the bulk change with its
// per-row log (first MaxLogRows rows by subscriber id); its creator or a
// tenant-wide caller only.
func GetBulkJob(ctx context.Context, act *app.Actor, id int64) (*BulkJob, error) {
	return getBulk(ctx, act, id, true)
}

func getBulk(ctx context.Context, act *app.Actor, id int64, withRows bool) (*BulkJob, error) {
	if err := act.Require(PermToolsBulkChanges); err != nil {
		return nil, err
	}
	var b *BulkJob
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var by sql.NullInt64
		var err error
		b, by, err = scanBulk(tx.QueryRowContext(ctx, `SELECT `+bulkCols+` FROM bulk_changes WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !owns(act, by)) {
			return app.ErrNotFound()
		}
		if err != nil || !withRows {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT user_id, status, reason, COALESCE(before, 'null'), COALESCE(after, 'null') FROM bulk_change_rows
			WHERE bulk_id = ? ORDER BY user_id LIMIT ?`, id, MaxLogRows)
		if err != nil {
			return err
		}
		defer rows.Close()
		b.Rows = []BulkRow{}
		for rows.Next() {
			var r BulkRow
			var before, after string
			if err := rows.Scan(&r.UserID, &r.Status, &r.Reason, &before, &after); err != nil {
				return err
			}
			r.Before, r.After = json.RawMessage(before), json.RawMessage(after)
			b.Rows = append(b.Rows, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// BulkJobListSpec is the list spec of GET /admin/tools/bulk/jobs.
var BulkJobListSpec = app.ListSpec{Sorts: map[string]string{"id": "id", "created_at": "created_at"}, DefaultSort: "id",
	Filters: map[string]app.FilterKind{"state": app.FilterString}}

// ListBulkJobs is GET /admin/tools/bulk/jobs, newest first (the caller's
// own unless tenant-wide); filter state.
func ListBulkJobs(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[BulkJob], error) {
	if err := act.Require(PermToolsBulkChanges); err != nil {
		return app.Page[BulkJob]{}, err
	}
	cond, args := ownerSQL(act, "created_by")
	if v, ok := lq.Str("state"); ok {
		cond += " AND state = ?"
		args = append(args, v)
	}
	return app.QueryPage(ctx, act.Tenant, lq, bulkCols, `FROM bulk_changes WHERE `+cond, args, "id",
		func(rows *sql.Rows) (BulkJob, error) {
			b, _, err := scanBulk(rows)
			if err != nil {
				return BulkJob{}, err
			}
			return *b, nil
		})
}

// runBulkApply is the job of one bulk change.
func runBulkApply(ctx context.Context, jc *app.JobContext) (any, error) {
	var p struct {
		BulkID int64 `json:"bulk_id"`
	}
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	return applyChunks(ctx, jc.Tenant, p.BulkID, func(done, total int64) { jc.NoteProgress(ctx, done, total) })
}

// BulkOutcome is the bulk job's result.
type BulkOutcome struct {
	OK     int64 `json:"ok"`
	Failed int64 `json:"failed"`
}

// applyChunks applies a bulk change to its pending rows, one chunk per
// transaction: each row's change and its outcome in the log commit
// together, so after a crash the job resumes at the first pending row and
// no row is applied twice. It acts as the bulk change's creator with its
// current grant (a creator gone or suspended fails the job).
func applyChunks(ctx context.Context, t *app.Tenant, id int64, progress func(done, total int64)) (*BulkOutcome, error) {
	chunk, after := hooksOf(t.App).get()
	var b *BulkJob
	b, by, err := scanBulk(t.DB.R.QueryRowContext(ctx, `SELECT `+bulkCols+` FROM bulk_changes WHERE id = ?`, id))
	if err != nil {
		return nil, err
	}
	var act *app.Actor
	if by.Valid {
		a, status, err := app.ManagerActor(ctx, t, by.Int64, nil)
		if err != nil {
			return nil, err
		}
		if status != "active" {
			return nil, app.ErrForbidden("creator_inactive")
		}
		act = a
	} else if act, err = app.SystemActor(ctx, t); err != nil {
		return nil, err
	}
	for {
		var done bool
		out := &BulkOutcome{}
		var processed int64
		err := t.Write(ctx, func(tx *sql.Tx) error {
			ids, err := app.QueryIDs(ctx, tx, `SELECT user_id FROM bulk_change_rows WHERE bulk_id = ? AND status = 'pending' ORDER BY user_id LIMIT ?`, id, chunk)
			if err != nil {
				return err
			}
			if len(ids) == 0 {
				done = true
				if _, err := tx.ExecContext(ctx, `UPDATE bulk_changes SET state = 'done', finished_at = COALESCE(finished_at, ?) WHERE id = ?`, t.NowText(), id); err != nil {
					return err
				}
			} else {
				for _, uid := range ids {
					before, after, rerr, fatal := applyRow(ctx, tx, act, uid, b.Operations)
					if fatal != nil {
						return fatal
					}
					status, reason := "ok", ""
					if rerr != nil {
						status, reason = "failed", reasonOf(rerr)
					}
					bj, aj, err := marshalState(before, after)
					if err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `UPDATE bulk_change_rows SET status = ?, reason = ?, before = ?, after = ? WHERE bulk_id = ? AND user_id = ?`,
						status, reason, bj, aj, id, uid); err != nil {
						return err
					}
					ok, failed := 0, 0
					if rerr == nil {
						ok = 1
					} else {
						failed = 1
					}
					if _, err := tx.ExecContext(ctx, `UPDATE bulk_changes SET state = 'running', done = done + 1, ok = ok + ?, failed = failed + ? WHERE id = ?`,
						ok, failed, id); err != nil {
						return err
					}
				}
			}
			if err := tx.QueryRowContext(ctx, `SELECT done, ok, failed FROM bulk_changes WHERE id = ?`, id).Scan(&processed, &out.OK, &out.Failed); err != nil {
				return err
			}
			if after != nil && !done {
				return after(ctx, tx, JobBulkApply, id)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(processed, b.Total)
		}
		if done {
			return out, nil
		}
	}
}

func marshalState(before, after *subs.RowState) (any, any, error) {
	var bj, aj any
	if before != nil {
		b, err := json.Marshal(before)
		if err != nil {
			return nil, nil, err
		}
		bj = string(b)
	}
	if after != nil {
		b, err := json.Marshal(after)
		if err != nil {
			return nil, nil, err
		}
		aj = string(b)
	}
	return bj, aj, nil
}
