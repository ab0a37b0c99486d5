package identity

import (
	"context"
	"database/sql"
	"errors"

	"xr/app"
)

// WalletMove is one movement of a manager's wallet. Amount is signed:
// positive credits the wallet, negative debits it.
type WalletMove struct {
	ManagerID  int64
	Amount     app.Money
	Kind       string // deposit, withdraw, topup, pay_debt, card_purchase, activation, refund, ...
	ActorID    int64
	RefType    string
	RefID      int64
	Note       string
	RequestID  string
	DocumentNo string
	// NoDebtCheck lets a debit go below -debt_limit (administrative
	// corrections); sales always respect the limit.
	NoDebtCheck bool
}

// MoveManagerWallet applies m in tx: the cached balance and an append-only
// journal row carrying the running balance, in the same transaction. A
// debit that would take the balance below -debt_limit is refused with 409
// insufficient_balance, one beyond ±MaxBalance with 409
// balance_out_of_range (nothing is written then). It is the one debit/credit primitive every area
// (manager wallet routes, activations paid by a reseller, card sales) uses.
func MoveManagerWallet(ctx context.Context, tx *sql.Tx, m WalletMove) (balanceAfter app.Money, journalID int64, err error) {
	if m.Amount == 0 {
		return 0, 0, app.ErrValidation("amount_zero", "amount")
	}
	if !m.Amount.InAmountRange() {
		return 0, 0, app.ErrAmountOutOfRange("amount")
	}
	var bal, limit int64
	err = tx.QueryRowContext(ctx, `SELECT balance, debt_limit FROM managers WHERE id = ?`, m.ManagerID).Scan(&bal, &limit)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, app.ErrNotFound()
	}
	if err != nil {
		return 0, 0, err
	}
	// The checked sum: beyond ±MaxBalance it is 409 balance_out_of_range,
	// unless a debit first breaks the debt limit.
	sum, rangeErr := app.Money(bal).Add(m.Amount)
	next := int64(sum)
	if m.Amount < 0 && !m.NoDebtCheck && (rangeErr != nil || next < -limit) {
		return app.Money(bal), 0, app.ErrConflict("insufficient_balance").With("balance", app.Money(bal)).With("debt_limit", app.Money(limit))
	}
	if rangeErr != nil {
		return app.Money(bal), 0, app.ErrBalanceOutOfRange().With("balance", app.Money(bal))
	}
	if _, err := tx.ExecContext(ctx, `UPDATE managers SET balance = ?, updated_at = ? WHERE id = ?`, next, app.StampNow(), m.ManagerID); err != nil {
		return 0, 0, err
	}
	var actor, ref any
	if m.ActorID != 0 {
		actor = m.ActorID
	}
	if m.RefID != 0 {
		ref = m.RefID
	}
	var rid any
	if m.RequestID != "" {
		rid = m.RequestID
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO manager_journal(manager_id, kind, amount, balance_after, actor_id, ref_type, ref_id, document_no, note, request_id, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?)`, m.ManagerID, m.Kind, int64(m.Amount), next, actor, m.RefType, ref, m.DocumentNo, m.Note, rid, app.StampNow())
	if err != nil {
		return 0, 0, err
	}
	journalID, _ = r.LastInsertId()
	return app.Money(next), journalID, nil
}
