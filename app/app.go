// Package app is xr's domain: tenants, managers, roles, subscribers, cards,
// sessions, webhooks, jobs, rate limits and ledgers. It knows nothing of HTTP
// or UDP; every operation takes a tenant handle and an actor, checks
// authority and scope, and runs one transaction.
package app

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"xr/db"
)

// Version is the release string reported by /auth/me and xr version.
var Version = "0.1.0-dev"

// Config is how an instance is run.
type Config struct {
	DataDir            string
	Domain             string // instance apex, e.g. "localhost" or "isp.example"
	DefaultTenant      string // tenant for hosts that name none (a box reached by IP)
	AllowPrivateEgress bool
	AllowSignup        bool
	// BackupDirs are the folders of the host where tenants' local backup
	// destinations may be (each tenant in <dir>/<slug>): the instance
	// operator's choice (xr serve --backup-dirs), never a tenant's. None:
	// no local destination works.
	BackupDirs []string
	// SecureCookies marks the console's session cookie Secure: set when
	// browsers reach xr over HTTPS, its own (xr serve --tls-acme,
	// --tls-cert) or a TLS proxy's (--secure-cookies).
	SecureCookies bool
	// IdleClose closes a tenant's files nobody has used this long
	// (default 10 minutes); MaxOpenTenants caps the tenants open at once,
	// closing the least recently used idle ones first (default 256; a
	// negative value: no cap). See lifecycle.go.
	IdleClose      time.Duration
	MaxOpenTenants int
	// Checkpoints says who checkpoints instance.db and the tenant files:
	// db.CheckpointExternal when they are replicated (xr serve
	// --replicate-to: Litestream owns their checkpoints).
	Checkpoints db.Checkpoints
	// Standby, when set, makes this a standby (xr serve --standby-of):
	// its files are copies another process follows (Checkpoints is
	// db.CheckpointFollowed), every write is refused, and Standby tells
	// how far behind the primary the copies are.
	Standby func() Replication
	// SMTP relay for outgoing mail (sign-up codes); empty logs mail instead.
	SMTPAddr, SMTPFrom, SMTPUser, SMTPPassword string
	// SMTPTLS is opportunistic (default), starttls, tls or none; SMTPAuth
	// is plain, login, cram-md5 or "" (what the relay offers). See
	// app/outbox.
	SMTPTLS, SMTPAuth string
	Logger            *slog.Logger
	// MasterKey (32 bytes, kept outside the data directory) wraps the
	// instance keys; nil when they are stored plain. See keys.go.
	MasterKey []byte
}

// App is one running instance.
type App struct {
	Cfg     Config
	Inst    *db.DB
	Pool    *db.Pool
	Keys    *Keys
	Limiter Limiter
	Log     *slog.Logger
	Jobs    *Runner

	grants  permCache     // resolved permissions, see resolveGrant
	storage storageHealth // files out of space, see storage.go
	fence   db.Fence      // raised when another box holds the replica (standby.go)
	fencing atomic.Pointer[Fencing]

	mu       sync.RWMutex
	gen      int64
	bySlug   map[string]*TenantInfo
	byID     map[int64]*TenantInfo
	onReload []func()
	onCommit []func(slug string)

	// The tenants' open files (lifecycle.go) and the scheduler of their
	// periodic work (scheduler.go).
	attachers  []namedAttacher
	opened     sync.Map // *db.DB → *openTenant
	sched      *scheduler
	gaugesKept sync.Map // slug → the gauges tenant_stats holds (metrics.go)

	// What the installed modules contribute (module.go).
	jobs        map[string]JobHandler
	managerRefs []string
	services    []func(context.Context, *App)
	onEvents    []func(t *Tenant)
	modules     []string
	reg         atomic.Pointer[Registry] // registry.go
	values      sync.Map
	clock       clock // see clock.go
}

// Open opens (creating if needed) the data directory.
func Open(cfg Config) (*App, error) {
	if cfg.DataDir == "" {
		cfg.DataDir = "xr-data"
	}
	if cfg.IdleClose == 0 {
		cfg.IdleClose = 10 * time.Minute
	}
	if cfg.MaxOpenTenants == 0 {
		cfg.MaxOpenTenants = DefaultMaxOpenTenants
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "tenants"), 0o700); err != nil {
		return nil, err
	}
	inst, err := db.Open(filepath.Join(cfg.DataDir, "instance.db"), "instance", db.Options{Durable: true, Readers: 4, Checkpoints: cfg.Checkpoints})
	if err != nil {
		return nil, err
	}
	a := &App{Cfg: cfg, Inst: inst, Log: cfg.Logger, Limiter: NewMemLimiter()}
	if a.Keys, err = loadKeys(inst, cfg.MasterKey); err != nil {
		return nil, errors.Join(err, inst.Close())
	}
	inst.Observe, inst.Fence = a.observeWrite, &a.fence
	a.Pool = db.NewPool(cfg.DataDir, cfg.IdleClose)
	a.Pool.Fence = &a.fence
	a.Pool.SetMaxOpen(cfg.MaxOpenTenants)
	a.Pool.Checkpoints = cfg.Checkpoints
	a.Pool.Observe = a.observeWrite
	a.Pool.OnCloseError = func(path string, err error) {
		a.Log.Error("close tenant file", "file", path, "err", err)
	}
	a.sched = newScheduler(a)
	a.wirePool()
	a.Jobs = newRunner(a)
	a.Use(kernelModule)
	if err := a.reload(context.Background()); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// DefaultMaxOpenTenants is the cap on tenants open at once when
