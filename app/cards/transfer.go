package cards

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/identity"
)

// Transfers move unsold stock (unused cards with disposition available)
// from one manager to another, both within the caller's subtree. When a
// price applies to the receiver (the series' price row for it, else the
// tenant's default when it sells to resellers), the receiver's wallet pays
// unit price × cards and the sender's wallet, unless the sender is the
// tenant owner (the house), is credited the same: a reseller selling stock
// on to its agents. Moving cards back to the tenant owner costs nothing. A
// transfer can be reverted while the cards are still unsold stock of the
// receiver; the money moves back for the cards that return.

// TransferInput is POST /cards/transfers: card_ids; or batch_id and
// quantity (the first available cards of that series held by the sender);
// or a range of serials, first_serial to last_serial, of one series (every
// card of it must be available stock of the sender).
type TransferInput struct {
	ToManagerID   int64   `json:"to_manager_id"`
	FromManagerID int64   `json:"from_manager_id"` // default the caller
	CardIDs       []int64 `json:"card_ids"`
	BatchID       int64   `json:"batch_id"`
	Quantity      int64   `json:"quantity"`
	FirstSerial   string  `json:"first_serial"`
	LastSerial    string  `json:"last_serial"`
	RequestID     string  `json:"request_id"`
}

// serialRange parses a range of serials ("12-000031" to "12-000040") into
// its series and first and last sequence numbers.
func serialRange(first, last string) (batch, from, to int64, err error) {
	parse := func(s, field string) (int64, int64, error) {
		b, q, ok := strings.Cut(strings.TrimSpace(s), "-")
		bi, err1 := strconv.ParseInt(b, 10, 64)
		qi, err2 := strconv.ParseInt(q, 10, 64)
		if !ok || err1 != nil || err2 != nil || bi <= 0 || qi <= 0 {
			return 0, 0, app.ErrValidation("invalid_serial_range", field)
		}
		return bi, qi, nil
	}
	b1, from, err := parse(first, "first_serial")
	if err != nil {
		return 0, 0, 0, err
	}
	b2, to, err := parse(last, "last_serial")
	if err != nil {
		return 0, 0, 0, err
	}
	if b1 != b2 || to < from {
		return 0, 0, 0, app.ErrValidation("invalid_serial_range", "last_serial")
	}
	if to-from+1 > MaxQuantity {
		return 0, 0, 0, app.ErrValidation("quantity_too_large", "last_serial")
	}
	return b1, from, to, nil
}

// SeriesTransferInput is POST /card-batches/{id}/transfer: the series'
// ownership and every available card its owner holds move to to_manager_id.
type SeriesTransferInput struct {
	ToManagerID int64  `json:"to_manager_id"`
	RequestID   string `json:"request_id"`
}

// RevertInput is POST /cards/transfers/{id}/revert.
type RevertInput struct {
	RequestID string `json:"request_id"`
}

// Transfer is the outcome of a transfer (and of its revert).
type Transfer struct {
	ID            int64     `json:"id"`
	Kind          string    `json:"kind"` // cards, series, revert
	BatchID       *int64    `json:"batch_id"`
	FromManagerID int64     `json:"from_manager_id"`
	ToManagerID   int64     `json:"to_manager_id"`
	CardCount     int64     `json:"card_count"`
	UnitPrice     app.Money `json:"unit_price"`
	Amount        app.Money `json:"amount"`
	RevertsID     *int64    `json:"reverts_id"`
	CardIDs       []int64   `json:"card_ids,omitempty"` // up to 1,000 cards
	CreatedAt     app.Time  `json:"created_at"`
	Replay        bool      `json:"replay"`
}

