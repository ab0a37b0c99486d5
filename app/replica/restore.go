package replica

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/benbjohnson/litestream"
)

// ErrNothingToRestore: the replica holds no copy of the file yet.
var ErrNothingToRestore = errors.New("the replica holds no copy of this file yet")

// Restore writes the latest state of the replica of the file at rel (e.g.
// "instance.db", "tenants/acme.db") to out, which must not exist yet
// (Litestream's restore, with its quick integrity check), from the
// generation the replica's stamp names unless target names one.
func Restore(ctx context.Context, target Target, rel, out string) error {
	if target.gen == 0 { // the generation the replica's stamp names
		cur, err := target.current(ctx)
		if err != nil {
			return fmt.Errorf("restore %s from %s: %w", filepath.ToSlash(rel), target.URL, err)
		}
		target = cur
	}
	r := litestream.NewReplicaWithClient(nil, target.client(rel))
	opt := litestream.NewRestoreOptions()
	opt.OutputPath = out
	opt.IntegrityCheck = litestream.IntegrityCheckQuick
	err := r.Restore(ctx, opt)
	if errors.Is(err, litestream.ErrTxNotAvailable) || errors.Is(err, litestream.ErrNoSnapshots) {
		err = ErrNothingToRestore
	}
	if err != nil {
		return fmt.Errorf("restore %s from %s: %w", filepath.ToSlash(rel), target.URL, err)
	}
	return nil
}
