package app

import (
	"container/heap"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The instance scheduler. Every tenant's periodic work (a TenantTask: the
// job claims, the monitoring poll, the session sweep, the outbox and
// webhook sweeps, housekeeping) is a due time per tenant and task. The
// scheduler of the serving process keeps them all in memory and runs each
// when it is due on a small pool of workers, opening the tenant only then:
// a tenant with nothing due is never opened, so idle tenants cost nothing.
// A task's run answers its next due time (zero: nothing waiting); a
// transaction that creates work says so (TaskDue, EnqueueJob) and the
// scheduler learns it at the commit.
//
// instance.db keeps the due times across restarts and closes, as
// tenant_due rows. They are exact for every tenant whose files are closed;
// for an open tenant memory is ahead, and the row kernel.dirty says so:
// it is written (once per opening) before memory first gets a due time
// earlier than the stored one, and removed when the tenant's files close
// and its due times are stored. At start, a tenant still marked dirty (the
// process stopped without closing it) is reconciled: every task of it runs
// once and reports its next due time from the tenant's own file. A
// process that runs no scheduler (the command line) writes a tenant_wake
// request instead, which the serving process turns into a reconcile.

// JobsTask is the kernel's task that claims a tenant's due jobs for the
// runner; JobsRecoverTask re-queues, when a tenant opens in the serving
// process, the jobs a stopped process left running.
const (
	JobsTask        = "kernel.jobs"
	JobsRecoverTask = "kernel.jobs_recover"
	dirtyMarker     = "kernel.dirty" // a tenant_due row, see above
)

// SchedulerWorkers is how many task runs one scheduler loop runs at once.
const SchedulerWorkers = 4

// taskRetry is when a task whose run failed runs again, unless its Every
// says otherwise.
const taskRetry = time.Minute

type dueKey struct{ slug, task string }

type dueItem struct {
	key dueKey
	at  time.Time
	idx int // in its task's heap; -1 while running
}

type dueHeap []*dueItem

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].idx = i; h[j].idx = j }
func (h *dueHeap) Push(x any)        { it := x.(*dueItem); it.idx = len(*h); *h = append(*h, it) }
func (h *dueHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	it.idx = -1
	return it
}

type scheduler struct {
	a *App

	mu        sync.Mutex
	items     map[dueKey]*dueItem            // every due time known
	bySlug    map[string]map[string]*dueItem // the same, by tenant
	heaps     map[string]*dueHeap            // waiting items, by task
	running   map[dueKey]time.Time           // keys running now → earliest mark meanwhile
	persisted map[dueKey]time.Time           // what tenant_due holds
	dirty     map[string]bool                // tenants with a kernel.dirty row
	open      map[string]*openTenant         // openings the scheduler knows
	enabled   map[string]int                 // task → loops serving it
	active    bool                           // a loop ran: this process schedules
	changed   chan struct{}                  // closed and replaced on every change

	persistLocks sync.Map // slug → *sync.Mutex: one writer of a tenant's rows

	runs     atomic.Uint64
	lagNanos atomic.Int64 // lateness of the last run started
	lagMax   atomic.Int64 // the largest since the last read (LagMax)
}

func newScheduler(a *App) *scheduler {
	return &scheduler{a: a, items: map[dueKey]*dueItem{}, bySlug: map[string]map[string]*dueItem{},
		heaps: map[string]*dueHeap{}, running: map[dueKey]time.Time{}, persisted: map[dueKey]time.Time{},
		dirty: map[string]bool{}, open: map[string]*openTenant{}, enabled: map[string]int{},
		changed: make(chan struct{})}
}

// notifyLocked wakes every loop; s.mu is held.
func (s *scheduler) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// setLocked makes at the due time of key (zero removes it); s.mu is held.
// A running key keeps its item out of the heap until the run is done.
func (s *scheduler) setLocked(key dueKey, at time.Time) {
	it := s.items[key]
	if at.IsZero() {
		if it != nil {
			if it.idx >= 0 {
				heap.Remove(s.heaps[key.task], it.idx)
			}
			delete(s.items, key)
			delete(s.bySlug[key.slug], key.task)
			if len(s.bySlug[key.slug]) == 0 {
				delete(s.bySlug, key.slug)
			}
		}
		return
	}
	if it == nil {
		it = &dueItem{key: key, at: at, idx: -1}
		s.items[key] = it
		if s.bySlug[key.slug] == nil {
			s.bySlug[key.slug] = map[string]*dueItem{}
		}
		s.bySlug[key.slug][key.task] = it
	}
	it.at = at
	if _, run := s.running[key]; run {
		return
	}
	h := s.heaps[key.task]
	if h == nil {
		h = &dueHeap{}
		s.heaps[key.task] = h
	}
	if it.idx >= 0 {
		heap.Fix(h, it.idx)
	} else {
		heap.Push(h, it)
	}
	s.notifyLocked()
}

