package pos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"xr/app"
	"xr/app/cards"
	"xr/app/identity"
	"xr/app/subs"
)

// Line kinds of a till sale.
const (
	KindCard    = "card"
	KindRenewal = "renewal"
	KindAddon   = "addon"
	KindTopup   = "topup"
)

// LineKind is a JSON enum of the line kinds.
type LineKind string

func (k *LineKind) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, KindCard, KindRenewal, KindAddon, KindTopup)
	*k = LineKind(s)
	return err
}

// PaymentMethod is how the customer paid: cash (counted in the drawer),
// card or transfer.
type PaymentMethod string

func (m *PaymentMethod) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, "cash", "card", "transfer")
	*m = PaymentMethod(s)
	return err
}

// CardSource is where a card line's cards come from: auto (the caller's
// stock first, then new cards minted into the series), stock or mint.
type CardSource string

func (c *CardSource) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, "auto", "stock", "mint")
	*c = CardSource(s)
	return err
}

// LineInput is one line of a till sale.
type LineInput struct {
	Kind     LineKind   `json:"kind"`
	BatchID  int64      `json:"batch_id,omitempty"` // card
	Source   CardSource `json:"source,omitempty"`   // card: auto (default), stock, mint
	Quantity int64      `json:"quantity,omitempty"` // card, addon (default 1)
	UserID   int64      `json:"user_id,omitempty"`  // renewal, addon, topup
	Username string     `json:"username,omitempty"` // instead of user_id
	AddonID  int64      `json:"addon_id,omitempty"` // addon
	Amount   app.Money  `json:"amount,omitempty"`   // topup
}

// SaleInput is POST /pos/sales.
type SaleInput struct {
	RequestID     string        `json:"request_id"`
	PaymentMethod PaymentMethod `json:"payment_method"` // default cash
	Note          string        `json:"note"`
	Lines         []LineInput   `json:"lines"`
}

// Limits of one sale.
const (
	MaxLines      = 20
	MaxSaleCards  = 100
	maxLineAddons = 100
)

// SaleLine is a line of a stored sale.
type SaleLine struct {
	ID        int64            `json:"id"`
	Kind      string           `json:"kind"`
	RefID     int64            `json:"ref_id"` // card: series; renewal: plan; addon: add-on
	UserID    *int64           `json:"user_id"`
	Name      string           `json:"name"`
	Quantity  int64            `json:"quantity"`
	UnitPrice app.Money        `json:"unit_price"`
	Amount    app.Money        `json:"amount"`
	Cost      app.Money        `json:"cost"`
	Minted    int64            `json:"minted"`
	EffectID  int64            `json:"effect_id"`
	Cards     []cards.SoldCard `json:"cards,omitempty"`
}

// Sale is a till sale.
type Sale struct {
	ID            int64      `json:"id"`
	ShiftID       int64      `json:"shift_id"`
	CashierID     int64      `json:"cashier_id"`
	Cashier       string     `json:"cashier"`
	RequestID     string     `json:"request_id"`
	Status        string     `json:"status"` // completed, voided
	PaymentMethod string     `json:"payment_method"`
	Total         app.Money  `json:"total"`
	Cost          app.Money  `json:"cost"`
	Note          string     `json:"note"`
	PrintCount    int64      `json:"print_count"`
	PrintedAt     app.Time   `json:"printed_at"`
	CreatedAt     app.Time   `json:"created_at"`
	VoidedAt      app.Time   `json:"voided_at"`
	VoidedBy      *int64     `json:"voided_by"`
	VoidableUntil app.Time   `json:"voidable_until"` // by the cashier alone (pos_undo_window_seconds)
	Lines         []SaleLine `json:"lines,omitempty"`
	Replay        bool       `json:"replay"`
}

const saleCols = `x.id, x.shift_id, x.cashier_id, COALESCE(m.username, m.email, ''), x.request_id, x.status, x.payment_method, x.total, x.cost,
	x.note, x.print_count, x.printed_at, x.created_at, x.voided_at, x.voided_by`

const saleFrom = ` FROM pos_sales x LEFT JOIN managers m ON m.id = x.cashier_id`

