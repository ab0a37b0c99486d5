package devgw

import (
	"context"
	"sync"

	"xr/app"
)

// The live consoles of one App, in memory: what the limits count and what
// DELETE /admin/console-sessions/{sid} reaches. A console's row says
// "live" only while its entry is here; rows left live by a crash are ended
// with reason server_restart at start-up (Recover).
type registry struct {
	mu   sync.Mutex
	byTn map[string]map[*live]bool
}

// live is one console: reserved at upgrade, given its session id once its
// row is written.
type live struct {
	slug    string
	manager int64
	sid     int64
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	reason  string
	done    chan struct{}
}

// stop ends the console with reason (the first reason given wins).
func (l *live) stop(reason string) {
	l.mu.Lock()
	if l.reason == "" {
		l.reason = reason
	}
	l.mu.Unlock()
	l.cancel()
}

// endReason is the reason stop was given ("" while running).
func (l *live) endReason() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reason
}

type registryKey struct{}

func reg(a *app.App) *registry {
	return a.ValueOrStore(registryKey{}, &registry{byTn: map[string]map[*live]bool{}}).(*registry)
}

// counts are the consoles of a tenant and of one of its managers.
func (r *registry) counts(slug string, manager int64) (tenant, mine int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for l := range r.byTn[slug] {
		tenant++
		if l.manager == manager {
			mine++
		}
	}
	return tenant, mine
}

// limits are a tenant's console caps.
type limits struct{ tenant, manager int64 }

func readLimits(ctx context.Context, q app.Querier) (limits, error) {
	var l limits
	var err error
	if l.tenant, err = SettingDevgwMaxTenant.Get(ctx, q); err != nil {
		return l, err
	}
	l.manager, err = SettingDevgwMaxManager.Get(ctx, q)
	return l, err
}

// check refuses a console over a cap: 409 console_limit_tenant or
// console_limit_manager (details.limit).
func (l limits) check(tenant, mine int) error {
	if int64(tenant) >= l.tenant {
		return app.ErrConflict("console_limit_tenant").With("limit", l.tenant)
	}
	if int64(mine) >= l.manager {
		return app.ErrConflict("console_limit_manager").With("limit", l.manager)
	}
	return nil
}

// reserve takes a console slot under the caps, atomically with the count.
func (r *registry) reserve(slug string, manager int64, lim limits) (*live, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tenant, mine := 0, 0
	for l := range r.byTn[slug] {
		tenant++
		if l.manager == manager {
			mine++
		}
	}
	if err := lim.check(tenant, mine); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &live{slug: slug, manager: manager, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	if r.byTn[slug] == nil {
		r.byTn[slug] = map[*live]bool{}
	}
	r.byTn[slug][l] = true
	return l, nil
}

// setID names the console's row.
func (r *registry) setID(l *live, sid int64) {
	r.mu.Lock()
	l.sid = sid
	r.mu.Unlock()
}

// release frees the slot once the console's row is ended.
func (r *registry) release(l *live) {
	r.mu.Lock()
	delete(r.byTn[l.slug], l)
	r.mu.Unlock()
	l.cancel()
}

// find is the live console of a session row, or nil.
func (r *registry) find(slug string, sid int64) *live {
	r.mu.Lock()
	defer r.mu.Unlock()
	for l := range r.byTn[slug] {
		if l.sid == sid {
			return l
		}
	}
	return nil
}

// ids are the session ids live in this process for a tenant.
func (r *registry) ids(slug string) map[int64]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[int64]bool{}
	for l := range r.byTn[slug] {
		if l.sid != 0 {
			out[l.sid] = true
		}
	}
	return out
}
