package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Checkpoints says who moves committed pages from a file's WAL back into
// the file. It is decided once, when the file is opened (Options): SQLite's
// own automatic checkpoint runs on the commit that crosses its threshold,
// inside the writer's Write, so no file here uses it.
type Checkpoints int

const (
	// CheckpointBackground: the file's own checkpointer, a goroutine woken
	// after commits, checkpoints on a connection of its own while the
	// writer goes on (PASSIVE), and bounds the WAL (see WALLimits).
	CheckpointBackground Checkpoints = iota
	// CheckpointExternal: another component owns the file's checkpoints
	// (Litestream, for a replicated file, checkpoints when its copy of the
	// WAL is safe); the file never checkpoints itself and its WAL grows
	// until the owner does.
	CheckpointExternal
	// CheckpointFollowed: the file is a standby's copy of a primary's,
	// written by another process (Litestream's follow mode writes pages
	// into it under SQLite's file locks, in rollback-journal mode). It is
	// opened read-only (followed.go): no WAL, no migrations, no writes.
	CheckpointFollowed
)

// WALLimits bound the WAL of a file with CheckpointBackground.
type WALLimits struct {
	// Soft: a WAL this large is checkpointed without stopping the writer
	// (default 16 MiB: a checkpoint copies each page once however often
	// the WAL holds it, and RADIUS accounting rewrites the same subscriber
	// pages all the time).
	Soft int64
	// Hard: a WAL still this large after that (writers keep appending, so
	// the WAL never restarts from its beginning) is checkpointed to its end
	// with writers held back for at most HardWait, then restarts (default
	// 4 × Soft).
	Hard int64
	// HardWait bounds how long the hard checkpoint waits for the writer
	// and for readers of older snapshots (default 200 ms; it gives up and
	// tries again after the next commits).
	HardWait time.Duration
}

func (l *WALLimits) defaults() {
	if l.Soft <= 0 {
		l.Soft = 16 << 20
	}
	if l.Hard < l.Soft {
		l.Hard = 4 * l.Soft
	}
	if l.HardWait <= 0 {
		l.HardWait = 200 * time.Millisecond
	}
}

// checkpointer runs the checkpoints of one file off the commit path.
type checkpointer struct {
	path   string // the database file; its WAL is path+"-wal"
	lim    WALLimits
	c      *sql.DB // one connection, neither the writer nor a reader
	writer *sql.DB // the file's writer, for the hard checkpoint
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	passes atomic.Uint64 // checkpoints run (tests, metrics)
	hard   atomic.Uint64 // of which writer-holding ones
	failed atomic.Uint64
	lastEr atomic.Value // error: the last failure
}

// startCheckpointer starts the checkpointer of the file at path; its
// connection closes when unused for idle (most passes find the WAL below
// Soft and need none) and Close stops it with the file.
func startCheckpointer(path string, writer *sql.DB, lim WALLimits, idle time.Duration) (*checkpointer, error) {
	lim.defaults()
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.Itoa(busyTimeoutMS)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	c, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	c.SetMaxOpenConns(1)
	c.SetMaxIdleConns(1)
	c.SetConnMaxLifetime(0)
	c.SetConnMaxIdleTime(idle)
	cp := &checkpointer{path: path, lim: lim, c: c, writer: writer, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go cp.run()
	return cp, nil
}

// committed tells the checkpointer that the WAL grew; it never blocks.
func (cp *checkpointer) committed() {
	select {
	case cp.wake <- struct{}{}:
	default:
	}
}

func (cp *checkpointer) run() {
	defer close(cp.done)
	for {
		select {
		case <-cp.stop:
			return
		case <-cp.wake:
		}
		if err := cp.pass(); err != nil {
			cp.failed.Add(1)
			cp.lastEr.Store(err)
		}
	}
}

// pass checkpoints when the WAL is past the soft limit: PASSIVE, on the
// checkpointer's connection, while the writer goes on (readers of older
// snapshots keep their frames). A writer that never pauses never lets the
// WAL restart from its beginning that way, so past the hard limit the pass
// queues for the writer connection like any Write and runs RESTART there:
// the frames left are copied, readers of the WAL are waited for (at most
// HardWait), and the next write starts the WAL afresh.
func (cp *checkpointer) pass() error {
	live := walLive(cp.path)
	if live < cp.lim.Soft {
		return nil
	}
	ctx := context.Background()
	cp.passes.Add(1)
	if live < cp.lim.Hard {
		return checkpoint(ctx, cp.c, "PASSIVE")
	}
	cp.hard.Add(1)
	conn, err := cp.writer.Conn(ctx)
	if err != nil {
		return err
	}
	// Close hands the writer connection back to its pool; it fails only
	// for a connection already handed back.
	defer func() { _ = conn.Close() }()
	wait := strconv.FormatInt(cp.lim.HardWait.Milliseconds(), 10)
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+wait); err != nil {
		return err
	}
	err = checkpoint(ctx, conn, "RESTART")
	if _, rerr := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.Itoa(busyTimeoutMS)); rerr != nil {
		// The writer must not keep the short timeout: drop the connection.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		return errors.Join(err, rerr)
	}
	return err
}

// checkpoint runs one checkpoint; SQLITE_BUSY (readers or the writer did
// not let go in time) is not a failure: the next pass retries.
func checkpoint(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, mode string) error {
	var busy, logFrames, done int
	err := q.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logFrames, &done)
	if err != nil && IsBusy(err) {
		return nil
	}
	return err
}

func (cp *checkpointer) close() error {
	cp.once.Do(func() { close(cp.stop) })
	<-cp.done
	return cp.c.Close()
}

// walLive is how much of a file's WAL is in use: its frames since the
// last restart, from the wal-index header in the -shm file (a documented
// format, https://sqlite.org/walformat.html: native byte order, the page
// size at offset 14, mxFrame at 16). The WAL file itself keeps its
// high-water size after a restart, so its length says nothing. A torn read
// only moves a checkpoint by one wake-up.
func walLive(path string) int64 {
	f, err := os.Open(path + "-shm")
	if err != nil {
		return walSize(path)
	}
	defer f.Close()
	var h [20]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return walSize(path)
	}
	page := int64(binary.NativeEndian.Uint16(h[14:]))
	if page == 1 {
		page = 65536
	}
	return 32 + int64(binary.NativeEndian.Uint32(h[16:]))*(page+24)
}

func walSize(path string) int64 {
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}

// CheckpointStats reports the background checkpoints of d so far: passes
// run, hard (writer-holding) ones among them, and failures with the last
// error. All zero for a file whose checkpoints are external.
func (d *DB) CheckpointStats() (passes, hard, failed uint64, last error) {
	if d.ckpt == nil {
		return 0, 0, 0, nil
	}
	last, _ = d.ckpt.lastEr.Load().(error)
	return d.ckpt.passes.Load(), d.ckpt.hard.Load(), d.ckpt.failed.Load(), last
}
