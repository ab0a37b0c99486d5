package dataimport

import (
	"archive/zip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"xr/app"
	"xr/app/aaa"
	"xr/app/files"
	"xr/app/sheet"
	"xr/app/subs"
)

// Legacy sources.
const (
	SourceFreeRADIUS = "freeradius"
	SourceMikroTik   = "mikrotik"
)

// LegacyInput is the form of POST /admin/legacy/import/jobs (beside the
// file): the source; "" guesses it from the file (.rsc or a RouterOS
// export header: mikrotik; otherwise a FreeRADIUS SQL dump).
type LegacyInput struct {
	Source string `json:"source"`
	// More yields the upload's further files, when it has several
	// (stageLegacyUpload).
	More NextFile `json:"-"`
}

// StartInput is POST /admin/legacy/import/jobs/{id}/start: what a
// subscriber whose username exists does (fail, skip, update), the parent
// manager of the imported subscribers ("" = the caller) and whether the
// valid subscribers are imported when others are refused.
type StartInput struct {
	OnDuplicate string `json:"on_duplicate"`
	Parent      string `json:"parent"`
	Partial     bool   `json:"partial"`
	// Sessions: import radacct as session history (history.go); default
	// true.
	Sessions *bool `json:"sessions,omitempty"`
}

// Analysis is what a legacy import found, before anything is written.
type Analysis struct {
	Source string `json:"source"`
	Format string `json:"format"` // mysql, postgresql, routeros
	Counts struct {
		Users    int `json:"users"`
		Plans    int `json:"plans"`
		Managers int `json:"managers"`
		NAS      int `json:"nas"`
		Balances int `json:"balances"`
		Sessions int `json:"sessions"`
		PostAuth int `json:"postauth"`
		// Series and Cards: the reseller-panel CSV set's card series.
		Series int `json:"series,omitempty"`
		Cards  int `json:"cards,omitempty"`
	} `json:"counts"`
	// Importable is the number of subscribers the import would create or
	// update; Existing the usernames xr already has.
	Importable int            `json:"importable"`
	Existing   int            `json:"existing"`
	Passwords  map[string]int `json:"passwords"`
	Plans      []legacyPlan   `json:"plans"`
	Unmapped   []Unmapped     `json:"unmapped"`
	// Problems are the subscribers that cannot be imported, with the line
	// of the dump that names them (the first 200; ProblemsTotal counts all).
	Problems      []Problem `json:"problems"`
	ProblemsTotal int       `json:"problems_total"`
	// Cutover is the replay of radpostauth once imported (nil before).
	Cutover *Cutover `json:"cutover,omitempty"`
	// History is the radacct rows imported as sessions (nil before).
	History *History `json:"history,omitempty"`
}

// problemOf is why a legacy subscriber cannot be imported ("" = it can).
func problemOf(u *legacyUser) string {
	switch {
	case !subs.ValidUsername(u.Username):
		return "invalid_username"
	case u.PassKind == "":
		return "password_required"
	case u.PassKind != "cleartext" && !aaa.LegacyKindSupported(u.PassKind, u.Password):
		// Hashed kinds PAP cannot verify (yescrypt, LM, ...): the
		// subscriber needs a new password.
		return "password_hashed"
	case u.ExpireBad != "":
		return "invalid_expiration"
	}
	return ""
}

// readSource reads a legacy upload (name: the uploaded file's name).
func readSource(a *app.App, source, path, name string) (*catalogue, error) {
	if source == SourceMikroTik {
		return readMikroTik(path)
	}
	return readFreeRADIUS(path, name, streamLimits(a))
}

