package selfservice

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"xr/app"
	"xr/app/portal"
)

// Intents a quote prices (docs/selfservice.md has the rules).
const (
	IntentRenew           = "renew"             // the current plan again, from max(now, expiration)
	IntentChangeNow       = "change_now"        // another plan from now, less the unused part of the current one
	IntentChangeAtRenewal = "change_at_renewal" // another plan bound at the expiration
	IntentAddon           = "addon"             // an add-on on the current plan
	IntentExtend          = "extend"            // grace days on credit
)

// Intents lists the intents.
var Intents = []string{IntentRenew, IntentChangeNow, IntentChangeAtRenewal, IntentAddon, IntentExtend}

// Intent is a JSON enum of Intents.
type Intent string

func (i *Intent) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, Intents...)
	*i = Intent(s)
	return err
}

// QuoteTTL is how long a quote can be executed.
const QuoteTTL = 15 * time.Minute

// QuoteInput is POST /portal/quote: what the subscriber intends.
type QuoteInput struct {
	Intent    Intent `json:"intent"`
	ProfileID int64  `json:"profile_id,omitempty"` // change_now, change_at_renewal: the plan to change to
	AddonID   int64  `json:"addon_id,omitempty"`   // addon
	Quantity  int64  `json:"quantity,omitempty"`   // addon; 0 = 1
}

// Quote is a priced intent. Total is what executing it charges the wallet
// now; Credit is the unused part of the current plan a change now takes
// off; NextRenewalPrice is what a change at renewal will cost then.
type Quote struct {
	ID               int64      `json:"id"`
	Intent           string     `json:"intent"`
	ProfileID        *int64     `json:"profile_id"`
	AddonID          *int64     `json:"addon_id"`
	Quantity         int64      `json:"quantity"`
	Price            app.Money  `json:"price"`
	Credit           app.Money  `json:"credit"`
	UnusedSeconds    int64      `json:"unused_seconds"`
	Fee              app.Money  `json:"fee"`
	Total            app.Money  `json:"total"`
	NextRenewalPrice *app.Money `json:"next_renewal_price"`
	Days             int64      `json:"days"`
	Proration        string     `json:"proration"`
	Expiration       app.Time   `json:"expiration"`   // the expiration once executed now
	EffectiveAt      app.Time   `json:"effective_at"` // when the new plan takes over
	Balance          app.Money  `json:"balance"`
	BalanceAfter     app.Money  `json:"balance_after"`
	Sufficient       bool       `json:"sufficient"` // the wallet (within the debt limit) covers Total
	ExpiresAt        app.Time   `json:"expires_at"`
}

// subscriber is what a quote reads of the caller.
type subscriber struct {
	id         int64
	profileID  int64 // 0 = none
	expiration app.Time
	balance    int64
	debtLimit  sql.NullInt64
	deleted    bool
}

func readSubscriber(ctx context.Context, q app.Querier, uid int64) (*subscriber, error) {
	var s subscriber
	var pid sql.NullInt64
	var del app.Time
	err := q.QueryRowContext(ctx, `SELECT id, profile_id, expiration, balance, debt_limit, deleted_at FROM users WHERE id = ?`, uid).
		Scan(&s.id, &pid, &s.expiration, &s.balance, &s.debtLimit, &del)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	s.profileID, s.deleted = pid.Int64, !del.IsZero()
	return &s, nil
}

type planRow struct {
	id, durationDays int64
	name             string
	price            app.Money
	enabled          bool
}

func readPlan(ctx context.Context, q app.Querier, id int64) (*planRow, error) {
	var p planRow
	var price int64
	err := q.QueryRowContext(ctx, `SELECT id, name, price, duration_days, enabled FROM profiles WHERE id = ?`, id).Scan(&p.id, &p.name, &price, &p.durationDays, &p.enabled)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrConflict("profile_not_allowed").With("field", "profile_id")
	}
	p.price = app.Money(price)
	return &p, err
}

