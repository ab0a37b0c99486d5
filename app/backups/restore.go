package backups

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"xr/app"
	"xr/db"
)

// File is a backup file to send.
type File struct {
	Path, Name string
	Size       int64
	ModTime    time.Time
}

func (b *Backup) file() (*File, error) {
	st, err := os.Stat(b.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, app.ErrConflict("backup_file_missing")
	}
	if err != nil {
		return nil, err
	}
	return &File{Path: b.path, Name: b.File, Size: st.Size(), ModTime: st.ModTime()}, nil
}

// Open is GET /admin/tools/backup/{id}/download: the stored, compressed file.
func Open(ctx context.Context, act *app.Actor, id int64) (*File, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return nil, err
	}
	b, err := getBackup(ctx, act.Tenant, id)
	if err != nil {
		return nil, err
	}
	return b.file()
}

// TicketTTL is how long a download ticket may be used (once).
const TicketTTL = 5 * time.Minute

// Ticket is the answer of POST /admin/tools/backup/{id}/download-ticket.
type Ticket struct {
	Token     string   `json:"token"`
	URL       string   `json:"url"` // GET it on the tenant's host, no Authorization header
	ExpiresAt app.Time `json:"expires_at"`
}

// CreateTicket mints a single-use download token for one backup; only
// its SHA-256 is stored.
func CreateTicket(ctx context.Context, act *app.Actor, id int64) (*Ticket, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return nil, err
	}
	t := act.Tenant
	if _, err := getBackup(ctx, t, id); err != nil {
		return nil, err
	}
	now := t.Now()
	tok := app.RandomToken(32)
	exp := now.Add(TicketTTL)
	err := t.App.Inst.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM backup_tickets WHERE expires_at < ?`, app.FormatTime(now.Add(-time.Hour))); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO backup_tickets(token_hash, tenant_id, backup_id, manager_id, expires_at, created_at) VALUES (?,?,?,?,?,?)`,
			app.SHA256(tok), t.ID, id, act.ManagerID, app.FormatTime(exp), app.FormatTime(now))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Ticket{Token: tok, URL: "/api/v1/admin/tools/backup/download/" + tok, ExpiresAt: app.T(exp)}, nil
}

// ErrTicketInvalid answers a ticket that is unknown, used or expired.
func ErrTicketInvalid() *app.Error {
	e := app.ErrNotFound()
	e.Reason = "download_ticket_invalid"
	return e
}

// RedeemTicket uses a download ticket of tenant t (once, before it
// expires) and answers its file.
func RedeemTicket(ctx context.Context, t *app.Tenant, token string) (*File, error) {
	return redeemTicket(ctx, t, token, t.Now())
}

func redeemTicket(ctx context.Context, t *app.Tenant, token string, now time.Time) (*File, error) {
	if token == "" || len(token) > 100 {
		return nil, ErrTicketInvalid()
	}
	var id int64
	err := t.App.Inst.Write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `UPDATE backup_tickets SET used_at = ? WHERE token_hash = ? AND tenant_id = ? AND used_at IS NULL AND expires_at > ?
			RETURNING backup_id`, app.FormatTime(now), app.SHA256(token), t.ID, app.FormatTime(now)).Scan(&id)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrTicketInvalid()
	}
	if err != nil {
		return nil, err
	}
	b, err := getBackup(ctx, t, id)
	if err != nil {
		return nil, err
	}
	return b.file()
}

// MaxUpload bounds an uploaded backup file.
const MaxUpload int64 = 8 << 30

var (
	zstdMagic   = []byte{0x28, 0xb5, 0x2f, 0xfd}
	gzipMagic   = []byte{0x1f, 0x8b}
	sqliteMagic = []byte("SQLite format 3\x00")
)

