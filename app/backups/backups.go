// Package backups is the backups area: backups of a tenant taken while the
// server keeps serving (the snapshot of xr backup, compressed, with a
// manifest and a verification), their list, download, upload and restore,
// the backup schedule (on the kernel's schedules) and the factory reset.
// Records live in the instance database keyed by tenant id and the files
// under DATA/backups/<slug>/, so a restore or a factory reset of the tenant
// file keeps them. Copies to remote destinations: dest*.go, copy*.go.
package backups

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"xr/app"
)

// Job kinds: a backup asked for now, and the scheduled one (the schedule
// "backup" enqueues it; app.Scheduled queues the next run first).
const (
	RunKind       = "backup.run"
	ScheduledKind = "backup.scheduled"
	ScheduleKey   = "backup"
)

// Module is the backups area. Backup destinations live in instance.db
// (a restore of a tenant file keeps them), so their secrets are instance
// sealed columns.
var Module = app.Module{
	Name:        "backups",
	Jobs:        areaJobs(),
	Permissions: permCatalogue,
	Events: []app.EventType{
		{Key: "backup.completed", Category: "backups"},
		{Key: "backup.failed", Category: "backups"},
	},
	InstanceSealedColumns: []app.SealedColumn{
		{Table: "backup_destinations", Column: "secrets_sealed"},
		{Table: "backup_encryption", Column: "passphrase_sealed"},
	},
}

func areaJobs() map[string]app.JobHandler {
	m := map[string]app.JobHandler{RunKind: runBackup, ScheduledKind: app.Scheduled(runBackup)}
	maps.Copy(m, CopyJobs)
	return m
}

// Kinds of a backup record.
const (
	KindManual    = "manual"
	KindScheduled = "scheduled"
	KindUploaded  = "uploaded"
	KindSafety    = "safety" // taken before a restore or a factory reset
)

// Manifest describes what a backup file holds.
type Manifest struct {
	TenantSlug            string           `json:"tenant_slug"`
	SchemaVersion         int              `json:"schema_version"`
	XRVersion             string           `json:"xr_version"`
	Compression           string           `json:"compression"` // zstd
	ExcludeClosedSessions bool             `json:"exclude_closed_sessions"`
	RowCounts             map[string]int64 `json:"row_counts"`
	SHA256                string           `json:"sha256"` // of the stored, compressed file
	TakenAt               app.Time         `json:"taken_at"`
}

// Verification is the check made after the file was written: decompressed,
// opened read-only, integrity_check, marker and schema, row counts against
// the manifest, SHA-256 of the stored file.
type Verification struct {
	State      string   `json:"state"` // pending | ok | failed
	Error      string   `json:"error,omitempty"`
	VerifiedAt app.Time `json:"verified_at"`
}

// Backup is one record of GET /admin/tools/backup.
type Backup struct {
	ID           int64        `json:"id"`
	Kind         string       `json:"kind"`
	File         string       `json:"file"`
	Size         int64        `json:"size"`
	SHA256       string       `json:"sha256"`
	Manifest     Manifest     `json:"manifest"`
	Verification Verification `json:"verification"`
	Copies       []CopyState  `json:"copies"`
	CreatedBy    *int64       `json:"created_by"`
	CreatedAt    app.Time     `json:"created_at"`
	path         string
}

// Dir is where a tenant's backup files are kept.
func Dir(a *app.App, slug string) string { return filepath.Join(a.Cfg.DataDir, "backups", slug) }

// authorize: backups hold every record of the tenant, so only callers who
// see the whole tenant may take, read or restore them.
func authorize(act *app.Actor, perm app.Perm) error {
	if err := act.Require(perm); err != nil {
		return err
	}
	if !act.TenantWide {
		return app.ErrForbidden("insufficient_permissions")
	}
	return nil
}

const backupCols = `id, kind, file, size, sha256, manifest, verification, verification_error, verified_at, created_by, created_at`

func scanBackup(a *app.App, slug string, sc interface{ Scan(...any) error }) (*Backup, error) {
	b := &Backup{Copies: []CopyState{}}
	var manifest string
	if err := sc.Scan(&b.ID, &b.Kind, &b.File, &b.Size, &b.SHA256, &manifest, &b.Verification.State, &b.Verification.Error,
		&b.Verification.VerifiedAt, &b.CreatedBy, &b.CreatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(manifest), &b.Manifest); err != nil {
		return nil, err
	}
	b.path = filepath.Join(Dir(a, slug), b.File)
	return b, nil
}

// getBackup reads one record of t (404 when it is another tenant's).
func getBackup(ctx context.Context, t *app.Tenant, id int64) (*Backup, error) {
	b, err := scanBackup(t.App, t.Slug, t.App.Inst.R.QueryRowContext(ctx, `SELECT `+backupCols+` FROM backups WHERE id = ? AND tenant_id = ?`, id, t.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return b, err
}

// List is GET /admin/tools/backup: every backup of the tenant, newest
// first, with its verification and the state of its copies.
func List(ctx context.Context, act *app.Actor) ([]*Backup, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return nil, err
	}
	t := act.Tenant
	list, err := listBackups(ctx, t)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(list))
	for i, b := range list {
		ids[i] = b.ID
	}
	copies, err := CopyStates(ctx, t.App, t, ids)
	if err != nil {
		return nil, err
	}
	for _, b := range list {
		if c := copies[b.ID]; c != nil {
			b.Copies = c
		}
	}
	return list, nil
}