// TransferCards is POST /cards/transfers.
func TransferCards(ctx context.Context, act *app.Actor, in TransferInput) (*Transfer, error) {
	if err := act.Require(PermCardsGenerateUser); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if in.FromManagerID == 0 {
		in.FromManagerID = act.ManagerID
	}
	var seqFrom, seqTo int64
	if in.FirstSerial != "" || in.LastSerial != "" {
		var err error
		if in.BatchID, seqFrom, seqTo, err = serialRange(in.FirstSerial, in.LastSerial); err != nil {
			return nil, err
		}
		in.Quantity = seqTo - seqFrom + 1
	}
	switch {
	case len(in.CardIDs) > app.MaxBulkIDs:
		return nil, app.ErrValidation("too_many_ids", "card_ids")
	case len(in.CardIDs) == 0 && (in.BatchID <= 0 || in.Quantity <= 0):
		return nil, app.ErrValidation("card_ids_required", "card_ids")
	case len(in.CardIDs) == 0 && in.Quantity > MaxQuantity:
		return nil, app.ErrValidation("quantity_too_large", "quantity")
	case in.FromManagerID == in.ToManagerID:
		return nil, app.ErrValidation("same_manager", "to_manager_id")
	}
	return runTransfer(ctx, act, in.RequestID, fmt.Sprintf("cards/transfers/by/%d", act.ManagerID), in, nil, func(tx *sql.Tx) (Transfer, error) {
		if err := requireManagerInScope(ctx, tx, act, in.FromManagerID, "from_manager_id"); err != nil {
			return Transfer{}, err
		}
		if err := requireManagerInScope(ctx, tx, act, in.ToManagerID, "to_manager_id"); err != nil {
			return Transfer{}, err
		}
		var ids []int64
		if len(in.CardIDs) > 0 {
			// Every card named must be available stock of the sender.
			ph := strings.TrimSuffix(strings.Repeat("?,", len(in.CardIDs)), ",")
			args := []any{in.FromManagerID}
			for _, id := range in.CardIDs {
				args = append(args, id)
			}
			var err error
			if ids, err = app.QueryIDs(ctx, tx, `SELECT c.id FROM cards c JOIN card_batches b ON b.id = c.batch_id WHERE c.owner_manager_id = ?
				AND c.state = 'unused' AND c.disposition = 'available' AND b.status = 'ready' AND c.id IN (`+ph+`) ORDER BY c.id`, args...); err != nil {
				return Transfer{}, err
			}
			if len(ids) != len(dedupe(in.CardIDs)) {
				return Transfer{}, app.ErrConflict("cards_not_transferable")
			}
		} else {
			// A holder moves its cards of a series it does not own.
			cond, args := readScope(act)
			b, err := loadBatchIn(ctx, tx, in.BatchID, cond, args)
			if err != nil {
				return Transfer{}, err
			}
			if b.Status != "ready" {
				return Transfer{}, app.ErrConflict("card_batch_not_ready")
			}
			q, qa := `SELECT id FROM cards WHERE batch_id = ? AND owner_manager_id = ? AND state = 'unused' AND disposition = 'available'`,
				[]any{in.BatchID, in.FromManagerID}
			if seqTo > 0 {
				q, qa = q+` AND seq BETWEEN ? AND ?`, append(qa, seqFrom, seqTo)
			}
			if ids, err = app.QueryIDs(ctx, tx, q+` ORDER BY seq LIMIT ?`, append(qa, in.Quantity)...); err != nil {
				return Transfer{}, err
			}
			switch {
			case seqTo > 0 && int64(len(ids)) < in.Quantity:
				return Transfer{}, app.ErrConflict("cards_not_transferable")
			case int64(len(ids)) < in.Quantity:
				return Transfer{}, app.ErrConflict("insufficient_stock").With("available", len(ids))
			}
		}
		return moveCards(ctx, tx, act, "cards", 0, in.FromManagerID, in.ToManagerID, ids, in.RequestID, 0)
	})
}

