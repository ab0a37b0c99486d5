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
	"strconv"
	"sync"
	"sync/atomic"
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
	wal  *walSync      // nil unless Durable
	ckpt *checkpointer // nil when checkpoints are external

	// Observe, when set, hears the outcome of every Write: nil after a
	// commit, the error otherwise (the app's storage-health flag). Set it
	// before the file is shared.
	Observe func(d *DB, err error)
	// Fence, when set and raised, refuses every Write (fence.go). Set it
	// before the file is shared.
	Fence *Fence

	// A restore's pause and the content's generation (pause.go).
	gate   sync.RWMutex
	paused atomic.Pointer[Pause]
	gen    atomic.Uint64

	followed bool // a standby's copy (CheckpointFollowed): every Write is refused
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
	// Checkpoints says who checkpoints the file (checkpoint.go); the
	// default is the file's own background checkpointer, bounded by WAL.
	Checkpoints Checkpoints
	WAL         WALLimits
	// ReaderIdle closes a reader connection (and the checkpointer's)
	// unused this long (default 5 minutes). Each connection holds the
	// parsed schema (most of a megabyte for a tenant file): a tenant file
	// kept open but idle keeps only its writer once its readers idled out.
	ReaderIdle time.Duration
}

// busyTimeoutMS is how long a connection waits for a lock.
const busyTimeoutMS = 10000

func dsn(path string, readOnly bool, opt Options) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(busyTimeoutMS)+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	// NORMAL in WAL mode syncs the WAL before each checkpoint and the
	// database after it; commits are made durable by walSync (Durable).
	q.Add("_pragma", "synchronous(NORMAL)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		// No automatic checkpoint on the commit that crosses 1000 pages:
		// the checkpointer (or the external owner) does it, off the
		// commit path. A WAL restarted after one shrinks back to Soft.
		q.Add("_pragma", "wal_autocheckpoint(0)")
		// A statement that writes several rows inside a transaction keeps
		// the pages it changes in a statement journal; past 64 KiB SQLite
		// spills it to a temporary file, a write per page (the auth log's
		// multi-row inserts spent a fifth of their time there). Writers
		// keep it in memory: it holds at most the pages one statement
		// touches.
		q.Add("_pragma", "temp_store(MEMORY)")
		if opt.Checkpoints == CheckpointBackground {
			q.Add("_pragma", "journal_size_limit("+strconv.FormatInt(opt.WAL.Soft, 10)+")")
		}
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the file at path and applies the embedded
// migrations of the given set ("instance" or "tenant").
func Open(path, set string, opt Options) (*DB, error) {
	if opt.Checkpoints == CheckpointFollowed {
		return openFollowed(path, set, opt)
	}
	opt.WAL.defaults()
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
	idle := opt.ReaderIdle
	if idle <= 0 {
		idle = 5 * time.Minute
	}
	if opt.Checkpoints == CheckpointBackground {
		if d.ckpt, err = startCheckpointer(path, w, opt.WAL, idle); err != nil {
			return nil, errors.Join(err, r.Close(), w.Close())
		}
	}
	n := opt.Readers
	if n <= 0 {
		n = max(4, runtime.NumCPU()*2)
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxIdleTime(idle)
	d.R = r
	return d, nil
}

// Close closes both pools and the checkpointer.
func (d *DB) Close() error {
	var cerr error
	if d.ckpt != nil {
		cerr = d.ckpt.close()
	}
	err := errors.Join(cerr, d.R.Close(), d.W.Close())
	if d.wal != nil {
		d.wal.close()
	}
	return err
}

// Write runs fn in one IMMEDIATE transaction on the writer. The context is
// detached from the caller's cancellation: a client hanging up must not
// abort a commit half way or poison the single writer connection.
func (d *DB) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	release, err := d.admit(ctx)
	if err != nil {
		return err
	}
	defer release()
	err = d.write(ctx, fn)
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
	if d.ckpt != nil {
		d.ckpt.committed()
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
