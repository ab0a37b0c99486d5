package pos

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"xr/app"
	"xr/app/cards"
	"xr/db"
)

// Shift is a cashier's shift at the till.
type Shift struct {
	ID           int64      `json:"id"`
	CashierID    int64      `json:"cashier_id"`
	Cashier      string     `json:"cashier"`
	Status       string     `json:"status"` // open, closed
	OpeningFloat app.Money  `json:"opening_float"`
	ExpectedCash *app.Money `json:"expected_cash"` // set at close
	CountedCash  *app.Money `json:"counted_cash"`
	Difference   *app.Money `json:"difference"` // counted - expected
	Note         string     `json:"note"`
	OpenedAt     app.Time   `json:"opened_at"`
	ClosedAt     app.Time   `json:"closed_at"`
	ClosedBy     *int64     `json:"closed_by"`
}

const shiftCols = `s.id, s.cashier_id, COALESCE(m.username, m.email, ''), s.status, s.opening_float, s.expected_cash, s.counted_cash, s.difference,
	s.note, s.opened_at, s.closed_at, s.closed_by`

const shiftFrom = ` FROM pos_shifts s LEFT JOIN managers m ON m.id = s.cashier_id`

func scanShift(row interface{ Scan(...any) error }) (Shift, error) {
	var s Shift
	var float int64
	var exp, counted, diff, by sql.NullInt64
	err := row.Scan(&s.ID, &s.CashierID, &s.Cashier, &s.Status, &float, &exp, &counted, &diff, &s.Note, &s.OpenedAt, &s.ClosedAt, &by)
	if errors.Is(err, sql.ErrNoRows) {
		return s, app.ErrNotFound()
	}
	s.OpeningFloat, s.ExpectedCash, s.CountedCash, s.Difference = app.Money(float), mptr(exp), mptr(counted), mptr(diff)
	if by.Valid {
		v := by.Int64
		s.ClosedBy = &v
	}
	return s, err
}

func mptr(v sql.NullInt64) *app.Money {
	if !v.Valid {
		return nil
	}
	m := app.Money(v.Int64)
	return &m
}

// cashier is the manager selling: a staff caller holding one of perms
// (the permissions of the calling function's route; none for the loaders
// such a function calls).
func cashier(act *app.Actor, perms ...app.Perm) (int64, error) {
	if err := act.Require(perms...); err != nil {
		return 0, err
	}
	if act.ManagerID == 0 || act.Kind == app.CredSubscriber {
		return 0, app.ErrForbidden("")
	}
	return act.ManagerID, nil
}

// OpenShiftInput is POST /pos/shifts.
type OpenShiftInput struct {
	OpeningFloat app.Money `json:"opening_float"`
	Note         string    `json:"note"`
}

// OpenShift is POST /pos/shifts: opens a shift for the caller with an
// opening float. One open shift per cashier: 409 shift_already_open.
func OpenShift(ctx context.Context, act *app.Actor, in OpenShiftInput) (*Shift, error) {
	cid, err := cashier(act, PermPosSell)
	if err != nil {
		return nil, err
	}
	if in.OpeningFloat < 0 {
		return nil, app.ErrValidation("amount_must_not_be_negative", "opening_float")
	}
	if len(in.Note) > 500 {
		return nil, app.ErrValidation("too_long", "note")
	}
	t := act.Tenant
	var id int64
	err = t.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `INSERT INTO pos_shifts(cashier_id, status, opening_float, note, opened_at) VALUES (?, 'open', ?, ?, ?)`,
			cid, int64(in.OpeningFloat), strings.TrimSpace(in.Note), t.NowText())
		if err != nil {
			if db.IsUnique(err) {
				return app.ErrConflict("shift_already_open")
			}
			return err
		}
		id, err = r.LastInsertId()
		return err
	})
	if err != nil {
		return nil, err
	}
	s, err := scanShift(t.DB.R.QueryRowContext(ctx, `SELECT `+shiftCols+shiftFrom+` WHERE s.id = ?`, id))
	return &s, err
}

// CurrentShift is GET /pos/shifts/current: the caller's open shift (404
// shift_not_open when it has none).
func CurrentShift(ctx context.Context, act *app.Actor) (*Shift, error) {
	cid, err := cashier(act, PermPosSell)
	if err != nil {
		return nil, err
	}
	s, err := scanShift(act.Tenant.DB.R.QueryRowContext(ctx, `SELECT `+shiftCols+shiftFrom+` WHERE s.cashier_id = ? AND s.status = 'open'`, cid))
	if e := app.AsError(err); e != nil && e.Code == app.CodeNotFound {
		e := app.ErrNotFound()
		e.Reason = "shift_not_open"
		return nil, e
	}
	return &s, err
}

