package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Pool opens tenant files lazily and closes them when nobody has used them
// for a while, or when more than MaxOpen are open (the least recently used
// idle ones first), so an instance with thousands of tenants holds open only
// the ones in use.
//
// Every use is counted: Acquire adds a user, release removes it, and a file
// closes only with no user left. A file being closed is never handed out:
// an Acquire that arrives meanwhile waits for the close to finish and opens
// the file again, so a caller never sees a closed handle and a write is
// never cut off.
type Pool struct {
	dir  string
	idle time.Duration
	// Observe is given to every file the pool opens (see DB.Observe); set
	// it before the first Acquire.
	Observe func(d *DB, err error)
	// Fence is set on every file the pool opens (see DB.Fence); set it
	// before the first Acquire.
	Fence *Fence
	// OnCloseError, when set, hears a failed close of a file the pool
	// closed on its own (idle reaping, the cap, Evict); Close returns its
	// errors. Set it before the first Acquire.
	OnCloseError func(path string, err error)
	// Checkpoints is given to every file the pool opens (Options); set it
	// before the first Acquire.
	Checkpoints Checkpoints
	// Opened, when set, runs once a file has opened (and migrated), before
	// any caller gets it; an error closes the file again and fails the
	// Acquire. Closing runs when the pool is about to close a file nobody
	// uses, before it closes; no Acquire of that tenant proceeds until the
	// file is closed, so Closing must not Acquire it. Each opening of a
	// file is a new *DB: d identifies the opening. Set them before the
	// first Acquire.
	Opened  func(slug string, d *DB) error
	Closing func(slug string, d *DB)

	maxOpen atomic.Int64

	mu     sync.Mutex
	open   map[string]*pooled
	closed bool
	stop   chan struct{}
	done   chan struct{}
	close  sync.Once

	opens, closes atomic.Uint64
}

type pooled struct {
	slug     string
	db       *DB
	refs     int
	lastUsed time.Time
	opening  chan struct{} // closed once db (or err) is set
	err      error
	closing  chan struct{} // set when the close started; closed once closed
}

// TenantReaderIdle is how long an open tenant file keeps a reader
// connection nobody uses: long enough for a burst of reads to reuse them,
// short enough that the hundreds of tenants a server keeps open hold one
// connection each while idle.
const TenantReaderIdle = 30 * time.Second

// ErrNoTenantFile is returned by Acquire when the tenant file does not exist.
var ErrNoTenantFile = errors.New("tenant file missing")

// ErrPoolClosed is returned by Acquire after Close.
var ErrPoolClosed = errors.New("tenant pool closed")

// NewPool manages the files DIR/tenants/<slug>.db, closing a file idle for
// `idle`.
func NewPool(dataDir string, idle time.Duration) *Pool {
	p := &Pool{dir: filepath.Join(dataDir, "tenants"), idle: idle, open: map[string]*pooled{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go p.reap()
	return p
}

// SetMaxOpen caps the open files (0: no cap). Over the cap, the least
// recently used files nobody uses close; files in use stay open, so the
// cap can be exceeded while that many are busy.
func (p *Pool) SetMaxOpen(n int) {
	p.maxOpen.Store(int64(max(n, 0)))
	p.enforceCap()
}

// TenantPath is where a tenant's file lives.
func TenantPath(dataDir, slug string) string {
	return filepath.Join(dataDir, "tenants", slug+".db")
}

// Path is the file of slug in this pool.
func (p *Pool) Path(slug string) string { return filepath.Join(p.dir, slug+".db") }

// Acquire returns the open file of a tenant, opening it if needed; call
// release when done (release is idempotent). create=false refuses to
// create a missing file.
func (p *Pool) Acquire(slug string, create bool) (*DB, func(), error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, nil, ErrPoolClosed
		}
		e := p.open[slug]
		if e != nil && e.closing != nil {
			// Closing: wait until it is closed, then open it again.
			ch := e.closing
			p.mu.Unlock()
			<-ch
			continue
		}
		if e == nil {
			if !create {
				if _, err := os.Stat(p.Path(slug)); err != nil {
					p.mu.Unlock()
					return nil, nil, ErrNoTenantFile
				}
			}
			e = &pooled{slug: slug, opening: make(chan struct{}), refs: 1}
			p.open[slug] = e
			p.mu.Unlock()
			if err := p.openFile(e); err != nil {
				return nil, nil, err
			}
			p.enforceCap()
			return e.db, p.releaser(e), nil
		}
		e.refs++
		p.mu.Unlock()
		<-e.opening
		if e.err != nil {
			p.release(e)
			return nil, nil, e.err
		}
		return e.db, p.releaser(e), nil
	}
}

