package backups

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"xr/app"
	"xr/db"
)

// CreateInput is POST /admin/tools/backup.
type CreateInput struct {
	// ExcludeClosedSessions leaves closed RADIUS sessions out of the file
	// (usage rollups always stay).
	ExcludeClosedSessions bool `json:"exclude_closed_sessions"`
	// DestinationIDs are copied to once the file is verified.
	DestinationIDs []int64 `json:"destination_ids"`
	RequestID      string  `json:"request_id"` // optional; minted when omitted
}

// JobRef is the answer of POST /admin/tools/backup (202 fresh, 200 replay).
type JobRef struct {
	JobID      int64    `json:"job_id"`
	State      string   `json:"state"`
	StatusPath string   `json:"status_path"`
	CreatedAt  app.Time `json:"created_at"`
	Replay     bool     `json:"replay"`
}

type runPayload struct {
	Kind                  string  `json:"kind"`
	ExcludeClosedSessions bool    `json:"exclude_closed_sessions"`
	DestinationIDs        []int64 `json:"destination_ids"`
	// Scheduled runs: retention after the run.
	KeepDaily  int `json:"keep_daily,omitempty"`
	KeepWeekly int `json:"keep_weekly,omitempty"`
}

// Create queues a backup job (request_id idempotent when given).
func Create(ctx context.Context, act *app.Actor, in CreateInput) (*JobRef, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, false); err != nil {
		return nil, err
	}
	if in.RequestID == "" {
		in.RequestID = app.MintRequestID()
	}
	t := act.Tenant
	if err := checkDestinations(ctx, t, in.DestinationIDs); err != nil {
		return nil, err
	}
	now := t.Now()
	var out JobRef
	var replay bool
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: in.RequestID, Subject: "tools/backup", Input: in}, func() (JobRef, error) {
			id, err := app.EnqueueJob(ctx, tx, RunKind, runPayload{Kind: KindManual, ExcludeClosedSessions: in.ExcludeClosedSessions,
				DestinationIDs: in.DestinationIDs}, now, act.ManagerID, 2)
			if err != nil {
				return JobRef{}, err
			}
			return JobRef{JobID: id, State: "queued", StatusPath: fmt.Sprintf("/api/v1/admin/tools/backup/jobs/%d", id), CreatedAt: app.T(now)}, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if replay {
		if j, err := app.GetJob(ctx, t.DB.R, out.JobID); err == nil {
			out.State = j.State
		}
	}
	out.Replay = replay
	return &out, nil
}

// runResult is the job's result.
type runResult struct {
	BackupID     int64  `json:"backup_id"`
	File         string `json:"file"`
	Size         int64  `json:"size"`
	Verification string `json:"verification"`
	Pruned       int    `json:"pruned,omitempty"`
}

func runBackup(ctx context.Context, jc *app.JobContext) (any, error) {
	var p runPayload
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	if p.Kind == "" || app.IsScheduledRun(ctx) {
		p.Kind = KindScheduled
	}
	t := jc.Tenant
	runKey := fmt.Sprintf("job:%d@%s", jc.Job.ID, app.FormatTime(jc.Job.CreatedAt.Time))
	b, err := recordByRunKey(ctx, t, runKey)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b, err = Take(ctx, t, TakeOptions{Kind: p.Kind, ExcludeClosedSessions: p.ExcludeClosedSessions, CreatedBy: jc.Job.CreatedBy,
			RunKey: runKey, Progress: func(done, total int64) { jc.NoteProgress(ctx, done, total) }})
		if err != nil {
			emit(ctx, t, "backup.failed", map[string]any{"job_id": jc.Job.ID, "kind": p.Kind, "error": err.Error()})
			return nil, err
		}
	}
	res := runResult{BackupID: b.ID, File: b.File, Size: b.Size, Verification: b.Verification.State}
	if b.Verification.State != "ok" {
		return nil, fmt.Errorf("backup %d failed its verification: %s", b.ID, b.Verification.Error)
	}
	if len(p.DestinationIDs) > 0 {
		if err := QueueCopies(ctx, t.App, t, b.ID, b.path, p.DestinationIDs); err != nil {
			t.App.Log.Warn("queue backup copies", "tenant", t.Slug, "backup", b.ID, "err", err)
		}
	}
	if p.Kind == KindScheduled {
		n, err := Prune(ctx, t, p.KeepDaily, p.KeepWeekly)
		if err != nil {
			t.App.Log.Warn("prune backups", "tenant", t.Slug, "err", err)
		}
		res.Pruned = n
	}
	return res, nil
}