// TransferSeries is POST /card-batches/{id}/transfer: the series' owner
// becomes to_manager_id and the available cards the old owner held move
// with it (cards already passed on to others stay where they are).
func TransferSeries(ctx context.Context, act *app.Actor, id int64, in SeriesTransferInput) (*Transfer, error) {
	if err := act.Require(PermCardsGenerateUser); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	var b *Batch
	// The series is scope-checked before the key is looked up: a replay
	// never reveals a series outside the caller's subtree.
	pre := func(tx *sql.Tx) (err error) { b, err = loadBatch(ctx, tx, act, id); return err }
	return runTransfer(ctx, act, in.RequestID, fmt.Sprintf("card-batches/%d/transfer", id), in, pre, func(tx *sql.Tx) (Transfer, error) {
		if b.Status != "ready" {
			return Transfer{}, app.ErrConflict("card_batch_not_ready")
		}
		if err := requireManagerInScope(ctx, tx, act, in.ToManagerID, "to_manager_id"); err != nil {
			return Transfer{}, err
		}
		if in.ToManagerID == b.OwnerManagerID {
			return Transfer{}, app.ErrValidation("same_manager", "to_manager_id")
		}
		ids, err := app.QueryIDs(ctx, tx, `SELECT id FROM cards WHERE batch_id = ? AND owner_manager_id = ? AND state = 'unused' AND disposition = 'available' ORDER BY seq`,
			id, b.OwnerManagerID)
		if err != nil {
			return Transfer{}, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET owner_manager_id = ?, updated_at = ? WHERE id = ?`, in.ToManagerID, act.Tenant.NowText(), id); err != nil {
			return Transfer{}, err
		}
		// The series changed hands (even with no available card moving):
		// it can no longer be deleted, whose refund would go to the new
		// owner.
		if err := markCirculated(ctx, tx, id); err != nil {
			return Transfer{}, err
		}
		return moveCards(ctx, tx, act, "series", id, b.OwnerManagerID, in.ToManagerID, ids, in.RequestID, 0)
	})
}

// RevertTransfer is POST /cards/transfers/{id}/revert: the cards of the
// transfer that are still unsold stock of the receiver go back to the
// sender, and the money they cost moves back. 409 transfer_already_reverted.
func RevertTransfer(ctx context.Context, act *app.Actor, id int64, in RevertInput) (*Transfer, error) {
	if err := act.Require(PermCardsGenerateUser); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	var from, to, unit int64
	var kind string
	var batch sql.NullInt64
	// The transfer is scope-checked before the key is looked up: a replay
	// never reveals a transfer outside the caller's subtree.
	pre := func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT kind, batch_id, from_manager_id, to_manager_id, unit_price FROM card_transfers WHERE id = ?`, id).
			Scan(&kind, &batch, &from, &to, &unit)
		if errors.Is(err, sql.ErrNoRows) {
			return app.ErrNotFound()
		}
		if err != nil {
			return err
		}
		for _, m := range []int64{from, to} {
			if err := act.RequireScope(ctx, tx, m); err != nil {
				return err
			}
		}
		return nil
	}
	return runTransfer(ctx, act, in.RequestID, fmt.Sprintf("cards/transfers/%d/revert", id), in, pre, func(tx *sql.Tx) (Transfer, error) {
		if kind == "revert" {
			return Transfer{}, app.ErrConflict("transfer_not_revertible")
		}
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM card_transfers WHERE reverts_id = ?`, id).Scan(&one); err == nil {
			return Transfer{}, app.ErrConflict("transfer_already_reverted")
		}
		ids, err := app.QueryIDs(ctx, tx, `SELECT c.id FROM card_transfer_items i JOIN cards c ON c.id = i.card_id WHERE i.transfer_id = ? AND c.owner_manager_id = ?
			AND c.state = 'unused' AND c.disposition = 'available' ORDER BY c.id`, id, to)
		if err != nil {
			return Transfer{}, err
		}
		if kind == "series" && batch.Valid {
			if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET owner_manager_id = ?, updated_at = ? WHERE id = ? AND owner_manager_id = ?`,
				from, act.Tenant.NowText(), batch.Int64, to); err != nil {
				return Transfer{}, err
			}
		}
		return moveCards(ctx, tx, act, "revert", batch.Int64, to, from, ids, in.RequestID, id, app.Money(unit))
	})
}

// runTransfer runs fn once per (key, subject) in one transaction; pre (when
// given) authorises the target first, in the same transaction, so that a
// replay outside the caller's scope is the 404 of an unknown record.
func runTransfer(ctx context.Context, act *app.Actor, key, subject string, input any, pre func(tx *sql.Tx) error, fn func(tx *sql.Tx) (Transfer, error)) (*Transfer, error) {
	var out Transfer
	var replay bool
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if pre != nil {
			if err := pre(tx); err != nil {
				return err
			}
		}
		var err error
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: key, Subject: subject, Input: input}, func() (Transfer, error) { return fn(tx) })
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