var shiftListSpec = app.ListSpec{
	Sorts:       map[string]string{"opened_at": "s.opened_at", "id": "s.id", "closed_at": "s.closed_at"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"status": app.FilterString, "cashier_id": app.FilterInt},
}

// ShiftListSpec is the list spec of GET /pos/shifts.
func ShiftListSpec() app.ListSpec { return shiftListSpec }

// ListShifts is GET /pos/shifts: the caller's shifts; a manager with
// prm_pos_void sees those of every cashier in its subtree
// (filter[cashier_id], filter[status] open or closed).
func ListShifts(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Shift], error) {
	cid, err := cashier(act, PermPosSell)
	if err != nil {
		return app.Page[Shift]{}, err
	}
	cond, args := visibleSQL(act, cid, "s.cashier_id")
	where := []string{cond}
	if v, ok := lq.Str("status"); ok {
		if v != "open" && v != "closed" {
			return app.Page[Shift]{}, app.ErrValidation("invalid_filter", "filter[status]")
		}
		where, args = append(where, "s.status = ?"), append(args, v)
	}
	if v, ok := lq.Int("cashier_id"); ok {
		where, args = append(where, "s.cashier_id = ?"), append(args, v)
	}
	p, err := app.QueryPage(ctx, act.Tenant, lq, shiftCols, shiftFrom+" WHERE "+strings.Join(where, " AND "), args, "s.id",
		func(rows *sql.Rows) (Shift, error) { return scanShift(rows) })
	if p.Rows == nil {
		p.Rows = []Shift{}
	}
	return p, err
}

// visibleSQL restricts a cashier column to the caller itself, or to its
// subtree when it holds prm_pos_void (a manager overseeing cashiers).
func visibleSQL(act *app.Actor, cid int64, col string) (string, []any) {
	if act.Can(PermPosVoid) {
		return act.ScopeSQL(col)
	}
	return col + " = ?", []any{cid}
}

// loadShift reads a shift the caller sees (404 otherwise).
func loadShift(ctx context.Context, q app.Querier, act *app.Actor, id int64) (Shift, error) {
	cid, err := cashier(act)
	if err != nil {
		return Shift{}, err
	}
	cond, args := visibleSQL(act, cid, "s.cashier_id")
	return scanShift(q.QueryRowContext(ctx, `SELECT `+shiftCols+shiftFrom+` WHERE s.id = ? AND `+cond, append([]any{id}, args...)...))
}

// CloseShiftInput is POST /pos/shifts/{id}/close.
type CloseShiftInput struct {
	CountedCash *app.Money `json:"counted_cash"`
	Note        string     `json:"note"`
}

