package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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