func scanSale(row interface{ Scan(...any) error }) (Sale, error) {
	var s Sale
	var total, cost int64
	var by sql.NullInt64
	err := row.Scan(&s.ID, &s.ShiftID, &s.CashierID, &s.Cashier, &s.RequestID, &s.Status, &s.PaymentMethod, &total, &cost,
		&s.Note, &s.PrintCount, &s.PrintedAt, &s.CreatedAt, &s.VoidedAt, &by)
	if errors.Is(err, sql.ErrNoRows) {
		return s, app.ErrNotFound()
	}
	s.Total, s.Cost = app.Money(total), app.Money(cost)
	if by.Valid {
		v := by.Int64
		s.VoidedBy = &v
	}
	return s, err
}

// validate checks a sale's shape before anything is read.
func (in *SaleInput) validate() error {
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return err
	}
	if in.PaymentMethod == "" {
		in.PaymentMethod = "cash"
	}
	if len(in.Note) > 500 {
		return app.ErrValidation("too_long", "note")
	}
	if len(in.Lines) == 0 {
		return app.ErrValidation("lines_required", "lines")
	}
	if len(in.Lines) > MaxLines {
		return app.ErrValidation("too_many_lines", "lines").With("max", MaxLines)
	}
	var ncards int64
	for i := range in.Lines {
		l := &in.Lines[i]
		f := func(name string) string { return fmt.Sprintf("lines[%d].%s", i, name) }
		switch l.Kind {
		case KindCard:
			if l.BatchID <= 0 {
				return app.ErrValidation("batch_id_required", f("batch_id"))
			}
			if l.Source == "" {
				l.Source = "auto"
			}
			if l.Quantity <= 0 || l.Quantity > MaxSaleCards {
				return app.ErrValidation("out_of_range", f("quantity")).With("max", MaxSaleCards)
			}
			if ncards += l.Quantity; ncards > MaxSaleCards {
				return app.ErrValidation("too_many_cards", f("quantity")).With("max", MaxSaleCards)
			}
		case KindRenewal, KindAddon, KindTopup:
			if l.UserID <= 0 && strings.TrimSpace(l.Username) == "" {
				return app.ErrValidation("user_required", f("user_id"))
			}
			switch l.Kind {
			case KindRenewal:
				l.Quantity = 1
			case KindAddon:
				if l.AddonID <= 0 {
					return app.ErrValidation("addon_id_required", f("addon_id"))
				}
				if l.Quantity == 0 {
					l.Quantity = 1
				}
				if l.Quantity < 0 || l.Quantity > maxLineAddons {
					return app.ErrValidation("out_of_range", f("quantity"))
				}
			case KindTopup:
				if l.Amount <= 0 {
					return app.ErrValidation("amount_must_be_positive", f("amount"))
				}
				l.Quantity = 1
			}
		case "":
			return app.ErrValidation("kind_required", f("kind"))
		}
	}
	return nil
}

// saleRef is what the idempotency record keeps: the sale it made.
type saleRef struct {
	SaleID int64 `json:"sale_id"`
}

// Sell is POST /pos/sales: one transaction that needs the caller's open
// shift (409 shift_not_open), hands over cards (taken from the caller's
// stock or minted into the series, disposition sold_counter), renews
// plans, buys add-ons and tops up balances of subscribers in the caller's
// subtree, charges the caller's wallet at its price (minted cards at its
// unit price, top-ups at their amount, renewals and add-ons through their
// own charge) and records the sale. Anything refused stores nothing; a
// replay of request_id answers the original sale (replay true).
func Sell(ctx context.Context, act *app.Actor, in SaleInput) (*Sale, error) {
	cid, err := cashier(act, PermPosSell)
	if err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	t := act.Tenant
	var ref saleRef
	var replay bool
	err = t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		ref, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: in.RequestID, Subject: fmt.Sprintf("pos/sales/%d", cid), Input: in},
			func() (saleRef, error) {
				id, err := sell(ctx, tx, act, cid, in)
				return saleRef{SaleID: id}, err
			})
		return err
	})
	if err != nil {
		return nil, err
	}
	s, err := GetSale(ctx, act, ref.SaleID)
	if err != nil {
		return nil, err
	}
	s.Replay = replay
	return s, nil
}

