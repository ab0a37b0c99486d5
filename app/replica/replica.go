// Package replica streams an instance's SQLite files (instance.db and every
// tenant file) to a replica location with Litestream, used as a library
// (github.com/benbjohnson/litestream: pure Go on modernc.org/sqlite, so the
// binary stays CGO_ENABLED=0).
//
// instance.db replicates for as long as the Replicator runs. A tenant file
// replicates while it is open: the Replicator is an app.TenantAttacher, so
// an opening of the tenant's files registers it with Litestream (and
// brings the replica up to date with what changed while it was closed) and
// a close unregisters it after a final sync, so the tenant's last writes
// are in the replica before its files close. A tenant file the replica
// lacks (never opened since replication began) is opened once in the
// background to ship it (seed).
//
// Litestream owns the checkpoints of a replicated file: the App must open
// its files with db.CheckpointExternal (app.Config.Checkpoints).
package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"xr/app"
	"xr/db"
)

// Options tune a Replicator; the zero value is what xr serve uses.
type Options struct {
	// SyncEvery is how often a file's new WAL frames are shipped to the
	// replica (default 1 s: the replication lag of a quiet link). A close
	// or Close always ships what is left.
	SyncEvery time.Duration
	// CloseSyncTimeout bounds the retries of the final sync when a tenant
	// closes or the Replicator stops (default 10 s). What it could not
	// ship stays in Litestream's local files beside the database and goes
	// at the file's next opening.
	CloseSyncTimeout time.Duration
	// StampEvery is how often the replica's stamp is read to find out
	// whether another box took it over (default: SyncEvery).
	StampEvery time.Duration
}

func (o *Options) defaults() {
	if o.SyncEvery <= 0 {
		o.SyncEvery = time.Second
	}
	if o.CloseSyncTimeout <= 0 {
		o.CloseSyncTimeout = 10 * time.Second
	}
	if o.StampEvery <= 0 {
		o.StampEvery = o.SyncEvery
	}
}

// Replicator streams an App's files to a Target.
type Replicator struct {
	target   Target
	dataDir  string
	opt      Options
	log      *slog.Logger
	store    *litestream.Store
	holder   string // HolderID
	stop     chan struct{}
	stopOnce sync.Once
	watched  chan struct{} // closed when watch returned
	lastBeat ltx.TXID      // the heartbeat written last (heartbeat.go; watch's goroutine only)

	mu     sync.Mutex
	closed bool
	failed int // tenant openings whose replication could not start
}

// Start replicates a's instance.db now, and every tenant file from its next
// opening: call it before serving (tenants already open are not attached).
// The data directory holds the replica's generation (a new replica is
// stamped generation 1), or the App is fenced (App.Fence) and the start
// fails with ErrFenced: the box may serve on, refusing every write. While
// it runs, a stamp naming another holder stops the replication and fences
// the App.
func Start(ctx context.Context, a *app.App, target Target, opt Options) (*Replicator, error) {
	if a.Cfg.Checkpoints != db.CheckpointExternal {
		return nil, errors.New("replica: the data files must be opened with db.CheckpointExternal (Litestream owns their checkpoints)")
	}
	opt.defaults()
	holder, err := HolderID(a.Cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	st, err := hold(ctx, target, holder)
	if errors.Is(err, ErrFenced) {
		a.Fence(app.Fencing{Holder: st.Holder, Generation: st.Gen, Since: time.Now().UTC()})
	}
	if err != nil {
		return nil, fmt.Errorf("replica %s: %w", target.URL, err)
	}
	target = target.InGeneration(st.Gen)
	r := &Replicator{target: target, dataDir: a.Cfg.DataDir, opt: opt, log: a.Log.With("replica", target.URL, "generation", st.Gen),
		holder: holder, stop: make(chan struct{}), watched: make(chan struct{})}
	r.store = litestream.NewStore(nil, litestream.DefaultCompactionLevels)
	r.store.Logger = r.log
	r.store.ShutdownSyncTimeout = opt.CloseSyncTimeout
	if err := r.store.Open(ctx); err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	if err := r.register(ctx, a.Inst.Path); err != nil {
		return nil, errors.Join(fmt.Errorf("replica: instance.db: %w", err), r.store.Close(ctx))
	}
	a.AttachToTenants("replica", r)
	if err := r.heartbeat(ctx); err != nil {
		r.log.Warn("replica: heartbeat", "err", err)
	}
	go r.seed(context.WithoutCancel(ctx), a)
	go r.watch(a)
	return r, nil
}

// watch reads the replica's stamp every StampEvery until Close: once it
// names another holder, the replication stops (nothing more is shipped:
// this generation is over) and the App is fenced; while it names this box,
// a heartbeat follows (heartbeat.go). A stamp that cannot be read is
// logged and read again.
func (r *Replicator) watch(a *app.App) {
	defer close(r.watched)
	t := time.NewTicker(r.opt.StampEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.opt.StampEvery+10*time.Second)
		st, ok, err := ReadStamp(ctx, r.target)
		switch {
		case err != nil:
			r.log.Warn("replica: cannot read the generation stamp", "err", err)
		case ok && (st.Holder != r.holder || st.Gen != r.target.gen):
			cancel()
			a.Fence(app.Fencing{Holder: st.Holder, Generation: st.Gen, Since: time.Now().UTC()})
			r.halt()
			return
		default:
			if err := r.heartbeat(ctx); err != nil {
				r.log.Warn("replica: heartbeat", "err", err)
			}
		}
		cancel()
	}
}