// AcquireOpen is Acquire for work that is worth doing only while the file
// is open anyway (refreshing a cache of it): it never opens a file, and
// reports false when the file is closed or closing (one being opened is
// waited for).
func (p *Pool) AcquireOpen(slug string) (*DB, func(), bool) {
	p.mu.Lock()
	e := p.open[slug]
	if e == nil || e.closing != nil {
		p.mu.Unlock()
		return nil, nil, false
	}
	e.refs++
	p.mu.Unlock()
	<-e.opening
	if e.err != nil {
		p.release(e)
		return nil, nil, false
	}
	return e.db, p.releaser(e), true
}

// openFile opens e's file (its first user holds a reference), runs
// Opened and tells the waiters. On failure e leaves the pool.
func (p *Pool) openFile(e *pooled) error {
	var d *DB
	err := os.MkdirAll(p.dir, 0o700)
	if err == nil {
		d, err = Open(p.Path(e.slug), "tenant", Options{Durable: true, ReaderIdle: TenantReaderIdle, Checkpoints: p.Checkpoints})
	}
	if err == nil {
		d.Observe, d.Fence = p.Observe, p.Fence
		if p.Opened != nil {
			if err = p.Opened(e.slug, d); err != nil {
				err = errors.Join(err, d.Close())
			}
		}
	}
	p.mu.Lock()
	if err != nil {
		e.err = err
		delete(p.open, e.slug)
	} else {
		e.db = d
		p.opens.Add(1)
	}
	p.mu.Unlock()
	close(e.opening)
	return err
}

func (p *Pool) releaser(e *pooled) func() {
	var once sync.Once
	return func() { once.Do(func() { p.release(e) }) }
}

func (p *Pool) release(e *pooled) {
	p.mu.Lock()
	e.refs--
	e.lastUsed = time.Now()
	p.mu.Unlock()
}

// startClose marks e closing when nobody uses it; p.mu is held. The
// caller runs finishClose after unlocking.
func (p *Pool) startClose(e *pooled) bool {
	if e.refs > 0 || e.closing != nil || e.db == nil {
		return false
	}
	e.closing = make(chan struct{})
	return true
}

// finishClose runs Closing, closes the file and lets the waiters reopen it.
func (p *Pool) finishClose(e *pooled) error {
	if p.Closing != nil {
		p.Closing(e.slug, e.db)
	}
	err := e.db.Close()
	p.mu.Lock()
	if p.open[e.slug] == e {
		delete(p.open, e.slug)
	}
	p.mu.Unlock()
	p.closes.Add(1)
	close(e.closing)
	return err
}

// closeQuietly is finishClose for a close nobody waits on: a failure goes
// to OnCloseError (every write was committed before its Write returned).
func (p *Pool) closeQuietly(e *pooled) {
	if err := p.finishClose(e); err != nil && p.OnCloseError != nil {
		p.OnCloseError(e.db.Path, err)
	}
}

