package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// EventType is one key of the event catalogue.
type EventType struct {
	Key      string `json:"key"`
	Category string `json:"category"`
}

// EventCatalog is static for the life of a release: the keys a webhook
// endpoint may subscribe to.
var EventCatalog = []EventType{
	{"user.created", "lifecycle"},
	{"user.updated", "lifecycle"},
	{"user.deleted", "lifecycle"},
	{"user.enabled", "lifecycle"},
	{"user.disabled", "lifecycle"},
	{"user.activated", "lifecycle"},
	{"user.expired", "lifecycle"},
	{"user.disconnected", "lifecycle"},
	{"usage.threshold", "usage"},
	{"session.started", "usage"},
	{"session.ended", "usage"},
	{"payment.deposit", "billing"},
	{"payment.withdraw", "billing"},
	{"payment.succeeded", "billing"},
	{"payment.failed", "billing"},
	{"card.redeemed", "billing"},
	{"card_batch.ready", "billing"},
	{"manager.created", "lifecycle"},
	{"manager.suspended", "lifecycle"},
	{"ticket.created", "support"},
	{"ticket.replied", "support"},
	{"ticket.state_changed", "support"},
	{"ticket.assigned", "support"},
	{"backup.completed", "backups"},
	{"backup.failed", "backups"},
	{"device.down", "monitoring"},
	{"device.up", "monitoring"},
	{"console.opened", "console"},
	{"console.closed", "console"},
}

var eventKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range EventCatalog {
		m[e.Key] = true
	}
	return m
}()

// KnownEvent reports whether key is in the catalogue.
func KnownEvent(key string) bool { return eventKeys[key] }

// Event is one outbox row.
type Event struct {
	ID        int64           `json:"-"`
	EventID   string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt Time            `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// Emit writes an event to the outbox in tx, the transaction of the effect:
// no event without its effect, no effect without its event. The webhook
// dispatcher picks it up after commit.
func Emit(ctx context.Context, tx *sql.Tx, typ string, data any) error {
	args, err := EventArgs(typ, data)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, InsertEventSQL, args...)
	return err
}

// InsertEventSQL writes one outbox row; its arguments come from EventArgs.
// Hot paths (RADIUS accounting) run it through a prepared statement.
const InsertEventSQL = `INSERT INTO events(event_id, type, data, created_at) VALUES (?,?,?,?)`

// EventArgs checks an event type and encodes its row for InsertEventSQL.
func EventArgs(typ string, data any) ([]any, error) {
	if !eventKeys[typ] {
		return nil, fmt.Errorf("emit: unknown event type %q", typ)
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	return []any{NewUUID(), typ, string(b), stampNow()}, nil
}

// EventKeysSep separates the keys of an outbox row that records one fact
// under several catalogue keys (a session's end is also the subscriber's
// disconnection): the row's type column lists them, the dispatcher makes
// one delivery per key an endpoint wants.
const EventKeysSep = ","

// EventRowArgs encodes one outbox row for InsertEventSQL recording one fact
// under every key of keys (at least one). Its event id is time-ordered
// (UUIDv7), so the outbox's unique index grows at its end instead of
// touching a random page per row.
func EventRowArgs(keys []string, data any) ([]any, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("emit: no event type")
	}
	for _, k := range keys {
		if !eventKeys[k] {
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

// WantedEvents asks the installed modules which event keys a tenant's
// consumers want now, read through q. Writers of high-volume events
// (RADIUS accounting) read it in their own write transaction and write
// only the rows someone wants: the answer then agrees with every consumer
// change committed before it, and a consumer added later sees the events
// of the transactions after its own.
func (a *App) WantedEvents(ctx context.Context, q Querier) (EventSet, error) {
	a.mu.RLock()
	fns := a.eventWanters
	a.mu.RUnlock()
	set := EventSet{keys: map[string]bool{}}
	for _, fn := range fns {
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

// EventsEmitted tells the modules that care (the webhook dispatcher) that
// t has new outbox rows; call it after the commit that wrote them.
func (t *Tenant) EventsEmitted() {
	t.App.mu.RLock()
	hooks := t.App.onEvents
	t.App.mu.RUnlock()
	for _, h := range hooks {
		h(t)
	}
}
