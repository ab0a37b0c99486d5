package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"time"

	"xr/app"
)

// Delivery states.
const (
	StateQueued  = "queued"
	StateSending = "sending"
	StateSent    = "sent"
	StateFailed  = "failed"
	StateDead    = "dead"
)

// States lists the delivery states (the filter[state] enum).
var States = []string{StateQueued, StateSending, StateSent, StateFailed, StateDead}

// DefaultMaxAttempts is the attempt budget of a delivery.
const DefaultMaxAttempts = 8

// TestEventType is the type of a synthetic delivery queued by the endpoint
// test; it is not in the catalogue and no endpoint subscribes to it.
const TestEventType = "webhook.test"

// Delivery is a row of the delivery log (its payload is never shown).
type Delivery struct {
	ID            int64    `json:"id"`
	EndpointID    int64    `json:"endpoint_id"`
	EventID       string   `json:"event_id"`
	EventType     string   `json:"event_type"`
	State         string   `json:"state"`
	Attempts      int      `json:"attempts"`
	MaxAttempts   int      `json:"max_attempts"`
	ResponseCode  *int     `json:"response_code"`
	ResponseMs    *int64   `json:"response_ms"`
	LastError     string   `json:"last_error"`
	URL           string   `json:"url"`
	Synthetic     bool     `json:"synthetic"`
	QueuedAt      app.Time `json:"queued_at"`
	SentAt        app.Time `json:"sent_at"`
	NextAttemptAt app.Time `json:"next_attempt_at"`
}

const deliveryCols = `d.id, d.endpoint_id, d.event_id, d.event_type, d.state, d.attempts, d.max_attempts, d.response_code, d.response_ms, d.last_error, d.url, d.synthetic, d.queued_at, d.sent_at, d.next_attempt_at`