// later is max(now, exp).
func later(now time.Time, exp app.Time) time.Time {
	if exp.IsZero() || exp.Time.Before(now) {
		return now
	}
	return exp.Time
}

// credit is the unused part of the current plan's price at now under the
// proration mode: daily counts whole unused days, exact unused seconds,
// none nothing; never more than the plan's price.
func credit(mode string, cur *planRow, exp app.Time, now time.Time) (app.Money, int64, error) {
	if cur == nil || exp.IsZero() || !exp.Time.After(now) || cur.durationDays <= 0 || cur.price <= 0 {
		return 0, 0, nil
	}
	unused := int64(exp.Time.Sub(now) / time.Second)
	period := cur.durationDays * 86400
	var c app.Money
	var err error
	switch mode {
	case "none":
		return 0, unused, nil
	case "exact":
		c, err = cur.price.MulDiv(min(unused, period), period)
	default: // daily
		c, err = cur.price.MulDiv(min(unused/86400, cur.durationDays), cur.durationDays)
	}
	return min(c, cur.price), unused, err
}

// compute prices in for subscriber uid at now, reading in q. Refusals:
// 409 profile_not_allowed (no plan to change from, a plan staff do not
// offer from it, a disabled one), 400 profile_required, 409
// extension_limit, 400 addon_not_found, 409 addon_not_allowed.
func compute(ctx context.Context, q app.Querier, uid int64, in QuoteInput, now time.Time) (*Quote, error) {
	s, err := readSubscriber(ctx, q, uid)
	if err != nil {
		return nil, err
	}
	if s.deleted {
		return nil, app.ErrConflict("user_deleted")
	}
	out := &Quote{Intent: string(in.Intent), Balance: app.Money(s.balance)}
	var cur *planRow
	if s.profileID != 0 {
		if cur, err = readPlan(ctx, q, s.profileID); err != nil {
			return nil, err
		}
	}
	switch in.Intent {
	case IntentRenew:
		if cur == nil {
			return nil, app.ErrValidation("profile_required", "profile_id")
		}
		if !cur.enabled {
			return nil, app.ErrConflict("profile_disabled").With("field", "profile_id")
		}
		out.ProfileID, out.Price = &cur.id, cur.price
		out.Expiration = app.T(later(now, s.expiration).Add(time.Duration(cur.durationDays) * 24 * time.Hour))
		out.EffectiveAt = app.T(now)
		out.Total = cur.price
	case IntentChangeNow, IntentChangeAtRenewal:
		if in.ProfileID == 0 {
			return nil, app.ErrValidation("profile_required", "profile_id")
		}
		target, err := allowedTarget(ctx, q, cur, in.ProfileID)
		if err != nil {
			return nil, err
		}
		fee, err := SettingSelfServiceChangeFee.Get(ctx, q)
		if err != nil {
			return nil, err
		}
		out.ProfileID, out.Price, out.Fee = &target.id, target.price, fee
		if in.Intent == IntentChangeNow {
			mode := SettingSelfServiceProration.GetOr(ctx, q)
			if mode != "exact" && mode != "none" {
				mode = "daily"
			}
			out.Proration = mode
			if out.Credit, out.UnusedSeconds, err = credit(mode, cur, s.expiration, now); err != nil {
				return nil, err
			}
			net := max(target.price-out.Credit, 0)
			if out.Total, err = net.Add(fee); err != nil {
				return nil, err
			}
			out.Expiration = app.T(now.Add(time.Duration(target.durationDays) * 24 * time.Hour))
			out.EffectiveAt = app.T(now)
		} else {
			p := target.price
			out.NextRenewalPrice, out.Total = &p, fee
			out.Expiration = s.expiration
			out.EffectiveAt = app.T(later(now, s.expiration))
		}
	case IntentAddon:
		if in.AddonID == 0 {
			return nil, app.ErrValidation("addon_not_found", "addon_id")
		}
		qty := in.Quantity
		if qty == 0 {
			qty = 1
		}
		if qty < 0 || qty > 1000 {
			return nil, app.ErrValidation("out_of_range", "quantity")
		}
		var price, amount int64
		var kind string
		var enabled, all bool
		err := q.QueryRowContext(ctx, `SELECT price, kind, amount, enabled, all_profiles FROM addons WHERE id = ?`, in.AddonID).Scan(&price, &kind, &amount, &enabled, &all)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !enabled) {
			return nil, app.ErrValidation("addon_not_found", "addon_id")
		}
		if err != nil {
			return nil, err
		}
		if !all {
			var one int
			err := q.QueryRowContext(ctx, `SELECT 1 FROM addon_profiles WHERE addon_id = ? AND profile_id = ?`, in.AddonID, s.profileID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return nil, app.ErrConflict("addon_not_allowed").With("field", "addon_id")
			}
			if err != nil {
				return nil, err
			}
		}
		if out.Total, err = app.Money(price).Mul(qty); err != nil {
			return nil, err
		}
		id := in.AddonID
		out.AddonID, out.Quantity, out.Price = &id, qty, out.Total
		out.Expiration, out.EffectiveAt = s.expiration, app.T(now)
		if kind == "days" {
			out.Expiration = app.T(later(now, s.expiration).Add(time.Duration(amount*qty) * 24 * time.Hour))
		}
	case IntentExtend:
		pol, err := extensionPolicy(ctx, q, s, now)
		if err != nil {
			return nil, err
		}
		out.ProfileID, out.Days, out.Price, out.Total = &s.profileID, pol.Days, pol.Price, pol.Price
		out.Expiration = app.T(later(now, s.expiration).Add(time.Duration(pol.Days) * 24 * time.Hour))
		out.EffectiveAt = app.T(now)
	default:
		return nil, app.ErrValidation("intent_required", "intent")
	}
	after, err := out.Balance.Sub(out.Total)
	if err != nil {
		return nil, err
	}
	out.BalanceAfter = after
	out.Sufficient = out.Total == 0 || !s.debtLimit.Valid || int64(after) >= -s.debtLimit.Int64
	return out, nil
}

