package cards

import (
	"context"
	"database/sql"

	"xr/app"
)

// Holding is one manager's unsold stock of one series: the cards it can
// sell or pass on (unused, available), and the serials they span.
type Holding struct {
	ManagerID   int64     `json:"manager_id"`
	Manager     string    `json:"manager"`
	BatchID     int64     `json:"batch_id"`
	Series      string    `json:"series"`
	CardMode    string    `json:"card_mode"`
	FaceValue   app.Money `json:"face_value"`
	Available   int64     `json:"available"`
	FirstSerial string    `json:"first_serial"`
	LastSerial  string    `json:"last_serial"`
}

var holdingListSpec = app.ListSpec{
	Sorts:       map[string]string{"manager": "h.manager", "batch_id": "h.batch_id", "available": "h.available"},
	DefaultSort: "manager", DefaultAsc: true,
	Filters: map[string]app.FilterKind{"manager_id": app.FilterInt, "batch_id": app.FilterInt},
}

// HoldingListSpec is GET /cards/holdings' query spec.
func HoldingListSpec() app.ListSpec { return holdingListSpec }

// ListHoldings is GET /cards/holdings: the stock each manager in the
// caller's subtree holds (the whole tenant for a tenant-wide caller), one
// row per manager and series, managers by name.
func ListHoldings(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Holding], error) {
	if err := act.Require(PermCardsList); err != nil {
		return app.Page[Holding]{}, err
	}
	cond, args := act.ScopeSQL("c.owner_manager_id")
	if v, ok := lq.Int("manager_id"); ok {
		cond, args = cond+" AND c.owner_manager_id = ?", append(args, v)
	}
	if v, ok := lq.Int("batch_id"); ok {
		cond, args = cond+" AND c.batch_id = ?", append(args, v)
	}
	from := ` FROM (SELECT c.owner_manager_id AS manager_id, COALESCE(m.username, m.email, '') AS manager, c.batch_id AS batch_id,
		b.name AS series, b.card_mode AS card_mode, b.face_value AS face_value, COUNT(*) AS available, MIN(c.seq) AS first_seq, MAX(c.seq) AS last_seq,
		COALESCE(m.username, m.email, '') || '#' || printf('%020d', c.batch_id) AS k
		FROM cards c JOIN card_batches b ON b.id = c.batch_id JOIN managers m ON m.id = c.owner_manager_id
		WHERE c.state = 'unused' AND c.disposition = 'available' AND b.status = 'ready' AND ` + cond + `
		GROUP BY c.owner_manager_id, c.batch_id) h`
	var page app.Page[Holding]
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var total int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*)`+from, args...).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT h.manager_id, h.manager, h.batch_id, h.series, h.card_mode, h.face_value, h.available,
			printf('%d-%06d', h.batch_id, h.first_seq), printf('%d-%06d', h.batch_id, h.last_seq)`+from+lq.OrderLimit("h.k"), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		page.Rows = []Holding{}
		for rows.Next() {
			var h Holding
			var face int64
			if err := rows.Scan(&h.ManagerID, &h.Manager, &h.BatchID, &h.Series, &h.CardMode, &face, &h.Available, &h.FirstSerial, &h.LastSerial); err != nil {
				return err
			}
			h.FaceValue = app.Money(face)
			page.Rows = append(page.Rows, h)
		}
		page.Meta = lq.MetaFor(total)
		return rows.Err()
	})
	return page, err
}
