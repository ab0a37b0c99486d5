package dataimport

import (
	"archive/zip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"xr/app"
	"xr/app/files"
)

// NextFile yields an upload's further files, in order: the name the
// client gave and the content; io.EOF after the last.
type NextFile func() (name string, r io.Reader, err error)

// maxUploadFiles bounds the files of one legacy upload.
const maxUploadFiles = 32

// legacyPolicy is what a legacy upload may be.
var legacyPolicy = files.Policy{MaxBytes: MaxLegacyUpload, Allow: []string{"text/plain", "application/zip"}}

// stageLegacyUpload stores a legacy upload. Several files are CSV tables
// (FreeRADIUS's, one per table, or the reseller panel's set, as phpMyAdmin
// and the panel export them): they are stored as one zip of those files
// (named tables.zip), the form both readers take, so the operator need
// not zip them first. Each must be a .csv, under a name of its own: 400
// upload_not_csv, duplicate_file_name, too_many_files.
func stageLegacyUpload(t *app.Tenant, name string, r io.Reader, more NextFile) (*files.Staged, error) {
	first, err := files.Stage(t, name, r, legacyPolicy)
	if err != nil || more == nil {
		return first, err
	}
	name2, r2, err := more()
	if errors.Is(err, io.EOF) {
		return first, nil
	}
	defer first.Discard()
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := zipTables(pw, first, name2, r2, more)
		pw.CloseWithError(err)
		done <- err
	}()
	st, serr := files.Stage(t, "tables.zip", pr, legacyPolicy)
	pr.CloseWithError(errors.New("upload stored")) // a writer still writing (the store refused) stops
	if zerr := <-done; zerr != nil && (serr == nil || app.AsError(zerr) != nil) {
		if st != nil {
			st.Discard()
		}
		return nil, zerr // the reason the zip failed, not the store's "unreadable"
	}
	return st, serr
}

// zipTables writes the upload's files as one zip (stored: CSV compresses
// well, but a dump of millions of rows would cost more CPU than disk).
func zipTables(w io.Writer, first *files.Staged, name2 string, r2 io.Reader, more NextFile) error {
	zw := zip.NewWriter(w)
	seen := map[string]bool{}
	add := func(name string, r io.Reader) error {
		name = files.CleanName(name)
		if !strings.EqualFold(filepath.Ext(name), ".csv") {
			return app.ErrValidation("upload_not_csv", "file").With("file", name)
		}
		if seen[strings.ToLower(name)] {
			return app.ErrValidation("duplicate_file_name", "file").With("file", name)
		}
		if len(seen) == maxUploadFiles {
			return app.ErrValidation("too_many_files", "file").With("max", maxUploadFiles)
		}
		seen[strings.ToLower(name)] = true
		e, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			return err
		}
		_, err = io.Copy(e, r)
		return err
	}
	f, err := os.Open(first.Path())
	if err != nil {
		return err
	}
	err = add(first.File.Name, f)
	f.Close()
	if err != nil {
		return err
	}
	if err := add(name2, r2); err != nil {
		return err
	}
	for {
		name, r, err := more()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := add(name, r); err != nil {
			return err
		}
	}
	return zw.Close()
}
