package cards

import (
	"context"
	"database/sql"

	"xr/app"
)

// Sales of cards by other areas (the point of sale, the shop), inside
// THEIR transaction. A till sale holds cards (disposition held: no longer
// sellable stock), then completes (sold_counter) — or, when the sale never
// completes, the till marks them stuck (stuck_sale counts them; nothing
// reclaims them). The shop sells directly (sold_online). A sold card is
// still unused until someone redeems it.

// HoldForSale holds n available cards of a ready, unsuspended series owned
// by sellerID for a till sale and returns their ids (409 insufficient_stock).
func HoldForSale(ctx context.Context, tx *sql.Tx, batchID, sellerID int64, n int, actorID int64) ([]int64, error) {
	var status string
	var suspended bool
	if err := tx.QueryRowContext(ctx, `SELECT status, suspended FROM card_batches WHERE id = ?`, batchID).Scan(&status, &suspended); err != nil {
		if err == sql.ErrNoRows {
			return nil, app.ErrNotFound()
		}
		return nil, err
	}
	if status != "ready" {
		return nil, app.ErrConflict("card_batch_not_ready")
	}
	if suspended {
		return nil, app.ErrConflict("card_batch_suspended")
	}
	ids, err := app.QueryIDs(ctx, tx, `SELECT id FROM cards WHERE batch_id = ? AND owner_manager_id = ? AND state = 'unused' AND disposition = 'available'
		AND expires_at > ? ORDER BY seq LIMIT ?`, batchID, sellerID, app.StampNow(), n)
	if err != nil {
		return nil, err
	}
	if len(ids) < n {
		return nil, app.ErrConflict("insufficient_stock").With("available", len(ids))
	}
	return ids, saleMove(ctx, tx, ids, DispHeld, "held", actorID, "")
}

// CompleteSale marks held (or stuck) cards sold through channel
// (sold_counter or sold_online) and counts the sale.
func CompleteSale(ctx context.Context, tx *sql.Tx, cardIDs []int64, channel string, actorID int64) error {
	disp := DispSoldCounter
	if channel == DispSoldOnline {
		disp = DispSoldOnline
	}
	return saleMove(ctx, tx, cardIDs, disp, "sold", actorID, disp)
}

// MarkSaleStuck records that the till sale holding cardIDs never completed.
func MarkSaleStuck(ctx context.Context, tx *sql.Tx, cardIDs []int64, actorID int64) error {
	return saleMove(ctx, tx, cardIDs, DispStuck, "sale_stuck", actorID, "")
}

// SellOnline sells n available cards of a series directly (the shop).
func SellOnline(ctx context.Context, tx *sql.Tx, batchID, sellerID int64, n int, actorID int64) ([]int64, error) {
	ids, err := HoldForSale(ctx, tx, batchID, sellerID, n, actorID)
	if err != nil {
		return nil, err
	}
	return ids, CompleteSale(ctx, tx, ids, DispSoldOnline, actorID)
}

func saleMove(ctx context.Context, tx *sql.Tx, ids []int64, disp, eventKind string, actorID int64, soldCounter string) error {
	perBatch := map[int64][]int64{}
	for _, part := range chunk(ids) {
		rows, err := tx.QueryContext(ctx, `SELECT id, batch_id FROM cards WHERE id IN (`+placeholders(len(part))+`)`, anyIDs(part)...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, b int64
			if err := rows.Scan(&id, &b); err != nil {
				rows.Close()
				return err
			}
			perBatch[b] = append(perBatch[b], id)
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return err
		}
		rows.Close()
	}
	now := app.StampNow()
	for b, cards := range perBatch {
		for _, part := range chunk(cards) {
			ch := change{Disp: disp}
			if soldCounter != "" {
				ch.Sets, ch.Args = []string{"sold_at = ?"}, []any{now}
			}
			if _, err := transition(ctx, tx, b, "id IN ("+placeholders(len(part))+")", anyIDs(part), ch); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO card_events(batch_id, card_id, kind, actor_id, detail, created_at) SELECT batch_id, id, ?, ?, ?, ? FROM cards WHERE id IN (`+
				placeholders(len(part))+`)`, append([]any{eventKind, nullID(actorID), jsonText(map[string]any{"disposition": disp}), now}, anyIDs(part)...)...); err != nil {
				return err
			}
		}
		col := ""
		switch soldCounter {
		case DispSoldCounter:
			col = "sold_counter"
		case DispSoldOnline:
			col = "sold_online"
		}
		if col != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET `+col+` = `+col+` + ?, in_circulation = 1 WHERE id = ?`, len(cards), b); err != nil {
				return err
			}
		} else if err := markCirculated(ctx, tx, b); err != nil {
			return err
		}
	}
	return nil
}