func listBackups(ctx context.Context, t *app.Tenant) ([]*Backup, error) {
	rows, err := t.App.Inst.R.QueryContext(ctx, `SELECT `+backupCols+` FROM backups WHERE tenant_id = ? ORDER BY created_at DESC, id DESC`, t.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*Backup{}
	for rows.Next() {
		b, err := scanBackup(t.App, t.Slug, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Delete is DELETE /admin/tools/backup/{id}: the record, its tickets and
// its file. Copies already made at destinations stay there.
func Delete(ctx context.Context, act *app.Actor, id int64) error {
	if err := authorize(act, PermToolsBackup); err != nil {
		return err
	}
	return deleteBackup(ctx, act.Tenant, id)
}

func deleteBackup(ctx context.Context, t *app.Tenant, id int64) error {
	b, err := getBackup(ctx, t, id)
	if err != nil {
		return err
	}
	if err := t.App.Inst.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM backup_tickets WHERE backup_id = ?`, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM backups WHERE id = ? AND tenant_id = ?`, id, t.ID)
		return err
	}); err != nil {
		return err
	}
	if err := os.Remove(b.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.App.Log.Warn("remove backup file", "tenant", t.Slug, "file", b.path, "err", err)
	}
	return nil
}

// BulkDelete is POST /admin/tools/backup/bulk-delete.
func BulkDelete(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return app.BulkResult{}, err
	}
	if err := in.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error { return deleteBackup(ctx, act.Tenant, id) }), nil
}

// insertRecord stores a finished backup's record; a record with the same
// run key (a retry of the job that wrote it) is answered instead.
func insertRecord(ctx context.Context, t *app.Tenant, b *Backup, runKey string) (*Backup, error) {
	manifest, err := json.Marshal(b.Manifest)
	if err != nil {
		return nil, err
	}
	var rk any
	if runKey != "" {
		rk = runKey
	}
	err = t.App.Inst.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `INSERT INTO backups(tenant_id, kind, file, size, sha256, manifest, verification, verification_error, verified_at, run_key, created_by, created_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`, t.ID, b.Kind, b.File, b.Size, b.SHA256, string(manifest), b.Verification.State, b.Verification.Error,
			b.Verification.VerifiedAt, rk, b.CreatedBy, b.CreatedAt)
		if err != nil {
			return err
		}
		b.ID, err = r.LastInsertId()
		return err
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// recordByRunKey finds the record a run already wrote.
func recordByRunKey(ctx context.Context, t *app.Tenant, runKey string) (*Backup, error) {
	b, err := scanBackup(t.App, t.Slug, t.App.Inst.R.QueryRowContext(ctx, `SELECT `+backupCols+` FROM backups WHERE tenant_id = ? AND run_key = ?`, t.ID, runKey))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return b, err
}

// fileName is the stored name of a new backup.
func fileName(slug, kind string, at app.Time) string {
	return fmt.Sprintf("%s-%s-%s-%s.xrbak.zst", slug, strings.ReplaceAll(strings.ReplaceAll(app.FormatTime(at.Time), " ", "-"), ":", ""), kind,
		strings.ToLower(app.RandomToken(4)))
}

// jobKinds are the jobs GET /admin/tools/backup/jobs shows.
var jobKinds = []any{RunKind, ScheduledKind, CopyJobKind}

// MaxJobsListed bounds GET /admin/tools/backup/jobs (newest first).
const MaxJobsListed = 200

// Jobs is GET /admin/tools/backup/jobs: the latest backup and copy jobs
// with their state and progress.
func Jobs(ctx context.Context, act *app.Actor) ([]*app.Job, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return nil, err
	}
	t := act.Tenant
	ids, err := app.QueryIDs(ctx, t.DB.R, `SELECT id FROM jobs WHERE kind IN (?,?,?) ORDER BY id DESC LIMIT ?`, append(jobKinds, MaxJobsListed)...)
	if err != nil {
		return nil, err
	}
	out := make([]*app.Job, 0, len(ids))
	for _, id := range ids {
		j, err := app.GetJob(ctx, t.DB.R, id)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// Job is GET /admin/tools/backup/jobs/{id} (404 for a job of another kind).
func Job(ctx context.Context, act *app.Actor, id int64) (*app.Job, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return nil, err
	}
	j, err := app.GetJob(ctx, act.Tenant.DB.R, id)
	if err != nil {
		return nil, err
	}
	for _, k := range jobKinds {
		if j.Kind == k {
			return j, nil
		}
	}
	return nil, app.ErrNotFound()
}

// CanManage is the check every backup operation makes first (a handler
// that parses a body itself calls it before reading).
func CanManage(act *app.Actor) error { return authorize(act, PermToolsBackup) }
