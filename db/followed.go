package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"time"
)

// ErrStandbyReadOnly refuses every write of a followed file (a standby's
// copy of the primary's): ERR_MAINTENANCE standby_read_only. The primary
// takes the write; this box serves it once replicated.
var ErrStandbyReadOnly = &PausedError{Reason: "standby_read_only", RetryAfter: 30 * time.Second}

// openFollowed opens a standby's copy of a file read-only. The follower
// (another process) writes pages into it under SQLite's POSIX locks with
// the header in rollback-journal mode, so this process must read it the
// same way: no journal_mode pragma (WAL would move readers off the file
// locks the follower waits for), no migrations, every connection
// query_only. Its schema must be exactly this binary's: an older or newer
// primary's file is refused, since the code would read columns that are
// not there.
func openFollowed(path, set string, opt Options) (*DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("followed file %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(busyTimeoutMS)+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "query_only(1)")
	src := "file:" + path + "?" + q.Encode()
	r, err := sql.Open("sqlite", src)
	if err != nil {
		return nil, err
	}
	n := opt.Readers
	if n <= 0 {
		n = max(4, runtime.NumCPU()*2)
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	idle := opt.ReaderIdle
	if idle <= 0 {
		idle = 5 * time.Minute
	}
	r.SetConnMaxIdleTime(idle)
	have, err := SchemaVersion(context.Background(), r)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("followed file %s: read schema version: %w", path, err), r.Close())
	}
	if want := LatestVersion(set); have != want {
		return nil, errors.Join(fmt.Errorf("followed file %s has schema version %d, this binary's is %d: run the primary's version of xr on the standby", path, have, want), r.Close())
	}
	// W is the same read-only pool: code that reads through the writer
	// still reads, and Write refuses before it reaches it (admit).
	return &DB{Path: path, W: r, R: r, followed: true}, nil
}

// Followed reports a standby's copy (CheckpointFollowed).
func (d *DB) Followed() bool { return d.followed }