// earlierLocked sets key to at unless it is already due earlier (a mark
// during a run is kept for the run's end); it reports whether memory is
// now earlier than what instance.db holds, so a crash would lose it.
func (s *scheduler) earlierLocked(key dueKey, at time.Time) (unsafe bool) {
	if m, run := s.running[key]; run {
		if m.IsZero() || at.Before(m) {
			s.running[key] = at
		}
	} else if it := s.items[key]; it == nil || at.Before(it.at) {
		s.setLocked(key, at)
	}
	p, ok := s.persisted[key]
	return !ok || FormatTime(at) < FormatTime(p)
}

// mark tells the scheduler that slug's task has work due at `at` (a
// commit's TaskDue, a finished job); it keeps the earliest. A due time a
// crash would lose is made safe first: the tenant is marked dirty when
// its files are open, its rows are rewritten when they are closed.
//
// In a process that runs no scheduler (the command line) a mark outside a
// transaction (a restored file's queued runs, NotifySchedule) is a wake
// request for the serving process.
func (s *scheduler) mark(slug, task string, at time.Time) {
	key := dueKey{slug, task}
	s.mu.Lock()
	unsafe := s.earlierLocked(key, at)
	active, isOpen := s.active, s.open[slug] != nil
	s.mu.Unlock()
	if !unsafe {
		return
	}
	var err error
	switch {
	case !active:
		if info, ok := s.a.TenantBySlug(slug); ok {
			err = s.requestWake(context.Background(), &Tenant{TenantInfo: info, App: s.a})
		}
	case isOpen:
		err = s.markDirty(context.Background(), slug)
	default:
		err = s.persist(context.Background(), slug)
	}
	if err != nil {
		s.a.Log.Error("scheduler: keep due time", "tenant", slug, "task", task, "err", err)
	}
}

// markLocal is mark without persistence: the due times of a reconcile or
// of an opening, which the tenant's file can always give again.
func (s *scheduler) markLocal(slug, task string, at time.Time, onlyIfUnknown bool) {
	key := dueKey{slug, task}
	s.mu.Lock()
	defer s.mu.Unlock()
	if onlyIfUnknown && s.items[key] != nil {
		return
	}
	s.earlierLocked(key, at)
}

// beforeCommit runs inside a tenant write transaction that declared due
// times or wrote events, before it commits: what the commit makes due must
// survive a crash of this process. The serving process marks the tenant
// dirty (once per opening); any other process leaves a wake request.
func (s *scheduler) beforeCommit(ctx context.Context, t *Tenant, due map[string]time.Time, events bool) error {
	s.mu.Lock()
	active, dirty := s.active, s.dirty[t.Slug]
	unsafe := events
	for task, at := range due {
		p, ok := s.persisted[dueKey{t.Slug, task}]
		if !ok || FormatTime(at) < FormatTime(p) {
			unsafe = true
		}
	}
	s.mu.Unlock()
	switch {
	case !unsafe || (active && dirty):
		return nil
	case active:
		return s.markDirty(ctx, t.Slug)
	default:
		return s.requestWake(ctx, t)
	}
}

// lockSlug serialises the writers of one tenant's rows.
func (s *scheduler) lockSlug(slug string) func() {
	v, _ := s.persistLocks.LoadOrStore(slug, &sync.Mutex{})
	m := v.(*sync.Mutex)
	m.Lock()
	return m.Unlock
}