// emit writes one event of t in its own transaction (the backup's effect
// is a file and an instance row, not a tenant write).
func emit(ctx context.Context, t *app.Tenant, typ string, data any) {
	err := t.Write(ctx, func(tx *sql.Tx) error { return app.Emit(ctx, tx, typ, data) })
	if err != nil {
		t.App.Log.Warn("emit", "tenant", t.Slug, "type", typ, "err", err)
		return
	}
}

// TakeOptions tune one backup.
type TakeOptions struct {
	Kind                  string
	ExcludeClosedSessions bool
	CreatedBy             *int64
	RunKey                string
	Progress              func(done, total int64)
}

// Take writes a backup of t now: a consistent snapshot (VACUUM INTO on a
// read-only connection, writers keep going), optionally without closed
// sessions, counted, compressed with zstd, then verified; the record is
// stored with the verification's outcome. backup.completed is emitted
// when it verified, backup.failed when not.
func Take(ctx context.Context, t *app.Tenant, o TakeOptions) (*Backup, error) {
	progress := func(done int64) {
		if o.Progress != nil {
			o.Progress(done, 4)
		}
	}
	dir := Dir(t.App, t.Slug)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	raw := filepath.Join(dir, fmt.Sprintf(".snapshot-%s.db", app.RandomToken(6)))
	defer removeAll(raw)
	if err := t.App.BackupTenant(ctx, t, raw); err != nil {
		return nil, err
	}
	progress(1)
	if o.ExcludeClosedSessions {
		if err := dropClosedSessions(ctx, raw); err != nil {
			return nil, err
		}
	}
	m, err := readManifest(ctx, raw)
	if err != nil {
		return nil, err
	}
	m.ExcludeClosedSessions = o.ExcludeClosedSessions
	progress(2)
	now := app.T(app.ScheduleNow(t.App)) // the schedules' clock: retention counts days by it
	m.TakenAt = now
	b := &Backup{Kind: o.Kind, File: fileName(t.Slug, o.Kind, now), CreatedBy: o.CreatedBy, CreatedAt: now, Manifest: *m}
	b.path = filepath.Join(dir, b.File)
	if b.Size, b.SHA256, err = compressFile(raw, b.path); err != nil {
		removeAll(b.path)
		return nil, err
	}
	b.Manifest.SHA256 = b.SHA256
	progress(3)
	b.Verification = Verify(ctx, b.path, &b.Manifest)
	progress(4)
	if _, err := insertRecord(ctx, t, b, o.RunKey); err != nil {
		removeAll(b.path)
		return nil, err
	}
	if b.Verification.State == "ok" {
		emit(ctx, t, "backup.completed", map[string]any{"backup_id": b.ID, "kind": b.Kind, "size": b.Size, "sha256": b.SHA256})
	} else {
		emit(ctx, t, "backup.failed", map[string]any{"backup_id": b.ID, "kind": b.Kind, "error": b.Verification.Error})
	}
	return b, nil
}

func removeAll(paths ...string) {
	for _, p := range paths {
		for _, s := range []string{"", "-wal", "-shm", "-journal"} {
			_ = os.Remove(p + s) // best effort: a temp file or a half-written one
		}
	}
}

// dropClosedSessions deletes closed RADIUS sessions from a snapshot file.
func dropClosedSessions(ctx context.Context, path string) error {
	c, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(off)&_pragma=synchronous(off)")
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // a temp copy: a failed close shows in the verification
	if _, err := c.ExecContext(ctx, `DELETE FROM radius_sessions WHERE stop_time IS NOT NULL`); err != nil {
		return err
	}
	_, err = c.ExecContext(ctx, `VACUUM`)
	return err
}

