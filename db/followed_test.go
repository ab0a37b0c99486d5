package db

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// A followed file opens read-only without migrations, refuses every Write
// with standby_read_only, and is refused when its schema is not exactly
// this binary's.
func TestOpenFollowed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	latest := LatestVersion("tenant")
	for _, tc := range []struct {
		name    string
		version int // schema version the file claims (0: as migrated)
		wantErr string
	}{
		{"this binary's schema", 0, ""},
		{"a newer primary", latest + 1, "has schema version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "t.db")
			d, err := Open(path, "tenant", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.version != 0 {
				if _, err := d.W.Exec(`INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, 'x', '')`, tc.version); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := d.W.Exec(`PRAGMA journal_mode=DELETE`); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			f, err := Open(path, "tenant", Options{Checkpoints: CheckpointFollowed})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			wrote := false
			err = f.Write(ctx, func(tx *sql.Tx) error { wrote = true; return nil })
			if pe, ok := IsPaused(err); !ok || pe.Reason != "standby_read_only" || wrote {
				t.Fatalf("Write on a followed file: %v (ran: %v)", err, wrote)
			}
			if _, err := f.W.Exec(`CREATE TABLE x(a)`); err == nil {
				t.Fatal("a statement through W wrote a followed file")
			}
			var mode string
			if err := f.R.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "delete" {
				t.Fatalf("journal mode %q (%v), want delete: the follower's locks would not exclude WAL readers", mode, err)
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.db"), "tenant", Options{Checkpoints: CheckpointFollowed}); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing followed file: %v", err)
	}
}