func scanDelivery(row interface{ Scan(...any) error }) (*Delivery, error) {
	d := &Delivery{}
	var code, ms sql.NullInt64
	err := row.Scan(&d.ID, &d.EndpointID, &d.EventID, &d.EventType, &d.State, &d.Attempts, &d.MaxAttempts, &code, &ms, &d.LastError, &d.URL, &d.Synthetic, &d.QueuedAt, &d.SentAt, &d.NextAttemptAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if code.Valid {
		c := int(code.Int64)
		d.ResponseCode = &c
	}
	if ms.Valid {
		d.ResponseMs = &ms.Int64
	}
	return d, nil
}

// GetDelivery reads one delivery.
func GetDelivery(ctx context.Context, act *app.Actor, id int64) (*Delivery, error) {
	if err := act.Require(Perm); err != nil {
		return nil, err
	}
	return scanDelivery(act.Tenant.DB.R.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries d WHERE d.id = ?`, id))
}

var deliveryList = app.ListSpec{
	Sorts:       map[string]string{"queued_at": "d.queued_at", "state": "d.state", "attempts": "d.attempts", "id": "d.id"},
	DefaultSort: "queued_at",
	Filters: map[string]app.FilterKind{"endpoint_id": app.FilterInt, "state": app.FilterString,
		"event_type": app.FilterString, "event_id": app.FilterString},
	Aliases: []string{"endpoint_id"},
}

// ListDeliveries lists the delivery log newest first: filter[endpoint_id]
// (also bare endpoint_id), filter[state] (an unknown state is a 400),
// filter[event_type], filter[event_id]; sort queued_at (default, desc),
// state, attempts, id.
func ListDeliveries(ctx context.Context, act *app.Actor, v url.Values) (app.Page[Delivery], error) {
	var p app.Page[Delivery]
	if err := act.Require(Perm); err != nil {
		return p, err
	}
	q, err := app.ParseList(v, deliveryList)
	if err != nil {
		return p, err
	}
	var where []string
	var args []any
	if id, ok := q.Int("endpoint_id"); ok {
		where, args = append(where, "d.endpoint_id = ?"), append(args, id)
	}
	if s, ok := q.Str("state"); ok {
		known := false
		for _, st := range States {
			known = known || st == s
		}
		if !known {
			return p, app.ErrValidation("invalid_filter", "filter[state]").With("allowed", States)
		}
		where, args = append(where, "d.state = ?"), append(args, s)
	}
	if s, ok := q.Str("event_type"); ok {
		where, args = append(where, "d.event_type = ?"), append(args, s)
	}
	if s, ok := q.Str("event_id"); ok {
		where, args = append(where, "d.event_id = ?"), append(args, s)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	err = act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var total int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_deliveries d`+cond, args...).Scan(&total); err != nil {
			return err
		}
		p.Meta = q.MetaFor(total)
		rows, err := tx.QueryContext(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries d`+cond+q.OrderLimit("d.id"), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		p.Rows = []Delivery{}
		for rows.Next() {
			d, err := scanDelivery(rows)
			if err != nil {
				return err
			}
			p.Rows = append(p.Rows, *d)
		}
		return rows.Err()
	})
	return p, err
}

// newDelivery inserts a queued delivery and its job in tx; the caller
// notifies the runner after commit.
func newDelivery(ctx context.Context, tx *sql.Tx, ep *Endpoint, eventID, typ string, eventAt app.Time, data string, synthetic bool, by int64, now time.Time) (int64, error) {
	r, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries(endpoint_id, event_id, event_type, event_created_at, data, synthetic, state, max_attempts, url, queued_at, gen)
		VALUES (?,?,?,?,?,?,'queued',?,?,?,1) ON CONFLICT DO NOTHING`,
		ep.ID, eventID, typ, eventAt, data, synthetic, DefaultMaxAttempts, ep.URL, app.FormatTime(now))
	if err != nil {
		return 0, err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return 0, nil // already dispatched to this endpoint
	}
	id, err := r.LastInsertId()
	if err != nil {
		return 0, err
	}
	return id, enqueue(ctx, tx, id, 1, now, by)
}

// enqueue stages the job that drives delivery id at generation gen.
func enqueue(ctx context.Context, tx *sql.Tx, id, gen int64, at time.Time, by int64) error {
	jobID, err := app.EnqueueJob(ctx, tx, JobKind, jobPayload{DeliveryID: id, Gen: gen}, at, by, jobMaxAttempts)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE webhook_deliveries SET job_id = ? WHERE id = ?`, jobID, id)
	return err
}

// TestResult is the answer of an endpoint test.
type TestResult struct {
	DeliveryID int64 `json:"delivery_id"`
}

// TestEndpoint queues one synthetic delivery (type webhook.test) to an
// enabled endpoint. 200 means queued, not delivered.
func TestEndpoint(ctx context.Context, act *app.Actor, id int64) (*TestResult, error) {
	if err := act.Require(Perm); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out TestResult
	err := t.Write(ctx, func(tx *sql.Tx) error {
		ep, err := getEndpoint(ctx, tx, id)
		if err != nil {
			return err
		}
		if !ep.Enabled {
			return app.ErrConflict("endpoint_disabled")
		}
		data := `{"endpoint_id":` + itoa(ep.ID) + `,"message":"test delivery from xr"}`
		out.DeliveryID, err = newDelivery(ctx, tx, ep, app.NewUUID(), TestEventType, app.T(t.Now()), data, true, act.ManagerID, t.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ReplayDelivery re-queues a delivery whatever its state: same event id,
// same body, a fresh attempt budget. Any job still driving it is
// superseded. The receiver may see the event twice.
func ReplayDelivery(ctx context.Context, act *app.Actor, id int64) (*Delivery, error) {
	if err := act.Require(Perm); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *Delivery
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var endpointID, gen int64
		var jobID sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT endpoint_id, gen, job_id FROM webhook_deliveries WHERE id = ?`, id).Scan(&endpointID, &gen, &jobID)
		if errors.Is(err, sql.ErrNoRows) {
			return app.ErrNotFound()
		}
		if err != nil {
			return err
		}
		ep, err := getEndpoint(ctx, tx, endpointID)
		if app.AsError(err) != nil && app.AsError(err).Code == app.CodeNotFound {
			return app.ErrConflict("endpoint_deleted")
		}
		if err != nil {
			return err
		}
		if !ep.Enabled {
			return app.ErrConflict("endpoint_disabled")
		}
		if jobID.Valid {
			if err := app.CancelQueued(ctx, tx, t.Now(), "", jobID.Int64); err != nil {
				return err
			}
		}
		now := t.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'queued', attempts = 0, max_attempts = ?, url = ?, queued_at = ?,
			sent_at = NULL, next_attempt_at = NULL, gen = ? WHERE id = ?`, DefaultMaxAttempts, ep.URL, app.FormatTime(now), gen+1, id); err != nil {
			return err
		}
		if err := enqueue(ctx, tx, id, gen+1, now, act.ManagerID); err != nil {
			return err
		}
		// The answer is the state the replay produced, read in its own
		// transaction: once committed, the runner may already be sending.
		out, err = scanDelivery(tx.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries d WHERE d.id = ?`, id))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