// Upload stores a backup file sent by the caller (POST .../upload): zstd
// as xr writes them, gzip, or a plain tenant file as xr backup writes
// them. It is streamed to disk (never held in memory), limited to limit
// bytes, then checked like xr restore checks (integrity, xr tenant marker,
// schema version not newer than this binary's, this tenant's), stored
// compressed and verified. A copy encrypted for a destination (age, see
// encrypt.go) is decrypted first with passphrase (400
// backup_passphrase_required / backup_passphrase_wrong). A bad file is a
// 400 and leaves nothing behind.
func Upload(ctx context.Context, act *app.Actor, r io.Reader, limit int64, passphrase string) (*Backup, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > MaxUpload {
		limit = MaxUpload
	}
	t := act.Tenant
	dir := Dir(t.App, t.Slug)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	tag := app.RandomToken(6)
	up := filepath.Join(dir, ".upload-"+tag)
	plain := filepath.Join(dir, ".upload-"+tag+".db")
	defer removeAll(up, plain)

	f, err := os.OpenFile(up, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	err = errors.Join(err, f.Close())
	if err != nil {
		var mbe interface{ Timeout() bool }
		if errors.As(err, &mbe) && mbe.Timeout() {
			return nil, &app.Error{Code: app.CodeTimeout, Status: 408, Reason: "request_timeout", Cause: err}
		}
		return nil, app.ErrValidation("unreadable_body", "file").With("cause", err.Error())
	}
	if n > limit {
		return nil, app.ErrValidation("upload_too_large", "file").With("max_bytes", limit)
	}
	if n == 0 {
		return nil, app.ErrValidation("file_required", "file")
	}
	head, err := readHead(up, 64) // long enough for age's header line
	if err != nil {
		return nil, err
	}
	if IsEncrypted(head) {
		if err := decryptFile(up, passphrase); err != nil {
			return nil, err
		}
		if head, err = readHead(up, 16); err != nil {
			return nil, err
		}
	}
	compressed := false
	var upSum string
	switch {
	case bytes.HasPrefix(head, zstdMagic):
		if upSum, err = decompressTo(up, plain); err != nil {
			return nil, invalidFile(err)
		}
		compressed = true
	case bytes.HasPrefix(head, gzipMagic):
		if err := gunzipTo(up, plain); err != nil {
			return nil, invalidFile(err)
		}
	case bytes.HasPrefix(head, sqliteMagic):
		if err := os.Rename(up, plain); err != nil {
			return nil, err
		}
	default:
		return nil, invalidFile(errors.New("neither zstd, gzip nor an SQLite file"))
	}
	if _, err := db.CheckTenantFile(ctx, plain); err != nil {
		return nil, invalidFile(err)
	}
	if err := sealedHere(ctx, t, plain, "file"); err != nil {
		return nil, err
	}
	m, err := readManifest(ctx, plain)
	if err != nil {
		return nil, invalidFile(err)
	}
	if m.TenantSlug != t.Slug {
		return nil, app.ErrValidation("backup_of_other_tenant", "file").With("cause", fmt.Sprintf("file belongs to %q", m.TenantSlug))
	}
	now := app.T(t.Now())
	m.TakenAt = now
	by := act.ManagerID
	b := &Backup{Kind: KindUploaded, File: fileName(t.Slug, KindUploaded, now), CreatedBy: &by, CreatedAt: now, Manifest: *m}
	b.path = filepath.Join(dir, b.File)
	if compressed {
		b.SHA256 = upSum
		err = os.Rename(up, b.path)
		if err == nil {
			var st os.FileInfo
			if st, err = os.Stat(b.path); err == nil {
				b.Size = st.Size()
			}
		}
	} else {
		b.Size, b.SHA256, err = compressFile(plain, b.path)
	}
	if err != nil {
		removeAll(b.path)
		return nil, err
	}
	b.Manifest.SHA256 = b.SHA256
	b.Verification = Verify(ctx, b.path, &b.Manifest)
	if b.Verification.State != "ok" {
		removeAll(b.path)
		return nil, app.ErrValidation("invalid_backup_file", "file").With("cause", b.Verification.Error)
	}
	if _, err := insertRecord(ctx, t, b, ""); err != nil {
		removeAll(b.path)
		return nil, err
	}
	return b, nil
}

// invalidFile is the refusal of a file that is not a backup; a refusal
// with its own reason (archive_too_large) keeps it.
func invalidFile(err error) error {
	if e := app.AsError(err); e != nil && e.Status < 500 {
		return e
	}
	return app.ErrValidation("invalid_backup_file", "file").With("cause", err.Error())
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return b[:k], nil
}

// sealedHere refuses a backup whose sealed secrets this instance's keys do
// not open (taken on another instance, or before a key rotation retired
// its key): restored, every read of one would fail. 400
// backup_sealed_with_other_keys; the operator can restore it with the
// other instance's keys (xr restore --source-data).
func sealedHere(ctx context.Context, t *app.Tenant, plain, field string) error {
	n, err := t.App.UnopenedSealed(ctx, plain)
	if err != nil {
		return invalidFile(err)
	}
	if n > 0 {
		return app.ErrSealedWithOtherKeys(field, n)
	}
	return nil
}

// RestoreInput is POST /admin/tools/backup/{id}/restore.
type RestoreInput struct {
	RequestID string `json:"request_id"` // optional; a replay answers the first outcome
}

// RestoreResult is what a restore did.
type RestoreResult struct {
	RestoredBackupID int64    `json:"restored_backup_id"`
	SafetyBackupID   int64    `json:"safety_backup_id"`
	SchemaVersion    int      `json:"schema_version"`
	RestoredAt       app.Time `json:"restored_at"`
	Replay           bool     `json:"replay"`
}

type opLockKey struct{}

// opLock serialises restores and factory resets of an App.
func opLock(a *app.App) *sync.Mutex {
	return a.ValueOrStore(opLockKey{}, &sync.Mutex{}).(*sync.Mutex)
}

// opReplay answers the stored outcome of request_id (replay), or nothing.
func opReplay(ctx context.Context, t *app.Tenant, key, subject string, out any) (bool, error) {
	if key == "" {
		return false, nil
	}
	var subj, outcome string
	err := t.App.Inst.R.QueryRowContext(ctx, `SELECT subject, outcome FROM backup_ops WHERE tenant_id = ? AND request_id = ?`, t.ID, key).Scan(&subj, &outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if subj != subject {
		return false, app.ErrConflict("request_id_conflict")
	}
	return true, json.Unmarshal([]byte(outcome), out)
}

func opRecord(ctx context.Context, t *app.Tenant, key, subject string, out any) error {
	if key == "" {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	now := t.Now()
	return t.App.Inst.Write(ctx, func(tx *sql.Tx) error {
		// Keys are kept 30 days, as the tenant's idempotency records.
		if _, err := tx.ExecContext(ctx, `DELETE FROM backup_ops WHERE created_at < ?`, app.FormatTime(now.AddDate(0, 0, -30))); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO backup_ops(tenant_id, request_id, subject, outcome, created_at) VALUES (?,?,?,?,?)`,
			t.ID, key, subject, string(b), app.FormatTime(now))
		return err
	})
}

// Restore replaces the tenant's data with a verified backup of its own:
// a safety backup of the current state first, then the kernel's restore
// (one write transaction: requests see the old or the new file, never a
// mix; migrated forward; grants, the NAS index and the RADIUS index
// reload). request_id makes a retry answer the first outcome.
func Restore(ctx context.Context, act *app.Actor, id int64, in RestoreInput) (*RestoreResult, error) {
	if err := authorize(act, PermToolsBackup); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, false); err != nil {
		return nil, err
	}
	t := act.Tenant
	mu := opLock(t.App)
	mu.Lock()
	defer mu.Unlock()
	subject := fmt.Sprintf("tools/backup/%d/restore", id)
	var out RestoreResult
	if replay, err := opReplay(ctx, t, in.RequestID, subject, &out); err != nil || replay {
		out.Replay = replay
		return &out, err
	}
	b, err := getBackup(ctx, t, id)
	if err != nil {
		return nil, err
	}
	if b.Verification.State != "ok" {
		return nil, app.ErrConflict("backup_not_verified")
	}
	if b.Manifest.TenantSlug != t.Slug {
		return nil, app.ErrValidation("backup_of_other_tenant", "id").With("cause", fmt.Sprintf("file belongs to %q", b.Manifest.TenantSlug))
	}
	plain := b.path + fmt.Sprintf(".restore-%s.db", app.RandomToken(6))
	defer removeAll(plain)
	sum, err := decompressTo(b.path, plain)
	if errors.Is(err, os.ErrNotExist) {
		return nil, app.ErrConflict("backup_file_missing")
	}
	if err != nil {
		return nil, invalidFile(err)
	}
	if sum != b.SHA256 {
		return nil, app.ErrValidation("invalid_backup_file", "id").With("cause", "the file changed since it was verified")
	}
	if err := sealedHere(ctx, t, plain, "id"); err != nil {
		return nil, err
	}
	// From the safety backup to the swap, writes are refused (503
	// restore_in_progress): each acknowledged write is in the safety
	// backup or, once resumed, in the restored content.
	p, err := t.DB.Pause(ctx, "restore_in_progress", pauseHint)
	if err != nil {
		return nil, err
	}
	defer p.Resume()
	pctx := p.Bind(ctx)
	by := act.ManagerID
	safety, err := Take(pctx, t, TakeOptions{Kind: KindSafety, CreatedBy: &by})
	if err != nil {
		return nil, err
	}
	if err := t.App.RestoreTenant(pctx, t, plain, false); err != nil {
		return nil, err
	}
	if err := afterRestore(pctx, t); err != nil {
		return nil, err
	}
	p.Resume()
	// A grant resolved from the old content while the swap ran goes too.
	t.App.DropGrants(t.Slug)
	version, _ := db.SchemaVersion(ctx, t.DB.R)
	out = RestoreResult{RestoredBackupID: b.ID, SafetyBackupID: safety.ID, SchemaVersion: version, RestoredAt: app.T(t.Now())}
	if err := opRecord(ctx, t, in.RequestID, subject, out); err != nil {
		return nil, err
	}
	return &out, nil
}

// pauseHint is the Retry-After of a write refused during a restore or a
// factory reset.
const pauseHint = 10 * time.Second

// afterRestore: the backup job that took the snapshot was running in it;
// it must not run again here. The restored schedules' queued runs are
// told to the runner.
func afterRestore(ctx context.Context, t *app.Tenant) error {
	err := t.Write(ctx, func(tx *sql.Tx) error {
		return app.CancelRunning(ctx, tx, t.Now(), "restored from a backup", RunKind, ScheduledKind)
	})
	if err != nil {
		return err
	}
	app.NotifySchedule(ctx, t)
	return nil
}
