package dataimport

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"xr/app"
	"xr/app/files"
)

// Job kinds.
const (
	kindDataRun       = "dataimport.run"
	kindLegacyAnalyse = "dataimport.legacy_analyse"
	kindLegacyRun     = "dataimport.legacy_run"
)

// MaxUpload bounds an uploaded spreadsheet; MaxLegacyUpload a legacy dump
// (5,000,000 radacct rows are about 1.5 GB).
const (
	MaxUpload       = 512 << 20
	MaxLegacyUpload = 8 << 30
)

// legacyExpanded bounds what a legacy zip may inflate to (besides the
// ratio of sheet.Limits): a radacct table of millions of rows.
const legacyExpanded int64 = 64 << 30

// uploadAllow is what an import accepts: text (CSV, SQL dumps, router
// exports) and zip (XLSX).
var uploadAllow = []string{"text/plain", "application/zip"}

// Job is an import: a data import (family data) or a legacy import.
type Job struct {
	ID        int64           `json:"id"`
	Family    string          `json:"-"`
	Kind      string          `json:"kind"`
	State     string          `json:"state"` // analysing, analysed, queued, running, done, failed, cancelled
	FileName  string          `json:"file_name"`
	Format    string          `json:"format"`
	Spec      json.RawMessage `json:"spec"`
	Analysis  json.RawMessage `json:"analysis"`
	JobID     *int64          `json:"job_id"`
	ManagerID int64           `json:"manager_id"`
	// CancelRequested: a cancel was asked while running; the job stops
	// after its current chunk.
	CancelRequested bool     `json:"cancel_requested"`
	RowsTotal       int64    `json:"rows_total"`
	RowsDone        int64    `json:"rows_done"`
	Created         int64    `json:"created"`
	Updated         int64    `json:"updated"`
	Skipped         int64    `json:"skipped"`
	Failed          int64    `json:"failed"`
	Error           string   `json:"error"`
	CreatedAt       app.Time `json:"created_at"`
	UpdatedAt       app.Time `json:"updated_at"`
	FinishedAt      app.Time `json:"finished_at"`
	// Lines are the results of lines not simply created (GET of one job:
	// the first 1,000; the whole list as CSV at .../errors.csv).
	Lines  []LineError `json:"lines,omitempty"`
	fileID sql.NullInt64
}

const runCols = `r.id, r.family, r.kind, r.state, r.file_name, r.format, r.spec, r.analysis, r.job_id, r.manager_id, r.cancel_requested,
	r.rows_total, r.rows_done, r.created, r.updated, r.skipped, r.failed, r.error, r.created_at, r.updated_at, r.finished_at, r.file_id`

func scanRun(row interface{ Scan(...any) error }) (*Job, error) {
	j := &Job{}
	var spec, analysis string
	err := row.Scan(&j.ID, &j.Family, &j.Kind, &j.State, &j.FileName, &j.Format, &spec, &analysis, &j.JobID, &j.ManagerID, &j.CancelRequested,
		&j.RowsTotal, &j.RowsDone, &j.Created, &j.Updated, &j.Skipped, &j.Failed, &j.Error, &j.CreatedAt, &j.UpdatedAt, &j.FinishedAt, &j.fileID)
	if err != nil {
		return nil, err
	}
	j.Spec, j.Analysis = json.RawMessage(spec), json.RawMessage(analysis)
	return j, nil
}

