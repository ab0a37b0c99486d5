// Package db opens xr's SQLite files: one writer connection and a pool of
// read-only connections per file, migrations at open, and error mapping by
// SQLite result code.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DB is one SQLite file. Writes go through W (a single connection, so
// writers queue in Go instead of spinning on SQLITE_BUSY); reads through R.
type DB struct {
	Path string
	W    *sql.DB
	R    *sql.DB
	wal  *walSync // nil unless Durable

	// Observe, when set, hears the outcome of every Write: nil after a
	// commit, the error otherwise (the app's storage-health flag). Set it
	// before the file is shared.
	Observe func(d *DB, err error)
}

// Options tunes one file.
type Options struct {
	// Durable makes Write return only after its commit is on disk: money
	// and ledger commits must survive power loss before the client hears
	// "ok". It is a group commit: SQLite commits with synchronous=NORMAL
	// and Write fsyncs the WAL itself, so concurrent committers share one
	// fsync and the next transaction runs while the previous one syncs.
	Durable bool
	Readers int
	// ReaderIdle closes a reader connection unused this long (default 5
	// minutes). Each connection holds the parsed schema (most of a
	// megabyte for a tenant file): a tenant file kept open but idle keeps
	// only its writer once its readers idled out.
	ReaderIdle time.Duration
	// Checkpoints says who checkpoints the file (checkpoints.go).
	Checkpoints Checkpoints
}

func dsn(path string, readOnly bool, opt Options) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	// NORMAL in WAL mode syncs the WAL before each checkpoint and the
	// database after it; commits are made durable by walSync (Durable).
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		if opt.Checkpoints == CheckpointExternal {
			q.Add("_pragma", "wal_autocheckpoint(0)")
		}
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the file at path and applies the embedded
// migrations of the given set ("instance" or "tenant").
func Open(path, set string, opt Options) (*DB, error) {
	w, err := sql.Open("sqlite", dsn(path, false, opt))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	d := &DB{Path: path, W: w}
	if opt.Durable {
		d.wal = &walSync{path: path + "-wal"}
	}
	if err := migrate(context.Background(), w, set); err != nil {
		return nil, errors.Join(fmt.Errorf("migrate %s: %w", path, err), w.Close())
	}
	r, err := sql.Open("sqlite", dsn(path, true, opt))
	if err != nil {
		return nil, errors.Join(err, w.Close())
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
	d.R = r
	return d, nil
}

// Close closes both pools.
func (d *DB) Close() error {
	err := errors.Join(d.R.Close(), d.W.Close())
	if d.wal != nil {
		d.wal.close()
	}
	return err
}

// Write runs fn in one IMMEDIATE transaction on the writer. The context is
// detached from the caller's cancellation: a client hanging up must not
// abort a commit half way or poison the single writer connection.
func (d *DB) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	err := d.write(ctx, fn)
	if d.Observe != nil {
		d.Observe(d, err)
	}
	return err
}

func (d *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	ctx = context.WithoutCancel(ctx)
	tx, err := d.W.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if d.wal != nil {
		return d.wal.sync()
	}
	return nil
}

// Read runs fn in a read transaction on the reader pool, so every query of
// fn sees one snapshot.
func (d *DB) Read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

func code(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

// IsUnique reports a UNIQUE or PRIMARY KEY constraint violation.
func IsUnique(err error) bool {
	c := code(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// IsForeignKey reports a FOREIGN KEY constraint violation.
func IsForeignKey(err error) bool {
	return code(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// IsBusy reports SQLITE_BUSY or SQLITE_LOCKED (any extended code).
func IsBusy(err error) bool {
	c := code(err) & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// IsFull reports SQLITE_FULL (any extended code): the disk, or the file's
// max_page_count, has no room for the pages a write needs. The transaction
// did not commit.
func IsFull(err error) bool {
	return code(err)&0xff == sqlite3.SQLITE_FULL
}

// IsTriggerAbort reports a constraint raised by a trigger (RAISE(ABORT)):
// the schema's own cross-table rules, such as one login namespace.
func IsTriggerAbort(err error) bool {
	return code(err) == sqlite3.SQLITE_CONSTRAINT_TRIGGER
}
