package shop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"xr/app"
	"xr/app/outbox"
	"xr/app/payments"
)

// BuyInput is POST /shop/purchases (public, on the tenant host): buy
// Quantity cards of a published series through Gateway; the codes go to
// Contact (an email address or an E.164 phone number) and appear on the
// return page once paid. RequestID is the buyer's retry key (a UUID).
type BuyInput struct {
	SeriesID  int64  `json:"series_id"`
	Quantity  int    `json:"quantity"`
	Gateway   string `json:"gateway"`
	Contact   string `json:"contact"`
	RequestID string `json:"request_id"`
	Origin    string `json:"-"` // scheme://host of the request (set by web)
	ClientIP  string `json:"-"` // the buyer's address (set by web): its holds are capped
}

// Purchase is what a buyer does next: pay (the checkout) and come back to
// ReturnURL, where the codes appear once the payment succeeded.
type Purchase struct {
	payments.Checkout
	ReturnURL string `json:"return_url"`
}

// Buy starts a public purchase: the payment is recorded and the cards are
// held for the buyer in one transaction (Prepare); a retry with the same
// request_id and contact answers the same payment.
func Buy(ctx context.Context, t *app.Tenant, in BuyInput) (*Purchase, error) {
	if in.RequestID == "" {
		return nil, app.ErrValidation("request_id_required", "request_id")
	}
	if !app.IsUUID(in.RequestID) {
		return nil, app.ErrValidation("request_id_invalid", "request_id")
	}
	if in.SeriesID <= 0 {
		return nil, app.ErrValidation("series_id_required", "series_id")
	}
	if in.Quantity == 0 {
		in.Quantity = 1
	}
	if in.Quantity < 0 || in.Quantity > MaxQuantity {
		return nil, app.ErrValidation("out_of_range", "quantity").With("max", MaxQuantity)
	}
	contact, _, err := normalizeContact(in.Contact)
	if err != nil {
		return nil, err
	}
	key := payerKey(contact)
	ret := in.Origin + "/shop/return/" + returnToken(t, key, in.RequestID)
	co, err := payments.Start(ctx, t, payments.StartInput{Gateway: in.Gateway, RequestID: in.RequestID, Purpose: payments.PurposeShopCard,
		Subject: in.SeriesID, Quantity: in.Quantity, Contact: contact, PayerKey: key, ReturnURL: ret, ClientIP: in.ClientIP})
	if err != nil {
		return nil, err
	}
	return &Purchase{Checkout: *co, ReturnURL: ret}, nil
}

// Receipt is the buyer's return page: where the purchase stands, and the
// codes once it is paid.
type Receipt struct {
	Reference     string    `json:"reference"`
	SeriesName    string    `json:"series_name"`
	Quantity      int64     `json:"quantity"`
	Total         app.Money `json:"total"`
	Currency      string    `json:"currency"`
	PaymentState  string    `json:"payment_state"`
	State         string    `json:"state"` // reserved, paid, released
	DeliveryState string    `json:"delivery_state"`
	Contact       string    `json:"contact"` // masked
	Codes         []string  `json:"codes"`   // once paid
	RedirectURL   string    `json:"redirect_url"`
	ExpiresAt     app.Time  `json:"expires_at"`
}