func sell(ctx context.Context, tx *sql.Tx, act *app.Actor, cid int64, in SaleInput) (int64, error) {
	t := act.Tenant
	var shiftID int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM pos_shifts WHERE cashier_id = ? AND status = 'open'`, cid).Scan(&shiftID)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, app.ErrConflict("shift_not_open")
	}
	if err != nil {
		return 0, err
	}
	var parent sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT parent_id FROM managers WHERE id = ?`, cid).Scan(&parent); err != nil {
		return 0, err
	}
	house := !parent.Valid // the tenant owner pays nothing to itself
	now := t.NowText()
	r, err := tx.ExecContext(ctx, `INSERT INTO pos_sales(shift_id, cashier_id, request_id, payment_method, total, cost, note, created_at) VALUES (?,?,?,?,0,0,?,?)`,
		shiftID, cid, in.RequestID, string(in.PaymentMethod), strings.TrimSpace(in.Note), now)
	if err != nil {
		return 0, err
	}
	saleID, _ := r.LastInsertId()
	var total, cost, walletCost app.Money
	for i, l := range in.Lines {
		f := func(name string) string { return fmt.Sprintf("lines[%d].%s", i, name) }
		line := SaleLine{Kind: string(l.Kind), Quantity: l.Quantity}
		var cardIDs []int64
		switch l.Kind {
		case KindCard:
			ts, err := cards.TillSeriesFor(ctx, tx, l.BatchID, cid)
			if err != nil {
				if e := app.AsError(err); e != nil && e.Code == app.CodeNotFound {
					return 0, app.ErrValidation("card_batch_not_found", f("batch_id"))
				}
				return 0, withField(err, f("batch_id"))
			}
			fromStock, mint := l.Quantity, int64(0)
			if l.Source != "stock" {
				avail := int64(0)
				if l.Source == "auto" {
					if avail, err = cards.AvailableFor(ctx, tx, l.BatchID, cid); err != nil {
						return 0, err
					}
				}
				fromStock = min(avail, l.Quantity)
				mint = l.Quantity - fromStock
				if mint > 0 && !ts.Mintable {
					if l.Source == "mint" {
						return 0, app.ErrConflict("card_batch_not_mintable").With("field", f("batch_id"))
					}
					return 0, app.ErrConflict("insufficient_stock").With("available", avail).With("field", f("quantity"))
				}
			}
			if fromStock > 0 {
				ids, err := cards.HoldForSale(ctx, tx, l.BatchID, cid, int(fromStock), cid)
				if err != nil {
					return 0, withField(err, f("quantity"))
				}
				cardIDs = append(cardIDs, ids...)
			}
			if mint > 0 {
				ids, err := cards.MintForSale(ctx, tx, l.BatchID, cid, int(mint), cid)
				if err != nil {
					return 0, withField(err, f("batch_id"))
				}
				cardIDs = append(cardIDs, ids...)
			}
			if err := cards.CompleteSale(ctx, tx, cardIDs, cards.DispSoldCounter, cid); err != nil {
				return 0, err
			}
			line.RefID, line.Name, line.UnitPrice, line.Minted = ts.ID, ts.Name, ts.FaceValue, mint
			if !house {
				// Stock in the caller's hands was paid when it was allotted;
				// minted cards are paid now.
				if line.Cost, err = ts.UnitPrice.Mul(mint); err != nil {
					return 0, app.ErrAmountOutOfRange(f("quantity"))
				}
			}
			if walletCost, err = walletCost.Add(line.Cost); err != nil {
				return 0, err
			}
		case KindRenewal, KindAddon, KindTopup:
			uid, err := subscriberInScope(ctx, tx, act, l.UserID, l.Username, f("user_id"))
			if err != nil {
				return 0, err
			}
			line.UserID = &uid
			charge := subs.ChargeReseller
			if house {
				charge = subs.ChargeNone
			}
			switch l.Kind {
			case KindRenewal:
				res, err := subs.ApplyActivation(ctx, tx, t, cid, uid, 0, subs.ActivationOptions{Charge: charge, PayerManagerID: cid,
					RefType: "pos_sale", RefID: saleID, RequestID: in.RequestID})
				if err != nil {
					return 0, withField(err, f("user_id"))
				}
				line.RefID, line.Name, line.UnitPrice, line.EffectID = res.ProfileID, res.ProfileName, res.Price, res.ActivationID
				if res.PaidBy == "reseller" {
					line.Cost = res.Price
				}
			case KindAddon:
				res, err := subs.ApplyAddon(ctx, tx, t, cid, uid, l.AddonID, l.Quantity, charge, in.RequestID)
				if err != nil {
					return 0, withField(err, f("addon_id"))
				}
				var name string
				if err := tx.QueryRowContext(ctx, `SELECT name FROM addons WHERE id = ?`, l.AddonID).Scan(&name); err != nil {
					return 0, err
				}
				unit, err := res.Price.MulDiv(1, l.Quantity)
				if err != nil {
					return 0, err
				}
				line.RefID, line.Name, line.UnitPrice, line.EffectID = l.AddonID, name, unit, res.PurchaseID
				if res.PaidBy == "reseller" {
					line.Cost = res.Price
				}
			case KindTopup:
				_, ledgerID, err := subs.CreditBalance(ctx, tx, t, cid, uid, l.Amount, "pos_topup", "pos_sale", saleID)
				if err != nil {
					return 0, withField(err, f("amount"))
				}
				line.Name, line.UnitPrice, line.EffectID = "top-up", l.Amount, ledgerID
				if !house {
					line.Cost = l.Amount
					if walletCost, err = walletCost.Add(l.Amount); err != nil {
						return 0, err
					}
				}
			}
		}
		amount, err := line.UnitPrice.Mul(line.Quantity)
		if err != nil {
			return 0, app.ErrAmountOutOfRange(f("quantity"))
		}
		line.Amount = amount
		if total, err = total.Add(amount); err != nil {
			return 0, err
		}
		if cost, err = cost.Add(line.Cost); err != nil {
			return 0, err
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO pos_sale_lines(sale_id, kind, ref_id, user_id, name, quantity, unit_price, amount, cost, minted, effect_id)
			VALUES (?,?,?,?,?,?,?,?,?,?,?)`, saleID, line.Kind, line.RefID, line.UserID, line.Name, line.Quantity, int64(line.UnitPrice),
			int64(line.Amount), int64(line.Cost), line.Minted, line.EffectID)
		if err != nil {
			return 0, err
		}
		lineID, _ := r.LastInsertId()
		for _, c := range cardIDs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO pos_sale_cards(sale_id, line_id, card_id) VALUES (?,?,?)`, saleID, lineID, c); err != nil {
				return 0, err
			}
		}
	}
	var journal any
	if walletCost > 0 {
		_, jid, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: cid, Amount: -walletCost, Kind: "pos_sale",
			ActorID: cid, RefType: "pos_sale", RefID: saleID, RequestID: in.RequestID, Note: fmt.Sprintf("till sale %d", saleID)})
		if err != nil {
			return 0, err
		}
		journal = jid
	}
	_, err = tx.ExecContext(ctx, `UPDATE pos_sales SET total = ?, cost = ?, journal_id = ? WHERE id = ?`, int64(total), int64(cost), journal, saleID)
	return saleID, err
}