// readManifest reads what the manifest says of a plain tenant file.
func readManifest(ctx context.Context, path string) (*Manifest, error) {
	c, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }() // read-only handle
	m := &Manifest{XRVersion: app.Version, Compression: "zstd", RowCounts: map[string]int64{}}
	if err := c.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'tenant_slug'`).Scan(&m.TenantSlug); err != nil {
		return nil, err
	}
	if m.SchemaVersion, err = db.SchemaVersion(ctx, c); err != nil {
		return nil, err
	}
	m.RowCounts, err = countRows(ctx, c)
	return m, err
}

// countRows counts the rows of every ordinary table of a file (virtual
// tables and their shadow tables are derived from the others).
func countRows(ctx context.Context, c *sql.DB) (map[string]int64, error) {
	names, err := tableNames(ctx, c)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, n := range names {
		var k int64
		if err := c.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+n+`"`).Scan(&k); err != nil {
			return nil, err
		}
		out[n] = k
	}
	return out, nil
}

// tableNames lists the ordinary tables of a database, without virtual
// tables and their shadow tables, nor the bookkeeping tables Litestream
// adds to a replicated file (_litestream_seq, _litestream_lock: not the
// tenant's data, and absent from a file that never replicated).
func tableNames(ctx context.Context, q app.Querier) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, COALESCE(sql, '') LIKE 'CREATE VIRTUAL TABLE%' FROM sqlite_schema
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\_litestream\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var all []string
	var virtual []string
	for rows.Next() {
		var n string
		var v bool
		if err := rows.Scan(&n, &v); err != nil {
			return nil, err
		}
		if v {
			virtual = append(virtual, n)
		} else {
			all = append(all, n)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	for _, n := range all {
		shadow := false
		for _, v := range virtual {
			if strings.HasPrefix(n, v+"_") {
				shadow = true
			}
		}
		if !shadow {
			out = append(out, n)
		}
	}
	return out, nil
}

// compressFile writes src compressed with zstd to dst (through a .part
// file renamed at the end) and returns its size and SHA-256.
func compressFile(src, dst string) (int64, string, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, "", err
	}
	defer in.Close()
	part := dst + ".part"
	out, err := os.OpenFile(part, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(out, h)}
	enc, err := zstd.NewWriter(cw, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(2))
	if err == nil {
		_, err = io.Copy(enc, in)
		err = errors.Join(err, enc.Close())
	}
	if err == nil {
		err = out.Sync()
	}
	err = errors.Join(err, out.Close())
	if err == nil {
		err = os.Rename(part, dst)
	}
	if err != nil {
		removeAll(part)
		return 0, "", err
	}
	return cw.n, hex.EncodeToString(h.Sum(nil)), nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Verify checks a stored backup against its manifest: the SHA-256 of the
// file, then the decompressed tenant file opened read-only (integrity,
// xr tenant marker, schema version), and the row count of every table.
func Verify(ctx context.Context, path string, m *Manifest) Verification {
	v := Verification{State: "ok", VerifiedAt: app.T(time.Now().UTC())}
	fail := func(format string, args ...any) Verification {
		v.State, v.Error = "failed", fmt.Sprintf(format, args...)
		return v
	}
	plain := path + fmt.Sprintf(".verify-%s.db", app.RandomToken(6))
	defer removeAll(plain)
	sum, err := decompressTo(path, plain)
	if err != nil {
		return fail("decompress: %v", err)
	}
	if m.SHA256 != "" && sum != m.SHA256 {
		return fail("sha256 %s, manifest says %s", sum, m.SHA256)
	}
	version, err := db.CheckTenantFile(ctx, plain)
	if err != nil {
		return fail("%v", err)
	}
	if version != m.SchemaVersion {
		return fail("schema version %d, manifest says %d", version, m.SchemaVersion)
	}
	got, err := readManifest(ctx, plain)
	if err != nil {
		return fail("read: %v", err)
	}
	if got.TenantSlug != m.TenantSlug {
		return fail("tenant %q, manifest says %q", got.TenantSlug, m.TenantSlug)
	}
	var names []string
	for n := range m.RowCounts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if got.RowCounts[n] != m.RowCounts[n] {
			return fail("table %s has %d rows, manifest says %d", n, got.RowCounts[n], m.RowCounts[n])
		}
	}
	if len(got.RowCounts) != len(m.RowCounts) {
		return fail("%d tables, manifest lists %d", len(got.RowCounts), len(m.RowCounts))
	}
	return v
}
