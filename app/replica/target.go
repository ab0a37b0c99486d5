package replica

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/benbjohnson/litestream"
	"github.com/benbjohnson/litestream/file"
)

// Target is where the replicas of an instance's files live: one Litestream
// replica per file, under the file's path relative to the data directory
// (DIR/instance.db/, DIR/tenants/<slug>.db/).
type Target struct {
	URL string // as the operator wrote it
	dir string // file://: the directory
	gen uint64 // the generation whose files client names (generation.go); 0: the root
}

// ErrSchemeNotYet refuses the replica schemes the issue plans but this
// build does not stream to yet.
var ErrSchemeNotYet = errors.New("only file:// replicas are supported so far (sftp:// and s3:// are planned)")

// ParseTarget reads a --replicate-to / --standby-of URL. file://DIR takes
// everything after the scheme as the directory (file:///mnt/replica, or a
// path relative to the working directory: file://replica).
func ParseTarget(raw string) (Target, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Target{}, fmt.Errorf("replica %q: want scheme://location, e.g. file:///mnt/xr-replica", raw)
	}
	switch scheme {
	case "file":
		if rest == "" {
			return Target{}, fmt.Errorf("replica %q: file:// needs a directory", raw)
		}
		dir, err := filepath.Abs(filepath.FromSlash(rest))
		if err != nil {
			return Target{}, fmt.Errorf("replica %q: %w", raw, err)
		}
		return Target{URL: raw, dir: dir}, nil
	case "sftp", "s3":
		return Target{}, fmt.Errorf("replica %q: %w", raw, ErrSchemeNotYet)
	default:
		return Target{}, fmt.Errorf("replica %q: unknown scheme %q (file://, sftp:// or s3://)", raw, scheme)
	}
}

// client is the replica client of the file at rel (relative to the data
// directory, e.g. "tenants/acme.db") in the target's generation
// (g<N>/tenants/acme.db).
func (t Target) client(rel string) litestream.ReplicaClient {
	return t.rootClient(t.genDir() + rel)
}

// genDir is the folder of the target's generation ("g3/"; "" for none).
func (t Target) genDir() string {
	if t.gen == 0 {
		return ""
	}
	return fmt.Sprintf("g%d/", t.gen)
}

// rootClient is a replica client at rel from the replica's root.
func (t Target) rootClient(rel string) litestream.ReplicaClient {
	return file.NewReplicaClient(filepath.Join(t.dir, filepath.FromSlash(rel)))
}

// holds reports whether the replica holds any copy of the file at rel
// (an LTX file at any level, snapshots included).
func (t Target) holds(ctx context.Context, rel string) (bool, error) {
	c := t.client(rel)
	for level := 0; level <= litestream.SnapshotLevel; level++ {
		itr, err := c.LTXFiles(ctx, level, 0, false)
		if err != nil {
			return false, err
		}
		found := itr.Next()
		if err := errors.Join(itr.Err(), itr.Close()); err != nil {
			return false, err
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}
