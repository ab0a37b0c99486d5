package shop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"xr/app"
	"xr/app/payments"
)

// Listing is a card series as the shop sees it: whether it is offered in
// the storefront and at what price per card.
type Listing struct {
	SeriesID    int64     `json:"series_id"`
	Name        string    `json:"name"`
	CardMode    string    `json:"card_mode"`
	PlanName    string    `json:"plan_name"`
	FaceValue   app.Money `json:"face_value"`
	Status      string    `json:"status"`
	Suspended   bool      `json:"suspended"`
	SellOnline  bool      `json:"sell_online"`
	Available   int64     `json:"available"`
	Held        int64     `json:"held"`
	SoldOnline  int64     `json:"sold_online"`
	Published   bool      `json:"published"`
	Price       app.Money `json:"price"` // per card; 0 when never published
	PublishedAt app.Time  `json:"published_at"`
	OwnerID     int64     `json:"owner_manager_id"`
}

const listingCols = `b.id, b.name, b.card_mode, COALESCE(p.name, ''), b.face_value, b.status, b.suspended, b.sell_online, b.available, b.held,
	b.sold_online, COALESCE(l.published, 0), COALESCE(l.price, 0), l.published_at, b.owner_manager_id`

const listingFrom = ` FROM card_batches b LEFT JOIN shop_listings l ON l.batch_id = b.id LEFT JOIN profiles p ON p.id = b.plan_id`

