package reports

import (
	"context"
	"database/sql"

	"xr/app"
)

// CardTransfer is a row of /admin/reports/cards-transfer: one transfer of
// cards (single cards, a whole series, or the revert of an earlier
// transfer) from one manager to another, with the price charged. It is in
// scope when either side is.
type CardTransfer struct {
	ID            int64     `json:"id"`
	Kind          string    `json:"kind"` // cards | series | revert
	BatchID       *int64    `json:"batch_id"`
	Series        string    `json:"series"`
	FromManagerID int64     `json:"from_manager_id"`
	FromManager   string    `json:"from_manager"`
	ToManagerID   int64     `json:"to_manager_id"`
	ToManager     string    `json:"to_manager"`
	Cards         int64     `json:"cards"`
	UnitPrice     app.Money `json:"unit_price"`
	Amount        app.Money `json:"amount"`
	RevertsID     *int64    `json:"reverts_id"`
	ActorID       *int64    `json:"actor_id"`
	Actor         string    `json:"actor"`
	CreatedAt     app.Time  `json:"created_at"`
}

// CardsTransferSpec: filters manager_id (either side), batch_id, kind; q
// searches the series name.
var CardsTransferSpec = spec("created_at", map[string]string{"created_at": "ct.created_at", "id": "ct.id", "cards": "ct.card_count", "amount": "ct.amount"},
	map[string]app.FilterKind{"manager_id": app.FilterInt, "batch_id": app.FilterInt, "kind": app.FilterString})

// CardsTransfer lists card transfers. Aggregates: transfers, cards, amount.
func CardsTransfer(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[CardTransfer], error) {
	if err := act.Require(PermReportCardsLog); err != nil {
		return app.Page[CardTransfer]{}, err
	}
	var w where
	c1, a1 := act.ScopeSQL("ct.from_manager_id")
	c2, a2 := act.ScopeSQL("ct.to_manager_id")
	w.add("("+c1+" OR "+c2+")", append(a1, a2...)...)
	w.period(q, "ct.created_at")
	if v, ok := q.Int("manager_id"); ok {
		w.add(`(ct.from_manager_id IN (SELECT descendant_id FROM manager_tree WHERE ancestor_id = ?)
			OR ct.to_manager_id IN (SELECT descendant_id FROM manager_tree WHERE ancestor_id = ?))`, v, v)
	}
	w.eq(q, "batch_id", "ct.batch_id")
	w.eq(q, "kind", "ct.kind")
	w.like(q, "b.name")
	from := `FROM card_transfers ct LEFT JOIN card_batches b ON b.id = ct.batch_id LEFT JOIN managers fm ON fm.id = ct.from_manager_id
		LEFT JOIN managers tm ON tm.id = ct.to_manager_id LEFT JOIN managers am ON am.id = ct.actor_id` + w.sql()
	aggs := []agg{count("transfers", "COUNT(*)"), count("cards", "SUM(ct.card_count)"), money("amount", "SUM(ct.amount)")}
	cols := `ct.id, ct.kind, ct.batch_id, COALESCE(b.name, ''), ct.from_manager_id, ` + mname("fm") + `, ct.to_manager_id, ` + mname("tm") + `,
		ct.card_count, ct.unit_price, ct.amount, ct.reverts_id, ct.actor_id, ` + mname("am") + `, ct.created_at`
	return run(ctx, act, q, aggs, cols, from, w.args, "ct.id", func(rows *sql.Rows) (CardTransfer, error) {
		var r CardTransfer
		var batch, rev, actor sql.NullInt64
		var unit, amt int64
		err := rows.Scan(&r.ID, &r.Kind, &batch, &r.Series, &r.FromManagerID, &r.FromManager, &r.ToManagerID, &r.ToManager,
			&r.Cards, &unit, &amt, &rev, &actor, &r.Actor, &r.CreatedAt)
		r.BatchID, r.RevertsID, r.ActorID, r.UnitPrice, r.Amount = ptr(batch), ptr(rev), ptr(actor), app.Money(unit), app.Money(amt)
		return r, err
	})
}

