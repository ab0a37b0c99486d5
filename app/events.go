package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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
	w := writeOf(tx)
	if w == nil {
		return nil, fmt.Errorf("emit %s: not a tenant write transaction", typ)
	}
	if !w.t.App.Registry().KnownEvent(typ) {
		return nil, fmt.Errorf("emit: unknown event type %q", typ)
	}
	w.eventsWritten()
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	return []any{NewUUID(), typ, string(b), stampNow()}, nil
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