// halt stops the replication once another box holds the replica. What
// Litestream still ships while it stops goes to this box's own generation,
// which nobody follows any more: it never mixes with the holder's.
func (r *Replicator) halt() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.store.Close(ctx); err != nil {
		r.log.Warn("replica: stop after the fence", "err", err)
	}
}

// seed brings into the replica every tenant file it lacks: a tenant
// nobody has opened since replication began would otherwise be missing
// on a standby. One at a time, in the background, it opens each such
// tenant; the opening attaches it (Attach), whose first sync ships the
// whole file, and the tenant then closes like any idle one (its close
// syncs again).
func (r *Replicator) seed(ctx context.Context, a *app.App) {
	for _, slug := range a.TenantSlugs() {
		if r.isClosed() {
			return
		}
		rel := "tenants/" + slug + ".db"
		has, err := r.target.holds(ctx, rel)
		if err != nil {
			r.log.Warn("replica: cannot tell whether it holds a tenant", "tenant", slug, "err", err)
			continue
		}
		if has {
			continue
		}
		_, release, err := a.Acquire(slug)
		if err != nil {
			r.log.Warn("replica: a tenant to seed did not open", "tenant", slug, "err", err)
			continue
		}
		release()
	}
}

func (r *Replicator) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// register starts replicating the file at path. Litestream takes the
// file on at its first sync (within SyncEvery, off the opening's path: on
// a file reopened it is a snapshot of the whole file); until then the
// file's WAL keeps every write, since nothing else checkpoints it.
func (r *Replicator) register(ctx context.Context, path string) error {
	rel, err := filepath.Rel(r.dataDir, path)
	if err != nil {
		return err
	}
	ldb := litestream.NewDB(path)
	ldb.MonitorInterval = r.opt.SyncEvery
	client := r.target.client(filepath.ToSlash(rel))
	ldb.Replica = litestream.NewReplicaWithClient(ldb, client)
	// The file's monitor makes a change set of its WAL each SyncEvery;
	// the replica then ships it at its next look, every quarter of that:
	// a write reaches the replica within about 1.25 SyncEvery (not two,
	// as with both at SyncEvery), with one upload per change set still.
	ldb.Replica.SyncInterval = max(r.opt.SyncEvery/4, 10*time.Millisecond)
	if err := client.Init(ctx); err != nil {
		return err
	}
	return r.store.RegisterDB(ldb)
}

// unregister ships what is left of the file at path and stops replicating
// it. The sync first: Litestream's close syncs only a file it has taken
// on, and a tenant may close before its first sync came.
func (r *Replicator) unregister(ctx context.Context, path string) error {
	ldb := r.store.FindDB(path)
	if ldb == nil {
		return nil
	}
	return errors.Join(ldb.Sync(ctx), r.store.UnregisterDB(ctx, path))
}

// Attach starts replicating a tenant file that has just opened. A failure
// does not fail the opening (RADIUS and the API keep serving the tenant):
// it is logged and counted (Failed), and the next opening tries again.
func (r *Replicator) Attach(ctx context.Context, t *app.Tenant) error {
	if err := r.register(ctx, t.DB.Path); err != nil {
		r.mu.Lock()
		r.failed++
		r.mu.Unlock()
		r.log.Error("tenant replication did not start", "tenant", t.Slug, "err", err)
	}
	return nil
}

// Detach ships the tenant's last writes and stops replicating its file.
func (r *Replicator) Detach(ctx context.Context, t *app.Tenant) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return // Close already synced and closed it
	}
	if err := r.unregister(ctx, t.DB.Path); err != nil {
		r.log.Error("final sync of a closing tenant", "tenant", t.Slug, "err", err)
	}
}

// Failed is how many tenant openings ran without replication.
func (r *Replicator) Failed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// Close ships what is left of every replicated file and stops. Call it
// once nothing writes any more, before the App closes.
func (r *Replicator) Close(ctx context.Context) error {
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.watched
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	// Sync first, as a tenant's close does: a file not yet taken on would
	// otherwise close without its final sync.
	var errs []error
	for _, ldb := range r.store.DBs() {
		errs = append(errs, ldb.Sync(ctx))
	}
	return errors.Join(append(errs, r.store.Close(ctx))...)
}
