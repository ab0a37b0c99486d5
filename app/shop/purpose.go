package shop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"xr/app"
	"xr/app/cards"
	"xr/app/outbox"
	"xr/app/payments"
)

// MaxQuantity bounds the cards of one purchase.
const MaxQuantity = 20

// Stock cannot be hoarded by purchases nobody pays: an unpaid purchase
// holds its cards shop_hold_minutes (its payment expires then and the
// cards return to stock), holds at most shop_max_cards_per_purchase cards,
// and the unpaid purchases of one client (its address, or the portal
// subscriber) hold at most shop_max_held_per_client together; a public
// buyer's address is also charged one hit of the shop_hold bucket per card
// (Buy).

// holdLifetime is the purpose's payment lifetime: the hold.
func holdLifetime(ctx context.Context, tx *sql.Tx) (time.Duration, error) {
	m, err := SettingShopHoldMinutes.Get(ctx, tx)
	if err != nil {
		return 0, err
	}
	return time.Duration(min(max(m, 1), 1440)) * time.Minute, nil
}

// checkHolds refuses a purchase of q cards past the caps on holds.
func checkHolds(ctx context.Context, tx *sql.Tx, t *app.Tenant, client string, q int) error {
	perPurchase, err := SettingShopMaxCardsUnpaid.Get(ctx, tx)
	if err != nil {
		return err
	}
	perPurchase = min(max(perPurchase, 1), MaxQuantity)
	if int64(q) > perPurchase {
		return app.ErrValidation("out_of_range", "quantity").With("max", perPurchase)
	}
	perClient, err := SettingShopMaxHeldPerClient.Get(ctx, tx)
	if err != nil || client == "" {
		return err
	}
	perClient = min(max(perClient, 1), 200)
	var held int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(s.quantity), 0) FROM shop_sales s
		JOIN payments p ON p.purpose = 'shop_card' AND p.purpose_ref = s.id
		WHERE s.client = ? AND s.state = 'reserved' AND p.expires_at > ?`, client, t.NowText()).Scan(&held); err != nil {
		return err
	}
	if held+int64(q) > perClient {
		return app.ErrConflict("shop_hold_limit").With("max", perClient).With("held", held)
	}
	return nil
}

// chargeHolds counts the cards a public purchase is about to hold on its
// address's shop_hold bucket, one hit per card (the request itself was
// counted on shop_buy): false past it (429).
func chargeHolds(a *app.App, ip string, cards int) bool {
	def := a.Buckets()["shop_hold"]
	for range cards {
		if !a.Limiter.Allow("ip:"+ip+":shop_hold", def.Limit) {
			return false
		}
	}
	return true
}

// prepare runs in the transaction that records a payment of purpose
// shop_card: it checks the offer and the caps on holds, holds the cards
// (they leave the sellable stock now) and writes the sale, answering price
// × quantity and the sale id. A refusal rolls everything back.
func prepare(ctx context.Context, tx *sql.Tx, t *app.Tenant, in *payments.StartInput) (app.Money, int64, error) {
	q := max(in.Quantity, 1)
	if q > MaxQuantity {
		return 0, 0, app.ErrValidation("out_of_range", "quantity").With("max", MaxQuantity)
	}
	client := in.ClientIP
	if in.UserID != 0 {
		client = in.PayerKey
	}
	if err := checkHolds(ctx, tx, t, client, q); err != nil {
		return 0, 0, err
	}
	if in.UserID == 0 && !chargeHolds(t.App, in.ClientIP, q) {
		return 0, 0, app.ErrRateLimited()
	}
	if in.Subject <= 0 {
		return 0, 0, app.ErrValidation("series_id_required", "series_id")
	}
	var price, owner int64
	err := tx.QueryRowContext(ctx, `SELECT l.price, b.owner_manager_id FROM shop_listings l JOIN card_batches b ON b.id = l.batch_id
		WHERE l.batch_id = ? AND l.published = 1 AND b.sell_online = 1`, in.Subject).Scan(&price, &owner)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, app.ErrNotFound() // not offered in the storefront
	}
	if err != nil {
		return 0, 0, err
	}
	amount, err := app.Money(price).Mul(int64(q))
	if err != nil {
		return 0, 0, err
	}
	channel, contact := outbox.ChannelInbox, ""
	if in.UserID == 0 {
		if contact, channel, err = normalizeContact(in.Contact); err != nil {
			return 0, 0, err
		}
	}
	ids, err := cards.HoldForSale(ctx, tx, in.Subject, owner, q, 0)
	if err != nil {
		return 0, 0, err
	}
	var sealed any
	if contact != "" {
		sealed = t.App.Keys.Seal([]byte(contact))
	}
	var uid any
	if in.UserID != 0 {
		uid = in.UserID
	}
	now := t.NowText()
	r, err := tx.ExecContext(ctx, `INSERT INTO shop_sales(batch_id, manager_id, user_id, quantity, unit_price, amount, channel, contact_sealed,
		contact_masked, return_token_hash, client, state, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,'reserved',?,?)`,
		in.Subject, owner, uid, q, price, int64(amount), channel, sealed, maskContact(contact, channel),
		tokenHash(returnToken(t, in.PayerKey, in.RequestID)), client, now, now)
	if err != nil {
		return 0, 0, err
	}
	saleID, err := r.LastInsertId()
	if err != nil {
		return 0, 0, err
	}
	if err := addSaleCards(ctx, tx, saleID, ids); err != nil {
		return 0, 0, err
	}
	return amount, saleID, nil
}

func addSaleCards(ctx context.Context, tx *sql.Tx, saleID int64, ids []int64) error {
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `INSERT INTO shop_sale_cards(sale_id, card_id) VALUES (?,?)`, saleID, id); err != nil {
			return fmt.Errorf("reserve card %d: %w", id, err)
		}
	}
	return nil
}

// saleRow is what the purpose callbacks need of a sale.
type saleRow struct {
	ID, BatchID, ManagerID, Quantity int64
	UserID                           sql.NullInt64
	Channel, State, SeriesName       string
	Sealed                           []byte
	Resends                          int64
}

func readSaleRow(ctx context.Context, q app.Querier, id int64) (*saleRow, error) {
	var s saleRow
	err := q.QueryRowContext(ctx, `SELECT s.id, s.batch_id, s.manager_id, s.quantity, s.user_id, s.channel, s.state, COALESCE(b.name, ''), s.contact_sealed, s.resends
		FROM shop_sales s LEFT JOIN card_batches b ON b.id = s.batch_id WHERE s.id = ?`, id).
		Scan(&s.ID, &s.BatchID, &s.ManagerID, &s.Quantity, &s.UserID, &s.Channel, &s.State, &s.SeriesName, &s.Sealed, &s.Resends)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return &s, err
}

func liveCards(ctx context.Context, q app.Querier, saleID int64) ([]int64, error) {
	return app.QueryIDs(ctx, q, `SELECT card_id FROM shop_sale_cards WHERE sale_id = ? AND released = 0 ORDER BY card_id`, saleID)
}

// fulfil runs in the transaction that moves the payment to succeeded: the
// held cards are sold online (sold_online counted there) and the codes'
// delivery is queued in the outbox — the buyer's portal inbox for a
// subscriber, else email or SMS to the contact. A sale released before
// (a late success confirmed by staff) holds fresh cards first.
func fulfil(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *payments.Payment) error {
	s, err := readSaleRow(ctx, tx, p.PurposeRef)
	if err != nil {
		return err
	}
	if s.State == "paid" {
		return nil
	}
	if s.State == "released" {
		ids, err := cards.HoldForSale(ctx, tx, s.BatchID, s.ManagerID, int(s.Quantity), 0)
		if err != nil {
			return err
		}
		if err := addSaleCards(ctx, tx, s.ID, ids); err != nil {
			return err
		}
	}
	ids, err := liveCards(ctx, tx, s.ID)
	if err != nil {
		return err
	}
	if err := cards.CompleteSale(ctx, tx, ids, cards.DispSoldOnline, 0); err != nil {
		return err
	}
	msgID, err := deliver(ctx, tx, t, s, p.Reference, fmt.Sprintf("shop_sale:%d", s.ID))
	if err != nil {
		return err
	}
	now := t.NowText()
	_, err = tx.ExecContext(ctx, `UPDATE shop_sales SET state = 'paid', payment_id = ?, message_id = ?, paid_at = ?, updated_at = ? WHERE id = ?`,
		p.ID, msgID, now, now, s.ID)
	return err
}

// deliver queues the codes of sale s under cause.
func deliver(ctx context.Context, tx *sql.Tx, t *app.Tenant, s *saleRow, reference, cause string) (int64, error) {
	codes, err := saleCodes(ctx, tx, s.ID)
	if err != nil {
		return 0, err
	}
	m := outbox.Message{Channel: s.Channel, Template: TemplateCodes, Cause: cause,
		Vars: map[string]string{"series": s.SeriesName, "codes": strings.Join(codes, "\n"), "reference": reference}}
	if s.UserID.Valid {
		m.UserID = s.UserID.Int64
	} else {
		to, err := t.App.Keys.Open(s.Sealed)
		if err != nil {
			return 0, err
		}
		m.To = string(to)
	}
	return outbox.Enqueue(ctx, tx, t, m)
}

func saleCodes(ctx context.Context, q app.Querier, saleID int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT c.code FROM shop_sale_cards sc JOIN cards c ON c.id = sc.card_id
		WHERE sc.sale_id = ? AND sc.released = 0 ORDER BY c.seq`, saleID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// release runs in the transaction that moves the payment to failed or
// expired: the held cards return to stock.
func release(ctx context.Context, tx *sql.Tx, t *app.Tenant, p *payments.Payment) error {
	s, err := readSaleRow(ctx, tx, p.PurposeRef)
	if err != nil {
		return err
	}
	if s.State != "reserved" {
		return nil
	}
	ids, err := liveCards(ctx, tx, s.ID)
	if err != nil {
		return err
	}
	if err := cards.ReleaseHeld(ctx, tx, ids, 0); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE shop_sale_cards SET released = 1 WHERE sale_id = ?`, s.ID); err != nil {
		return err
	}
	now := t.NowText()
	_, err = tx.ExecContext(ctx, `UPDATE shop_sales SET state = 'released', payment_id = ?, released_at = ?, updated_at = ? WHERE id = ?`,
		p.ID, now, now, s.ID)
	return err
}