// CardUsage is a row of /admin/reports/cards-usage: card redemptions of
// one day (UTC) and one series (whose plan is fixed). Reversed
// redemptions are counted apart and left out of the money columns. A
// redemption is in scope when the card's owner is.
type CardUsage struct {
	Day         string    `json:"day"`
	BatchID     int64     `json:"batch_id"`
	Series      string    `json:"series"`
	CardMode    string    `json:"card_mode"`
	PlanID      *int64    `json:"plan_id"`
	Plan        string    `json:"plan"`
	Redemptions int64     `json:"redemptions"` // not reversed
	Reversed    int64     `json:"reversed"`
	FaceValue   app.Money `json:"face_value"`   // sum over the redemptions not reversed
	PaidAmount  app.Money `json:"paid_amount"`  // over-the-counter: what customers paid
	EffectValue app.Money `json:"effect_value"` // balance / wallet credit or activation value applied
}

// CardsUsageSpec: filters batch_id, profile_id (the series' plan),
// manager_id (card owner), channel.
var CardsUsageSpec = spec("day", map[string]string{"day": "g.day", "redemptions": "g.redemptions", "face_value": "g.face_value"},
	map[string]app.FilterKind{"batch_id": app.FilterInt, "profile_id": app.FilterInt, "manager_id": app.FilterInt, "channel": app.FilterString})

// CardsUsage groups redemptions by day and series. Aggregates:
// redemptions, reversed, face_value, paid_amount, effect_value.
func CardsUsage(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[CardUsage], error) {
	if err := act.Require(PermReportCardsUsage); err != nil {
		return app.Page[CardUsage]{}, err
	}
	var w where
	w.scope(act, "c.owner_manager_id")
	w.period(q, "r.created_at")
	w.manager(q, "c.owner_manager_id")
	w.eq(q, "batch_id", "r.batch_id")
	w.eq(q, "profile_id", "b.plan_id")
	w.eq(q, "channel", "r.channel")
	from := `FROM (SELECT substr(r.created_at, 1, 10) AS day, r.batch_id AS batch_id, MAX(b.name) AS series, MAX(b.card_mode) AS card_mode,
		MAX(b.plan_id) AS plan_id, COALESCE(MAX(p.name), '') AS plan,
		SUM(r.reversed_at IS NULL) AS redemptions, SUM(r.reversed_at IS NOT NULL) AS reversed,
		COALESCE(SUM(CASE WHEN r.reversed_at IS NULL THEN r.face_value END), 0) AS face_value,
		COALESCE(SUM(CASE WHEN r.reversed_at IS NULL THEN r.paid_amount END), 0) AS paid_amount,
		COALESCE(SUM(CASE WHEN r.reversed_at IS NULL THEN r.effect_amount END), 0) AS effect_value,
		substr(r.created_at, 1, 10) || '#' || printf('%020d', r.batch_id) AS k
		FROM card_redemptions r JOIN cards c ON c.id = r.card_id JOIN card_batches b ON b.id = r.batch_id
		LEFT JOIN profiles p ON p.id = b.plan_id` + w.sql() + ` GROUP BY substr(r.created_at, 1, 10), r.batch_id) g`
	aggs := []agg{count("redemptions", "SUM(g.redemptions)"), count("reversed", "SUM(g.reversed)"), money("face_value", "SUM(g.face_value)"),
		money("paid_amount", "SUM(g.paid_amount)"), money("effect_value", "SUM(g.effect_value)")}
	return run(ctx, act, q, aggs, `g.day, g.batch_id, g.series, g.card_mode, g.plan_id, g.plan, g.redemptions, g.reversed, g.face_value, g.paid_amount, g.effect_value`,
		from, w.args, "g.k", func(rows *sql.Rows) (CardUsage, error) {
			var r CardUsage
			var plan sql.NullInt64
			var fv, pa, ev int64
			err := rows.Scan(&r.Day, &r.BatchID, &r.Series, &r.CardMode, &plan, &r.Plan, &r.Redemptions, &r.Reversed, &fv, &pa, &ev)
			r.PlanID, r.FaceValue, r.PaidAmount, r.EffectValue = ptr(plan), app.Money(fv), app.Money(pa), app.Money(ev)
			return r, err
		})
}
