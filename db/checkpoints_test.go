package db

import (
	"path/filepath"
	"strconv"
	"testing"
)

// A file whose checkpoints another component owns has no checkpointer of
// its own; the others have the background one. No file checkpoints on
// commit. The pool passes its setting to every tenant file it opens.
func TestCheckpointsOwner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		owner Checkpoints
		want  bool // a checkpointer of its own
	}{
		{CheckpointBackground, true},
		{CheckpointExternal, false},
	} {
		t.Run(strconv.Itoa(int(tc.owner)), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			d, err := Open(filepath.Join(dir, "instance.db"), "instance", Options{Checkpoints: tc.owner})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if got := autocheckpoint(t, d); got != 0 || (d.ckpt != nil) != tc.want {
				t.Fatalf("instance file: wal_autocheckpoint = %d, checkpointer %v, want 0, %v", got, d.ckpt != nil, tc.want)
			}
			p := NewPool(dir, 0)
			p.Checkpoints = tc.owner
			defer p.Close()
			td, release, err := p.Acquire("acme", true)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			if got := autocheckpoint(t, td); got != 0 || (td.ckpt != nil) != tc.want {
				t.Fatalf("tenant file: wal_autocheckpoint = %d, checkpointer %v, want 0, %v", got, td.ckpt != nil, tc.want)
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
