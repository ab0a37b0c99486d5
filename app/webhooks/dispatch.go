package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"xr/app"
)

// PollEvery is how soon the sweep runs again after a failed pass.
const PollEvery = 2 * time.Second

// CoalesceWindow is how long the dispatcher, once woken, waits for more
// events before dispatching them in one pass (a bound on the delay it adds).
const CoalesceWindow = 50 * time.Millisecond

// dispatchBatch is how many outbox rows one transaction turns into
// deliveries.
const dispatchBatch = 200

// hub is the per-instance state of the package: the dispatcher's wake-ups
// and the delivery lanes.
type hub struct {
	a *app.App

	mu      sync.Mutex
	running bool
	pending map[string]bool
	wake    chan struct{}
	lanes   map[laneKey]*lane

	// The retry schedule's first delay and the attempt timeout, per App
	// (tests shorten them with SetRetryBase and SetAttemptTimeout).
	retryBase, attemptTimeout atomic.Int64
}

// Module is what the webhooks area contributes to an instance: the
// delivery job, a hub per App (attached at install, freed with the App),
// the wake-up after events are written, which events the enabled
// endpoints want (writers of high-volume events skip the others), the
// dispatcher service, and the tenant tasks that unpark deliveries at start and sweep for events
// written by other processes.
var Module = app.Module{
	Name: "webhooks",
	Jobs: map[string]app.JobHandler{JobKind: runDelivery},
	Init: func(a *app.App) {
		h := &hub{a: a, pending: map[string]bool{}, wake: make(chan struct{}, 1), lanes: map[laneKey]*lane{}}
		h.retryBase.Store(int64(DefaultRetryBase))
		h.attemptTimeout.Store(int64(AttemptTimeout))
		a.SetValue(hubKey{}, h)
	},
	OnEvents:     func(t *app.Tenant) { hubFor(t.App).poke(t.Slug) },
	WantedEvents: wantedEvents,
	Services:     []func(context.Context, *app.App){Start},
	TenantTasks: []app.TenantTask{
		{Name: "webhooks.unpark", Run: func(ctx context.Context, t *app.Tenant) (time.Time, error) {
			return time.Time{}, hubFor(t.App).unpark(ctx, t)
		}},
		{Name: "webhooks.sweep", Every: PollEvery, Run: sweep},
	},
	Permissions: permCatalogue,
	SealedColumns: []app.SealedColumn{
		{Table: "webhook_endpoints", Column: "secret"},
		{Table: "webhook_endpoints", Column: "prev_secret"},
	},
}

// wantedEvents is what the enabled endpoints subscribe to: events nobody
// subscribes to may go unwritten (app.Registry.WantedEvents).
func wantedEvents(ctx context.Context, q app.Querier) (all bool, keys []string, err error) {
	rows, err := q.QueryContext(ctx, `SELECT events, all_events FROM webhook_endpoints WHERE enabled = 1`)
	if err != nil {
		return false, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var list string
		var every bool
		if err := rows.Scan(&list, &every); err != nil {
			return false, nil, err
		}
		all = all || every
		var ks []string
		if err := json.Unmarshal([]byte(list), &ks); err != nil {
			return false, nil, fmt.Errorf("webhook endpoint events: %w", err)
		}
		keys = append(keys, ks...)
	}
	return all, keys, rows.Err()
}

type hubKey struct{}

// hubFor is the App's hub; the module must be installed (App.Use).
func hubFor(a *app.App) *hub {
	h, ok := a.Value(hubKey{}).(*hub)
	if !ok {
		panic("webhooks: module not installed on this App (app.App.Use(webhooks.Module))")
	}
	return h
}

// poke asks the dispatcher to look at a tenant's outbox now (a dispatcher
// starting later finds the request waiting; pending holds a slug once).
func (h *hub) poke(slug string) {
	h.mu.Lock()
	h.pending[slug] = true
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Start runs the dispatcher of an instance until ctx ends: woken through
// the OnEvents hook after a transaction that emitted events commits, it
// dispatches the tenants it was woken for. Events written by other
// processes (the CLI) are found by the webhooks.sweep tenant task, which
// dispatches too. Deliveries themselves run as jobs on the instance's job
// runner.
func Start(ctx context.Context, a *app.App) {
	h := hubFor(a)
	h.mu.Lock()
	if h.running {
		h.mu.Unlock()
		return
	}
	h.running = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.running = false
		h.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
			// Gather the wake-ups of a short window into one pass: under
			// RADIUS load every accounting batch writes events, and one
			// dispatch transaction per batch would compete with accounting
			// for the tenant's writer.
			select {
			case <-ctx.Done():
				return
			case <-time.After(CoalesceWindow):
			}
			h.mu.Lock()
			slugs := make([]string, 0, len(h.pending))
			for s := range h.pending {
				slugs = append(slugs, s)
			}
			clear(h.pending)
			h.mu.Unlock()
			for _, slug := range slugs {
				h.dispatchSlug(ctx, slug)
			}
		}
	}
}