// markDirty writes slug's kernel.dirty row (once).
func (s *scheduler) markDirty(ctx context.Context, slug string) error {
	defer s.lockSlug(slug)()
	s.mu.Lock()
	done := s.dirty[slug]
	s.mu.Unlock()
	if done {
		return nil
	}
	info, ok := s.a.TenantBySlug(slug)
	if !ok {
		return nil
	}
	err := s.a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tenant_due(tenant_id, task, due_at) SELECT id, ?, ? FROM tenants WHERE id = ? ON CONFLICT DO NOTHING`,
			dirtyMarker, s.a.NowText(), info.ID)
		return err
	})
	if err == nil {
		s.mu.Lock()
		s.dirty[slug] = true
		s.mu.Unlock()
	}
	return err
}

// persist stores slug's due times as memory has them and clears its dirty
// mark: at close, or at once for a tenant whose files are closed.
func (s *scheduler) persist(ctx context.Context, slug string) error {
	defer s.lockSlug(slug)()
	info, ok := s.a.TenantBySlug(slug)
	s.mu.Lock()
	snap := map[string]time.Time{}
	for task, it := range s.bySlug[slug] {
		if m, run := s.running[it.key]; run && !m.IsZero() && m.Before(it.at) {
			snap[task] = m
		} else {
			snap[task] = it.at
		}
	}
	s.mu.Unlock()
	if !ok {
		s.forget(slug)
		return nil
	}
	err := s.a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM tenant_due WHERE tenant_id = ?`, info.ID); err != nil {
			return err
		}
		for task, at := range snap {
			// A tenant deleted meanwhile keeps no row.
			if _, err := tx.ExecContext(ctx, `INSERT INTO tenant_due(tenant_id, task, due_at) SELECT id, ?, ? FROM tenants WHERE id = ?`,
				task, FormatTime(at), info.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	for k := range s.persisted {
		if k.slug == slug {
			delete(s.persisted, k)
		}
	}
	for task, at := range snap {
		s.persisted[dueKey{slug, task}] = at
	}
	delete(s.dirty, slug)
	s.mu.Unlock()
	return nil
}

// forget drops a deleted tenant's due times (its rows went with it).
func (s *scheduler) forget(slug string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for task := range s.bySlug[slug] {
		s.setLocked(dueKey{slug, task}, time.Time{})
	}
	for k := range s.persisted {
		if k.slug == slug {
			delete(s.persisted, k)
		}
	}
	delete(s.dirty, slug)
}

// requestWake asks the serving process to reconcile t (this process runs
// no scheduler).
func (s *scheduler) requestWake(ctx context.Context, t *Tenant) error {
	if t.ID == 0 {
		return nil
	}
	return s.a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tenant_wake(tenant_id, seq) SELECT id, 1 FROM tenants WHERE id = ?
			ON CONFLICT(tenant_id) DO UPDATE SET seq = seq + 1`, t.ID)
		return err
	})
}

// reconcile makes every task of slug due now: each run reports its next due
// time from the tenant's file.
func (s *scheduler) reconcile(slug string) {
	now := s.a.Now()
	for _, tk := range s.a.Registry().TenantTasks() {
		if tk.Every > 0 {
			s.markLocal(slug, tk.Name, now, false)
		}
	}
}

// replaced is told that t's file content was replaced (a restore): every
// task of t runs again and reads its due time from the new content. The
// serving process marks t dirty first (a crash before the runs reconciles
// it at start); any other process leaves a wake request.
func (s *scheduler) replaced(ctx context.Context, t *Tenant) error {
	s.mu.Lock()
	active := s.active
	s.mu.Unlock()
	if !active {
		return s.requestWake(ctx, t)
	}
	if err := s.markDirty(ctx, t.Slug); err != nil {
		return err
	}
	s.reconcile(t.Slug)
	return nil
}

// activate makes this process the scheduler (once): it loads the stored
// due times, reconciles the tenants left dirty, and takes on the tenants
// already open.
func (s *scheduler) activate(ctx context.Context) {
	s.mu.Lock()
	if s.active {
		s.mu.Unlock()
		return
	}
	s.active = true
	s.mu.Unlock()
	if err := s.load(ctx); err != nil {
		s.a.Log.Error("scheduler: load due times", "err", err)
	}
	s.pollWakes(ctx)
	s.mu.Lock()
	var open []*openTenant
	for _, ot := range s.open {
		open = append(open, ot)
	}
	s.mu.Unlock()
	for _, ot := range open {
		s.startOnOpen(ot)
	}
}

func (s *scheduler) load(ctx context.Context) error {
	rows, err := s.a.Inst.R.QueryContext(ctx, `SELECT t.slug, d.task, d.due_at FROM tenant_due d JOIN tenants t ON t.id = d.tenant_id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var dirty []string
	s.mu.Lock()
	defer func() {
		s.mu.Unlock()
		for _, slug := range dirty {
			s.reconcile(slug)
		}
	}()
	for rows.Next() {
		var slug, task, due string
		if err := rows.Scan(&slug, &task, &due); err != nil {
			return err
		}
		if task == dirtyMarker {
			s.dirty[slug] = true
			dirty = append(dirty, slug)
			continue
		}
		at, err := ParseTime(due, false)
		if err != nil {
			return fmt.Errorf("tenant_due %s %s: %w", slug, task, err)
		}
		key := dueKey{slug, task}
		s.persisted[key] = at
		if it := s.items[key]; it == nil || at.Before(it.at) {
			s.setLocked(key, at)
		}
	}
	return rows.Err()
}

// pollWakes turns the wake requests of other processes into reconciles.
// The request and the dirty mark swap in one transaction, so a crash
// between them loses neither.
func (s *scheduler) pollWakes(ctx context.Context) {
	type req struct {
		id, seq int64
		slug    string
	}
	var reqs []req
	rows, err := s.a.Inst.R.QueryContext(ctx, `SELECT w.tenant_id, w.seq, t.slug FROM tenant_wake w JOIN tenants t ON t.id = w.tenant_id`)
	if err != nil {
		s.a.Log.Error("scheduler: read wake requests", "err", err)
		return
	}
	for rows.Next() {
		var r req
		if err := rows.Scan(&r.id, &r.seq, &r.slug); err != nil {
			break
		}
		reqs = append(reqs, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		s.a.Log.Error("scheduler: read wake requests", "err", err)
		return
	}
	for _, r := range reqs {
		unlock := s.lockSlug(r.slug)
		err := s.a.Inst.Write(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO tenant_due(tenant_id, task, due_at) VALUES (?,?,?) ON CONFLICT DO NOTHING`,
				r.id, dirtyMarker, s.a.NowText()); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM tenant_wake WHERE tenant_id = ? AND seq = ?`, r.id, r.seq)
			return err
		})
		if err == nil {
			s.mu.Lock()
			s.dirty[r.slug] = true
			s.mu.Unlock()
		}
		unlock()
		if err != nil {
			s.a.Log.Error("scheduler: take wake request", "tenant", r.slug, "err", err)
			continue
		}
		s.reconcile(r.slug)
	}
}

