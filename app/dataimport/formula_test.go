package dataimport

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"io"
	"strings"
	"testing"

	"xr/app"
	"xr/app/subs"
	"xr/internal/xrtest"
)

// The legacy CSV export writes names a spreadsheet would run as formulas
// (=, @, +, -) with the apostrophe that makes them text, as the subscriber
// export does; importing the set back restores them as they were.
func TestLegacyCSVExportEscapesFormulas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	names := map[string][2]string{"f1": {"=HYPERLINK(\"http://x\")", "@SUM(A1)"}, "f2": {"+1+1", "-2-2"}, "f3": {"Ali", "-5"}}
	if err := e.ten.Write(ctx, func(tx *sql.Tx) error {
		for u, n := range names {
			if _, err := subs.CreateUser(ctx, tx, e.ten, subs.NewUser{Username: u, Password: "pw-" + u + "-123", ParentID: e.owner.ManagerID,
				Firstname: n[0], Lastname: n[1]}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Export(ctx, e.owner, ExportInput{Format: DialectCSV}, &out); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var users []byte
	for _, f := range zr.File {
		if f.Name == "users.csv" {
			rc, _ := f.Open()
			users, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	recs, err := csv.NewReader(bytes.NewReader(users)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]bool{}
	for _, r := range recs[1:] {
		for _, c := range r {
			cells[c] = true
		}
	}
	for _, want := range []string{`'=HYPERLINK("http://x")`, "'@SUM(A1)", "'+1+1", "'-2-2", "Ali", "-5"} {
		if !cells[want] {
			t.Errorf("no cell %q in users.csv:\n%s", want, users)
		}
	}
	for c := range cells {
		if c != "" && strings.ContainsRune("=@+", rune(c[0])) || strings.HasPrefix(c, "-2") {
			t.Errorf("a formula written raw: %q", c)
		}
	}
	// Imported back into another tenant: the names as they were.
	xrtest.CreateTenant(t, e.a, app.NewTenant{Slug: "beta"})
	ten := xrtest.Acquire(t, e.a, "beta")
	b := &env{t: t, a: e.a, ten: ten, owner: xrtest.System(t, ten), ctx: e.ctx}
	j := b.legacy("acme-legacy.zip", out.String(), StartInput{})
	if j = b.startPanel(j, StartInput{}); j.State != "done" || j.Failed != 0 {
		t.Fatalf("%+v %+v", j, j.Lines)
	}
	for u, n := range names {
		var first, last string
		if err := ten.DB.R.QueryRow(`SELECT firstname, lastname FROM users WHERE username = ?`, u).Scan(&first, &last); err != nil || first != n[0] || last != n[1] {
			t.Fatalf("%s: %q %q %v", u, first, last, err)
		}
	}
}
