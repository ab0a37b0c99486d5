// Package files is the tenant file store: every file an area keeps
// (ticket attachments, backups, design images, imports, exports) goes
// through it. Bytes live under DATA/files/<slug>/store/; each file has one
// row of the tenant table files (migration 0016) with its original name,
// sniffed content type, size and SHA-256.
//
// Writing is two steps so the row joins the caller's transaction:
//
//	st, err := files.Stage(t, name, body, files.Policy{MaxBytes: 10 << 20, Allow: files.DefaultAllow})
//	if err != nil { return err }         // 400 file_too_large / file_type_not_allowed / ...: nothing stored
//	defer st.Discard()                    // removes the bytes unless Keep was called
//	err = t.Write(ctx, func(tx *sql.Tx) error { f, err := st.Insert(ctx, tx, "tickets"); ... })
//	if err == nil { st.Keep() }
//
// Deleting is the reverse: DeleteRow in the transaction, Remove after it
// commits (a rolled-back delete leaves the file in place). Serving sets
// Headers: never inline HTML, nosniff always.
package files

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"xr/app"
)

// Policy is what a caller accepts: a size limit and an allow-list of
// content types ("image/png", or "image/*" for a family).
type Policy struct {
	MaxBytes int64
	Allow    []string
}

// DefaultAllow is images, PDF and plain text.
var DefaultAllow = []string{"image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/plain"}

// File is one stored file.
type File struct {
	ID          int64    `json:"id"`
	Area        string   `json:"-"`
	Name        string   `json:"name"`
	ContentType string   `json:"content_type"`
	Size        int64    `json:"size"`
	SHA256      string   `json:"sha256"`
	CreatedAt   app.Time `json:"created_at"`
	path        string
}

// extTypes maps file extensions to the content type the sniffer must
// find for them (text formats sniff as text/plain).
var extTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".pdf": "application/pdf", ".txt": "text/plain", ".log": "text/plain", ".csv": "text/plain", ".json": "text/plain",
	".zip": "application/zip", ".gz": "application/x-gzip", ".xlsx": "application/zip",
	".sql": "text/plain", ".rsc": "text/plain", // database dumps and router exports (imports)
}

// Staged is a file written under the tenant's directory but not yet
// recorded; Insert records it in a transaction.
type Staged struct {
	t    *app.Tenant
	abs  string
	kept bool
	File File
}

// dir is the tenant's store directory.
func dir(t *app.Tenant) string { return filepath.Join(t.App.FilesDir(t.Slug), "store") }

// CleanName keeps the base name of a client file name, without control
// characters or path separators, at most 200 bytes.
func CleanName(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	name = filepath.Base("/" + name)
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '"' || r == '/' || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	for len(name) > 200 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "" || name == "." || name == "/" {
		return "file"
	}
	return name
}

func baseType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.TrimSpace(strings.ToLower(ct))
}

func allowed(ct string, allow []string) bool {
	for _, a := range allow {
		if a == ct || strings.HasSuffix(a, "/*") && strings.HasPrefix(ct, strings.TrimSuffix(a, "*")) {
			return true
		}
	}
	return false
}

// Stage streams r into a new file of the tenant's store: at most
// p.MaxBytes (400 file_too_large), content type sniffed from the bytes and
// refused unless in p.Allow (400 file_type_not_allowed) or unless the
// extension names the same type (400 file_extension_mismatch), empty files
// refused (400 file_empty). On any refusal nothing is left on disk.
func Stage(t *app.Tenant, name string, r io.Reader, p Policy) (*Staged, error) {
	name = CleanName(name)
	if err := os.MkdirAll(dir(t), 0o700); err != nil {
		return nil, err
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	rel := hex.EncodeToString(rnd[:])
	abs := filepath.Join(dir(t), rel)
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	st := &Staged{t: t, abs: abs, File: File{Name: name, path: rel}}
	fail := func(err error) (*Staged, error) {
		// The refusal is the answer; cleanup failures are only logged.
		if cerr := errors.Join(f.Close(), os.Remove(abs)); cerr != nil {
			t.App.Log.Warn("files: discard a refused file", "tenant", t.Slug, "err", cerr)
		}
		return nil, err
	}
	h := sha256.New()
	head := make([]byte, 0, 512)
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			n += int64(k)
			if p.MaxBytes > 0 && n > p.MaxBytes {
				return fail(app.ErrValidation("file_too_large", "file").With("max_bytes", p.MaxBytes))
			}
			if room := 512 - len(head); room > 0 {
				head = append(head, buf[:min(room, k)]...)
			}
			h.Write(buf[:k])
			if _, err := f.Write(buf[:k]); err != nil {
				return fail(err)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			var mbe *http.MaxBytesError
			if errors.As(rerr, &mbe) {
				return fail(app.ErrValidation("file_too_large", "file").With("max_bytes", p.MaxBytes))
			}
			return fail(app.ErrValidation("file_unreadable", "file"))
		}
	}
	if n == 0 {
		return fail(app.ErrValidation("file_empty", "file"))
	}
	ct := http.DetectContentType(head)
	base := baseType(ct)
	if !allowed(base, p.Allow) {
		return fail(app.ErrValidation("file_type_not_allowed", "file").With("content_type", base))
	}
	ext := strings.ToLower(filepath.Ext(name))
	want, known := extTypes[ext]
	if !known && ext != "" {
		want = baseType(mime.TypeByExtension(ext))
	}
	if want != base && base != "application/octet-stream" {
		return fail(app.ErrValidation("file_extension_mismatch", "file").With("content_type", base))
	}
	if err := f.Close(); err != nil {
		return nil, errors.Join(err, os.Remove(abs))
	}
	st.File.ContentType, st.File.Size, st.File.SHA256 = ct, n, hex.EncodeToString(h.Sum(nil))
	return st, nil
}