// opened is told of every opening of a tenant's files.
func (s *scheduler) opened(t *Tenant) {
	s.mu.Lock()
	s.open[t.Slug] = t.open
	active := s.active
	s.mu.Unlock()
	if active {
		s.startOnOpen(t.open)
	}
}

// startOnOpen runs, in the background, what an opening in the serving
// process needs: the on-open tasks (recovering what a stopped holder of
// the file left), then a first run of each task the scheduler knows no
// due time for. Task runs of the tenant wait for the on-open tasks.
func (s *scheduler) startOnOpen(ot *openTenant) {
	ot.mu.Lock()
	if ot.onOpen != nil {
		ot.mu.Unlock()
		return
	}
	ot.onOpen = make(chan struct{})
	ot.mu.Unlock()
	go func() {
		defer close(ot.onOpen)
		t, release, ok := s.a.AcquireOpen(ot.slug)
		if !ok {
			return // closed meanwhile: the next opening runs its own
		}
		defer release()
		if t.open != ot {
			return // closed and opened again meanwhile: that opening runs its own
		}
		ctx := context.Background()
		now := s.a.Now()
		for _, tk := range s.a.Registry().TenantTasks() {
			if tk.Every > 0 {
				s.markLocal(ot.slug, tk.Name, now.Add(tk.After), true)
				continue
			}
			if _, err := tk.Run(ctx, t); err != nil {
				s.a.Log.Error("tenant task", "task", tk.Name, "tenant", ot.slug, "err", err)
			}
		}
	}()
}

// waitOnOpen waits until the on-open tasks of t's opening have run.
func (s *scheduler) waitOnOpen(ctx context.Context, t *Tenant) {
	if t.open == nil {
		return
	}
	s.startOnOpen(t.open)
	select {
	case <-t.open.onOpen:
	case <-ctx.Done():
	}
}

// closing is told before a tenant's files close: a dirty tenant's due
// times are stored.
func (s *scheduler) closing(t *Tenant) {
	s.mu.Lock()
	if s.open[t.Slug] == t.open {
		delete(s.open, t.Slug)
	}
	dirty := s.dirty[t.Slug]
	s.mu.Unlock()
	if !dirty {
		return
	}
	if err := s.persist(context.Background(), t.Slug); err != nil {
		// The dirty row stays: the next start reconciles the tenant.
		s.a.Log.Error("scheduler: store due times at close", "tenant", t.Slug, "err", err)
	}
}

