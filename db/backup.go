package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"

	"modernc.org/sqlite"
)

// Snapshot writes a consistent copy of d to path with VACUUM INTO. It reads
// one snapshot of the WAL, so writers keep going while it runs. It runs on
// a connection of its own opened with mode=ro: the pooled readers are
// query_only, which refuses VACUUM INTO ("attempt to write a readonly
// database"), and the writer must stay free for writers.
func Snapshot(ctx context.Context, d *DB, path string) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s exists", path)
	}
	c, err := sql.Open("sqlite", "file:"+d.Path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	// Read-only handle: VACUUM INTO has finished writing path when
	// ExecContext returns, so closing it loses nothing.
	defer func() { _ = c.Close() }()
	_, err = c.ExecContext(ctx, `VACUUM INTO ?`, path)
	return err
}

// ErrNotTenantFile is returned by CheckTenantFile for anything that is not a
// healthy xr tenant file of a schema this binary understands.
var ErrNotTenantFile = errors.New("not an xr tenant file")

// CheckTenantFile opens path read-only and verifies integrity, that it is an
// xr tenant file, and that its schema is not newer than this binary's.
func CheckTenantFile(ctx context.Context, path string) (version int, err error) {
	if _, err := os.Stat(path); err != nil {
		return 0, err
	}
	c, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return 0, err
	}
	defer func() { _ = c.Close() }() // read-only handle: closing it loses nothing
	var res string
	if err := c.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNotTenantFile, err)
	}
	if res != "ok" {
		return 0, fmt.Errorf("%w: integrity_check: %s", ErrNotTenantFile, res)
	}
	var kind string
	if err := c.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='file_kind'`).Scan(&kind); err != nil || kind != "xr-tenant" {
		return 0, fmt.Errorf("%w: no xr tenant marker", ErrNotTenantFile)
	}
	v, err := SchemaVersion(ctx, c)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNotTenantFile, err)
	}
	if latest := LatestVersion("tenant"); v > latest {
		return 0, fmt.Errorf("%w: schema version %d is newer than this binary's %d", ErrNotTenantFile, v, latest)
	}
	return v, nil
}

// RestoreInto replaces the whole content of d with the file at src, using
// SQLite's online backup API on d's writer connection: the copy is one write
// transaction, so a running server sees either the old or the new file,
// never a mix, and no file is renamed under its open connections.
// The caller checks src first (CheckTenantFile) and migrates afterwards.
func RestoreInto(ctx context.Context, d *DB, src string) (err error) {
	conn, err := d.W.Conn(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := conn.Close(); err == nil {
			err = cerr
		}
	}()
	return conn.Raw(func(dc any) error {
		r, ok := dc.(interface {
			NewRestore(string) (*sqlite.Backup, error)
		})
		if !ok {
			return errors.New("driver has no online backup")
		}
		b, err := r.NewRestore("file:" + src + "?mode=ro")
		if err != nil {
			return err
		}
		for {
			more, err := b.Step(-1)
			if err != nil {
				return errors.Join(err, b.Finish())
			}
			if !more {
				break
			}
		}
		if err := b.Finish(); err != nil {
			return err
		}
		d.gen.Add(1) // contexts bound before now see ErrReplaced
		return nil
	})
}

// FileMeta reads one key of a file's meta table, read-only.
func FileMeta(ctx context.Context, path, key string) (string, error) {
	c, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }() // read-only handle: closing it loses nothing
	var v string
	err = c.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	return v, err
}

// Migrate applies pending migrations of set to an open file.
func Migrate(ctx context.Context, d *DB, set string) error { return migrate(ctx, d.W, set) }

// EditFile runs fn in one transaction on a connection of its own to the
// file at path, with no migration and no pool, then syncs the file once:
// changing a copy of a tenant file before it is registered
// (app.CopyTenants). The file must be one nobody else has open; SQLite
// does not sync it meanwhile (synchronous=OFF: a crash before the final
// sync leaves a copy nobody registered).
func EditFile(ctx context.Context, path string, fn func(tx *sql.Tx) error) (err error) {
	q := url.Values{}
	q.Add("_pragma", "synchronous(OFF)")
	q.Add("_pragma", "foreign_keys(1)")
	c, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return err
	}
	c.SetMaxOpenConns(1)
	err = func() error {
		defer func() { err = errors.Join(err, c.Close()) }()
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return errors.Join(err, tx.Rollback())
		}
		return tx.Commit()
	}()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}
