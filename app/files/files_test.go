package files_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"xr/app"
	"xr/app/files"
	"xr/internal/xrtest"
)

var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

func stored(t *testing.T, ten *app.Tenant) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(ten.App.FilesDir(ten.Slug), "store"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func TestStageRefusalsLeaveNothing(t *testing.T) {
	t.Parallel()
	a := xrtest.TenantApp(t, "acme")
	ten := xrtest.Acquire(t, a, "acme")
	pol := files.Policy{MaxBytes: 100, Allow: files.DefaultAllow}
	for _, c := range []struct {
		name, body, reason string
	}{
		{"a.png", string(png) + strings.Repeat("x", 200), "file_too_large"},
		{"a.png", "<html><body>hi</body></html>", "file_type_not_allowed"},
		{"a.svg", `<svg xmlns="http://www.w3.org/2000/svg"></svg>`, "file_extension_mismatch"}, // sniffed as text
		{"a.pdf", string(png), "file_extension_mismatch"},
		{"noext", string(png), "file_extension_mismatch"},
		{"a.txt", "", "file_empty"},
	} {
		_, err := files.Stage(ten, c.name, strings.NewReader(c.body), pol)
		var ae *app.Error
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Reason != c.reason || ae.Field != "file" {
			t.Errorf("%s: %v, want 400 %s", c.name, err, c.reason)
		}
	}
	if n := stored(t, ten); n != 0 {
		t.Fatalf("%d files left by refusals", n)
	}
}

func TestStageInsertDeleteServe(t *testing.T) {
	t.Parallel()
	a := xrtest.TenantApp(t, "acme")
	ten := xrtest.Acquire(t, a, "acme")
	ctx := context.Background()
	pol := files.Policy{MaxBytes: 1 << 20, Allow: files.DefaultAllow}

	// A rolled-back insert: Discard removes the bytes.
	st, err := files.Stage(ten, "../../etc/pic.png", bytes.NewReader(png), pol)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := ten.Write(ctx, func(tx *sql.Tx) error {
		if _, err := st.Insert(ctx, tx, "test"); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	st.Discard()
	if stored(t, ten) != 0 || xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM files`) != 0 {
		t.Fatal("a rolled-back file remains")
	}

	// A committed one: row with name, type, size and SHA-256; bytes kept.
	st, err = files.Stage(ten, "../../etc/pic.png", bytes.NewReader(png), pol)
	if err != nil {
		t.Fatal(err)
	}
	var f *files.File
	if err := ten.Write(ctx, func(tx *sql.Tx) error { f, err = st.Insert(ctx, tx, "test"); return err }); err != nil {
		t.Fatal(err)
	}
	st.Keep()
	st.Discard()
	if f.Name != "pic.png" || f.ContentType != "image/png" || f.Size != int64(len(png)) || len(f.SHA256) != 64 || stored(t, ten) != 1 {
		t.Fatalf("stored %+v (%d files)", f, stored(t, ten))
	}
	got, err := files.Get(ctx, ten.DB.R, f.ID)
	if err != nil || got.SHA256 != f.SHA256 {
		t.Fatalf("get: %+v %v", got, err)
	}
	h := http.Header{}
	files.Headers(h, got)
	if h.Get("Content-Disposition") != `inline; filename=pic.png` || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("headers %v", h)
	}
	files.Headers(h, &files.File{Name: "x.txt", ContentType: "text/html; charset=utf-8"})
	if !strings.HasPrefix(h.Get("Content-Disposition"), "attachment") || h.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("html served as %v", h)
	}

	// Delete: the row in the transaction, the bytes after the commit.
	var rel string
	if err := ten.Write(ctx, func(tx *sql.Tx) error { rel, err = files.DeleteRow(ctx, tx, f.ID); return err }); err != nil {
		t.Fatal(err)
	}
	if stored(t, ten) != 1 {
		t.Fatal("bytes removed before the commit was known")
	}
	files.Remove(ten, rel)
	if stored(t, ten) != 0 || xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM files`) != 0 {
		t.Fatal("not deleted")
	}
}
