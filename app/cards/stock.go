package cards

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"xr/app"
)

// Stock counters of a series are kept in the transaction of each change of
// a card's state or disposition. A card contributes to them by what it is
// (its state and disposition); a change applies the difference. Nothing is
// ever derived by subtraction: quantity - used is not the unused count.

type stock struct{ unused, used, revoked, available, held, stuck int64 }

func contrib(state, disp string) stock {
	var s stock
	switch state {
	case StateUnused:
		s.unused = 1
		if disp == DispAvailable {
			s.available = 1
		}
	case StateConsumed, StateActive, StateExhausted:
		s.used = 1
	case StateRevoked:
		s.revoked = 1
	}
	switch disp {
	case DispHeld:
		s.held = 1
	case DispStuck:
		s.stuck = 1
	}
	return s
}

func (s stock) add(o stock, n int64) stock {
	return stock{s.unused + n*o.unused, s.used + n*o.used, s.revoked + n*o.revoked, s.available + n*o.available,
		s.held + n*o.held, s.stuck + n*o.stuck}
}

func (s stock) zero() bool { return s == stock{} }

// applyStock adds d to the counters of a series.
func applyStock(ctx context.Context, tx *sql.Tx, batchID int64, d stock) error {
	if d.zero() {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE card_batches SET unused = unused + ?, used = used + ?, revoked = revoked + ?,
		available = available + ?, held = held + ?, stuck_sale = stuck_sale + ?, updated_at = ? WHERE id = ?`,
		d.unused, d.used, d.revoked, d.available, d.held, d.stuck, app.StampNow(), batchID)
	return err
}

// change is what a transition writes to the card rows besides state and
// disposition: extra "col = ?" assignments and their arguments.
type change struct {
	State string // "" = unchanged
	Disp  string // "" = unchanged
	Sets  []string
	Args  []any
}

// transition applies ch to the cards of batchID matching where (with
// args), keeping the counters exact: it counts the matched cards by their
// current (state, disposition) first, in the same transaction. It returns
// how many cards changed.
func transition(ctx context.Context, tx *sql.Tx, batchID int64, where string, args []any, ch change) (int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT state, disposition, COUNT(*) FROM cards WHERE batch_id = ? AND (`+where+`) GROUP BY 1, 2`,
		append([]any{batchID}, args...)...)
	if err != nil {
		return 0, err
	}
	var d stock
	var n int64
	for rows.Next() {
		var st, disp string
		var c int64
		if err := rows.Scan(&st, &disp, &c); err != nil {
			rows.Close()
			return 0, err
		}
		ns, nd := st, disp
		if ch.State != "" {
			ns = ch.State
		}
		if ch.Disp != "" {
			nd = ch.Disp
		}
		d = d.add(contrib(ns, nd), c).add(contrib(st, disp), -c)
		n += c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	sets := append([]string{}, ch.Sets...)
	var sargs []any
	if ch.State != "" {
		sets = append(sets, "state = ?")
		sargs = append(sargs, ch.State)
	}
	if ch.Disp != "" {
		sets = append(sets, "disposition = ?")
		sargs = append(sargs, ch.Disp)
	}
	if len(sets) == 0 {
		return n, nil
	}
	q := `UPDATE cards SET ` + strings.Join(sets, ", ") + ` WHERE batch_id = ? AND (` + where + `)`
	all := append(append(append([]any{}, ch.Args...), sargs...), batchID)
	all = append(all, args...)
	if _, err := tx.ExecContext(ctx, q, all...); err != nil {
		return 0, err
	}
	return n, applyStock(ctx, tx, batchID, d)
}

// moveCard applies ch to one card (already read) and its series' counters.
func moveCard(ctx context.Context, tx *sql.Tx, c *cardRow, ch change) error {
	n, err := transition(ctx, tx, c.BatchID, "id = ?", []any{c.ID}, ch)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("card %d vanished", c.ID)
	}
	if ch.State != "" {
		c.State = ch.State
	}
	if ch.Disp != "" {
		c.Disposition = ch.Disp
	}
	return nil
}

// markCirculated records that a series has cards in circulation (redeemed,
// used, transferred or sold): it can no longer be deleted.
func markCirculated(ctx context.Context, tx *sql.Tx, batchID int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE card_batches SET in_circulation = 1 WHERE id = ? AND in_circulation = 0`, batchID)
	return err
}

// StockCheck recounts a series from its cards and reports the first
// counter that differs from the stored one ("" when all agree). Tests and
// the operator's consistency check use it; nothing else derives stock.
func StockCheck(ctx context.Context, q app.Querier, batchID int64) (string, error) {
	var stored stock
	var processed int64
	if err := q.QueryRowContext(ctx, `SELECT unused, used, revoked, available, held, stuck_sale, processed FROM card_batches WHERE id = ?`, batchID).
		Scan(&stored.unused, &stored.used, &stored.revoked, &stored.available, &stored.held, &stored.stuck, &processed); err != nil {
		return "", err
	}
	rows, err := q.QueryContext(ctx, `SELECT state, disposition, COUNT(*) FROM cards WHERE batch_id = ? GROUP BY 1, 2`, batchID)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var got stock
	var total int64
	for rows.Next() {
		var st, disp string
		var c int64
		if err := rows.Scan(&st, &disp, &c); err != nil {
			return "", err
		}
		got = got.add(contrib(st, disp), c)
		total += c
	}
	switch {
	case got.unused != stored.unused:
		return fmt.Sprintf("unused: stored %d, counted %d", stored.unused, got.unused), nil
	case got.used != stored.used:
		return fmt.Sprintf("used: stored %d, counted %d", stored.used, got.used), nil
	case got.revoked != stored.revoked:
		return fmt.Sprintf("revoked: stored %d, counted %d", stored.revoked, got.revoked), nil
	case got.available != stored.available:
		return fmt.Sprintf("available: stored %d, counted %d", stored.available, got.available), nil
	case got.held != stored.held:
		return fmt.Sprintf("held: stored %d, counted %d", stored.held, got.held), nil
	case got.stuck != stored.stuck:
		return fmt.Sprintf("stuck_sale: stored %d, counted %d", stored.stuck, got.stuck), nil
	case total != processed:
		return fmt.Sprintf("processed: stored %d, counted %d", processed, total), nil
	}
	return "", rows.Err()
}
