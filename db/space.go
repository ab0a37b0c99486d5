package db

import (
	"context"
	"path/filepath"
)

// MinFreeBytes is the free space below which a file's filesystem counts as
// full for HasRoom.
const MinFreeBytes = 1 << 20

// HasRoom reports whether a write that needs new pages can succeed now: the
// file is below its max_page_count (or has free pages) and its filesystem
// has at least MinFreeBytes available. It runs on the writer connection
// (max_page_count is a per-connection setting) and writes nothing, so it
// can probe a file that refused a write for lack of space.
func (d *DB) HasRoom(ctx context.Context) (bool, error) {
	c, err := d.W.Conn(ctx)
	if err != nil {
		return false, err
	}
	// Only PRAGMA reads ran on c: returning it to the pool cannot lose a
	// write, and a broken connection is discarded by database/sql.
	defer func() { _ = c.Close() }()
	var pages, maxPages, free int64
	for _, q := range []struct {
		sql string
		v   *int64
	}{{"PRAGMA page_count", &pages}, {"PRAGMA max_page_count", &maxPages}, {"PRAGMA freelist_count", &free}} {
		if err := c.QueryRowContext(ctx, q.sql).Scan(q.v); err != nil {
			return false, err
		}
	}
	if free == 0 && pages >= maxPages {
		return false, nil
	}
	avail, ok := freeBytes(filepath.Dir(d.Path))
	if ok && avail < MinFreeBytes {
		return false, nil
	}
	return true, nil
}