// withField names the line's field on a refusal that names none.
func withField(err error, field string) error {
	e := app.AsError(err)
	if e == nil || e.Status >= 500 || e.Field != "" {
		return err
	}
	if e.Code == app.CodeValidation {
		e.Field = field
		return e
	}
	return e.With("field", field)
}

// subscriberInScope resolves a sale line's subscriber (by id or username)
// within the caller's subtree: 400 user_not_found otherwise.
func subscriberInScope(ctx context.Context, tx *sql.Tx, act *app.Actor, id int64, username, field string) (int64, error) {
	var u *subs.Ref
	var err error
	if id > 0 {
		u, err = subs.LookupLive(ctx, tx, act, id)
	} else {
		u, err = subs.LookupName(ctx, tx, act, username)
	}
	if e := app.AsError(err); e != nil && e.Code == app.CodeNotFound {
		return 0, app.ErrValidation("user_not_found", field)
	}
	if err != nil {
		return 0, err
	}
	return u.ID, nil
}

// loadSale reads a sale the caller sees: its own, or with prm_pos_void
// any in its subtree.
func loadSale(ctx context.Context, q app.Querier, act *app.Actor, id int64) (Sale, error) {
	cid, err := cashier(act)
	if err != nil {
		return Sale{}, err
	}
	cond, args := visibleSQL(act, cid, "x.cashier_id")
	return scanSale(q.QueryRowContext(ctx, `SELECT `+saleCols+saleFrom+` WHERE x.id = ? AND `+cond, append([]any{id}, args...)...))
}

