package backups

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
)

// A replicated file carries Litestream's bookkeeping tables; they are not
// the tenant's data: a backup neither counts nor resets them.
func TestTableNamesLeaveLitestreamTablesOut(t *testing.T) {
	t.Parallel()
	c, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{
		`CREATE TABLE users(id INTEGER PRIMARY KEY)`,
		`CREATE TABLE _litestream_seq(id INTEGER PRIMARY KEY, seq INTEGER)`,
		`CREATE TABLE _litestream_lock(id INTEGER)`,
		`CREATE TABLE xlitestream_notes(id INTEGER)`,
	} {
		if _, err := c.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	names, err := tableNames(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"users", "xlitestream_notes"}; !slices.Equal(names, want) {
		t.Fatalf("tables %v, want %v", names, want)
	}
}