// Evict closes a tenant's file as soon as nobody uses it (after a delete).
// It waits up to the context for in-flight users.
func (p *Pool) Evict(ctx context.Context, slug string) {
	for {
		p.mu.Lock()
		e := p.open[slug]
		if e == nil {
			p.mu.Unlock()
			return
		}
		if e.closing != nil {
			ch := e.closing
			p.mu.Unlock()
			<-ch
			return
		}
		if e.db != nil && p.startClose(e) {
			p.mu.Unlock()
			p.closeQuietly(e)
			return
		}
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// CloseIdle closes every file nobody uses now, whatever its idle time
// (tests; a server asked to shed memory). It returns how many it closed.
func (p *Pool) CloseIdle() int {
	p.mu.Lock()
	var victims []*pooled
	for _, e := range p.open {
		if p.startClose(e) {
			victims = append(victims, e)
		}
	}
	p.mu.Unlock()
	for _, e := range victims {
		p.closeQuietly(e)
	}
	return len(victims)
}

// PoolStats are the pool's figures for /metrics.
type PoolStats struct {
	Open    int    // files open now (or opening)
	MaxOpen int    // the cap (0: none)
	Opens   uint64 // files opened since start
	Closes  uint64 // files closed since start
}

// Stats reads the pool's figures.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	n := len(p.open)
	p.mu.Unlock()
	return PoolStats{Open: n, MaxOpen: int(p.maxOpen.Load()), Opens: p.opens.Load(), Closes: p.closes.Load()}
}

// OpenCount is how many tenant files are open now.
func (p *Pool) OpenCount() int { return p.Stats().Open }

// OpenSlugs lists the tenants whose files are open now.
func (p *Pool) OpenSlugs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.open))
	for slug, e := range p.open {
		if e.db != nil && e.closing == nil {
			out = append(out, slug)
		}
	}
	return out
}

// enforceCap closes the least recently used idle files while more than
// the cap are open. The closes run in the background: the caller that
// opened one file too many does not wait for another tenant's close.
func (p *Pool) enforceCap() {
	limit := int(p.maxOpen.Load())
	if limit <= 0 {
		return
	}
	p.mu.Lock()
	over := len(p.open) - limit
	if over <= 0 {
		p.mu.Unlock()
		return
	}
	var idle []*pooled
	for _, e := range p.open {
		if e.refs == 0 && e.db != nil && e.closing == nil {
			idle = append(idle, e)
		} else if e.closing != nil {
			over-- // already on its way out
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].lastUsed.Before(idle[j].lastUsed) })
	var victims []*pooled
	for _, e := range idle {
		if len(victims) >= over {
			break
		}
		if p.startClose(e) {
			victims = append(victims, e)
		}
	}
	p.mu.Unlock()
	for _, e := range victims {
		go p.closeQuietly(e)
	}
}

func (p *Pool) reap() {
	defer close(p.done)
	t := time.NewTicker(max(p.idle/4, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		var victims []*pooled
		p.mu.Lock()
		for _, e := range p.open {
			if e.refs == 0 && e.db != nil && time.Since(e.lastUsed) > p.idle && p.startClose(e) {
				victims = append(victims, e)
			}
		}
		p.mu.Unlock()
		for _, e := range victims {
			p.closeQuietly(e)
		}
		p.enforceCap()
	}
}

// Close closes every file and returns their close errors (the first call
// only). Users still holding a file lose it: call it after the work that
// uses the files has stopped.
func (p *Pool) Close() error {
	var errs []error
	p.close.Do(func() {
		close(p.stop)
		<-p.done
		p.mu.Lock()
		p.closed = true
		var all []*pooled
		for _, e := range p.open {
			all = append(all, e)
		}
		p.mu.Unlock()
		for _, e := range all {
			<-e.opening
			p.mu.Lock()
			mine := e.db != nil && e.closing == nil
			if mine {
				e.closing = make(chan struct{})
			}
			ch := e.closing
			p.mu.Unlock()
			if !mine {
				if ch != nil {
					<-ch
				}
				continue
			}
			if err := p.finishClose(e); err != nil {
				errs = append(errs, fmt.Errorf("close %s: %w", e.db.Path, err))
			}
		}
	})
	return errors.Join(errs...)
}