// saleLines reads a sale's lines and the cards each handed over.
func saleLines(ctx context.Context, q app.Querier, id int64) ([]SaleLine, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, kind, ref_id, user_id, name, quantity, unit_price, amount, cost, minted, effect_id
		FROM pos_sale_lines WHERE sale_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	var out []SaleLine
	for rows.Next() {
		var l SaleLine
		var uid sql.NullInt64
		var unit, amt, c int64
		if err := rows.Scan(&l.ID, &l.Kind, &l.RefID, &uid, &l.Name, &l.Quantity, &unit, &amt, &c, &l.Minted, &l.EffectID); err != nil {
			rows.Close()
			return nil, err
		}
		if uid.Valid {
			v := uid.Int64
			l.UserID = &v
		}
		l.UnitPrice, l.Amount, l.Cost = app.Money(unit), app.Money(amt), app.Money(c)
		out = append(out, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Kind != KindCard {
			continue
		}
		ids, err := app.QueryIDs(ctx, q, `SELECT card_id FROM pos_sale_cards WHERE sale_id = ? AND line_id = ? ORDER BY card_id`, id, out[i].ID)
		if err != nil {
			return nil, err
		}
		if out[i].Cards, err = cards.SoldCards(ctx, q, ids); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GetSale reads one sale with its lines and card codes (the caller's own,
// or with prm_pos_void one in its subtree).
func GetSale(ctx context.Context, act *app.Actor, id int64) (*Sale, error) {
	var s Sale
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var err error
		if s, err = loadSale(ctx, tx, act, id); err != nil {
			return err
		}
		if s.Lines, err = saleLines(ctx, tx, id); err != nil {
			return err
		}
		return s.setWindow(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return &s, nil
}

func (s *Sale) setWindow(ctx context.Context, q app.Querier) error {
	w, err := identity.SettingPOSUndoWindow.Get(ctx, q)
	if err != nil {
		return err
	}
	if s.Status == "completed" {
		s.VoidableUntil = app.T(s.CreatedAt.Add(secs(w)))
	}
	return nil
}

var saleListSpec = app.ListSpec{
	Sorts:       map[string]string{"created_at": "x.created_at", "id": "x.id", "total": "x.total"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"status": app.FilterString, "shift_id": app.FilterInt, "cashier_id": app.FilterInt, "payment_method": app.FilterString},
}

// SaleListSpec is the list spec of GET /pos/sales.
func SaleListSpec() app.ListSpec { return saleListSpec }

// ListSales is GET /pos/sales: the caller's sales (with prm_pos_void those
// of its subtree); filter[status], filter[shift_id], filter[cashier_id],
// filter[payment_method]; q searches the request_id. Aggregate total over
// the completed sales of the filtered set.
func ListSales(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Sale], error) {
	cid, err := cashier(act, PermPosSell)
	if err != nil {
		return app.Page[Sale]{}, err
	}
	cond, args := visibleSQL(act, cid, "x.cashier_id")
	where := []string{cond}
	if v, ok := lq.Str("status"); ok {
		if v != "completed" && v != "voided" {
			return app.Page[Sale]{}, app.ErrValidation("invalid_filter", "filter[status]")
		}
		where, args = append(where, "x.status = ?"), append(args, v)
	}
	if v, ok := lq.Str("payment_method"); ok {
		where, args = append(where, "x.payment_method = ?"), append(args, v)
	}
	if v, ok := lq.Int("shift_id"); ok {
		where, args = append(where, "x.shift_id = ?"), append(args, v)
	}
	if v, ok := lq.Int("cashier_id"); ok {
		where, args = append(where, "x.cashier_id = ?"), append(args, v)
	}
	if lq.Q != "" {
		where, args = append(where, `x.request_id LIKE ? ESCAPE '\'`), append(args, "%"+app.LikeEscape(lq.Q)+"%")
	}
	p, err := app.QueryPage(ctx, act.Tenant, lq, saleCols, saleFrom+" WHERE "+strings.Join(where, " AND "), args, "x.id",
		func(rows *sql.Rows) (Sale, error) { return scanSale(rows) },
		app.Rollup{Key: "total", Expr: "SUM(CASE WHEN x.status = 'completed' THEN x.total END)", Money: true})
	if p.Rows == nil {
		p.Rows = []Sale{}
	}
	return p, err
}
