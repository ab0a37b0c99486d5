package web_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"xr/app"
	"xr/app/backups"
	"xr/app/dataimport"
	"xr/app/sheet"
	"xr/internal/webtest"
)

// storeEmpty fails unless the tenant's file store holds no file and no
// row: a refused upload leaves nothing.
func storeEmpty(t *testing.T, k *webtest.Kit) {
	t.Helper()
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM files`); n != 0 {
		t.Fatalf("%d file rows", n)
	}
	ents, _ := os.ReadDir(filepath.Join(k.App.FilesDir("acme"), "store"))
	if len(ents) != 0 {
		t.Fatalf("%d files left in the store", len(ents))
	}
}

// bombXLSX is a workbook whose one cell holds n bytes (about n/1000 on
// disk).
func bombXLSX(t *testing.T, n int) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("xl/worksheets/sheet1.xml")
	io.WriteString(w, `<worksheet><sheetData><row r="1"><c t="inlineStr"><is><t>username</t></is></c></row><row r="2"><c t="inlineStr"><is><t>`)
	io.Copy(w, io.LimitReader(strings.NewReader(strings.Repeat("A", n)), int64(n)))
	io.WriteString(w, `</t></is></c></row></sheetData></worksheet>`)
	zw.Close()
	return buf.String()
}

// Hostile spreadsheets on the import rows are refused with their reason
// while they are read, and nothing is kept: a workbook expanding a
// thousand times, rows and cells past the caps, a line past its length,
// bytes not in the file's encoding, an unknown encoding.
func TestImportRefusesHostileFiles(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	dataimport.SetLimits(k.App, sheet.Limits{MaxRows: 5, MaxCells: 20, MaxRecord: 4096, MaxExpanded: 512 << 20, MaxRatio: 100,
		MaxOtherParts: 32 << 20, MaxStrings: 100})
	rows := "username,password\n" + strings.Repeat("u,p\n", 6)
	for _, c := range []struct {
		name, file, body, reason string
		fields                   []string
	}{
		{"a workbook expanding 1000 times", "bomb.xlsx", bombXLSX(t, 64<<20), "archive_too_large", nil},
		{"six rows", "rows.csv", rows, "too_many_rows", nil},
		{"21 cells", "cells.csv", "username,password\n" + strings.Repeat("x,", 20) + "x\n", "too_many_cells", nil},
		{"a 5 KB line", "long.csv", "username,password\n" + strings.Repeat("x", 5000) + ",p\n", "line_too_long", nil},
		{"not utf-8", "bad.csv", "username,password,firstname\nali,pw-ali-1234,caf\xe9\n", "invalid_encoding", []string{"encoding", "utf-8"}},
		{"an unknown encoding", "ok.csv", "username,password\n", "invalid_enum", []string{"encoding", "ebcdic"}},
	} {
		for _, path := range []string{"/admin/import/validate", "/admin/import/jobs"} {
			r := diUpload(k, path, tok, c.file, c.body, c.fields...)
			webtest.ExpectErr(t, r, 400, app.CodeValidation, c.reason)
			storeEmpty(t, k)
		}
	}
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs`); n != 0 {
		t.Fatalf("%d runs", n)
	}
}

// A Latin-1 (Windows-1252), Windows-1256 or UTF-16 CSV is imported as the text it
// holds, never as U+FFFD.
func TestImportReadsTheFilesEncoding(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	latin, _ := charmap.Windows1252.NewEncoder().String("username,password,firstname\nmuller,pw-muller-1,Müller\n")
	arabic, _ := charmap.Windows1256.NewEncoder().String("username,password,firstname\nali,pw-ali-1234,علي حسن\n")
	utf16, _ := unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder().String("username,password,firstname\nzaid,pw-zaid-1234,زيد Ünal\n")
	for _, body := range []string{latin, arabic, utf16} {
		r := diUpload(k, "/admin/import/validate", tok, "users.csv", body)
		if r.Status != 200 || r.Data()["failed"] != float64(0) {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		r = diUpload(k, "/admin/import/jobs", tok, "users.csv", body)
		if r.Status != 202 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	diRunJobs(t, k)
	ten := k.Acquire("acme")
	for user, want := range map[string]string{"muller": "Müller", "ali": "علي حسن", "zaid": "زيد Ünal"} {
		var got string
		if err := ten.DB.R.QueryRow(`SELECT firstname FROM users WHERE username = ?`, user).Scan(&got); err != nil || got != want {
			t.Fatalf("%s: %q %v", user, got, err)
		}
	}
}

// A legacy zip declaring far more than its size allows is refused at the
// upload: 400 archive_too_large, no run, nothing kept.
func TestLegacyZipBombRefused(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("radcheck.csv")
	io.WriteString(w, "id,username,attribute,op,value\n1,")
	io.Copy(w, io.LimitReader(strings.NewReader(strings.Repeat("A", 64<<20)), 64<<20))
	zw.Close()
	r := diUpload(k, "/admin/legacy/import/jobs", tok, "tables.zip", buf.String())
	webtest.ExpectErr(t, r, 400, app.CodeValidation, "archive_too_large")
	if r.JSON["error"].(map[string]any)["details"].(map[string]any)["limit"] != "expanded_bytes" {
		t.Fatalf("%s", r.Body)
	}
	storeEmpty(t, k)
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs`); n != 0 {
		t.Fatalf("%d runs", n)
	}
}

// A backup upload that expands past its cap is refused while it is
// written: 400 archive_too_large, no record, nothing in the backups folder.
func TestBackupUploadBombRefused(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	var buf bytes.Buffer
	enc, _ := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	io.Copy(enc, io.LimitReader(strings.NewReader(strings.Repeat("\x00", 256<<20)), 256<<20))
	enc.Close()
	r := k.Do("POST", "acme", "/api/v1/admin/tools/backup/upload", tok, buf.Bytes(), "Content-Type", "application/octet-stream")
	webtest.ExpectErr(t, r, 400, app.CodeValidation, "archive_too_large")
	ents, _ := os.ReadDir(backups.Dir(k.App, "acme"))
	if len(ents) != 0 {
		t.Fatalf("left %d files: %v", len(ents), fmt.Sprint(ents))
	}
	if n, _ := backups.List(t.Context(), k.System("acme")); len(n) != 0 {
		t.Fatalf("%d records", len(n))
	}
}
