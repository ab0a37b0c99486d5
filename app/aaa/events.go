package aaa

import (
	"context"
	"database/sql"

	"xr/app"
)

// sessionEndedKeys are the catalogue keys of a session's end: one fact,
// one outbox row (app.EventRowArgs), delivered under each key wanted.
var sessionEndedKeys = []string{"session.ended", "user.disconnected"}

// sessionEvents writes the events of RADIUS sessions (started, ended,
// usage thresholds) in one write transaction. They come with every
// accounting packet, so a row is written only when a webhook endpoint
// wants one of its keys (read once, in the transaction), and a change is
// one row however many keys it has. A row written marks tx, so the
// dispatcher wakes once tx commits (app.EventRowArgs).
type sessionEvents struct {
	tx     *sql.Tx
	wanted app.EventSet
	exec   func(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (s *Service) sessionEvents(ctx context.Context, tx *sql.Tx, exec func(ctx context.Context, query string, args ...any) (sql.Result, error)) (*sessionEvents, error) {
	wanted, err := s.app.WantedEvents(ctx, tx)
	if err != nil {
		return nil, err
	}
	return &sessionEvents{tx: tx, wanted: wanted, exec: exec}, nil
}

// emit writes one row of data under keys (those of its keys wanted).
func (e *sessionEvents) emit(ctx context.Context, keys []string, data any) error {
	args, err := app.EventRowArgs(e.tx, keys, data)
	if err != nil {
		return err
	}
	_, err = e.exec(ctx, app.InsertEventSQL, args...)
	return err
}