// allowedTarget is plan id when staff offer it from the current plan and
// it is enabled; otherwise 409 profile_not_allowed.
func allowedTarget(ctx context.Context, q app.Querier, cur *planRow, id int64) (*planRow, error) {
	notAllowed := app.ErrConflict("profile_not_allowed").With("field", "profile_id")
	if cur == nil || cur.id == id {
		return nil, notAllowed
	}
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM ss_plan_targets WHERE profile_id = ? AND target_id = ?`, cur.id, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notAllowed
	}
	if err != nil {
		return nil, err
	}
	p, err := readPlan(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if !p.enabled {
		return nil, notAllowed
	}
	return p, nil
}

// extensionPolicy is the extension the subscriber may take now: its plan's
// policy, within the month's cap (409 extension_limit otherwise, also when
// the plan offers none).
func extensionPolicy(ctx context.Context, q app.Querier, s *subscriber, now time.Time) (*ExtensionPolicy, error) {
	if s.profileID == 0 {
		return nil, app.ErrValidation("profile_required", "profile_id")
	}
	pol, err := readPolicy(ctx, q, s.profileID)
	if err != nil {
		return nil, err
	}
	e := pol.Extension
	if e.MaxPerMonth == 0 {
		if e.MaxPerMonth, err = SettingSelfServiceExtensionsMonth.Get(ctx, q); err != nil {
			return nil, err
		}
	}
	if e.Days == 0 {
		return nil, app.ErrConflict("extension_limit").With("max_per_month", 0)
	}
	loc := app.TenantLocation(ctx, q)
	l := now.In(loc)
	first := time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc)
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM ss_extensions WHERE user_id = ? AND created_at >= ? AND created_at < ?`,
		s.id, app.FormatTime(first), app.FormatTime(first.AddDate(0, 1, 0))).Scan(&n); err != nil {
		return nil, err
	}
	if n >= e.MaxPerMonth {
		return nil, app.ErrConflict("extension_limit").With("max_per_month", e.MaxPerMonth).With("used", n)
	}
	return &e, nil
}

