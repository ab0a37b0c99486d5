package backups

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"xr/app"
)

// Where a local destination writes on the host is the instance operator's
// choice: xr serve --backup-dirs DIR[,DIR] (app.Config.BackupDirs). A
// tenant's local destinations must lie in <DIR>/<slug> of one of them,
// after symlinks are resolved, when saved and again whenever one is used:
// a destination saved before the operator narrowed the folders stops
// working with the same reason (400 backup_destination_path_not_allowed,
// details.allowed listing the tenant's folders).

// localRoots are the folders tenant slug's local destinations may be in.
func localRoots(a *app.App, slug string) []string {
	out := []string{}
	for _, d := range a.Cfg.BackupDirs {
		out = append(out, filepath.Join(d, slug))
	}
	return out
}

// resolvePath is p with the symlinks of its longest existing prefix
// resolved (the part not yet created appended as it is).
func resolvePath(p string) (string, error) {
	rest, cur := "", p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// confineLocal checks a local destination's path p (absolute, clean) for
// tenant slug and answers the operator's folder it lies in.
func confineLocal(a *app.App, slug, p string) (string, error) {
	roots := localRoots(a, slug)
	refuse := func() (string, error) {
		return "", app.ErrValidation("backup_destination_path_not_allowed", "config.path").With("allowed", roots)
	}
	rp, err := resolvePath(p)
	if err != nil {
		return refuse()
	}
	for i, r := range roots {
		rr, err := resolvePath(r)
		if err == nil && within(rr, rp) {
			return a.Cfg.BackupDirs[i], nil
		}
	}
	return refuse()
}