// GetReceipt is GET /shop/return/{token} (public): the token of the
// return URL Buy answered is the only key; an unknown one is 404.
func GetReceipt(ctx context.Context, t *app.Tenant, token string) (*Receipt, error) {
	if len(token) != 32 {
		return nil, app.ErrNotFound()
	}
	var r Receipt
	var total int64
	var saleID int64
	err := t.DB.R.QueryRowContext(ctx, `SELECT s.id, COALESCE(b.name, ''), s.quantity, s.state, s.contact_masked, COALESCE(o.state, ''),
		p.reference, p.total, p.currency, p.state, p.redirect_url, p.expires_at
		FROM shop_sales s JOIN payments p ON p.purpose = 'shop_card' AND p.purpose_ref = s.id
		LEFT JOIN card_batches b ON b.id = s.batch_id LEFT JOIN outbox_messages o ON o.id = s.message_id
		WHERE s.return_token_hash = ?`, tokenHash(token)).Scan(&saleID, &r.SeriesName, &r.Quantity, &r.State, &r.Contact, &r.DeliveryState,
		&r.Reference, &total, &r.Currency, &r.PaymentState, &r.RedirectURL, &r.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	r.Total = app.Money(total)
	r.Codes = []string{}
	if r.State == "paid" {
		if r.Codes, err = saleCodes(ctx, t.DB.R, saleID); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// Sale is one online sale for staff.
type Sale struct {
	ID               int64     `json:"id"`
	SeriesID         int64     `json:"series_id"`
	SeriesName       string    `json:"series_name"`
	SellerID         int64     `json:"seller_manager_id"`
	Quantity         int64     `json:"quantity"`
	UnitPrice        app.Money `json:"unit_price"`
	Amount           app.Money `json:"amount"`
	Buyer            string    `json:"buyer"` // subscriber or public
	UserID           *int64    `json:"user_id"`
	Channel          string    `json:"channel"`
	Contact          string    `json:"contact"` // masked; reveal answers it whole
	State            string    `json:"state"`   // reserved, paid, released
	PaymentID        *int64    `json:"payment_id"`
	PaymentReference string    `json:"payment_reference"`
	PaymentState     string    `json:"payment_state"`
	Gateway          string    `json:"gateway"`
	DeliveryState    string    `json:"delivery_state"` // the last delivery's outbox state; "" before any
	Resends          int64     `json:"resends"`
	CreatedAt        app.Time  `json:"created_at"`
	PaidAt           app.Time  `json:"paid_at"`
}

const saleCols = `s.id, s.batch_id, COALESCE(b.name, ''), s.manager_id, s.quantity, s.unit_price, s.amount, s.user_id, s.channel, s.contact_masked,
	s.state, p.id, COALESCE(p.reference, ''), COALESCE(p.state, ''), COALESCE(p.gateway, ''), COALESCE(o.state, ''), s.resends, s.created_at, s.paid_at`

const saleFrom = ` FROM shop_sales s LEFT JOIN card_batches b ON b.id = s.batch_id
	LEFT JOIN payments p ON p.purpose = 'shop_card' AND p.purpose_ref = s.id
	LEFT JOIN outbox_messages o ON o.id = s.message_id`

func scanSale(row interface{ Scan(...any) error }) (*Sale, error) {
	var s Sale
	var unit, amount int64
	var uid, pid sql.NullInt64
	err := row.Scan(&s.ID, &s.SeriesID, &s.SeriesName, &s.SellerID, &s.Quantity, &unit, &amount, &uid, &s.Channel, &s.Contact,
		&s.State, &pid, &s.PaymentReference, &s.PaymentState, &s.Gateway, &s.DeliveryState, &s.Resends, &s.CreatedAt, &s.PaidAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	s.UnitPrice, s.Amount = app.Money(unit), app.Money(amount)
	s.Buyer = "public"
	if uid.Valid {
		s.UserID, s.Buyer = &uid.Int64, "subscriber"
	}
	if pid.Valid {
		s.PaymentID = &pid.Int64
	}
	return &s, nil
}

// salesScope restricts sales to the caller's: prm_shop_sales_all sees
// every sale, prm_shop_sales those of series owned in its subtree.
func salesScope(act *app.Actor) (string, []any) {
	if act.Can(PermShopSalesAll) {
		return "1=1", nil
	}
	return act.ScopeSQL("s.manager_id")
}

var saleSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "s.id", "created_at": "s.id", "amount": "s.amount"},
	DefaultSort: "id",
	Filters: map[string]app.FilterKind{"state": app.FilterString, "payment_state": app.FilterString, "series_id": app.FilterInt,
		"channel": app.FilterString},
}

// SaleSpec is the list spec of GET /admin/shop/sales.
func SaleSpec() app.ListSpec { return saleSpec }

// ListSales is GET /admin/shop/sales, newest first.
func ListSales(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Sale], error) {
	if err := act.Require(PermShopSales, PermShopSalesAll); err != nil {
		return app.Page[Sale]{}, err
	}
	cond, args := salesScope(act)
	from := saleFrom + ` WHERE ` + cond
	if v, ok := lq.Str("state"); ok {
		from += ` AND s.state = ?`
		args = append(args, v)
	}
	if v, ok := lq.Str("payment_state"); ok {
		from += ` AND p.state = ?`
		args = append(args, v)
	}
	if v, ok := lq.Int("series_id"); ok {
		from += ` AND s.batch_id = ?`
		args = append(args, v)
	}
	if v, ok := lq.Str("channel"); ok {
		from += ` AND s.channel = ?`
		args = append(args, v)
	}
	if lq.Q != "" {
		from += ` AND (p.reference LIKE ? OR b.name LIKE ?)`
		like := "%" + strings.ReplaceAll(lq.Q, "%", "") + "%"
		args = append(args, like, like)
	}
	return app.QueryPage(ctx, act.Tenant, lq, saleCols, from, args, "s.id", func(rows *sql.Rows) (Sale, error) {
		s, err := scanSale(rows)
		if err != nil {
			return Sale{}, err
		}
		return *s, nil
	}, app.Rollup{Key: "amount", Expr: "SUM(CASE WHEN s.state = 'paid' THEN s.amount END)", Money: true})
}

// SaleCard is a card of a sale (its serial, not its code).
type SaleCard struct {
	ID          int64  `json:"id"`
	Serial      string `json:"serial"`
	State       string `json:"state"`
	Disposition string `json:"disposition"`
	Released    bool   `json:"released"`
}

// AuditEntry is one staff action on a sale: a reveal of the buyer's
// contact or a resend of the codes.
type AuditEntry struct {
	ID        int64    `json:"id"`
	ManagerID int64    `json:"manager_id"`
	Manager   string   `json:"manager"`
	Action    string   `json:"action"`
	CreatedAt app.Time `json:"created_at"`
}

// Delivery is one message that carried the codes.
type Delivery struct {
	ID        int64    `json:"id"`
	Channel   string   `json:"channel"`
	To        string   `json:"to"` // masked
	State     string   `json:"state"`
	Attempts  int      `json:"attempts"`
	LastError string   `json:"last_error"`
	SentAt    app.Time `json:"sent_at"`
}

// SaleDetail is GET /admin/shop/sales/{id}.
type SaleDetail struct {
	Sale
	Cards      []SaleCard   `json:"cards"`
	Deliveries []Delivery   `json:"deliveries"`
	Audit      []AuditEntry `json:"audit"`
}

// GetSale answers one sale of the caller's; another is 404.
func GetSale(ctx context.Context, act *app.Actor, id int64) (*SaleDetail, error) {
	if err := act.Require(PermShopSales, PermShopSalesAll); err != nil {
		return nil, err
	}
	return saleDetail(ctx, act, id)
}

func readSale(ctx context.Context, act *app.Actor, q app.Querier, id int64) (*Sale, error) {
	cond, args := salesScope(act)
	return scanSale(q.QueryRowContext(ctx, `SELECT `+saleCols+saleFrom+` WHERE s.id = ? AND `+cond, append([]any{id}, args...)...))
}

func saleDetail(ctx context.Context, act *app.Actor, id int64) (*SaleDetail, error) {
	t := act.Tenant
	var d *SaleDetail
	err := t.Read(ctx, func(tx *sql.Tx) error {
		s, err := readSale(ctx, act, tx, id)
		if err != nil {
			return err
		}
		d = &SaleDetail{Sale: *s, Cards: []SaleCard{}, Deliveries: []Delivery{}, Audit: []AuditEntry{}}
		rows, err := tx.QueryContext(ctx, `SELECT c.id, c.serial, c.state, c.disposition, sc.released FROM shop_sale_cards sc
			JOIN cards c ON c.id = sc.card_id WHERE sc.sale_id = ? ORDER BY sc.released, c.seq`, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var c SaleCard
			if err := rows.Scan(&c.ID, &c.Serial, &c.State, &c.Disposition, &c.Released); err != nil {
				rows.Close()
				return err
			}
			d.Cards = append(d.Cards, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT a.id, a.manager_id, COALESCE(m.username, m.email, ''), a.action, a.created_at FROM shop_sale_audit a
			LEFT JOIN managers m ON m.id = a.manager_id WHERE a.sale_id = ? ORDER BY a.id`, id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var a AuditEntry
			if err := rows.Scan(&a.ID, &a.ManagerID, &a.Manager, &a.Action, &a.CreatedAt); err != nil {
				rows.Close()
				return err
			}
			d.Audit = append(d.Audit, a)
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	for _, cause := range saleCauses(id, d.Resends) {
		ds, err := outbox.Deliveries(ctx, t, cause)
		if err != nil {
			return nil, err
		}
		for _, x := range ds {
			to := maskContact(x.To, x.Channel)
			d.Deliveries = append(d.Deliveries, Delivery{ID: x.ID, Channel: x.Channel, To: to, State: x.State, Attempts: x.Attempts,
				LastError: x.LastError, SentAt: x.SentAt})
		}
	}
	return d, nil
}

// saleCauses are the outbox causes of a sale's deliveries: the first, then
// one per resend.
func saleCauses(id, resends int64) []string {
	out := []string{fmt.Sprintf("shop_sale:%d", id)}
	for i := int64(1); i <= resends; i++ {
		out = append(out, fmt.Sprintf("shop_sale:%d:resend:%d", id, i))
	}
	return out
}

// Resend is POST /admin/shop/sales/{id}/resend: the codes of a paid sale
// go again to the recorded contact (or the buyer's inbox); the resend is
// recorded in the sale's audit.
func Resend(ctx context.Context, act *app.Actor, id int64) (*SaleDetail, error) {
	if err := act.Require(PermShopSales, PermShopSalesAll); err != nil {
		return nil, err
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		s, err := readSale(ctx, act, tx, id)
		if err != nil {
			return err
		}
		if s.State != "paid" {
			return app.ErrConflict("sale_not_paid").With("state", s.State)
		}
		row, err := readSaleRow(ctx, tx, id)
		if err != nil {
			return err
		}
		n := row.Resends + 1
		msgID, err := deliver(ctx, tx, t, row, s.PaymentReference, fmt.Sprintf("shop_sale:%d:resend:%d", id, n))
		if err != nil {
			return err
		}
		now := t.NowText()
		if _, err := tx.ExecContext(ctx, `UPDATE shop_sales SET resends = ?, message_id = ?, updated_at = ? WHERE id = ?`, n, msgID, now, id); err != nil {
			return err
		}
		return audit(ctx, tx, id, act.ManagerID, "resend", now)
	})
	if err != nil {
		return nil, err
	}
	return saleDetail(ctx, act, id)
}

// Contact is what reveal answers.
type Contact struct {
	SaleID  int64  `json:"sale_id"`
	Channel string `json:"channel"`
	Contact string `json:"contact"` // "" for a subscriber (codes went to the portal inbox)
	UserID  *int64 `json:"user_id"`
}

// Reveal is POST /admin/shop/sales/{id}/reveal (prm_shop_buyer_contact):
// the buyer's contact, whole; who looked is recorded in the sale's audit
// in the same transaction.
func Reveal(ctx context.Context, act *app.Actor, id int64) (*Contact, error) {
	if err := act.Require(PermShopBuyerContact); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *Contact
	err := t.Write(ctx, func(tx *sql.Tx) error {
		s, err := readSale(ctx, act, tx, id)
		if err != nil {
			return err
		}
		row, err := readSaleRow(ctx, tx, id)
		if err != nil {
			return err
		}
		out = &Contact{SaleID: id, Channel: s.Channel, UserID: s.UserID}
		if len(row.Sealed) > 0 {
			c, err := t.App.Keys.Open(row.Sealed)
			if err != nil {
				return err
			}
			out.Contact = string(c)
		}
		return audit(ctx, tx, id, act.ManagerID, "reveal", t.NowText())
	})
	return out, err
}

func audit(ctx context.Context, tx *sql.Tx, saleID, managerID int64, action, now string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO shop_sale_audit(sale_id, manager_id, action, created_at) VALUES (?,?,?,?)`, saleID, managerID, action, now)
	return err
}
