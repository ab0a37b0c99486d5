package pos

import (
	"context"
	"database/sql"

	"xr/app"
	"xr/app/cards"
)

// PlanProduct is a plan the till renews for a subscriber of the caller's
// subtree (the subscriber's bound plan is the one renewed).
type PlanProduct struct {
	ProfileID    int64     `json:"profile_id"`
	Name         string    `json:"name"`
	Price        app.Money `json:"price"`
	DurationDays int64     `json:"duration_days"`
}

// AddonProduct is an enabled add-on of the catalogue.
type AddonProduct struct {
	AddonID int64     `json:"addon_id"`
	Name    string    `json:"name"`
	Kind    string    `json:"kind"`
	Amount  int64     `json:"amount"`
	Price   app.Money `json:"price"`
}

// Products is GET /pos/products: what the caller may sell at the till.
type Products struct {
	// Cards of ready series it owns or was allotted: face value (what the
	// customer pays), unit_price (what its wallet pays per minted card),
	// its stock in hand and whether the till may mint into the series.
	Cards []cards.SellableSeries `json:"cards"`
	// Renewals of subscribers in its subtree (line kind renewal).
	Renewals []PlanProduct `json:"renewals"`
	// Add-ons (line kind addon).
	Addons []AddonProduct `json:"addons"`
	// Wallet top-ups of subscribers' balances (line kind topup): any
	// positive amount up to the tenant's maximum.
	Topup struct {
		Enabled bool      `json:"enabled"`
		Max     app.Money `json:"max"`
	} `json:"topup"`
}

// ListProducts is GET /pos/products.
func ListProducts(ctx context.Context, act *app.Actor) (*Products, error) {
	cid, err := cashier(act, PermPosSell)
	if err != nil {
		return nil, err
	}
	p := &Products{Cards: []cards.SellableSeries{}, Renewals: []PlanProduct{}, Addons: []AddonProduct{}}
	p.Topup.Enabled, p.Topup.Max = true, app.Money(app.MaxAmount)
	err = act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		cs, err := cards.SellableFor(ctx, tx, cid)
		if err != nil {
			return err
		}
		if cs != nil {
			p.Cards = cs
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, name, price, duration_days FROM profiles WHERE enabled = 1 ORDER BY name`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var r PlanProduct
			var price int64
			if err := rows.Scan(&r.ProfileID, &r.Name, &price, &r.DurationDays); err != nil {
				rows.Close()
				return err
			}
			r.Price = app.Money(price)
			p.Renewals = append(p.Renewals, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT id, name, kind, amount, price FROM addons WHERE enabled = 1 ORDER BY name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r AddonProduct
			var price int64
			if err := rows.Scan(&r.AddonID, &r.Name, &r.Kind, &r.Amount, &price); err != nil {
				return err
			}
			r.Price = app.Money(price)
			p.Addons = append(p.Addons, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}
