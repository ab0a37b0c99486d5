package subs

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/sheet"
)

// ExportKind is the job kind of a subscriber export.
const ExportKind = "export.users"

// ExportFormats are the file formats of an export.
var ExportFormats = []string{"csv", "xlsx"}

// ExportFormat is a JSON enum of ExportFormats.
type ExportFormat string

func (f *ExportFormat) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, ExportFormats...)
	*f = ExportFormat(s)
	return err
}

// ExportResource is a JSON enum of what can be exported ("users").
type ExportResource string

func (r *ExportResource) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, "users")
	*r = ExportResource(s)
	return err
}

// ExportInput is POST /exports: the same q, filter, sort and order as
// GET /users (filter as an object: {"enabled": "true"}), a format, and an
// optional request_id (the server mints one when omitted, which dedupes
// nothing across retries).
type ExportInput struct {
	Resource  ExportResource `json:"resource"` // default users
	Format    ExportFormat   `json:"format"`   // default csv
	Q         string         `json:"q"`
	Filter    map[string]any `json:"filter"` // values as in the query string: "true", 5, "2026-01-01"
	Sort      string         `json:"sort"`
	Order     string         `json:"order"`
	RequestID string         `json:"request_id"`
}

// ExportJob is the answer of POST /exports (202 fresh, 200 replay).
type ExportJob struct {
	ExportID     int64    `json:"export_id"` // the job id: poll GET /jobs/{id}
	Resource     string   `json:"resource"`
	Format       string   `json:"format"`
	State        string   `json:"state"`
	DownloadPath string   `json:"download_path"`
	CreatedAt    app.Time `json:"created_at"`
	Replay       bool     `json:"replay"`
}

type exportPayload struct {
	Format     string `json:"format"`
	Query      string `json:"query"`
	ManagerID  int64  `json:"manager_id"`
	TenantWide bool   `json:"tenant_wide"`
}

func (in *ExportInput) values() url.Values {
	v := url.Values{}
	if in.Q != "" {
		v.Set("q", in.Q)
	}
	if in.Sort != "" {
		v.Set("sort", in.Sort)
	}
	if in.Order != "" {
		v.Set("order", in.Order)
	}
	for k, val := range in.Filter {
		switch x := val.(type) {
		case nil:
		case string:
			v.Set("filter["+k+"]", x)
		case float64:
			v.Set("filter["+k+"]", strconv.FormatFloat(x, 'f', -1, 64))
		default:
			v.Set("filter["+k+"]", fmt.Sprint(x))
		}
	}
	return v
}

// CreateExport queues a job writing every row the caller could list with
// these filters (no offset cap) as CSV or XLSX.
func CreateExport(ctx context.Context, act *app.Actor, in ExportInput) (*ExportJob, error) {
	if err := act.Require(PermUsersExport); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, false); err != nil {
		return nil, err
	}
	if in.RequestID == "" {
		in.RequestID = app.MintRequestID()
	}
	if in.Format == "" {
		in.Format = "csv"
	}
	vals := in.values()
	lq, err := app.ParseList(vals, userListSpec)
	if err != nil {
		return nil, err
	}
	t := act.Tenant
	// Refuse a bad filter now rather than in the job.
	if err := t.Read(ctx, func(tx *sql.Tx) error {
		_, err := buildUserFilter(ctx, tx, act, lq, t.Now())
		return err
	}); err != nil {
		return nil, err
	}
	var out ExportJob
	var replay bool
	now := t.Now()
	err = t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: in.RequestID, Subject: fmt.Sprintf("exports/%d", act.ManagerID), Input: in}, func() (ExportJob, error) {
			id, err := app.EnqueueJob(ctx, tx, ExportKind, exportPayload{Format: string(in.Format), Query: vals.Encode(),
				ManagerID: act.ManagerID, TenantWide: act.TenantWide}, now, act.ManagerID, 3)
			if err != nil {
				return ExportJob{}, err
			}
			return ExportJob{ExportID: id, Resource: "users", Format: string(in.Format), State: "queued",
				DownloadPath: fmt.Sprintf("/api/v1/exports/%d/download", id), CreatedAt: app.T(now)}, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if replay {
		if j, err := app.GetJob(ctx, t.DB.R, out.ExportID); err == nil {
			out.State = j.State
		}
	}
	out.Replay = replay
	return &out, nil
}

// ExportColumns are the columns of an export, in order: the list row's
// fields with the status flattened.
var ExportColumns = []string{"id", "username", "email", "enabled", "deleted", "online", "expired", "have_quota", "fup", "can_connect",
	"profile_id", "profile_name", "parent_id", "parent_username", "bytes_remaining", "plan_bytes_limit", "used_bytes", "expiration",
	"balance", "debt", "mac_lock_enabled", "mac_locked_addrs", "enforces_bytes", "enforces_seconds", "created_at"}

func exportCells(u *User) []xlsxCell {
	num := func(v int64) xlsxCell { return xlsxCell{Num: strconv.FormatInt(v, 10), IsNum: true} }
	str := func(s string) xlsxCell { return xlsxCell{Str: s} }
	b := func(v bool) xlsxCell { return str(strconv.FormatBool(v)) }
	tm := func(t app.Time) xlsxCell {
		if t.IsZero() {
			return str("")
		}
		return str(app.FormatTime(t.Time))
	}
	profile := str("")
	if u.ProfileID != nil {
		profile = num(*u.ProfileID)
	}
	return []xlsxCell{num(u.ID), str(u.Username), str(u.Email), b(u.Enabled), b(u.Status.Deleted), b(u.Status.Online), b(u.Status.Expired),
		b(u.Status.HaveQuota), b(u.Status.FUP), b(u.Status.CanConnect), profile, str(u.ProfileName), num(u.ParentID), str(u.ParentUsername),
		num(u.BytesRemaining), num(u.PlanBytesLimit), num(u.UsedBytes), tm(u.Expiration),
		{Num: u.Balance.String(), IsNum: true}, {Num: u.Debt.String(), IsNum: true}, b(u.MacLockEnabled),
		str(strings.Join(u.MacLockedAddrs, ";")), b(u.EnforcesBytes), b(u.EnforcesSeconds), tm(u.CreatedAt)}
}