// lane is one loop's share of the scheduler: its tasks, the tenants it is
// running a task of, and the due items it set aside meanwhile. A loop runs
// one task of a tenant at a time: the tasks an opening makes due together
// then share the tenant's connections instead of each opening its own.
type lane struct {
	tasks []string
	busy  map[string]bool
	aside map[string][]*dueItem
}

func newLane(tasks []string) *lane {
	return &lane{tasks: tasks, busy: map[string]bool{}, aside: map[string][]*dueItem{}}
}

// popDue takes the earliest item of l's tasks due at now whose tenant l is
// not running a task of (nil if none) and marks that tenant busy. An item
// set aside counts as running: a mark for it waits in s.running.
func (s *scheduler) popDue(l *lane, now time.Time) *dueItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		var best *dueHeap
		for _, name := range l.tasks {
			h := s.heaps[name]
			if h == nil || h.Len() == 0 || (*h)[0].at.After(now) {
				continue
			}
			if best == nil || (*h)[0].at.Before((*best)[0].at) {
				best = h
			}
		}
		if best == nil {
			return nil
		}
		it := heap.Pop(best).(*dueItem)
		s.running[it.key] = time.Time{}
		if l.busy[it.key.slug] {
			l.aside[it.key.slug] = append(l.aside[it.key.slug], it)
			continue
		}
		l.busy[it.key.slug] = true
		return it
	}
}

// done frees slug in l after a run and puts back what was set aside for
// it (with any mark it got meanwhile).
func (s *scheduler) done(l *lane, slug string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(l.busy, slug)
	items := l.aside[slug]
	delete(l.aside, slug)
	for _, it := range items {
		m := s.running[it.key]
		delete(s.running, it.key)
		if s.items[it.key] != it {
			continue // removed meanwhile
		}
		if !m.IsZero() && m.Before(it.at) {
			it.at = m
		}
		heap.Push(s.heapFor(it.key.task), it)
	}
	if len(items) > 0 {
		s.notifyLocked()
	}
}

// nextDue is the earliest due time of tasks (zero when none) and the
// channel closed at the next change.
func (s *scheduler) nextDue(tasks []string) (time.Time, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var next time.Time
	for _, name := range tasks {
		if h := s.heaps[name]; h != nil && h.Len() > 0 && (next.IsZero() || (*h)[0].at.Before(next)) {
			next = (*h)[0].at
		}
	}
	return next, s.changed
}

// finish records a run's outcome: its next due time, or a mark that came
// meanwhile if earlier. A next due time earlier than the stored one makes
// the tenant dirty first.
func (s *scheduler) finish(key dueKey, next time.Time) {
	s.mu.Lock()
	m := s.running[key]
	delete(s.running, key)
	if !m.IsZero() && (next.IsZero() || m.Before(next)) {
		next = m
	}
	unsafe := false
	if !next.IsZero() {
		p, ok := s.persisted[key]
		unsafe = !ok || FormatTime(next) < FormatTime(p)
	}
	dirty := s.dirty[key.slug]
	s.setLocked(key, next)
	s.mu.Unlock()
	if unsafe && !dirty {
		if err := s.markDirty(context.Background(), key.slug); err != nil {
			s.a.Log.Error("scheduler: mark dirty", "tenant", key.slug, "err", err)
		}
	}
}

func (s *scheduler) heapFor(task string) *dueHeap {
	h := s.heaps[task]
	if h == nil {
		h = &dueHeap{}
		s.heaps[task] = h
	}
	return h
}

// runItem runs one due task of one tenant: the tenant opens if it was
// closed, and stays open only as long as the run.
func (s *scheduler) runItem(ctx context.Context, tk TenantTask, it *dueItem) {
	now := s.a.Now()
	lag := max(now.Sub(it.at), 0)
	s.lagNanos.Store(int64(lag))
	for {
		cur := s.lagMax.Load()
		if int64(lag) <= cur || s.lagMax.CompareAndSwap(cur, int64(lag)) {
			break
		}
	}
	s.runs.Add(1)
	t, release, err := s.a.Acquire(it.key.slug)
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) && ae.Status == 404 {
			s.mu.Lock()
			delete(s.running, it.key)
			s.mu.Unlock()
			s.forget(it.key.slug)
			return
		}
		s.a.Log.Error("tenant task: open tenant", "task", tk.Name, "tenant", it.key.slug, "err", err)
		s.finish(it.key, now.Add(retryOf(tk)))
		return
	}
	defer release()
	s.waitOnOpen(ctx, t)
	next, err := tk.Run(ctx, t)
	if err != nil {
		if ctx.Err() != nil {
			next = it.at // shutting down: still due
		} else {
			s.a.Log.Error("tenant task", "task", tk.Name, "tenant", it.key.slug, "err", err)
			next = s.a.Now().Add(retryOf(tk))
		}
	}
	s.finish(it.key, next)
}

