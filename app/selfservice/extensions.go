package selfservice

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"xr/app"
	"xr/app/portal"
)

// Extension is one extension of the subscriber: the days it added, its
// price, and its state — active while the days it gave run, settled once
// a renewal followed it, lapsed when its days ran out without one.
type Extension struct {
	ID            int64     `json:"id"`
	ProfileID     *int64    `json:"profile_id"`
	Days          int64     `json:"days"`
	Price         app.Money `json:"price"`
	LedgerID      *int64    `json:"ledger_id"`
	OldExpiration app.Time  `json:"old_expiration"`
	NewExpiration app.Time  `json:"new_expiration"`
	State         string    `json:"state"`
	CreatedAt     app.Time  `json:"created_at"`
}

var extensionSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "e.id", "created_at": "e.id"},
	DefaultSort: "id",
}

// ExtensionSpec is the list spec of GET /portal/extensions (newest first).
func ExtensionSpec() app.ListSpec { return extensionSpec }

const extensionCols = `e.id, e.profile_id, e.days, e.price, e.ledger_id, e.old_expiration, e.new_expiration,
	EXISTS (SELECT 1 FROM user_activations a WHERE a.user_id = e.user_id AND a.refunded_at IS NULL AND a.created_at >= e.created_at), e.created_at`

func scanExtension(row interface{ Scan(...any) error }, now time.Time) (Extension, error) {
	var e Extension
	var pid, lid sql.NullInt64
	var price int64
	var settled bool
	err := row.Scan(&e.ID, &pid, &e.Days, &price, &lid, &e.OldExpiration, &e.NewExpiration, &settled, &e.CreatedAt)
	switch {
	case settled:
		e.State = "settled"
	case e.NewExpiration.Time.After(now):
		e.State = "active"
	default:
		e.State = "lapsed"
	}
	if pid.Valid && pid.Int64 != 0 {
		e.ProfileID = &pid.Int64
	}
	if lid.Valid {
		e.LedgerID = &lid.Int64
	}
	e.Price = app.Money(price)
	return e, err
}

// Extensions lists the caller's extensions.
func Extensions(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Extension], error) {
	t, uid := act.Tenant, act.SubscriberID
	if err := portal.RequireFeature(ctx, t, portal.FeatureExtend); err != nil {
		return app.Page[Extension]{}, err
	}
	now := t.Now()
	return app.QueryPage(ctx, t, lq, extensionCols, `FROM ss_extensions e WHERE e.user_id = ?`, []any{uid}, "e.id",
		func(rows *sql.Rows) (Extension, error) { return scanExtension(rows, now) })
}

// GetExtension reads one of the caller's extensions (another subscriber's
// is the 404 of a missing one).
func GetExtension(ctx context.Context, act *app.Actor, id int64) (*Extension, error) {
	t, uid := act.Tenant, act.SubscriberID
	if err := portal.RequireFeature(ctx, t, portal.FeatureExtend); err != nil {
		return nil, err
	}
	e, err := scanExtension(t.DB.R.QueryRowContext(ctx, `SELECT `+extensionCols+` FROM ss_extensions e WHERE e.id = ? AND e.user_id = ?`, id, uid), t.Now())
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	return &e, nil
}