// analyse reads a legacy file into its analysis.
func analyse(ctx context.Context, t *app.Tenant, source, path, name string) (*Analysis, error) {
	if source == SourcePanel {
		return analysePanel(ctx, t, path)
	}
	c, err := readSource(t.App, source, path, name)
	if err != nil {
		return nil, err
	}
	a := &Analysis{Source: source, Format: c.Format, Passwords: map[string]int{}, Plans: []legacyPlan{}, Unmapped: []Unmapped{}, Problems: []Problem{}}
	a.Counts.Users, a.Counts.NAS, a.Counts.Sessions, a.Counts.PostAuth = len(c.users), len(c.nas), c.sessions, c.postauth
	err = t.Read(ctx, func(rtx *sql.Tx) error {
		tx := subs.NewQueryCache(rtx)
		defer tx.Close()
		for _, u := range c.sortedUsers() {
			if u.PassKind != "" {
				a.Passwords[u.PassKind]++
			}
			if p := problemOf(u); p != "" {
				a.ProblemsTotal++
				if len(a.Problems) < 200 {
					a.Problems = append(a.Problems, Problem{Line: u.Line, Username: u.Username, Reason: p})
				}
				continue
			}
			a.Importable++
			taken, err := subs.UsernameTaken(ctx, tx, u.Username)
			if err != nil {
				return err
			}
			if taken {
				a.Existing++
			}
		}
		for _, g := range c.groups {
			if g.Users == 0 && g.rateText == "" && g.SimUse == 0 {
				continue
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM profiles WHERE name = ?`, g.Name).Scan(&n); err != nil {
				return err
			}
			g.Exists = n > 0
			a.Plans = append(a.Plans, *g)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(a.Plans, func(i, j int) bool { return a.Plans[i].Name < a.Plans[j].Name })
	a.Counts.Plans = len(a.Plans)
	for _, u := range c.unmapped {
		a.Unmapped = append(a.Unmapped, *u)
	}
	if c.postauth > 0 {
		a.Unmapped = append(a.Unmapped, Unmapped{What: "table", Name: "radpostauth", Count: c.postauth,
			Reason: "not imported; its last decisions are replayed through the explainer after the import (cutover)"})
	}
	sort.Slice(a.Unmapped, func(i, j int) bool {
		if a.Unmapped[i].What != a.Unmapped[j].What {
			return a.Unmapped[i].What < a.Unmapped[j].What
		}
		return a.Unmapped[i].Name < a.Unmapped[j].Name
	})
	return a, nil
}

func legacyRequire(act *app.Actor) error { return act.Require(PermToolsLegacyImport) }

// CreateLegacyJob is POST /admin/legacy/import/jobs: the file is stored
// and analysed by a job; the run waits in state analysed for a start.
func CreateLegacyJob(ctx context.Context, act *app.Actor, name string, r io.Reader, in LegacyInput) (*Job, error) {
	if err := legacyRequire(act); err != nil {
		return nil, err
	}
	switch in.Source {
	case "", SourceFreeRADIUS, SourceMikroTik, SourcePanel:
	default:
		return nil, app.ErrValidation("invalid_enum", "source")
	}
	t := act.Tenant
	st, err := stageLegacyUpload(t, name, r, in.More)
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	if err := checkArchive(st.Path(), limitsOf(t.App)); err != nil {
		return nil, err
	}
	name = st.File.Name
	source := in.Source
	if source == "" {
		source = guessSource(name, st.Path())
	}
	format := "sql"
	if source == SourceMikroTik {
		format = "routeros"
	} else if ext := strings.ToLower(filepath.Ext(name)); ext == ".csv" || ext == ".zip" {
		format = "csv" // FreeRADIUS CSV tables (legacy_csvtables.go)
	}
	if source == SourcePanel {
		format = "csv"
	}
	var id int64
	now := t.Now()
	err = t.Write(ctx, func(tx *sql.Tx) error {
		f, err := st.Insert(ctx, tx, "imports")
		if err != nil {
			return err
		}
		id, err = insertRun(ctx, tx, "legacy", source, "analysing", f, format, "{}", act.ManagerID)
		if err != nil {
			return err
		}
		return enqueue(ctx, tx, kindLegacyAnalyse, id, now, act.ManagerID)
	})
	if err != nil {
		return nil, err
	}
	st.Keep()
	return loadRun(ctx, t.DB.R, act, "legacy", id)
}

// checkArchive refuses a zip upload whose directory declares more than it
// may inflate to (sheet.CheckZip: 400 archive_too_large), before a job
// reads it; what it really inflates to is counted again while reading.
func checkArchive(p string, lim sheet.Limits) error {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return nil // not a zip: read as text
	}
	defer func() { _ = zr.Close() }() // read only
	_, err = sheet.CheckZip(p, &zr.Reader, legacyExpanded, lim.MaxRatio)
	return err
}

func guessSource(name, path string) string {
	if s := guessPanel(path); s != "" {
		return s
	}
	if strings.HasSuffix(strings.ToLower(name), ".rsc") {
		return SourceMikroTik
	}
	b := make([]byte, 4096)
	if f, err := os.Open(path); err == nil {
		n, _ := io.ReadFull(f, b)
		f.Close()
		head := string(b[:n])
		if strings.Contains(head, "/ppp secret") || strings.Contains(head, "by RouterOS") || strings.Contains(head, "user-manager") {
			return SourceMikroTik
		}
	}
	return SourceFreeRADIUS
}

// runLegacyAnalyse is the job that analyses an uploaded legacy file.
func runLegacyAnalyse(ctx context.Context, jc *app.JobContext) (any, error) {
	t := jc.Tenant
	j, f, err := jobRun(ctx, jc)
	if err != nil || j == nil {
		return nil, err
	}
	if j.State != "analysing" {
		return map[string]any{"state": j.State}, nil
	}
	a, err := analyse(ctx, t, j.Kind, files.Path(t, f), f.Name)
	var de *errDump
	if errors.As(err, &de) {
		return nil, finishRun(ctx, t, j.ID, "failed", "malformed_dump", func(tx *sql.Tx) error {
			return insertLines(ctx, tx, j.ID, []LineError{{Line: de.Line, Outcome: "failed", Reason: "malformed_dump", Username: de.Msg}})
		})
	}
	if e := app.AsError(err); e != nil && e.Status < 500 {
		// A cap reached while reading (line_too_long, archive_too_large...):
		// the run fails with the reason, no retry.
		line, _ := e.Details["line"].(int)
		return nil, finishRun(ctx, t, j.ID, "failed", e.Reason, func(tx *sql.Tx) error {
			return insertLines(ctx, tx, j.ID, []LineError{{Line: line, Outcome: "failed", Reason: e.Reason}})
		})
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	err = t.Write(ctx, func(tx *sql.Tx) error {
		var state string
		if err := tx.QueryRowContext(ctx, `SELECT state FROM import_runs WHERE id = ?`, j.ID).Scan(&state); err != nil {
			return err
		}
		if state != "analysing" { // cancelled while it was read
			return nil
		}
		var p app.Patch
		p.Set("analysis", string(b))
		p.Set("state", "analysed")
		p.Set("rows_total", int64(a.Counts.Users))
		_, err := p.Exec(ctx, tx, "import_runs", j.ID, t.NowText())
		return err
	})
	return map[string]any{"users": a.Counts.Users, "importable": a.Importable}, err
}

// jobRun reads the run and file of a job (nil run when it was deleted).
func jobRun(ctx context.Context, jc *app.JobContext) (*Job, *files.File, error) {
	var p runPayload
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, nil, err
	}
	t := jc.Tenant
	j, err := scanRun(t.DB.R.QueryRowContext(ctx, `SELECT `+runCols+` FROM import_runs r WHERE r.id = ?`, p.Run))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !j.fileID.Valid {
		return nil, nil, finishRun(ctx, t, j.ID, "failed", "file_missing", nil)
	}
	f, err := files.Get(ctx, t.DB.R, j.fileID.Int64)
	if err != nil {
		return nil, nil, err
	}
	return j, f, nil
}

// StartLegacyJob is POST /admin/legacy/import/jobs/{id}/start: an
// analysed run is queued for import (409 job_not_analysed otherwise).
func StartLegacyJob(ctx context.Context, act *app.Actor, id int64, in StartInput) (*Job, error) {
	if err := legacyRequire(act); err != nil {
		return nil, err
	}
	spec := Spec{Kind: KindSubscribers, OnDuplicate: in.OnDuplicate, Parent: in.Parent, Partial: in.Partial}
	if err := spec.normalize(); err != nil {
		return nil, err
	}
	in.OnDuplicate = spec.OnDuplicate
	if _, err := subs.NewUserImporter(ctx, act, in.Parent, ""); err != nil {
		return nil, err
	}
	t := act.Tenant
	now := t.Now()
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	err = t.Write(ctx, func(tx *sql.Tx) error {
		j, err := loadRun(ctx, tx, act, "legacy", id)
		if err != nil {
			return err
		}
		if j.State != "analysed" {
			return app.ErrConflict("job_not_analysed").With("state", j.State)
		}
		var p app.Patch
		p.Set("state", "queued")
		p.Set("spec", string(b))
		if _, err := p.Exec(ctx, tx, "import_runs", id, t.NowText()); err != nil {
			return err
		}
		return enqueue(ctx, tx, kindLegacyRun, id, now, act.ManagerID)
	})
	if err != nil {
		return nil, err
	}
	return loadRun(ctx, t.DB.R, act, "legacy", id)
}

// memTable is a table of rows built in memory (a legacy catalogue).
type memTable struct {
	header []string
	rows   [][]string
	lines  []int
	i      int
}

func (m *memTable) Header() []string { return m.header }
func (m *memTable) Close() error     { return nil }
func (m *memTable) Next() (int, []string, error) {
	if m.i >= len(m.rows) {
		return 0, nil, io.EOF
	}
	m.i++
	return m.lines[m.i-1], m.rows[m.i-1], nil
}

var legacyHeader = []string{"username", "password", "profile", "expiration", "static_ip", "enabled", "notes"}

// runLegacy is the job that imports an analysed legacy file: plans first
// (a tenant-wide caller creates the missing ones), NAS (with
// prm_nas_manage), then the subscribers through the import engine in
// chunks, resumable like a data import.
func runLegacy(ctx context.Context, jc *app.JobContext) (any, error) {
	t := jc.Tenant
	j, f, err := jobRun(ctx, jc)
	if err != nil || j == nil {
		return nil, err
	}
	if j.State != "queued" && j.State != "running" {
		return map[string]any{"state": j.State}, nil
	}
	if j.Kind == SourcePanel {
		return runPanel(ctx, jc, j, f)
	}
	var in StartInput
	if err := json.Unmarshal(j.Spec, &in); err != nil {
		return nil, err
	}
	act, err := runActor(ctx, t, j.ManagerID)
	if err != nil {
		return nil, err
	}
	c, err := readSource(t.App, j.Kind, files.Path(t, f), f.Name)
	if err != nil {
		return nil, err
	}
	if err := setRunState(ctx, t, j.ID, "running"); err != nil {
		return nil, err
	}
	var problems []LineError
	tb := &memTable{header: legacyHeader}
	for _, u := range c.sortedUsers() {
		if p := problemOf(u); p != "" {
			problems = append(problems, LineError{Line: u.Line, Outcome: "failed", Field: "password", Column: "password", Reason: p, Username: u.Username})
			if p == "invalid_username" {
				problems[len(problems)-1].Field, problems[len(problems)-1].Column = "username", "username"
			}
			if p == "invalid_expiration" {
				problems[len(problems)-1].Field, problems[len(problems)-1].Column = "expiration", "expiration"
			}
			continue
		}
		enabled := "true"
		if u.Disabled {
			enabled = "false"
		}
		pw := u.Password
		if u.PassKind != "cleartext" { // kept hashed, verified by PAP
			pw = aaa.LegacyHashPrefix + u.PassKind + ":" + compactHash(u.PassKind, pw)
		}
		tb.rows = append(tb.rows, []string{u.Username, pw, u.Plan, u.Expiration, u.StaticIP, enabled, u.Notes})
		tb.lines = append(tb.lines, u.Line)
	}
	if j.RowsDone == 0 {
		if err := legacyPlansAndNAS(ctx, act, c); err != nil {
			return nil, err
		}
	}
	spec := Spec{Kind: KindSubscribers, OnDuplicate: in.OnDuplicate, Parent: in.Parent, Partial: in.Partial || len(problems) == 0}
	if len(problems) > 0 && !in.Partial {
		// Refused subscribers without partial: nothing is written.
		return nil, finishRun(ctx, t, j.ID, "failed", "import_refused", func(tx *sql.Tx) error {
			var p app.Patch
			p.Set("failed", int64(len(problems)))
			if _, err := p.Exec(ctx, tx, "import_runs", j.ID, t.NowText()); err != nil {
				return err
			}
			return insertLines(ctx, tx, j.ID, problems)
		})
	}
	r, err := prepareTable(ctx, act, func() (table, error) { tb.i = 0; return tb, nil }, "legacy", spec)
	if err != nil {
		if e := app.AsError(err); e != nil && e.Status < 500 {
			return nil, finishRun(ctx, t, j.ID, "failed", e.Reason, nil)
		}
		return nil, err
	}
	cp := runCheckpoint(t, jc.Job.ID, j, problems)
	rep, err := r.importAll(ctx, int(j.RowsDone), cp)
	if err != nil {
		return nil, err
	}
	switch {
	case !rep.Committed:
		return rep.summary(), finishRun(ctx, t, j.ID, "failed", "import_refused", func(tx *sql.Tx) error {
			var p app.Patch
			p.Set("failed", int64(rep.Failed))
			if _, err := p.Exec(ctx, tx, "import_runs", j.ID, t.NowText()); err != nil {
				return err
			}
			return insertLines(ctx, tx, j.ID, rep.Errors)
		})
	case rep.Cancelled:
		return rep.summary(), finishRun(ctx, t, j.ID, "cancelled", "", nil)
	}
	hist, err := importHistory(ctx, act, jc.Job.ID, j, f, c, in.Sessions == nil || *in.Sessions)
	if err != nil {
		return nil, err
	}
	if hist.State == "cancelled" {
		return rep.summary(), finishRun(ctx, t, j.ID, "cancelled", "", nil)
	}
	cut, err := replay(ctx, act, c)
	if err != nil {
		return nil, err
	}
	var an Analysis
	if err := json.Unmarshal(j.Analysis, &an); err != nil {
		return nil, err
	}
	an.Cutover = cut
	an.History = hist
	b, err := json.Marshal(an)
	if err != nil {
		return nil, err
	}
	return rep.summary(), finishRun(ctx, t, j.ID, "done", "", func(tx *sql.Tx) error {
		var p app.Patch
		p.Set("analysis", string(b))
		_, err := p.Exec(ctx, tx, "import_runs", j.ID, t.NowText())
		return err
	})
}

// legacyPlansAndNAS creates the plans the subscribers need (when the
// caller is tenant-wide; a reseller's import uses existing plans by name)
// and the NAS (when the caller may manage NAS; existing addresses kept).
func legacyPlansAndNAS(ctx context.Context, act *app.Actor, c *catalogue) error {
	t := act.Tenant
	if act.TenantWide {
		names := make([]string, 0, len(c.groups))
		for k := range c.groups {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			g := c.groups[k]
			if g.Users == 0 {
				continue
			}
			var n int
			if err := t.DB.R.QueryRowContext(ctx, `SELECT count(*) FROM profiles WHERE name = ?`, g.Name).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				continue
			}
			in := subs.ProfileInput{Name: some(g.Name), Description: some("imported from " + c.Format),
				RateDownKbps: some(g.RateDown), RateUpKbps: some(g.RateUp), BytesLimit: some(g.BytesLimit)}
			if g.SimUse > 0 {
				in.SimultaneousUse = some(g.SimUse)
			}
			if g.Price > 0 {
				in.Price = some(g.Price)
			}
			if g.DurationDays > 0 {
				in.DurationDays = some(g.DurationDays)
			}
			if g.SecondsLimit > 0 {
				in.SecondsLimit = some(g.SecondsLimit)
			}
			if _, err := subs.ImportProfile(ctx, act, in); err != nil {
				if e := app.AsError(err); e != nil && e.Status < 500 {
					continue // a name xr refuses: its subscribers report profile_not_assignable
				}
				return err
			}
		}
	}
	if !act.Can(aaa.PermNasManage) {
		return nil
	}
	for _, n := range c.nas {
		var exists int
		if err := t.DB.R.QueryRowContext(ctx, `SELECT count(*) FROM nas WHERE ip = ?`, n.IP).Scan(&exists); err != nil {
			return err
		}
		if exists > 0 || n.IP == "" || n.Secret == "" {
			continue
		}
		name := n.Name
		if name == "" {
			name = n.IP
		}
		in := aaa.NASInput{Name: some(name), IP: some(n.IP), Secret: some(n.Secret), Description: some(n.Description)}
		if _, err := aaa.CreateNAS(ctx, act, in); err != nil {
			if e := app.AsError(err); e != nil && e.Status < 500 {
				continue // an address or name xr refuses: left out
			}
			return err
		}
	}
	return nil
}

// ListLegacyJobs is GET /admin/legacy/import/jobs.
func ListLegacyJobs(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Job], error) {
	if err := legacyRequire(act); err != nil {
		return app.Page[Job]{}, err
	}
	return listRuns(ctx, act, "legacy", lq)
}

// GetLegacyJob is GET /admin/legacy/import/jobs/{id}.
func GetLegacyJob(ctx context.Context, act *app.Actor, id int64) (*Job, error) {
	if err := legacyRequire(act); err != nil {
		return nil, err
	}
	return getRun(ctx, act, "legacy", id)
}

// CancelLegacyJob is POST /admin/legacy/import/jobs/{id}/cancel.
func CancelLegacyJob(ctx context.Context, act *app.Actor, id int64) (*Job, error) {
	if err := legacyRequire(act); err != nil {
		return nil, err
	}
	return cancelRun(ctx, act, "legacy", id)
}

// DeleteLegacyJob is DELETE /admin/legacy/import/jobs/{id}: the run, its
// line results and its file (what it imported stays). A running import is
// 409 job_running (cancel it first).
func DeleteLegacyJob(ctx context.Context, act *app.Actor, id int64) error {
	if err := legacyRequire(act); err != nil {
		return err
	}
	t := act.Tenant
	var rel string
	err := t.Write(ctx, func(tx *sql.Tx) error {
		j, err := loadRun(ctx, tx, act, "legacy", id)
		if err != nil {
			return err
		}
		if j.State == "running" || j.State == "analysing" || j.State == "queued" {
			return app.ErrConflict("job_running").With("state", j.State)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM import_runs WHERE id = ?`, id); err != nil {
			return err
		}
		if j.fileID.Valid {
			rel, err = files.DeleteRow(ctx, tx, j.fileID.Int64)
		}
		return err
	})
	if err != nil {
		return err
	}
	files.Remove(t, rel)
	return nil
}

// BulkDeleteLegacyJobs is POST /admin/legacy/import/jobs/bulk-delete.
func BulkDeleteLegacyJobs(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := legacyRequire(act); err != nil {
		return app.BulkResult{}, err
	}
	if err := in.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error { return DeleteLegacyJob(ctx, act, id) }), nil
}

func some[T any](v T) app.Opt[T] { return app.Opt[T]{Set: true, V: v} }