// CloseShift is POST /pos/shifts/{id}/close: records the counted cash and
// the difference from the expected cash (opening float + cash sales not
// voided). The cashier closes its own shift; a manager with prm_pos_void
// one in its subtree. 409 shift_closed when it is already closed. Cards
// the cashier's till still holds are marked stuck.
func CloseShift(ctx context.Context, act *app.Actor, id int64, in CloseShiftInput) (*Shift, error) {
	if _, err := cashier(act, PermPosSell); err != nil {
		return nil, err
	}
	if in.CountedCash == nil {
		return nil, app.ErrValidation("counted_cash_required", "counted_cash")
	}
	if *in.CountedCash < 0 {
		return nil, app.ErrValidation("amount_must_not_be_negative", "counted_cash")
	}
	if len(in.Note) > 500 {
		return nil, app.ErrValidation("too_long", "note")
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		s, err := loadShift(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if s.Status != "open" {
			return app.ErrConflict("shift_closed")
		}
		// Cards the cashier's till still holds belong to a sale that never
		// completed: they become stuck (stuck_sale counts them).
		held, err := cards.StaleTillHolds(ctx, tx, s.CashierID)
		if err != nil {
			return err
		}
		if err := cards.MarkSaleStuck(ctx, tx, held, act.ManagerID); err != nil {
			return err
		}
		exp, err := expectedCash(ctx, tx, s)
		if err != nil {
			return err
		}
		diff, err := in.CountedCash.Sub(exp)
		if err != nil {
			return err
		}
		note := s.Note
		if n := strings.TrimSpace(in.Note); n != "" {
			note = n
		}
		_, err = tx.ExecContext(ctx, `UPDATE pos_shifts SET status = 'closed', expected_cash = ?, counted_cash = ?, difference = ?, note = ?, closed_at = ?, closed_by = ?
			WHERE id = ? AND status = 'open'`, int64(exp), int64(*in.CountedCash), int64(diff), note, t.NowText(), act.ManagerID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	s, err := loadShift(ctx, t.DB.R, act, id)
	return &s, err
}

// expectedCash is the cash a shift's drawer should hold: its float plus
// its cash sales that were not voided.
func expectedCash(ctx context.Context, q app.Querier, s Shift) (app.Money, error) {
	var sales int64
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(SUM(total), 0) FROM pos_sales WHERE shift_id = ? AND status = 'completed' AND payment_method = 'cash'`, s.ID).
		Scan(&sales); err != nil {
		return 0, err
	}
	return s.OpeningFloat.Add(app.Money(sales))
}

// ReportLine is one product of a shift report.
type ReportLine struct {
	Kind     string    `json:"kind"`
	RefID    int64     `json:"ref_id"`
	Name     string    `json:"name"`
	Quantity int64     `json:"quantity"`
	Amount   app.Money `json:"amount"`
	Cost     app.Money `json:"cost"`
}

// ReportMethod is one payment method of a shift report.
type ReportMethod struct {
	Method string    `json:"payment_method"`
	Sales  int64     `json:"sales"`
	Amount app.Money `json:"amount"`
}

// ShiftReport is GET /pos/shifts/{id}/report.
type ShiftReport struct {
	Shift        Shift          `json:"shift"`
	Sales        int64          `json:"sales"` // completed (not voided)
	Voids        int64          `json:"voids"` // voided sales
	VoidedAmount app.Money      `json:"voided_amount"`
	Total        app.Money      `json:"total"`         // completed sales, every method
	Cost         app.Money      `json:"cost"`          // what the cashier's wallet paid for them
	Products     []ReportLine   `json:"products"`      // per product, completed sales
	Methods      []ReportMethod `json:"methods"`       // per payment method, completed sales
	ExpectedCash app.Money      `json:"expected_cash"` // float + cash sales (live while open)
	CountedCash  *app.Money     `json:"counted_cash"`
	Difference   *app.Money     `json:"difference"`
}

// Report is GET /pos/shifts/{id}/report: sales, voids, totals per product
// and payment method, and expected against counted cash.
func Report(ctx context.Context, act *app.Actor, id int64) (*ShiftReport, error) {
	if err := act.Require(PermPosSell); err != nil {
		return nil, err
	}
	r := &ShiftReport{Products: []ReportLine{}, Methods: []ReportMethod{}}
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		s, err := loadShift(ctx, tx, act, id)
		if err != nil {
			return err
		}
		r.Shift = s
		var total, cost, voided int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(status = 'completed'), 0), COALESCE(SUM(status = 'voided'), 0),
			COALESCE(SUM(CASE WHEN status = 'completed' THEN total END), 0), COALESCE(SUM(CASE WHEN status = 'completed' THEN cost END), 0),
			COALESCE(SUM(CASE WHEN status = 'voided' THEN total END), 0) FROM pos_sales WHERE shift_id = ?`, id).
			Scan(&r.Sales, &r.Voids, &total, &cost, &voided); err != nil {
			return err
		}
		r.Total, r.Cost, r.VoidedAmount = app.Money(total), app.Money(cost), app.Money(voided)
		rows, err := tx.QueryContext(ctx, `SELECT l.kind, l.ref_id, MAX(l.name), SUM(l.quantity), SUM(l.amount), SUM(l.cost)
			FROM pos_sale_lines l JOIN pos_sales x ON x.id = l.sale_id WHERE x.shift_id = ? AND x.status = 'completed'
			GROUP BY l.kind, l.ref_id ORDER BY l.kind, l.ref_id`, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var l ReportLine
			var amt, c int64
			if err := rows.Scan(&l.Kind, &l.RefID, &l.Name, &l.Quantity, &amt, &c); err != nil {
				rows.Close()
				return err
			}
			l.Amount, l.Cost = app.Money(amt), app.Money(c)
			r.Products = append(r.Products, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT payment_method, COUNT(*), SUM(total) FROM pos_sales WHERE shift_id = ? AND status = 'completed'
			GROUP BY payment_method ORDER BY payment_method`, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var m ReportMethod
			var amt int64
			if err := rows.Scan(&m.Method, &m.Sales, &amt); err != nil {
				rows.Close()
				return err
			}
			m.Amount = app.Money(amt)
			r.Methods = append(r.Methods, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if s.ExpectedCash != nil {
			r.ExpectedCash = *s.ExpectedCash
		} else if r.ExpectedCash, err = expectedCash(ctx, tx, s); err != nil {
			return err
		}
		r.CountedCash, r.Difference = s.CountedCash, s.Difference
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}
