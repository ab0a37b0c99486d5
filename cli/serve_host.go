package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"xr/app"
)

// hostOpts are what the instance operator decides about the host: where
// tenants' local backups may go.
type hostOpts struct {
	backupDirs []string
}

func (h *hostOpts) flags(f *pflag.FlagSet) {
	var def []string
	if env := os.Getenv("XR_BACKUP_DIRS"); env != "" {
		def = strings.Split(env, ",")
	}
	f.StringSliceVar(&h.backupDirs, "backup-dirs", def, "folders of this host where tenants' local backup destinations may be, "+
		"each tenant in DIR/<slug> (comma-separated; default env XR_BACKUP_DIRS; none: no local destination)")
}

// apply checks the options and sets them on cfg.
func (h *hostOpts) apply(cfg *app.Config, dataDir string) error {
	dirs, err := checkBackupDirs(h.backupDirs, dataDir)
	if err != nil {
		return err
	}
	cfg.BackupDirs = dirs
	return nil
}

// checkBackupDirs makes each folder absolute with its symlinks resolved:
// it must exist, be a folder and lie outside the data directory.
func checkBackupDirs(in []string, dataDir string) ([]string, error) {
	data, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	if d, err := filepath.EvalSymlinks(data); err == nil {
		data = d
	}
	var out []string
	for _, d := range in {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("--backup-dirs %s: %w", d, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--backup-dirs %s: not a folder", d)
		}
		if rel, err := filepath.Rel(data, abs); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
			return nil, fmt.Errorf("--backup-dirs %s: inside the data directory", d)
		}
		if rel, err := filepath.Rel(abs, data); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
			return nil, fmt.Errorf("--backup-dirs %s: holds the data directory", d)
		}
		out = append(out, abs)
	}
	return out, nil
}