type exportResult struct {
	File   string `json:"file"`
	Format string `json:"format"`
	Rows   int    `json:"rows"`
	Bytes  int64  `json:"bytes"`
}

func exportDir(t *app.Tenant) string { return filepath.Join(t.App.FilesDir(t.Slug), "exports") }

func runExport(ctx context.Context, jc *app.JobContext) (any, error) {
	var p exportPayload
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	vals, err := url.ParseQuery(p.Query)
	if err != nil {
		return nil, err
	}
	lq, err := app.ParseList(vals, userListSpec)
	if err != nil {
		return nil, err
	}
	t := jc.Tenant
	act := &app.Actor{Tenant: t, ManagerID: p.ManagerID, TenantWide: p.TenantWide, Perms: map[app.Perm]bool{}}
	dir := exportDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("users-%d.%s", jc.Job.ID, p.Format)
	tmp, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		return nil, err
	}
	defer func() {
		// After the rename there is nothing left to remove. A temp file
		// left by a failed run is never served (downloads open the final
		// name) and goes with the tenant's files: only disk, so logged.
		if err := os.Remove(tmp.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.App.Log.Warn("remove export temp file", "tenant", t.Slug, "file", tmp.Name(), "err", err)
		}
	}()
	n, err := writeExport(ctx, act, lq, p.Format, tmp, func(done int) {
		if done%5000 == 0 {
			jc.NoteProgress(ctx, int64(done), 0)
		}
	})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	final := filepath.Join(dir, name)
	if err := os.Rename(tmp.Name(), final); err != nil {
		return nil, err
	}
	st, err := os.Stat(final)
	if err != nil {
		return nil, err
	}
	jc.NoteProgress(ctx, int64(n), int64(n))
	return exportResult{File: name, Format: p.Format, Rows: n, Bytes: st.Size()}, nil
}

// writeExport writes the rows of lq as format to w and returns the count.
func writeExport(ctx context.Context, act *app.Actor, lq app.ListQuery, format string, w io.Writer, progress func(int)) (int, error) {
	switch format {
	case "xlsx":
		x, err := newXLSX(w)
		if err != nil {
			return 0, err
		}
		head := make([]xlsxCell, len(ExportColumns))
		for i, c := range ExportColumns {
			head[i] = xlsxCell{Str: c}
		}
		if err := x.Row(head); err != nil {
			x.Abort()
			return 0, err
		}
		done := 0
		n, err := eachUser(ctx, act, lq, func(u *User) error {
			done++
			if progress != nil {
				progress(done)
			}
			return x.Row(exportCells(u))
		})
		if err != nil {
			x.Abort()
			return n, err
		}
		return n, x.Close()
	default:
		bw := bufio.NewWriterSize(w, 64<<10)
		cw := sheet.NewWriter(bw)
		if err := cw.Write(ExportColumns); err != nil {
			return 0, err
		}
		rec := make([]string, len(ExportColumns))
		done := 0
		n, err := eachUser(ctx, act, lq, func(u *User) error {
			for i, c := range exportCells(u) {
				if c.IsNum {
					rec[i] = c.Num
				} else {
					rec[i] = c.Str
				}
			}
			done++
			if progress != nil {
				progress(done)
			}
			return cw.Write(rec)
		})
		if err != nil {
			return n, err
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return n, err
		}
		return n, bw.Flush()
	}
}

// ExportFile is a finished export ready to download.
type ExportFile struct {
	Path        string
	Name        string
	ContentType string
	ModTime     time.Time
}

// OpenExport finds the artifact of export id for its creator (or a
// tenant-wide caller). Another caller's export answers 404; one still
// running 409 export_not_ready; a failed one 409 export_failed.
func OpenExport(ctx context.Context, act *app.Actor, id int64) (*ExportFile, error) {
	if err := act.Require(PermUsersExport); err != nil {
		return nil, err
	}
	t := act.Tenant
	j, err := app.GetJob(ctx, t.DB.R, id)
	if err != nil {
		return nil, err
	}
	if j.Kind != ExportKind {
		return nil, app.ErrNotFound()
	}
	if !act.TenantWide && (j.CreatedBy == nil || *j.CreatedBy != act.ManagerID) {
		return nil, app.ErrOutOfScope()
	}
	switch j.State {
	case "done":
	case "failed", "cancelled":
		return nil, app.ErrConflict("export_failed").With("state", j.State)
	default:
		return nil, app.ErrConflict("export_not_ready").With("state", j.State)
	}
	var r exportResult
	if err := json.Unmarshal(j.Result, &r); err != nil || r.File == "" || strings.ContainsAny(r.File, `/\`) {
		return nil, app.ErrConflict("export_failed")
	}
	path := filepath.Join(exportDir(t), r.File)
	st, err := os.Stat(path)
	if err != nil {
		return nil, app.ErrConflict("export_expired")
	}
	ct := "text/csv; charset=utf-8"
	if r.Format == "xlsx" {
		ct = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	}
	return &ExportFile{Path: path, Name: r.File, ContentType: ct, ModTime: st.ModTime()}, nil
}
