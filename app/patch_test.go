package app

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

func TestPatchWritesOnlyWhatTheBodySet(t *testing.T) {
	t.Parallel()
	d, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	if _, err := d.Exec(`CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT 'n', note TEXT, price INTEGER, updated_at TEXT);
		INSERT INTO t(id, name, note, price) VALUES (1, 'old', 'keep', 5)`); err != nil {
		t.Fatal(err)
	}
	type row struct {
		name    string
		note    sql.NullString
		price   sql.NullInt64
		updated sql.NullString
	}
	read := func() row {
		var r row
		if err := d.QueryRow(`SELECT name, note, price, updated_at FROM t WHERE id = 1`).Scan(&r.name, &r.note, &r.price, &r.updated); err != nil {
			t.Fatal(err)
		}
		return r
	}
	apply := func(fn func(p *Patch), stamp string) {
		tx, err := d.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var p Patch
		fn(&p)
		if _, err := p.Exec(ctx, tx, "t", 1, stamp); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing set: nothing written, not even the stamp.
	apply(func(p *Patch) { SetOpt(p, "note", Opt[string]{}) }, "2030-01-01 00:00:00")
	if r := read(); r.updated.Valid || r.note.String != "keep" {
		t.Fatalf("empty patch wrote: %+v", r)
	}
	// Set, null and converted values, one statement with the stamp.
	apply(func(p *Patch) {
		SetOpt(p, "note", Opt[string]{Set: true, Null: true})
		SetOptAs(p, "price", Opt[Money]{Set: true, V: 7000}, func(m Money) any { return int64(m) })
		SetOptOrZero(p, "name", Opt[string]{Set: true, Null: true}, func(v string) any { return v })
		if !p.Has("price") || p.Has("updated_at") {
			t.Fatal("Has")
		}
	}, "2030-01-01 00:00:00")
	if r := read(); r.note.Valid || r.price.Int64 != 7000 || r.name != "" || r.updated.String != "2030-01-01 00:00:00" {
		t.Fatalf("patch: %+v", r)
	}
}

// TestPatchIsTheOnlyUpdateBuilder: a PATCH is applied through Patch, not
// through an UPDATE assembled from column names elsewhere (the accounting
// statements built from constants and the key rotation's sealed-column walk
// are not PATCHes).
func TestPatchIsTheOnlyUpdateBuilder(t *testing.T) {
	t.Parallel()
	allowed := map[string]bool{"patch.go": true, "keys.go": true, "cards/stock.go": true, "cards/sales.go": true, "aaa/usage.go": true, "aaa/accounting.go": true}
	built := regexp.MustCompile("\\bUPDATE [`\"]?\\s*\\+|\\bSET [`\"]?\\s*\\+|sets = append\\(sets")
	err := filepath.Walk(".", func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if built.Match(b) && !allowed[filepath.ToSlash(path)] {
			t.Errorf("%s builds an UPDATE by hand: use app.Patch", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
