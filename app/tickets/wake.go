package tickets

// The job that wakes a snoozed ticket.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"xr/app"
)

const jobWake = "tickets.wake"

type wakePayload struct {
	TicketID int64 `json:"ticket_id"`
}

// wake reopens a snoozed ticket whose time has come (a ticket snoozed
// again later, or moved since, is left alone).
func wake(ctx context.Context, jc *app.JobContext) (any, error) {
	var p wakePayload
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	woke := false
	err := t.Write(ctx, func(tx *sql.Tx) error {
		k, err := scanTicket(tx.QueryRowContext(ctx, `SELECT `+ticketCols+ticketFrom+` WHERE t.id = ?`, p.TicketID), t.Now())
		if err != nil {
			var ae *app.Error
			if errors.As(err, &ae) && ae.Code == app.CodeNotFound {
				return nil
			}
			return err
		}
		if !WakeDue(k.State, k.SnoozedUntil.Time, t.Now()) {
			return nil
		}
		woke = true
		return setState(ctx, tx, &k, ActWake, time.Time{}, t.Now())
	})
	return map[string]bool{"woke": woke}, err
}

// WakeDue reports whether a snoozed ticket is due to wake at now.
func WakeDue(state string, until, now time.Time) bool {
	return state == StateSnoozed && !until.IsZero() && !now.Before(until)
}