// Config.MaxOpenTenants is zero.
const DefaultMaxOpenTenants = 256

// Close closes every file. A failure is logged: every write was committed
// before its call returned, so there is nothing left for a caller to do.
func (a *App) Close() {
	if err := errors.Join(a.Pool.Close(), a.Inst.Close()); err != nil {
		a.Log.Error("close data files", "err", err)
	}
}

// OnReload registers fn to run after the registry was re-read (the RADIUS
// NAS directory uses it).
func (a *App) OnReload(fn func()) {
	a.mu.Lock()
	a.onReload = append(a.onReload, fn)
	a.mu.Unlock()
}

// OnCommit registers fn to run after every committed write transaction of
// a tenant in this process, before Write returns. The RADIUS index uses it
// so the next packet sees what an API call has just answered 2xx for. fn
// must be quick and must not write to the same tenant.
func (a *App) OnCommit(fn func(slug string)) {
	a.mu.Lock()
	a.onCommit = append(a.onCommit, fn)
	a.mu.Unlock()
}

// Generation reads the registry's change counter.
func (a *App) Generation(ctx context.Context) (int64, error) {
	var g int64
	err := a.Inst.R.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key='generation'`).Scan(&g)
	return g, err
}

// WatchRegistry re-reads the registry whenever another process (xr tenant,
// xr nas) changed it; it returns when ctx ends.
func (a *App) WatchRegistry(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		g, err := a.Generation(ctx)
		a.mu.RLock()
		same := g == a.gen
		a.mu.RUnlock()
		if err != nil || same {
			continue
		}
		if err := a.reload(ctx); err != nil {
			a.Log.Error("registry reload", "err", err)
		}
	}
}

// Reload re-reads the registry now (after an in-process change).
func (a *App) Reload(ctx context.Context) error { return a.reload(ctx) }

func (a *App) reload(ctx context.Context) error {
	g, err := a.Generation(ctx)
	if err != nil {
		return err
	}
	list, err := a.listTenants(ctx)
	if err != nil {
		return err
	}
	bySlug := make(map[string]*TenantInfo, len(list))
	byID := make(map[int64]*TenantInfo, len(list))
	for _, t := range list {
		bySlug[t.Slug] = t
		byID[t.ID] = t
	}
	a.refreshKeys(ctx) // xr keys rotate bumps the generation
	a.mu.Lock()
	old := a.bySlug
	a.gen, a.bySlug, a.byID = g, bySlug, byID
	hooks := append([]func(){}, a.onReload...)
	a.mu.Unlock()
	// A tenant deleted elsewhere: close its file once nobody uses it.
	for slug := range old {
		if bySlug[slug] == nil {
			a.DropGrants(slug)
			go a.Pool.Evict(context.Background(), slug)
		}
	}
	for _, h := range hooks {
		h()
	}
	return nil
}

// TenantBySlug looks a tenant up in the cached registry.
func (a *App) TenantBySlug(slug string) (*TenantInfo, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	t, ok := a.bySlug[slug]
	return t, ok
}

// TenantByID looks a tenant up by id in the cached registry.
func (a *App) TenantByID(id int64) (*TenantInfo, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	t, ok := a.byID[id]
	return t, ok
}

// TenantSlugs lists the known tenants.
func (a *App) TenantSlugs() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]string, 0, len(a.bySlug))
	for s := range a.bySlug {
		out = append(out, s)
	}
	return out
}

// Tenant is an open tenant for the length of one operation.
type Tenant struct {
	*TenantInfo
	DB  *db.DB
	App *App

	open *openTenant // this opening of the files (lifecycle.go)
}

// Acquire opens a tenant's file for one operation; call release after.
// The files stay open while anyone holds them (lifecycle.go).
func (a *App) Acquire(slug string) (*Tenant, func(), error) {
	info, ok := a.TenantBySlug(slug)
	if !ok {
		return nil, nil, ErrNotFound()
	}
	d, release, err := a.Pool.Acquire(slug, false)
	if err != nil {
		return nil, nil, err
	}
	return &Tenant{TenantInfo: info, DB: d, App: a, open: a.openOf(d)}, release, nil
}

// AcquireOpen is Acquire for work worth doing only while the tenant is
// open anyway (refreshing a cache): it never opens the files and reports
// false when they are closed.
func (a *App) AcquireOpen(slug string) (*Tenant, func(), bool) {
	info, ok := a.TenantBySlug(slug)
	if !ok {
		return nil, nil, false
	}
	d, release, ok := a.Pool.AcquireOpen(slug)
	if !ok {
		return nil, nil, false
	}
	return &Tenant{TenantInfo: info, DB: d, App: a, open: a.openOf(d)}, release, true
}

// Write runs fn in one write transaction of the tenant. Once it has
// committed, the commit hooks run (see OnCommit), then what fn declared
// for after the commit (commit.go: its events, its jobs, AfterCommit).
func (t *Tenant) Write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return t.write(ctx, fn, true)
}

// WriteNoHooks is Write without the App's commit hooks (OnCommit), for
// writers that change no authorization fact and hold a lock a hook may
// need (RADIUS accounting). What fn itself declared for after the commit
// (its events, its jobs, AfterCommit) still runs.
func (t *Tenant) WriteNoHooks(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return t.write(ctx, fn, false)
}

// Read runs fn in one read snapshot of the tenant.
func (t *Tenant) Read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return t.DB.Read(ctx, fn)
}