// sweep is the webhooks.sweep tenant task: it dispatches what the
// tenant's outbox holds undispatched. The dispatcher is woken in memory by
// this process's commits; the sweep catches the rest: when the tenant
// opens, and when another process (the command line) wrote to it or this
// one stopped without dispatching (the scheduler reconciles the tenant).
// It then sleeps (zero) until the next of those.
func sweep(ctx context.Context, t *app.Tenant) (time.Time, error) {
	_, err := DispatchTenant(ctx, t)
	return time.Time{}, err
}

// unpark is the webhooks.unpark tenant task, run when the tenant opens: it
// brings forward the jobs of queued deliveries that a previous process
// parked behind a busy lane (their wake-up died with it).
func (h *hub) unpark(ctx context.Context, t *app.Tenant) error {
	var parked bool
	if err := t.DB.R.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM webhook_deliveries WHERE state = 'queued')`).Scan(&parked); err != nil || !parked {
		return err // nothing queued: no write (this runs at every opening)
	}
	return t.Write(ctx, func(tx *sql.Tx) error {
		jobs, err := app.QueryIDs(ctx, tx, `SELECT job_id FROM webhook_deliveries WHERE state = 'queued' AND job_id IS NOT NULL`)
		if err != nil {
			return err
		}
		_, err = app.WakeJobs(ctx, tx, t.Now(), jobs...)
		return err
	})
}

func (h *hub) dispatchSlug(ctx context.Context, slug string) {
	t, release, err := h.a.Acquire(slug)
	if err != nil {
		return
	}
	defer release()
	if _, err := DispatchTenant(ctx, t); err != nil && ctx.Err() == nil {
		h.a.Log.Error("webhooks: dispatch", "tenant", slug, "err", err)
	}
}

type outboxRow struct {
	id        int64
	eventID   string
	typ, data string
	createdAt app.Time
}

// DispatchTenant turns a tenant's undispatched outbox rows into deliveries:
// in one transaction per batch it creates one delivery (and its job) per
// enabled endpoint subscribed to each event, and marks the events
// dispatched. It returns how many deliveries it queued.
func DispatchTenant(ctx context.Context, t *app.Tenant) (int, error) {
	var pending bool
	if err := t.DB.R.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM events WHERE dispatched = 0)`).Scan(&pending); err != nil || !pending {
		return 0, err
	}
	total := 0
	for {
		var n, queued int
		err := t.Write(ctx, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `SELECT id, event_id, type, data, created_at FROM events WHERE dispatched = 0 ORDER BY id LIMIT ?`, dispatchBatch)
			if err != nil {
				return err
			}
			var evs []outboxRow
			for rows.Next() {
				var e outboxRow
				if err := rows.Scan(&e.id, &e.eventID, &e.typ, &e.data, &e.createdAt); err != nil {
					rows.Close()
					return err
				}
				evs = append(evs, e)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			n = len(evs)
			if n == 0 {
				return nil
			}
			eps, err := enabledEndpoints(ctx, tx)
			if err != nil {
				return err
			}
			for _, e := range evs {
				// One row may record its fact under several keys: one
				// delivery per key an endpoint wants, each key with its
				// own event id.
				for k, typ := range strings.Split(e.typ, app.EventKeysSep) {
					eventID := app.EventKeyID(e.eventID, k, typ)
					for i := range eps {
						if !eps[i].wants(typ) {
							continue
						}
						id, err := newDelivery(ctx, tx, &eps[i], eventID, typ, e.createdAt, e.data, false, 0, t.Now())
						if err != nil {
							return err
						}
						if id != 0 {
							queued++
						}
					}
				}
			}
			_, err = tx.ExecContext(ctx, `UPDATE events SET dispatched = 1 WHERE dispatched = 0 AND id <= ?`, evs[n-1].id)
			return err
		})
		if err != nil {
			return total, err
		}
		total += queued
		if n < dispatchBatch {
			return total, nil
		}
	}
}

func enabledEndpoints(ctx context.Context, q app.Querier) ([]Endpoint, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+endpointCols+` FROM webhook_endpoints WHERE enabled = 1 ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Endpoint
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *e)
	}
	return out, rows.Err()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
