package cards

import (
	"context"
	"database/sql"
	"errors"

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

// ReleaseHeld returns held cards to their owner's sellable stock (a shop
// reservation whose payment failed or expired). Cards no longer held are
// left as they are.
func ReleaseHeld(ctx context.Context, tx *sql.Tx, cardIDs []int64, actorID int64) error {
	if len(cardIDs) == 0 {
		return nil
	}
	held, err := app.QueryIDs(ctx, tx, `SELECT id FROM cards WHERE disposition = ? AND id IN (`+placeholders(len(cardIDs))+`)`,
		append([]any{DispHeld}, anyIDs(cardIDs)...)...)
	if err != nil || len(held) == 0 {
		return err
	}
	return saleMove(ctx, tx, held, DispAvailable, "sale_released", actorID, "")
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

// revokedVoid is the revocation reason of a card whose till sale was voided.
const revokedVoid = "sale_void"

// SellableSeries is a ready, unsuspended series a seller may sell at the
// till: its stock in the seller's hands (Available) and whether the till
// may mint new cards into it (the seller owns the series or was allotted
// it: a price row names the seller). UnitPrice is what the seller pays per
// card (its price row, else the face value less its discount; the tenant
// owner pays nothing).
type SellableSeries struct {
	BatchID   int64     `json:"batch_id"`
	Name      string    `json:"name"`
	CardMode  string    `json:"card_mode"`
	PlanID    *int64    `json:"plan_id"`
	PlanName  string    `json:"plan_name"`
	FaceValue app.Money `json:"face_value"`
	UnitPrice app.Money `json:"unit_price"`
	Available int64     `json:"available"`
	Mintable  bool      `json:"mintable"`
}

// SellableFor lists the series sellerID may sell at the till.
func SellableFor(ctx context.Context, q app.Querier, sellerID int64) ([]SellableSeries, error) {
	rows, err := q.QueryContext(ctx, `SELECT b.id, b.name, b.card_mode, b.plan_id, COALESCE(p.name, ''), b.face_value,
		(SELECT COUNT(*) FROM cards c WHERE c.batch_id = b.id AND c.owner_manager_id = ?1 AND c.state = 'unused' AND c.disposition = 'available' AND c.expires_at > ?2),
		(b.owner_manager_id = ?1 OR EXISTS (SELECT 1 FROM card_batch_prices x WHERE x.batch_id = b.id AND x.manager_id = ?1))
		FROM card_batches b LEFT JOIN profiles p ON p.id = b.plan_id
		WHERE b.status = 'ready' AND b.suspended = 0 AND b.expiration > ?2
		AND (b.owner_manager_id = ?1 OR EXISTS (SELECT 1 FROM card_batch_prices x WHERE x.batch_id = b.id AND x.manager_id = ?1)
			OR EXISTS (SELECT 1 FROM cards c WHERE c.batch_id = b.id AND c.owner_manager_id = ?1 AND c.disposition = 'available'))
		ORDER BY b.id`, sellerID, app.StampNow())
	if err != nil {
		return nil, err
	}
	var out []SellableSeries
	for rows.Next() {
		var s SellableSeries
		var plan sql.NullInt64
		var face int64
		if err := rows.Scan(&s.BatchID, &s.Name, &s.CardMode, &plan, &s.PlanName, &face, &s.Available, &s.Mintable); err != nil {
			rows.Close()
			return nil, err
		}
		s.PlanID, s.FaceValue = ptr(plan), app.Money(face)
		out = append(out, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		unit, _, err := unitPriceFor(ctx, q, out[i].BatchID, sellerID, out[i].FaceValue)
		if err != nil {
			return nil, err
		}
		out[i].UnitPrice = unit
	}
	return out, nil
}

// TillSeries is what a till sale needs to know of one series.
type TillSeries struct {
	ID        int64
	Name      string
	FaceValue app.Money
	UnitPrice app.Money // what the seller pays per minted card
	Mintable  bool
}

// TillSeriesFor reads series batchID for sellerID in tx: 404 when it does
// not exist, 409 card_batch_not_ready / card_batch_suspended when it cannot
// be sold from.
func TillSeriesFor(ctx context.Context, tx *sql.Tx, batchID, sellerID int64) (*TillSeries, error) {
	var s TillSeries
	var status string
	var suspended bool
	var face int64
	err := tx.QueryRowContext(ctx, `SELECT b.id, b.name, b.face_value, b.status, b.suspended,
		(b.owner_manager_id = ?2 OR EXISTS (SELECT 1 FROM card_batch_prices x WHERE x.batch_id = b.id AND x.manager_id = ?2))
		FROM card_batches b WHERE b.id = ?1`, batchID, sellerID).Scan(&s.ID, &s.Name, &face, &status, &suspended, &s.Mintable)
	if err == sql.ErrNoRows {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if status != "ready" {
		return nil, app.ErrConflict("card_batch_not_ready")
	}
	if suspended {
		return nil, app.ErrConflict("card_batch_suspended")
	}
	s.FaceValue = app.Money(face)
	if s.UnitPrice, _, err = unitPriceFor(ctx, tx, batchID, sellerID, s.FaceValue); err != nil {
		return nil, err
	}
	return &s, nil
}

// AvailableFor counts the cards of batchID in sellerID's sellable stock.
func AvailableFor(ctx context.Context, tx *sql.Tx, batchID, sellerID int64) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM cards WHERE batch_id = ? AND owner_manager_id = ? AND state = 'unused' AND disposition = 'available' AND expires_at > ?`,
		batchID, sellerID, app.StampNow()).Scan(&n)
	return n, err
}

// MintForSale mints n new cards into a ready series for a till sale, owned
// by sellerID, and returns their ids (they are available stock until the
// caller holds and completes them in the same transaction). The series'
// quantity and processed grow by n and its counters with them. Codes come
// from the series' generator (charset and length); 409 card_batch_not_ready
// or card_batch_suspended when the series cannot take them, 409
// code_space_exhausted when no free code can be drawn.
func MintForSale(ctx context.Context, tx *sql.Tx, batchID, sellerID int64, n int, actorID int64) ([]int64, error) {
	var mode, charset, status string
	var processed int64
	var length int
	var suspended bool
	var exp app.Time
	err := tx.QueryRowContext(ctx, `SELECT card_mode, code_charset, status, suspended, processed, code_length, expiration FROM card_batches WHERE id = ?`, batchID).
		Scan(&mode, &charset, &status, &suspended, &processed, &length, &exp)
	if err == sql.ErrNoRows {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if status != "ready" {
		return nil, app.ErrConflict("card_batch_not_ready")
	}
	if suspended {
		return nil, app.ErrConflict("card_batch_suspended")
	}
	alphabet := charsets[charset]
	if alphabet == "" || n <= 0 {
		return nil, app.ErrConflict("card_batch_not_ready")
	}
	if err := insertCards(ctx, tx, batchID, processed, int64(n), length, alphabet, mode == ModeVoucher, sellerID, exp, newRandSource()); err != nil {
		var gf *genFailure
		if errors.As(err, &gf) {
			return nil, app.ErrConflict(gf.reason)
		}
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET quantity = quantity + ?1, processed = processed + ?1, unused = unused + ?1,
		available = available + ?1, content_version = content_version + 1, updated_at = ?2 WHERE id = ?3`, n, app.StampNow(), batchID); err != nil {
		return nil, err
	}
	if err := batchEvent(ctx, tx, batchID, "minted_at_till", actorID, map[string]any{"count": n, "from_seq": processed + 1}); err != nil {
		return nil, err
	}
	return app.QueryIDs(ctx, tx, `SELECT id FROM cards WHERE batch_id = ? AND seq > ? ORDER BY seq`, batchID, processed)
}

// VoidSold takes back cards sold at the till by a voided sale: every one
// must still be unused (409 card_already_redeemed naming the first that
// is not); they are revoked and the series' sold_counter goes down.
func VoidSold(ctx context.Context, tx *sql.Tx, cardIDs []int64, actorID int64) error {
	if len(cardIDs) == 0 {
		return nil
	}
	perBatch := map[int64][]int64{}
	for _, part := range chunk(cardIDs) {
		rows, err := tx.QueryContext(ctx, `SELECT id, batch_id, state, disposition FROM cards WHERE id IN (`+placeholders(len(part))+`)`, anyIDs(part)...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, b int64
			var st, disp string
			if err := rows.Scan(&id, &b, &st, &disp); err != nil {
				rows.Close()
				return err
			}
			if st != StateUnused || disp != DispSoldCounter {
				rows.Close()
				return app.ErrConflict("card_already_redeemed").With("card_id", id).With("state", st)
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
	for b, ids := range perBatch {
		for _, part := range chunk(ids) {
			if _, err := transition(ctx, tx, b, "id IN ("+placeholders(len(part))+")", anyIDs(part), change{State: StateRevoked,
				Sets: []string{"revoked_reason = ?", "revoked_at = ?"}, Args: []any{revokedVoid, now}}); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO card_events(batch_id, card_id, kind, actor_id, detail, created_at) SELECT batch_id, id, 'sale_voided', ?, '{}', ? FROM cards WHERE id IN (`+
				placeholders(len(part))+`)`, append([]any{nullID(actorID), now}, anyIDs(part)...)...); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET sold_counter = sold_counter - ? WHERE id = ?`, len(ids), b); err != nil {
			return err
		}
	}
	return nil
}

// SoldCard is a card as a receipt prints it.
type SoldCard struct {
	ID        int64    `json:"id"`
	BatchID   int64    `json:"batch_id"`
	Serial    string   `json:"serial"`
	Code      string   `json:"code"`
	Username  string   `json:"username,omitempty"`
	Password  string   `json:"password,omitempty"`
	State     string   `json:"state"`
	ExpiresAt app.Time `json:"expires_at"`
}

// SoldCards reads cards for a receipt, in id order.
func SoldCards(ctx context.Context, q app.Querier, ids []int64) ([]SoldCard, error) {
	var out []SoldCard
	for _, part := range chunk(ids) {
		rows, err := q.QueryContext(ctx, `SELECT id, batch_id, serial, code, COALESCE(username, ''), COALESCE(password, ''), state, expires_at
			FROM cards WHERE id IN (`+placeholders(len(part))+`) ORDER BY id`, anyIDs(part)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var c SoldCard
			if err := rows.Scan(&c.ID, &c.BatchID, &c.Serial, &c.Code, &c.Username, &c.Password, &c.State, &c.ExpiresAt); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, c)
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return nil, err
		}
		rows.Close()
	}
	return out, nil
}

// StaleTillHolds lists the cards still held by a till sale of sellerID
// (the acting manager of the hold; the shop holds without one). A till
// sale holds and completes its cards in one write transaction and writes
// are serialised, so any such hold another transaction can see belongs to
// a sale that never completed.
func StaleTillHolds(ctx context.Context, q app.Querier, sellerID int64) ([]int64, error) {
	return app.QueryIDs(ctx, q, `SELECT c.id FROM cards c JOIN card_events e ON e.id = (SELECT MAX(id) FROM card_events WHERE card_id = c.id AND kind = 'held')
		WHERE c.disposition = ? AND c.owner_manager_id = ? AND e.actor_id = ? ORDER BY c.id`, DispHeld, sellerID, sellerID)
}

// StuckCard is a card held by a till sale that never completed.
type StuckCard struct {
	ID             int64    `json:"id"`
	BatchID        int64    `json:"batch_id"`
	Serial         string   `json:"serial"`
	OwnerManagerID int64    `json:"owner_manager_id"`
	HeldBy         *int64   `json:"held_by"`
	HeldAt         app.Time `json:"held_at"`
}

// StuckCards lists the stuck cards owned within the actor's subtree
// (the first 1000, oldest hold first).
func StuckCards(ctx context.Context, act *app.Actor) ([]StuckCard, error) {
	cond, args := act.ScopeSQL("c.owner_manager_id")
	rows, err := act.Tenant.DB.R.QueryContext(ctx, `SELECT c.id, c.batch_id, c.serial, c.owner_manager_id, e.actor_id, e.created_at
		FROM cards c LEFT JOIN card_events e ON e.id = (SELECT MAX(id) FROM card_events WHERE card_id = c.id AND kind = 'held')
		WHERE c.disposition = ? AND `+cond+` ORDER BY e.created_at, c.id LIMIT 1000`, append([]any{DispStuck}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []StuckCard{}
	for rows.Next() {
		var s StuckCard
		var by sql.NullInt64
		if err := rows.Scan(&s.ID, &s.BatchID, &s.Serial, &s.OwnerManagerID, &by, &s.HeldAt); err != nil {
			return nil, err
		}
		s.HeldBy = ptr(by)
		out = append(out, s)
	}
	return out, rows.Err()
}
