package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// EventType is one key of the event catalogue: the keys a webhook endpoint
// may subscribe to, declared by the area that emits them
// (Module.Events) and collected in the App's registry (App.Events).
type EventType struct {
	Key      string `json:"key"`
	Category string `json:"category"`
}

// Event is one outbox row.
type Event struct {
	ID        int64           `json:"-"`
	EventID   string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt Time            `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// Emit writes an event to the outbox in tx, the transaction of the effect
// (a Tenant.Write): no event without its effect, no effect without its
// event. Once tx commits, the modules' OnEvents hooks run (the webhook
// dispatcher wakes up); nothing more to call.
func Emit(ctx context.Context, tx *sql.Tx, typ string, data any) error {
	args, err := EventArgs(tx, typ, data)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, InsertEventSQL, args...)
	return err
}

// InsertEventSQL writes one outbox row; its arguments come from EventArgs.
// Hot paths (RADIUS accounting) run it through a prepared statement.
const InsertEventSQL = `INSERT INTO events(event_id, type, data, created_at) VALUES (?,?,?,?)`

// EventArgs checks an event type against the catalogue of tx's App,
// encodes its row for InsertEventSQL (to be run in tx) and arranges the
// OnEvents hooks for after tx commits.
func EventArgs(tx *sql.Tx, typ string, data any) ([]any, error) {
	return EventRowArgs(tx, []string{typ}, data)
}

// EventKeysSep separates the keys of an outbox row that records one fact
// under several catalogue keys (a session's end is also the subscriber's
// disconnection): the row's type column lists them, the dispatcher makes
// one delivery per key an endpoint wants.
const EventKeysSep = ","

// EventRowArgs is EventArgs for one fact recorded under every key of keys
// (at least one, each in the catalogue of tx's App): one outbox row, the
// OnEvents hooks arranged for after tx commits. Its event id is
// time-ordered (UUIDv7), so the outbox's unique index grows at its end
// instead of touching a random page per row.
func EventRowArgs(tx *sql.Tx, keys []string, data any) ([]any, error) {
	w := writeOf(tx)
	if w == nil {
		return nil, fmt.Errorf("emit %s: not a tenant write transaction", strings.Join(keys, EventKeysSep))
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("emit: no event type")
	}
	reg := w.t.App.Registry()
	for _, k := range keys {
		if !reg.KnownEvent(k) {
			return nil, fmt.Errorf("emit: unknown event type %q", k)
		}
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	w.eventsWritten()
	return []any{id.String(), strings.Join(keys, EventKeysSep), string(b), stampNow()}, nil
}

// EventKeyID is the event id a row's fact carries under its i-th key: the
// row's own for the first, one derived from it (UUIDv5) for the others, so
// each (event id, endpoint) is still delivered once.
func EventKeyID(rowID string, i int, key string) string {
	if i == 0 {
		return rowID
	}
	base, err := uuid.Parse(rowID)
	if err != nil {
		base = uuid.NewSHA1(uuid.Nil, []byte(rowID))
	}
	return uuid.NewSHA1(base, []byte(key)).String()
}

// EventSet is the event keys a tenant's consumers want at one moment.
type EventSet struct {
	all  bool
	keys map[string]bool
}

// Wants reports whether some consumer wants key.
func (s EventSet) Wants(key string) bool { return s.all || s.keys[key] }

// Filter is the keys of keys some consumer wants, in their order (nil when
// none: no row to write).
func (s EventSet) Filter(keys ...string) []string {
	var out []string
	for _, k := range keys {
		if s.Wants(k) {
			out = append(out, k)
		}
	}
	return out
}

// EventWanter is a module's answer to which event keys its consumers in a
// tenant want now (all: every key), read through q (Module.WantedEvents).
type EventWanter func(ctx context.Context, q Querier) (all bool, keys []string, err error)

// WantedEvents asks the modules of the registry which event keys a
// tenant's consumers want now, read through q. Writers of high-volume
// events (RADIUS accounting) read it in their own write transaction and
// write only the rows someone wants: the answer then agrees with every
// consumer change committed before it, and a consumer added later sees the
// events of the transactions after its own.
func (r *Registry) WantedEvents(ctx context.Context, q Querier) (EventSet, error) {
	set := EventSet{keys: map[string]bool{}}
	for _, fn := range r.wanters {
		all, keys, err := fn(ctx, q)
		if err != nil {
			return EventSet{}, err
		}
		set.all = set.all || all
		for _, k := range keys {
			set.keys[k] = true
		}
	}
	return set, nil
}

// WantedEvents is the App's registry's WantedEvents.
func (a *App) WantedEvents(ctx context.Context, q Querier) (EventSet, error) {
	return a.Registry().WantedEvents(ctx, q)
}

// eventsEmitted tells the modules that care (the webhook dispatcher) that
// t has new outbox rows; Tenant.Write calls it after the commit that wrote
// them.
func (t *Tenant) eventsEmitted() {
	t.App.mu.RLock()
	hooks := t.App.onEvents
	t.App.mu.RUnlock()
	for _, h := range hooks {
		h(t)
	}
}