// Insert records the staged file in tx under area.
func (s *Staged) Insert(ctx context.Context, tx *sql.Tx, area string) (*File, error) {
	now := app.StampNow()
	r, err := tx.ExecContext(ctx, `INSERT INTO files(area, name, content_type, size, sha256, path, created_at) VALUES (?,?,?,?,?,?,?)`,
		area, s.File.Name, s.File.ContentType, s.File.Size, s.File.SHA256, s.File.path, now)
	if err != nil {
		return nil, err
	}
	s.File.ID, err = r.LastInsertId()
	if err != nil {
		return nil, err
	}
	s.File.Area = area
	if err := s.File.CreatedAt.Scan(now); err != nil {
		return nil, err
	}
	f := s.File
	return &f, nil
}

// Keep marks the staged file as recorded (its transaction committed).
func (s *Staged) Keep() { s.kept = true }

// Discard removes the bytes unless Keep was called.
func (s *Staged) Discard() {
	if s != nil && !s.kept {
		if err := os.Remove(s.abs); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.t.App.Log.Warn("files: discard", "tenant", s.t.Slug, "err", err)
		}
	}
}

const cols = `id, area, name, content_type, size, sha256, path, created_at`

// Get reads a file row (404 when missing).
func Get(ctx context.Context, q app.Querier, id int64) (*File, error) {
	f := &File{}
	err := q.QueryRowContext(ctx, `SELECT `+cols+` FROM files WHERE id = ?`, id).
		Scan(&f.ID, &f.Area, &f.Name, &f.ContentType, &f.Size, &f.SHA256, &f.path, &f.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Path is where a stored file's bytes are (readers that seek or reopen,
// such as imports).
func Path(t *app.Tenant, f *File) string { return filepath.Join(dir(t), filepath.Base(f.path)) }

// Path is where a staged file's bytes are.
func (s *Staged) Path() string { return s.abs }

// Open opens a stored file for reading.
func Open(t *app.Tenant, f *File) (*os.File, error) {
	return os.Open(filepath.Join(dir(t), filepath.Base(f.path)))
}

// DeleteRow deletes a file's row in tx and returns what to pass to Remove
// once tx has committed.
func DeleteRow(ctx context.Context, tx *sql.Tx, id int64) (string, error) {
	var rel string
	err := tx.QueryRowContext(ctx, `DELETE FROM files WHERE id = ? RETURNING path`, id).Scan(&rel)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return rel, err
}

// Remove deletes the bytes of rows deleted by a committed transaction;
// failures are logged (the row is already gone).
func Remove(t *app.Tenant, rels ...string) {
	for _, rel := range rels {
		if rel == "" {
			continue
		}
		if err := os.Remove(filepath.Join(dir(t), filepath.Base(rel))); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.App.Log.Warn("files: remove", "tenant", t.Slug, "err", err)
		}
	}
}

// Inline reports whether a file may be shown in the browser: images and
// PDF only (SVG, HTML and everything else download).
func Inline(f *File) bool {
	ct := baseType(f.ContentType)
	return ct == "application/pdf" || strings.HasPrefix(ct, "image/") && ct != "image/svg+xml"
}

// Headers sets the response headers of a download of f.
func Headers(h http.Header, f *File) {
	ct := f.ContentType
	if strings.HasPrefix(baseType(ct), "text/") {
		ct = "text/plain; charset=utf-8"
	}
	h.Set("Content-Type", ct)
	disp := "attachment"
	if Inline(f) {
		disp = "inline"
	}
	if v := mime.FormatMediaType(disp, map[string]string{"filename": f.Name}); v != "" {
		disp = v
	}
	h.Set("Content-Disposition", disp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cache-Control", "private, no-store")
}