func retryOf(tk TenantTask) time.Duration {
	if tk.Every > 0 {
		return tk.Every
	}
	return taskRetry
}

// run serves tasks until ctx ends, `workers` runs at a time; several
// loops may run, each over its own tasks.
func (s *scheduler) run(ctx context.Context, tasks []string, workers int) {
	s.mu.Lock()
	for _, name := range tasks {
		s.enabled[name]++
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		for _, name := range tasks {
			s.enabled[name]--
		}
		s.mu.Unlock()
	}()
	s.activate(ctx)
	byName := map[string]TenantTask{}
	for _, tk := range s.a.Registry().TenantTasks() {
		byName[tk.Name] = tk
	}
	sem := make(chan struct{}, max(workers, 1))
	freed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	l := newLane(tasks)
	lastWakePoll := time.Now()
	for {
		if time.Since(lastWakePoll) >= time.Second {
			s.pollWakes(ctx)
			lastWakePoll = time.Now()
		}
		now := s.a.Now()
		for len(sem) < cap(sem) {
			it := s.popDue(l, now)
			if it == nil {
				break
			}
			tk, ok := byName[it.key.task]
			if !ok {
				s.finish(it.key, time.Time{})
				s.done(l, it.key.slug)
				continue
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.runItem(ctx, tk, it)
				s.done(l, it.key.slug)
				<-sem
				select {
				case freed <- struct{}{}:
				default:
				}
			}()
		}
		next, changed := s.nextDue(tasks)
		// At most a second: the wake requests are polled, and a test's
		// clock may jump.
		wait := time.Second
		if !next.IsZero() {
			wait = min(max(next.Sub(now), time.Millisecond), time.Second)
		}
		if len(sem) == cap(sem) {
			changed = nil // nothing can start before a worker frees
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-changed:
		case <-freed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// SchedulerStats are the scheduler's figures for /metrics.
type SchedulerStats struct {
	Due     int           // due times known
	Overdue int           // of them, past due and not running
	Running int           // runs in progress
	Runs    uint64        // runs started since start
	Lag     time.Duration // how late the oldest overdue item is now
	LastLag time.Duration // how late the last run started
}

// SchedulerStats reads the scheduler's figures.
func (a *App) SchedulerStats() SchedulerStats {
	s := a.sched
	now := a.Now()
	s.mu.Lock()
	st := SchedulerStats{Due: len(s.items), Running: len(s.running), Runs: s.runs.Load(), LastLag: time.Duration(s.lagNanos.Load())}
	for name, h := range s.heaps {
		if s.enabled[name] == 0 {
			continue
		}
		for _, it := range *h {
			if !it.at.After(now) {
				st.Overdue++
				st.Lag = max(st.Lag, now.Sub(it.at))
			}
		}
	}
	s.mu.Unlock()
	return st
}

// DueTimes lists the due times the scheduler knows for a tenant, by task
// (tests, diagnostics).
func (a *App) DueTimes(slug string) map[string]time.Time {
	s := a.sched
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]time.Time{}
	for task, it := range s.bySlug[slug] {
		out[task] = it.at
	}
	return out
}

// WakeScheduler makes the scheduler's loops look at the clock again now
// (a test that moved the App's clock).
func (a *App) WakeScheduler() {
	a.sched.mu.Lock()
	a.sched.notifyLocked()
	a.sched.mu.Unlock()
}

// MarkTaskDue tells the scheduler that a tenant's task has work due at
// `at` outside a transaction (a transaction says it with TaskDue).
func (a *App) MarkTaskDue(slug, task string, at time.Time) { a.sched.mark(slug, task, at) }

// taskNames lists the installed tasks, without those in except.
func (a *App) taskNames(except ...string) []string {
	var out []string
	for _, tk := range a.Registry().TenantTasks() {
		if !slices.Contains(except, tk.Name) {
			out = append(out, tk.Name)
		}
	}
	return out
}
