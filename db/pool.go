package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Pool opens tenant files lazily and closes them after they sit idle, so an
// instance with hundreds of tenants holds open only the ones in use.
type Pool struct {
	dir  string
	idle time.Duration
	// Observe is given to every file the pool opens (see DB.Observe); set
	// it before the first Acquire.
	Observe func(d *DB, err error)
	// OnCloseError, when set, hears a failed close of a file the pool
	// closed on its own (idle reaping, Evict); Close returns its errors.
	// Set it before the first Acquire.
	OnCloseError func(path string, err error)

	mu    sync.Mutex
	open  map[string]*pooled
	stop  chan struct{}
	done  chan struct{}
	close sync.Once
}

type pooled struct {
	db       *DB
	refs     int
	lastUsed time.Time
	opening  chan struct{} // closed once db (or err) is set
	err      error
}

// ErrNoTenantFile is returned by Acquire when the tenant file does not exist.
var ErrNoTenantFile = errors.New("tenant file missing")

// NewPool manages the files DIR/tenants/<slug>.db.
func NewPool(dataDir string, idle time.Duration) *Pool {
	p := &Pool{dir: filepath.Join(dataDir, "tenants"), idle: idle, open: map[string]*pooled{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go p.reap()
	return p
}

// TenantPath is where a tenant's file lives.
func TenantPath(dataDir, slug string) string {
	return filepath.Join(dataDir, "tenants", slug+".db")
}

// Path is the file of slug in this pool.
func (p *Pool) Path(slug string) string { return filepath.Join(p.dir, slug+".db") }

// Acquire returns the open file of a tenant; call release when done.
// create=false refuses to create a missing file.
func (p *Pool) Acquire(slug string, create bool) (*DB, func(), error) {
	p.mu.Lock()
	e := p.open[slug]
	if e == nil {
		if !create {
			if _, err := os.Stat(p.Path(slug)); err != nil {
				p.mu.Unlock()
				return nil, nil, ErrNoTenantFile
			}
		}
		e = &pooled{opening: make(chan struct{})}
		p.open[slug] = e
		e.refs++
		p.mu.Unlock()
		if e.err = os.MkdirAll(p.dir, 0o700); e.err == nil {
			e.db, e.err = Open(p.Path(slug), "tenant", Options{Durable: true})
		}
		if e.err == nil {
			e.db.Observe = p.Observe
		}
		close(e.opening)
		if e.err != nil {
			p.mu.Lock()
			delete(p.open, slug)
			p.mu.Unlock()
			return nil, nil, e.err
		}
	} else {
		e.refs++
		p.mu.Unlock()
		<-e.opening
		if e.err != nil {
			p.release(slug, e)
			return nil, nil, e.err
		}
	}
	var once sync.Once
	return e.db, func() { once.Do(func() { p.release(slug, e) }) }, nil
}

func (p *Pool) release(slug string, e *pooled) {
	p.mu.Lock()
	e.refs--
	e.lastUsed = time.Now()
	p.mu.Unlock()
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
		if e.refs == 0 {
			delete(p.open, slug)
			p.mu.Unlock()
			if e.db != nil {
				p.closeQuietly(e.db)
			}
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

// OpenCount is how many tenant files are open now.
func (p *Pool) OpenCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.open)
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
		var victims []*DB
		p.mu.Lock()
		for slug, e := range p.open {
			if e.refs == 0 && e.db != nil && time.Since(e.lastUsed) > p.idle {
				victims = append(victims, e.db)
				delete(p.open, slug)
			}
		}
		p.mu.Unlock()
		for _, d := range victims {
			p.closeQuietly(d)
		}
	}
}

// closeQuietly closes a file nobody waits on and reports a failure to
// OnCloseError: every write was committed before its Write returned.
func (p *Pool) closeQuietly(d *DB) {
	if err := d.Close(); err != nil && p.OnCloseError != nil {
		p.OnCloseError(d.Path, err)
	}
}

// Close closes every file and returns their close errors (the first call
// only).
func (p *Pool) Close() error {
	var errs []error
	p.close.Do(func() {
		close(p.stop)
		<-p.done
		p.mu.Lock()
		defer p.mu.Unlock()
		for slug, e := range p.open {
			if e.db != nil {
				if err := e.db.Close(); err != nil {
					errs = append(errs, fmt.Errorf("close %s: %w", e.db.Path, err))
				}
			}
			delete(p.open, slug)
		}
	})
	return errors.Join(errs...)
}
