package app

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"xr/db"
)

// A tenant's files open on first use and close when nobody has used them
// for Config.IdleClose, or when more than Config.MaxOpenTenants are open
// (db.Pool: every use is counted, a file closes only with no user left,
// and a use arriving during a close waits and opens it again). What lives
// with an opening of the files lives here: the caches an area keeps for
// an open tenant (Tenant.Cache), and what is attached to every opening
// (AttachToTenants). Both leave with the files, so memory follows the
// tenants in use, not the tenants that exist.

// openTenant is one opening of a tenant's files.
type openTenant struct {
	slug   string
	opened time.Time
	cache  sync.Map // key → value, see Tenant.Cache

	mu       sync.Mutex
	attached []TenantAttacher // in attach order
	// onOpen is closed once the on-open tasks have run (scheduler.go);
	// nil until the scheduler took the tenant on.
	onOpen chan struct{}
}

// TenantAttacher is something that lives with a tenant's open files: the
// replication of the file to a replica (the next issue: Litestream starts
// on open, and stops after a final sync on close), a watcher, a cache
// warmer. Attach runs once the files have opened and migrated, before
// anyone uses them; an error fails the opening (the caller that needed
// the tenant gets it, the files close again, the next use retries), so an
// attacher that can run degraded returns nil and logs. Detach runs when
// the files are about to close: nobody uses them and nobody can until
// Detach has returned, so it may finish what it does with the file (a
// final sync) but must not Acquire the tenant. Both run in the goroutine
// that opens or closes, and delay it: keep them short.
type TenantAttacher interface {
	Attach(ctx context.Context, t *Tenant) error
	Detach(ctx context.Context, t *Tenant)
}

type namedAttacher struct {
	name string
	TenantAttacher
}

// AttachToTenants registers h for every opening of a tenant's files from
// now on (register before serving: tenants already open are not
// attached). Attachers run in registration order and detach in reverse.
// A name registered twice panics, like a module's duplicate.
func (a *App) AttachToTenants(name string, h TenantAttacher) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, x := range a.attachers {
		if x.name == name {
			panic("tenant attacher " + name + " registered twice")
		}
	}
	a.attachers = append(a.attachers, namedAttacher{name, h})
}

// Cache is the value an area keeps for this opening of the tenant's files
// under key (a type of the area's own), made by mk on first use; it
// leaves when the files close (a value with a Close method, or an
// io.Closer, is closed then). A Tenant not from Acquire has no opening:
// Cache then makes a fresh value each call.
func (t *Tenant) Cache(key any, mk func() any) any {
	if t.open == nil {
		return mk()
	}
	if v, ok := t.open.cache.Load(key); ok {
		return v
	}
	v, _ := t.open.cache.LoadOrStore(key, mk())
	return v
}

// OpenedAt is when this opening of the tenant's files started (zero for a
// Tenant not from Acquire).
func (t *Tenant) OpenedAt() time.Time {
	if t.open == nil {
		return time.Time{}
	}
	return t.open.opened
}

// wirePool installs the lifecycle on the App's tenant pool.
func (a *App) wirePool() {
	a.Pool.Opened = a.tenantOpened
	a.Pool.Closing = a.tenantClosing
}

// handleOf is the Tenant for an opening the pool reports (its registry
// row may be gone: a deleted tenant's files close after the delete).
func (a *App) handleOf(slug string, d *db.DB, ot *openTenant) *Tenant {
	info, ok := a.TenantBySlug(slug)
	if !ok {
		info = &TenantInfo{Slug: slug}
	}
	return &Tenant{TenantInfo: info, DB: d, App: a, open: ot}
}

// tenantOpened runs when the pool opened a tenant's files: the attachers,
// then the scheduler's on-open work.
func (a *App) tenantOpened(slug string, d *db.DB) error {
	ot := &openTenant{slug: slug, opened: a.Now()}
	t := a.handleOf(slug, d, ot)
	a.mu.RLock()
	attachers := append([]namedAttacher{}, a.attachers...)
	a.mu.RUnlock()
	ctx := context.Background()
	for _, h := range attachers {
		if err := h.Attach(ctx, t); err != nil {
			a.detachAll(ctx, t)
			return errors.Join(errors.New("attach "+h.name+" to tenant "+slug), err)
		}
		ot.mu.Lock()
		ot.attached = append(ot.attached, h.TenantAttacher)
		ot.mu.Unlock()
	}
	a.opened.Store(d, ot)
	a.sched.opened(t)
	return nil
}

// tenantClosing runs when the pool is about to close a tenant's files:
// the scheduler keeps the tenant's due times, the caches leave, then the
// attachers detach (last, so a final sync sees every write).
func (a *App) tenantClosing(slug string, d *db.DB) {
	v, _ := a.opened.LoadAndDelete(d)
	ot, _ := v.(*openTenant)
	if ot == nil {
		return
	}
	t := a.handleOf(slug, d, ot)
	a.sched.closing(t)
	a.storeGauges(context.Background(), t)
	ot.cache.Range(func(k, v any) bool {
		closeCached(v)
		ot.cache.Delete(k)
		return true
	})
	a.DropGrants(slug)
	a.detachAll(context.Background(), t)
}

func (a *App) detachAll(ctx context.Context, t *Tenant) {
	t.open.mu.Lock()
	list := t.open.attached
	t.open.attached = nil
	t.open.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		list[i].Detach(ctx, t)
	}
}

// closeCached closes a cached value that holds resources.
func closeCached(v any) {
	switch c := v.(type) {
	case interface{ Close() }:
		c.Close()
	case io.Closer:
		_ = c.Close() // a cache of a closing file: nobody to report to
	}
}

// openOf is the opening of d (nil when d is not open through the pool).
func (a *App) openOf(d *db.DB) *openTenant {
	v, _ := a.opened.Load(d)
	ot, _ := v.(*openTenant)
	return ot
}

// TenantStats are the tenant pool's figures for /metrics and /readyz.
type TenantStats struct {
	Known int // tenants in the registry
	db.PoolStats
}

// TenantStats reads how many tenants exist, are open, were opened and
// closed.
func (a *App) TenantStats() TenantStats {
	a.mu.RLock()
	n := len(a.bySlug)
	a.mu.RUnlock()
	return TenantStats{Known: n, PoolStats: a.Pool.Stats()}
}
