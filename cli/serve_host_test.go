package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --backup-dirs takes existing folders outside the data directory, made
// absolute with their symlinks resolved; anything else stops xr serve
// with the folder named.
func TestBackupDirsFlag(t *testing.T) {
	t.Parallel()
	data, ok := t.TempDir(), t.TempDir()
	file := filepath.Join(ok, "file")
	os.WriteFile(file, nil, 0o600)
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(ok, link)
	got, err := checkBackupDirs([]string{ok, link, " "}, data)
	want, _ := filepath.EvalSymlinks(ok)
	if err != nil || len(got) != 2 || got[0] != want || got[1] != want {
		t.Fatalf("%v %v", got, err)
	}
	for bad, why := range map[string]string{filepath.Join(ok, "missing"): "no such", file: "not a folder",
		filepath.Join(data, "tenants"): "inside the data directory", filepath.Dir(data): "holds the data directory"} {
		os.MkdirAll(filepath.Join(data, "tenants"), 0o700)
		if _, err := checkBackupDirs([]string{bad}, data); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