// PriceQuote prices in for the caller and stores the quote for
// QuoteTTL (a refusal stores nothing).
func PriceQuote(ctx context.Context, act *app.Actor, in QuoteInput) (*Quote, error) {
	t, uid := act.Tenant, act.SubscriberID
	if err := portal.RequireFeature(ctx, t, portal.FeatureChangeProfile); err != nil {
		return nil, err
	}
	if in.Intent == IntentExtend {
		if err := portal.RequireFeature(ctx, t, portal.FeatureExtend); err != nil {
			return nil, err
		}
	}
	if in.Intent == "" {
		return nil, app.ErrValidation("intent_required", "intent")
	}
	var out *Quote
	err := t.Write(ctx, func(tx *sql.Tx) error {
		now := t.Now()
		q, err := compute(ctx, tx, uid, in, now)
		if err != nil {
			return err
		}
		body, err := json.Marshal(in)
		if err != nil {
			return err
		}
		detail, err := json.Marshal(q)
		if err != nil {
			return err
		}
		q.ExpiresAt = app.T(now.Add(QuoteTTL))
		r, err := tx.ExecContext(ctx, `INSERT INTO ss_quotes(user_id, intent, body, total, detail, expires_at, created_at) VALUES (?,?,?,?,?,?,?)`,
			uid, string(in.Intent), string(body), int64(q.Total), string(detail), q.ExpiresAt, app.FormatTime(now))
		if err != nil {
			return err
		}
		q.ID, _ = r.LastInsertId()
		out = q
		return nil
	})
	return out, err
}

// storedQuote is a quote row to execute.
type storedQuote struct {
	id    int64
	body  QuoteInput
	total app.Money
}

// takeQuote reads quote id of uid for execution: 400 quote_not_found
// (missing, another subscriber's, or of another intent than allowed),
// 409 quote_used, 409 quote_expired; it marks the quote used in tx.
func takeQuote(ctx context.Context, tx *sql.Tx, uid, id int64, now time.Time, allowed ...string) (*storedQuote, error) {
	var body string
	var total int64
	var exp, used app.Time
	err := tx.QueryRowContext(ctx, `SELECT body, total, expires_at, used_at FROM ss_quotes WHERE id = ? AND user_id = ?`, id, uid).Scan(&body, &total, &exp, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrValidation("quote_not_found", "quote_id")
	}
	if err != nil {
		return nil, err
	}
	sq := &storedQuote{id: id, total: app.Money(total)}
	if err := json.Unmarshal([]byte(body), &sq.body); err != nil {
		return nil, fmt.Errorf("quote %d body: %w", id, err)
	}
	ok := false
	for _, a := range allowed {
		ok = ok || string(sq.body.Intent) == a
	}
	if !ok {
		return nil, app.ErrValidation("quote_not_found", "quote_id")
	}
	if !used.IsZero() {
		return nil, app.ErrConflict("quote_used").With("field", "quote_id")
	}
	if !now.Before(exp.Time) {
		return nil, app.ErrConflict("quote_expired").With("field", "quote_id")
	}
	if _, err := tx.ExecContext(ctx, `UPDATE ss_quotes SET used_at = ? WHERE id = ?`, app.FormatTime(now), id); err != nil {
		return nil, err
	}
	return sq, nil
}

// system is the tenant's system actor, through which a portal operation
// applies the subscriber changes of the subs area (the caller is checked
// already: it acts on itself).
func system(ctx context.Context, t *app.Tenant) (*app.Actor, error) { return app.SystemActor(ctx, t) }