func scanListing(row interface{ Scan(...any) error }) (*Listing, error) {
	var l Listing
	var face, price int64
	err := row.Scan(&l.SeriesID, &l.Name, &l.CardMode, &l.PlanName, &face, &l.Status, &l.Suspended, &l.SellOnline, &l.Available, &l.Held,
		&l.SoldOnline, &l.Published, &price, &l.PublishedAt, &l.OwnerID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	l.FaceValue, l.Price = app.Money(face), app.Money(price)
	return &l, nil
}

// offerable is the storefront's condition on a series: ready, not
// suspended, marked sell_online and published.
const offerable = `b.status = 'ready' AND b.suspended = 0 AND b.sell_online = 1 AND l.published = 1`

// Series is GET /admin/shop/batches: the series of the caller's subtree
// marked sell_online, with their listing, newest first.
func Series(ctx context.Context, act *app.Actor) ([]Listing, error) {
	if err := act.Require(PermShopIndex, PermShopPublish); err != nil {
		return nil, err
	}
	cond, args := act.ScopeSQL("b.owner_manager_id")
	rows, err := act.Tenant.DB.R.QueryContext(ctx, `SELECT `+listingCols+listingFrom+` WHERE b.sell_online = 1 AND `+cond+` ORDER BY b.id DESC LIMIT 500`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Listing{}
	for rows.Next() {
		l, err := scanListing(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *l)
	}
	return out, rows.Err()
}

// PublishInput is the body of publish: the price per card. It may be left
// out when the series was published before (the last price is kept).
type PublishInput struct {
	Price *app.Money `json:"price"`
}

// BulkPublishInput is POST /admin/shop/batches/bulk-publish.
type BulkPublishInput struct {
	IDs   []int64    `json:"ids"`
	Price *app.Money `json:"price"`
}

// Publish is POST /admin/shop/batches/{id}/publish: offer a ready, not
// suspended series marked sell_online in the storefront at a price.
func Publish(ctx context.Context, act *app.Actor, id int64, in PublishInput) (*Listing, error) {
	if err := act.Require(PermShopPublish); err != nil {
		return nil, err
	}
	if in.Price != nil && *in.Price <= 0 {
		return nil, app.ErrValidation("price_must_be_positive", "price")
	}
	return setPublished(ctx, act, id, true, in.Price)
}

// Unpublish is POST /admin/shop/batches/{id}/unpublish: the series leaves
// the storefront (open reservations still complete or expire).
func Unpublish(ctx context.Context, act *app.Actor, id int64) (*Listing, error) {
	if err := act.Require(PermShopPublish); err != nil {
		return nil, err
	}
	return setPublished(ctx, act, id, false, nil)
}

// BulkPublish publishes each series of in.IDs (at in.Price, or each at its
// last price).
func BulkPublish(ctx context.Context, act *app.Actor, in BulkPublishInput) (app.BulkResult, error) {
	if err := act.Require(PermShopPublish); err != nil {
		return app.BulkResult{}, err
	}
	b := app.BulkIDs{IDs: in.IDs}
	if err := b.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	if in.Price != nil && *in.Price <= 0 {
		return app.BulkResult{}, app.ErrValidation("price_must_be_positive", "price")
	}
	return app.RunBulk(ctx, b.IDs, func(ctx context.Context, id int64) error {
		_, err := setPublished(ctx, act, id, true, in.Price)
		return err
	}), nil
}

func setPublished(ctx context.Context, act *app.Actor, id int64, on bool, price *app.Money) (*Listing, error) {
	t := act.Tenant
	var out *Listing
	err := t.Write(ctx, func(tx *sql.Tx) error {
		l, err := scanListing(tx.QueryRowContext(ctx, `SELECT `+listingCols+listingFrom+` WHERE b.id = ?`, id))
		if err != nil {
			return err
		}
		if err := act.RequireScope(ctx, tx, l.OwnerID); err != nil {
			return err
		}
		now := t.NowText()
		if !on {
			if _, err := tx.ExecContext(ctx, `UPDATE shop_listings SET published = 0, updated_at = ? WHERE batch_id = ?`, now, id); err != nil {
				return err
			}
		} else {
			switch {
			case l.Status != "ready":
				return app.ErrConflict("card_batch_not_ready")
			case l.Suspended:
				return app.ErrConflict("card_batch_suspended")
			case !l.SellOnline:
				return app.ErrConflict("card_batch_not_sell_online")
			case price == nil && l.Price <= 0:
				return app.ErrValidation("price_required", "price")
			}
			p := l.Price
			if price != nil {
				p = *price
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO shop_listings(batch_id, price, published, published_by, published_at, updated_at)
				VALUES (?,?,1,?,?,?) ON CONFLICT(batch_id) DO UPDATE SET price = excluded.price, published = 1,
				published_by = excluded.published_by, published_at = CASE WHEN shop_listings.published = 1 THEN shop_listings.published_at ELSE excluded.published_at END,
				updated_at = excluded.updated_at`, id, int64(p), act.ManagerID, now, now); err != nil {
				return err
			}
		}
		out, err = scanListing(tx.QueryRowContext(ctx, `SELECT `+listingCols+listingFrom+` WHERE b.id = ?`, id))
		return err
	})
	return out, err
}

// Item is one offer of the storefront.
type Item struct {
	SeriesID  int64     `json:"series_id"`
	Name      string    `json:"name"`
	CardMode  string    `json:"card_mode"`
	PlanName  string    `json:"plan_name"`
	FaceValue app.Money `json:"face_value"`
	Price     app.Money `json:"price"`
	Available int64     `json:"available"`
}

// Storefront is what a buyer sees: the offers in stock and the gateways
// to pay with.
type Storefront struct {
	Currency string                   `json:"currency"`
	Items    []Item                   `json:"items"`
	Gateways []payments.PortalGateway `json:"gateways"`
}

// StaffStorefront is GET /admin/shop/storefront: the storefront exactly
// as buyers see it.
func StaffStorefront(ctx context.Context, act *app.Actor) (*Storefront, error) {
	if err := act.Require(PermShopIndex); err != nil {
		return nil, err
	}
	return PublicStorefront(ctx, act.Tenant)
}

// PublicStorefront is the buyer's storefront (public, on the tenant host).
func PublicStorefront(ctx context.Context, t *app.Tenant) (*Storefront, error) {
	cur, err := app.SettingCurrency.Get(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	items, err := storeItems(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	gw, err := payments.EnabledGateways(ctx, t)
	if err != nil {
		return nil, err
	}
	return &Storefront{Currency: strings.ToUpper(cur), Items: items, Gateways: gw}, nil
}

func storeItems(ctx context.Context, q app.Querier) ([]Item, error) {
	rows, err := q.QueryContext(ctx, `SELECT b.id, b.name, b.card_mode, COALESCE(p.name, ''), b.face_value, l.price, b.available
		FROM shop_listings l JOIN card_batches b ON b.id = l.batch_id LEFT JOIN profiles p ON p.id = b.plan_id
		WHERE `+offerable+` AND b.available > 0 ORDER BY l.price, b.id LIMIT 200`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Item{}
	for rows.Next() {
		var it Item
		var face, price int64
		if err := rows.Scan(&it.SeriesID, &it.Name, &it.CardMode, &it.PlanName, &face, &price, &it.Available); err != nil {
			return nil, err
		}
		it.FaceValue, it.Price = app.Money(face), app.Money(price)
		out = append(out, it)
	}
	return out, rows.Err()
}

// Check is one line of the readiness checklist.
type Check struct {
	Key    string `json:"key"` // payment_provider, published_stock, delivery_channel
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Readiness says whether the shop can sell, and what is missing.
type Readiness struct {
	Ready   bool     `json:"ready"`
	Missing []string `json:"missing"`
	Checks  []Check  `json:"checks"`
}

// GetReadiness is GET /admin/shop/readiness: a payment gateway enabled,
// published series in stock, and a channel to deliver codes by (the
// instance's SMTP relay for email, the tenant's SMS gateway).
func GetReadiness(ctx context.Context, act *app.Actor) (*Readiness, error) {
	if err := act.Require(PermShopIndex); err != nil {
		return nil, err
	}
	t := act.Tenant
	gw, err := payments.EnabledGateways(ctx, t)
	if err != nil {
		return nil, err
	}
	var codes []string
	for _, g := range gw {
		codes = append(codes, g.Code)
	}
	items, err := storeItems(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	var sms bool
	if err := t.DB.R.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM outbox_sms_gateway)`).Scan(&sms); err != nil {
		return nil, err
	}
	var channels []string
	if t.App.Cfg.SMTPAddr != "" {
		channels = append(channels, "email")
	}
	if sms {
		channels = append(channels, "sms")
	}
	r := &Readiness{Missing: []string{}, Checks: []Check{
		{Key: "payment_provider", OK: len(gw) > 0, Detail: strings.Join(codes, ", ")},
		{Key: "published_stock", OK: len(items) > 0, Detail: fmt.Sprintf("%d", len(items))},
		{Key: "delivery_channel", OK: len(channels) > 0, Detail: strings.Join(channels, ", ")},
	}}
	for _, c := range r.Checks {
		if !c.OK {
			r.Missing = append(r.Missing, c.Key)
		}
	}
	r.Ready = len(r.Missing) == 0
	return r, nil
}