// loadRun reads a run of a family in the caller's subtree (404 otherwise).
func loadRun(ctx context.Context, q app.Querier, act *app.Actor, family string, id int64) (*Job, error) {
	cond, args := act.ScopeSQL("r.manager_id")
	j, err := scanRun(q.QueryRowContext(ctx, `SELECT `+runCols+` FROM import_runs r WHERE r.id = ? AND r.family = ? AND `+cond,
		append([]any{id, family}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return j, err
}

func readLines(ctx context.Context, q app.Querier, runID int64, limit int) ([]LineError, error) {
	rows, err := q.QueryContext(ctx, `SELECT line, outcome, field, col, reason, key FROM import_lines WHERE run_id = ? ORDER BY line, rowid LIMIT ?`, runID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []LineError{}
	for rows.Next() {
		var l LineError
		if err := rows.Scan(&l.Line, &l.Outcome, &l.Field, &l.Column, &l.Reason, &l.Username); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

func insertLines(ctx context.Context, tx *sql.Tx, runID int64, lines []LineError) error {
	if len(lines) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO import_lines(run_id, line, outcome, field, col, reason, key) VALUES (?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, l := range lines {
		if _, err := st.ExecContext(ctx, runID, l.Line, l.Outcome, l.Field, l.Column, l.Reason, l.Username); err != nil {
			return err
		}
	}
	return nil
}

var runListSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "r.id", "created_at": "r.created_at", "state": "r.state"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"state": app.FilterString, "kind": app.FilterString},
}

// ListSpec is the list spec of the import job lists.
func ListSpec() app.ListSpec { return runListSpec }

func listRuns(ctx context.Context, act *app.Actor, family string, lq app.ListQuery) (app.Page[Job], error) {
	cond, args := act.ScopeSQL("r.manager_id")
	where := []string{"r.family = ?", cond}
	args = append([]any{family}, args...)
	if s, ok := lq.Str("state"); ok {
		where, args = append(where, "r.state = ?"), append(args, s)
	}
	if s, ok := lq.Str("kind"); ok {
		where, args = append(where, "r.kind = ?"), append(args, s)
	}
	if lq.Q != "" {
		where, args = append(where, `r.file_name LIKE ? ESCAPE '\'`), append(args, "%"+app.LikeEscape(lq.Q)+"%")
	}
	return app.QueryPage(ctx, act.Tenant, lq, runCols, `FROM import_runs r WHERE `+strings.Join(where, " AND "), args, "r.id",
		func(rows *sql.Rows) (Job, error) {
			j, err := scanRun(rows)
			if err != nil {
				return Job{}, err
			}
			return *j, nil
		})
}

// stageUpload stores an uploaded file through the tenant file store.
func stageUpload(t *app.Tenant, name string, r io.Reader) (*files.Staged, error) {
	if strings.TrimSpace(name) == "" {
		name = "import.csv"
	}
	return files.Stage(t, name, r, files.Policy{MaxBytes: MaxUpload, Allow: uploadAllow})
}

// ValidateUpload is POST /admin/import/validate: the dry run of an
// uploaded CSV or XLSX. The file is not kept.
func ValidateUpload(ctx context.Context, act *app.Actor, name string, r io.Reader, spec Spec) (*Report, error) {
	if err := act.Require(PermToolsImport); err != nil {
		return nil, err
	}
	if err := spec.normalize(); err != nil {
		return nil, err
	}
	st, err := stageUpload(act.Tenant, name, r)
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	return Validate(ctx, act, st.Path(), formatOf(name, st), spec)
}

func formatOf(name string, st *files.Staged) string {
	if strings.HasPrefix(st.File.ContentType, "application/zip") {
		return "xlsx"
	}
	if f := extFormat(name); f == "csv" {
		return f
	}
	return "csv"
}

// CreateJob is POST /admin/import/jobs: the file is stored, its header
// and mapping checked at once (400 as for validate), read once to its end
// within the caps (400 too_many_rows, line_too_long, invalid_encoding...:
// refused at the upload, not by the job), and a job queued that validates
// every row then writes them in chunks.
func CreateJob(ctx context.Context, act *app.Actor, name string, r io.Reader, spec Spec) (*Job, error) {
	if err := act.Require(PermToolsImport); err != nil {
		return nil, err
	}
	if err := spec.normalize(); err != nil {
		return nil, err
	}
	t := act.Tenant
	st, err := stageUpload(t, name, r)
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	format := formatOf(name, st)
	if spec.Kind == KindNAS {
		if _, err := nasFile(ctx, act, st.Path(), format, Spec{Kind: KindNAS, Mapping: spec.Mapping, OnDuplicate: spec.OnDuplicate}, true, 0, nil); err != nil {
			return nil, err
		}
	} else if k := rowKindOf(spec.Kind); k != nil {
		if _, err := prepareRows(ctx, act, k, func() (table, error) { return openTable(act.Tenant.App, st.Path(), format, spec.Encoding) }, format, spec); err != nil {
			return nil, err
		}
	} else if _, err := prepare(ctx, act, st.Path(), format, spec); err != nil {
		return nil, err
	}
	if err := scanTable(func() (table, error) { return openTable(t.App, st.Path(), format, spec.Encoding) }); err != nil {
		return nil, err
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var id int64
	now := t.Now()
	err = t.Write(ctx, func(tx *sql.Tx) error {
		f, err := st.Insert(ctx, tx, "imports")
		if err != nil {
			return err
		}
		id, err = insertRun(ctx, tx, "data", spec.Kind, "queued", f, format, string(specJSON), act.ManagerID)
		if err != nil {
			return err
		}
		return enqueue(ctx, tx, kindDataRun, id, now, act.ManagerID)
	})
	if err != nil {
		return nil, err
	}
	st.Keep()
	return loadRun(ctx, t.DB.R, act, "data", id)
}

// scanTable reads a table to its end: the refusals of its reader (caps,
// encoding) come now. Rows the parser refuses are the job's to report.
func scanTable(open func() (table, error)) error {
	tb, err := open()
	if err != nil {
		return err
	}
	defer tb.Close()
	for {
		_, _, err := tb.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, errMalformedRow) {
			return err
		}
	}
}

func insertRun(ctx context.Context, tx *sql.Tx, family, kind, state string, f *files.File, format, spec string, managerID int64) (int64, error) {
	now := app.StampNow()
	res, err := tx.ExecContext(ctx, `INSERT INTO import_runs(family, kind, state, file_id, file_name, format, spec, manager_id, created_at, updated_at)
		VALUES (?,?,?,?,?,?,?,?,?,?)`, family, kind, state, f.ID, f.Name, format, spec, managerID, now, now)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

type runPayload struct {
	Run int64 `json:"run"`
}

// enqueue queues kind for run and records the job on the run.
func enqueue(ctx context.Context, tx *sql.Tx, kind string, run int64, now time.Time, by int64) error {
	jid, err := app.EnqueueJob(ctx, tx, kind, runPayload{Run: run}, now, by, 3)
	if err != nil {
		return err
	}
	var p app.Patch
	p.Set("job_id", jid)
	_, err = p.Exec(ctx, tx, "import_runs", run, app.StampNow())
	return err
}

// ListJobs is GET /admin/import/jobs (the caller's subtree).
func ListJobs(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Job], error) {
	if err := act.Require(PermToolsImport); err != nil {
		return app.Page[Job]{}, err
	}
	return listRuns(ctx, act, "data", lq)
}

// GetJob is GET /admin/import/jobs/{id} with its first 1,000 line results.
func GetJob(ctx context.Context, act *app.Actor, id int64) (*Job, error) {
	if err := act.Require(PermToolsImport); err != nil {
		return nil, err
	}
	return getRun(ctx, act, "data", id)
}

func getRun(ctx context.Context, act *app.Actor, family string, id int64) (*Job, error) {
	var j *Job
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var err error
		if j, err = loadRun(ctx, tx, act, family, id); err != nil {
			return err
		}
		j.Lines, err = readLines(ctx, tx, id, 1000)
		return err
	})
	return j, err
}

// WriteLinesCSV writes every line result of a data import as CSV (the
// downloadable error report).
func WriteLinesCSV(ctx context.Context, act *app.Actor, id int64, w io.Writer) error {
	if err := act.Require(PermToolsImport); err != nil {
		return err
	}
	t := act.Tenant
	return t.Read(ctx, func(tx *sql.Tx) error {
		if _, err := loadRun(ctx, tx, act, "data", id); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT line, outcome, field, col, reason, key FROM import_lines WHERE run_id = ? ORDER BY line, rowid`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		cw := newCSVWriter(w)
		if err := cw.Write([]string{"line", "outcome", "field", "column", "reason", "username"}); err != nil {
			return err
		}
		for rows.Next() {
			var l LineError
			if err := rows.Scan(&l.Line, &l.Outcome, &l.Field, &l.Column, &l.Reason, &l.Username); err != nil {
				return err
			}
			if err := cw.Write([]string{itoa(l.Line), l.Outcome, l.Field, l.Column, l.Reason, l.Username}); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	})
}

// CancelJob is POST /admin/import/jobs/{id}/cancel.
func CancelJob(ctx context.Context, act *app.Actor, id int64) (*Job, error) {
	if err := act.Require(PermToolsImport); err != nil {
		return nil, err
	}
	return cancelRun(ctx, act, "data", id)
}

// cancelRun cancels a queued or analysed run at once; a running one is
// asked to stop after its current chunk (what was committed stays and is
// reported). A finished run is 409 job_not_cancellable.
func cancelRun(ctx context.Context, act *app.Actor, family string, id int64) (*Job, error) {
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		j, err := loadRun(ctx, tx, act, family, id)
		if err != nil {
			return err
		}
		var p app.Patch
		switch j.State {
		case "queued", "analysed", "analysing":
			if j.JobID != nil && j.State != "analysed" {
				if err := app.CancelJob(ctx, tx, *j.JobID); err != nil && app.AsError(err) == nil {
					return err
				}
			}
			p.Set("state", "cancelled")
			p.Set("finished_at", t.NowText())
		case "running":
			p.Set("cancel_requested", true)
		default:
			return app.ErrConflict("job_not_cancellable").With("state", j.State)
		}
		_, err = p.Exec(ctx, tx, "import_runs", id, t.NowText())
		return err
	})
	if err != nil {
		return nil, err
	}
	return loadRun(ctx, t.DB.R, act, family, id)
}

// runActor is the caller who created a run, as it is now (a manager whose
// grant changed imports with what it may do today).
func runActor(ctx context.Context, t *app.Tenant, managerID int64) (*app.Actor, error) {
	act, _, err := app.ManagerActor(ctx, t, managerID, nil)
	return act, err
}

// runData is the job of a data import. The uploaded file is removed once
// the run has finished (its line results stay).
func runData(ctx context.Context, jc *app.JobContext) (any, error) {
	res, err := runDataOnce(ctx, jc)
	if err == nil {
		dropFinishedFile(ctx, jc.Tenant, jc)
	}
	return res, err
}

// dropFinishedFile deletes the file of a finished data run.
func dropFinishedFile(ctx context.Context, t *app.Tenant, jc *app.JobContext) {
	var p runPayload
	if json.Unmarshal(jc.Job.Payload, &p) != nil {
		return
	}
	var rel string
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var state string
		var fid sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT state, file_id FROM import_runs WHERE id = ?`, p.Run).Scan(&state, &fid)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil || !fid.Valid || (state != "done" && state != "failed" && state != "cancelled") {
			return err
		}
		var np app.Patch
		np.Set("file_id", nil)
		if _, err := np.Exec(ctx, tx, "import_runs", p.Run, t.NowText()); err != nil {
			return err
		}
		rel, err = files.DeleteRow(ctx, tx, fid.Int64)
		return err
	})
	if err != nil {
		// The run's outcome stands; the file stays until the tenant's files
		// are cleaned by hand.
		t.App.Log.Warn("import: drop the finished file", "tenant", t.Slug, "run", p.Run, "err", err)
		return
	}
	files.Remove(t, rel)
}

func runDataOnce(ctx context.Context, jc *app.JobContext) (any, error) {
	var p runPayload
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	j, err := scanRun(t.DB.R.QueryRowContext(ctx, `SELECT `+runCols+` FROM import_runs r WHERE r.id = ?`, p.Run))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if j.State != "queued" && j.State != "running" {
		return map[string]any{"state": j.State}, nil
	}
	var spec Spec
	if err := json.Unmarshal(j.Spec, &spec); err != nil {
		return nil, err
	}
	act, err := runActor(ctx, t, j.ManagerID)
	if err != nil {
		return nil, err
	}
	if !j.fileID.Valid {
		return nil, finishRun(ctx, t, j.ID, "failed", "file_missing", nil)
	}
	f, err := files.Get(ctx, t.DB.R, j.fileID.Int64)
	if err != nil {
		return nil, err
	}
	if err := setRunState(ctx, t, j.ID, "running"); err != nil {
		return nil, err
	}
	cp := runCheckpoint(t, jc.Job.ID, j, nil)
	rep, err := importFrom(ctx, act, files.Path(t, f), j.Format, spec, int(j.RowsDone), cp)
	if err != nil {
		if e := app.AsError(err); e != nil && e.Status < 500 {
			// A refusal of the whole file (a plan or parent gone since the
			// upload): the run fails with its reason, no retry.
			return nil, finishRun(ctx, t, j.ID, "failed", e.Reason, nil)
		}
		return nil, err
	}
	switch {
	case !rep.Committed:
		return rep.summary(), finishRun(ctx, t, j.ID, "failed", "import_refused", func(tx *sql.Tx) error {
			var p app.Patch
			p.Set("rows_total", int64(rep.Rows))
			p.Set("failed", int64(rep.Failed))
			if _, err := p.Exec(ctx, tx, "import_runs", j.ID, t.NowText()); err != nil {
				return err
			}
			return insertLines(ctx, tx, j.ID, rep.Errors)
		})
	case rep.Cancelled:
		return rep.summary(), finishRun(ctx, t, j.ID, "cancelled", "", nil)
	}
	return rep.summary(), finishRun(ctx, t, j.ID, "done", "", nil)
}

// runCheckpoint is the Checkpoint of a run's job: each committed chunk
// stores the run's counts (added to those it had when the job started, so
// a resumed job keeps its earlier chunks), the chunk's line results and the
// job's progress, in the chunk's transaction, and says whether a cancel was
// asked. The first chunk also stores lead, lines refused before the import
// (a legacy run's analysis problems).
func runCheckpoint(t *app.Tenant, jobID int64, j *Job, lead []LineError) Checkpoint {
	base := *j
	if j.RowsDone != 0 {
		lead = nil // already stored by the chunk that started the run
	}
	base.Failed += int64(len(lead))
	return func(ctx context.Context, tx *sql.Tx, done int, rep *Report, lines []LineError) (bool, error) {
		if lead != nil {
			lines, lead = append(lead, lines...), nil
		}
		var p app.Patch
		total := max(base.RowsTotal, int64(rep.Rows))
		p.Set("rows_done", int64(done))
		p.Set("rows_total", total)
		p.Set("created", base.Created+int64(rep.Created))
		p.Set("updated", base.Updated+int64(rep.Updated))
		p.Set("skipped", base.Skipped+int64(rep.Skipped))
		p.Set("failed", base.Failed+int64(rep.Failed))
		if _, err := p.Exec(ctx, tx, "import_runs", j.ID, t.NowText()); err != nil {
			return false, err
		}
		if err := insertLines(ctx, tx, j.ID, lines); err != nil {
			return false, err
		}
		if err := jobProgress(ctx, tx, t, jobID, int64(done), total); err != nil {
			return false, err
		}
		var stop bool
		if err := tx.QueryRowContext(ctx, `SELECT cancel_requested FROM import_runs WHERE id = ?`, j.ID).Scan(&stop); err != nil {
			return false, err
		}
		return stop, nil
	}
}

func (rep *Report) summary() map[string]any {
	return map[string]any{"rows": rep.Rows, "created": rep.Created, "updated": rep.Updated, "skipped": rep.Skipped, "failed": rep.Failed,
		"cancelled": rep.Cancelled}
}

// jobProgress records a job's progress inside the caller's transaction.
func jobProgress(ctx context.Context, tx *sql.Tx, t *app.Tenant, jobID, done, total int64) error {
	return app.SetJobProgress(ctx, tx, jobID, done, total, t.Now())
}

func setRunState(ctx context.Context, t *app.Tenant, id int64, state string) error {
	return t.Write(ctx, func(tx *sql.Tx) error {
		var p app.Patch
		p.Set("state", state)
		_, err := p.Exec(ctx, tx, "import_runs", id, t.NowText())
		return err
	})
}

func finishRun(ctx context.Context, t *app.Tenant, id int64, state, reason string, more func(tx *sql.Tx) error) error {
	return t.Write(ctx, func(tx *sql.Tx) error {
		var p app.Patch
		p.Set("state", state)
		p.Set("error", reason)
		p.Set("finished_at", t.NowText())
		if _, err := p.Exec(ctx, tx, "import_runs", id, t.NowText()); err != nil {
			return err
		}
		if more != nil {
			return more(tx)
		}
		return nil
	})
}