// moveCards changes the owner of ids (available stock of from) to to,
// charges the receiver (or, for a revert, refunds at the original unit
// price), records the transfer, its items and the cards' events, and
// bumps the series' cumulative transferred counters.
func moveCards(ctx context.Context, tx *sql.Tx, act *app.Actor, kind string, batchID, from, to int64, ids []int64, key string, reverts int64, revertUnit ...app.Money) (Transfer, error) {
	out := Transfer{Kind: kind, FromManagerID: from, ToManagerID: to, CardCount: int64(len(ids))}
	if len(ids) <= app.MaxBulkIDs {
		out.CardIDs = ids
	}
	if batchID != 0 {
		out.BatchID = &batchID
	}
	if reverts != 0 {
		out.RevertsID = &reverts
	}
	// Per series: the price and the counters.
	perBatch := map[int64][]int64{}
	var order []int64
	for _, part := range chunk(ids) {
		rows, err := tx.QueryContext(ctx, `SELECT id, batch_id FROM cards WHERE id IN (`+placeholders(len(part))+`)`, anyIDs(part)...)
		if err != nil {
			return out, err
		}
		for rows.Next() {
			var id, b int64
			if err := rows.Scan(&id, &b); err != nil {
				rows.Close()
				return out, err
			}
			if perBatch[b] == nil {
				order = append(order, b)
			}
			perBatch[b] = append(perBatch[b], id)
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return out, err
		}
		rows.Close()
	}
	now := act.Tenant.NowText()
	r, err := tx.ExecContext(ctx, `INSERT INTO card_transfers(kind, batch_id, from_manager_id, to_manager_id, card_count, actor_id, reverts_id, request_id, created_at)
		VALUES (?,?,?,?,?,?,?,?,?)`, kind, nullID(batchID), from, to, len(ids), act.ManagerID, nullID(reverts), key, now)
	if err != nil {
		return out, err
	}
	out.ID, _ = r.LastInsertId()
	if err := out.CreatedAt.Scan(now); err != nil {
		return out, err
	}
	var total app.Money
	for _, b := range order {
		cards := perBatch[b]
		var unit app.Money
		var priced bool
		if len(revertUnit) > 0 {
			unit, priced = revertUnit[0], revertUnit[0] > 0
		} else {
			var face int64
			if err := tx.QueryRowContext(ctx, `SELECT face_value FROM card_batches WHERE id = ?`, b).Scan(&face); err != nil {
				return out, err
			}
			if unit, priced, err = unitPriceFor(ctx, tx, b, to, app.Money(face)); err != nil {
				return out, err
			}
		}
		if priced {
			out.UnitPrice = unit // one series in practice; the last one's price otherwise
			part, err := unit.Mul(int64(len(cards)))
			if err != nil {
				return out, err
			}
			if total, err = total.Add(part); err != nil || !total.InAmountRange() {
				return out, app.ErrAmountOutOfRange("amount")
			}
		}
		detail := jsonText(map[string]any{"transfer_id": out.ID, "kind": kind, "from_manager_id": from, "to_manager_id": to})
		for _, part := range chunk(cards) {
			ph := placeholders(len(part))
			if _, err := tx.ExecContext(ctx, `UPDATE cards SET owner_manager_id = ? WHERE id IN (`+ph+`)`, append([]any{to}, anyIDs(part)...)...); err != nil {
				return out, err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO card_transfer_items(transfer_id, card_id, batch_id) SELECT ?, id, batch_id FROM cards WHERE id IN (`+ph+`)`,
				append([]any{out.ID}, anyIDs(part)...)...); err != nil {
				return out, err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO card_events(batch_id, card_id, kind, actor_id, detail, created_at) SELECT batch_id, id, 'transferred', ?, ?, ? FROM cards WHERE id IN (`+ph+`)`,
				append([]any{act.ManagerID, detail, now}, anyIDs(part)...)...); err != nil {
				return out, err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET transferred = transferred + ?, in_circulation = 1, updated_at = ? WHERE id = ?`, len(cards), now, b); err != nil {
			return out, err
		}
	}
	out.Amount = total
	if total > 0 {
		// The receiver pays, the sender (unless the house) is paid; for a
		// revert the receiver is the original sender.
		payer, payee := to, from
		payerKind, payeeKind := "card_purchase", "card_sale"
		if kind == "revert" {
			payerKind, payeeKind = "card_sale_revert", "card_purchase_refund"
		}
		if root, err := isRoot(ctx, tx, payer); err != nil {
			return out, err
		} else if !root {
			if _, _, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: payer, Amount: -total, Kind: payerKind, ActorID: act.ManagerID,
				RefType: "card_transfer", RefID: out.ID, RequestID: key}); err != nil {
				return out, err
			}
		}
		if root, err := isRoot(ctx, tx, payee); err != nil {
			return out, err
		} else if !root {
			if _, _, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: payee, Amount: total, Kind: payeeKind, ActorID: act.ManagerID,
				RefType: "card_transfer", RefID: out.ID, RequestID: key}); err != nil {
				return out, err
			}
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE card_transfers SET unit_price = ?, amount = ? WHERE id = ?`, int64(out.UnitPrice), int64(total), out.ID)
	return out, err
}

// chunk splits ids into groups small enough for one IN (...) list.
func chunk(ids []int64) [][]int64 {
	var out [][]int64
	for len(ids) > 0 {
		n := min(len(ids), 500)
		out = append(out, ids[:n])
		ids = ids[n:]
	}
	return out
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

func anyIDs(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

func dedupe(ids []int64) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
