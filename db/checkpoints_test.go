package db

import (
	"path/filepath"
	"strconv"
	"testing"
)

// A file whose checkpoints another component owns never checkpoints on
// commit; the others keep SQLite's automatic checkpoint. The pool passes
// its setting to every tenant file it opens.
func TestCheckpointsOwner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		owner Checkpoints
		want  int
	}{
		{CheckpointSQLite, 1000},
		{CheckpointExternal, 0},
	} {
		t.Run(strconv.Itoa(int(tc.owner)), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			d, err := Open(filepath.Join(dir, "instance.db"), "instance", Options{Checkpoints: tc.owner})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if got := autocheckpoint(t, d); got != tc.want {
				t.Fatalf("instance file: wal_autocheckpoint = %d, want %d", got, tc.want)
			}
			p := NewPool(dir, 0)
			p.Checkpoints = tc.owner
			defer p.Close()
			td, release, err := p.Acquire("acme", true)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			if got := autocheckpoint(t, td); got != tc.want {
				t.Fatalf("tenant file: wal_autocheckpoint = %d, want %d", got, tc.want)
			}
		})
	}
}

// autocheckpoint reads the writer connection's automatic checkpoint
// threshold (0: never).
func autocheckpoint(t *testing.T, d *DB) int {
	t.Helper()
	var n int
	if err := d.W.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
