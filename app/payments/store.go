package payments

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"strings"

	"xr/app"
)

const paymentCols = `id, reference, gateway, purpose, purpose_ref, quantity, user_id, amount, fee, total, currency, state, reason,
	redirect_url, provider_ref, created_at, expires_at, settled_at, received_total`

func scanPayment(row interface{ Scan(...any) error }) (*Payment, error) {
	var p Payment
	var uid, recv sql.NullInt64
	var amount, fee, total int64
	var settled app.Time
	if err := row.Scan(&p.ID, &p.Reference, &p.Gateway, &p.Purpose, &p.PurposeRef, &p.Quantity, &uid, &amount, &fee, &total, &p.Currency,
		&p.State, &p.Reason, &p.RedirectURL, &p.ProviderRef, &p.CreatedAt, &p.ExpiresAt, &settled, &recv); err != nil {
		return nil, err
	}
	p.Amount, p.Fee, p.Total = app.Money(amount), app.Money(fee), app.Money(total)
	if uid.Valid {
		p.UserID = &uid.Int64
	}
	if !settled.IsZero() {
		p.SettledAt = &settled
	}
	if recv.Valid {
		m := app.Money(recv.Int64)
		p.Received = &m
	}
	return &p, nil
}

// readPayment reads one payment by a condition ("id = ?", "reference = ?").
func readPayment(ctx context.Context, q app.Querier, where string, args ...any) (*Payment, error) {
	p, err := scanPayment(q.QueryRowContext(ctx, `SELECT `+paymentCols+` FROM payments WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return p, err
}

// newReference is a payment's reference: "P-" and ten characters of an
// alphabet without look-alikes, easy to read out over the phone.
func newReference() string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	var sb strings.Builder
	sb.WriteString("P-")
	for _, c := range b {
		sb.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	return sb.String()
}

// logEvent appends to the payment's log. A provider event id seen before
// answers false: the notice was already applied.
func logEvent(ctx context.Context, tx *sql.Tx, t *app.Tenant, paymentID int64, source, eventID, kind, from, to string, actorID int64, detail string) (bool, error) {
	var actor any
	if actorID != 0 {
		actor = actorID
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO payment_events(payment_id, source, event_id, kind, from_state, to_state, actor_id, detail, at)
		VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`, paymentID, source, eventID, kind, from, to, actor, detail, t.NowText())
	if err != nil {
		return false, err
	}
	n, err := r.RowsAffected()
	return n == 1, err
}

// Event is one line of a payment's log.
type Event struct {
	ID      int64    `json:"id"`
	Source  string   `json:"source"`
	EventID string   `json:"event_id"`
	Kind    string   `json:"kind"`
	From    string   `json:"from_state"`
	To      string   `json:"to_state"`
	ActorID *int64   `json:"actor_id"`
	Detail  string   `json:"detail"`
	At      app.Time `json:"at"`
}

func paymentEvents(ctx context.Context, q app.Querier, id int64) ([]Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, source, event_id, kind, from_state, to_state, actor_id, detail, at
		FROM payment_events WHERE payment_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		var e Event
		var actor sql.NullInt64
		if err := rows.Scan(&e.ID, &e.Source, &e.EventID, &e.Kind, &e.From, &e.To, &actor, &e.Detail, &e.At); err != nil {
			return nil, err
		}
		if actor.Valid {
			e.ActorID = &actor.Int64
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// setState moves a payment (the caller checked the move is allowed).
func setState(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *Payment, to, reason string, settledBy int64) error {
	var settled, by any
	if to == StateSucceeded {
		settled = t.NowText()
	}
	if settledBy != 0 {
		by = settledBy
	}
	_, err := tx.ExecContext(ctx, `UPDATE payments SET state = ?, reason = ?, updated_at = ?, settled_at = COALESCE(?, settled_at),
		settled_by = COALESCE(?, settled_by) WHERE id = ?`, to, reason, t.NowText(), settled, by, p.ID)
	p.State, p.Reason = to, reason
	return err
}
