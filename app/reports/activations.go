package reports

import (
	"context"
	"database/sql"

	"xr/app"
)

// Activation is a row of /admin/reports/activations: one plan activation
// (renewal) of a subscriber — who, which plan, the price, who paid it
// (subscriber balance, reseller wallet or nobody), which staff member did
// it, and whether it was refunded since. manager_id is the subscriber's
// owning manager (the scope column).
type Activation struct {
	ID             int64     `json:"id"`
	UserID         int64     `json:"user_id"`
	Username       string    `json:"username"`
	ManagerID      int64     `json:"manager_id"`
	Manager        string    `json:"manager"`
	ProfileID      *int64    `json:"profile_id"`
	Profile        string    `json:"profile"`
	Price          app.Money `json:"price"`
	Payer          string    `json:"payer"`
	PayerManagerID *int64    `json:"payer_manager_id"`
	PayerManager   string    `json:"payer_manager"`
	ActorID        *int64    `json:"actor_id"`
	Actor          string    `json:"actor"`
	Source         string    `json:"source"` // ref_type: "" for staff, card_redemption, ...
	OldExpiration  app.Time  `json:"old_expiration"`
	NewExpiration  app.Time  `json:"new_expiration"`
	Refunded       bool      `json:"refunded"`
	RefundedAt     app.Time  `json:"refunded_at"`
	CreatedAt      app.Time  `json:"created_at"`
}

// ActivationsSpec: filters user_id, profile_id, manager_id, actor_id, payer
// (subscriber|reseller|none), refunded; q searches the username.
var ActivationsSpec = spec("created_at", map[string]string{"created_at": "a.created_at", "id": "a.id", "price": "a.price", "username": "u.username"},
	map[string]app.FilterKind{"user_id": app.FilterInt, "profile_id": app.FilterInt, "manager_id": app.FilterInt, "actor_id": app.FilterInt,
		"payer": app.FilterString, "refunded": app.FilterBool})

// Activations lists activations in the period. Aggregates: count, users
// (distinct), revenue (not refunded), refunded, subscriber_paid,
// reseller_paid (money).
func Activations(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[Activation], error) {
	if err := act.Require(PermReportActivations); err != nil {
		return app.Page[Activation]{}, err
	}
	var w where
	w.scope(act, "u.parent_id")
	w.period(q, "a.created_at")
	w.manager(q, "u.parent_id")
	w.eq(q, "user_id", "a.user_id")
	w.eq(q, "profile_id", "a.profile_id")
	w.eq(q, "actor_id", "a.actor_id")
	w.eq(q, "payer", "a.payer")
	if v, ok := q.Bool("refunded"); ok {
		if v {
			w.add("a.refunded_at IS NOT NULL")
		} else {
			w.add("a.refunded_at IS NULL")
		}
	}
	w.like(q, "u.username")
	from := `FROM user_activations a JOIN users u ON u.id = a.user_id LEFT JOIN profiles p ON p.id = a.profile_id
		LEFT JOIN managers om ON om.id = u.parent_id LEFT JOIN managers pm ON pm.id = a.payer_manager_id
		LEFT JOIN managers am ON am.id = a.actor_id` + w.sql()
	aggs := []agg{count("count", "COUNT(*)"), count("users", "COUNT(DISTINCT a.user_id)"),
		money("revenue", "SUM(CASE WHEN a.refunded_at IS NULL THEN a.price END)"),
		money("refunded", "SUM(CASE WHEN a.refunded_at IS NOT NULL THEN a.price END)"),
		money("subscriber_paid", "SUM(CASE WHEN a.refunded_at IS NULL AND a.payer = 'subscriber' THEN a.price END)"),
		money("reseller_paid", "SUM(CASE WHEN a.refunded_at IS NULL AND a.payer = 'reseller' THEN a.price END)")}
	cols := `a.id, a.user_id, u.username, u.parent_id, ` + mname("om") + `, a.profile_id, COALESCE(p.name, ''), a.price, a.payer,
		a.payer_manager_id, ` + mname("pm") + `, a.actor_id, ` + mname("am") + `, a.ref_type, a.old_expiration, a.new_expiration, a.refunded_at, a.created_at`
	return run(ctx, act, q, aggs, cols, from, w.args, "a.id", func(rows *sql.Rows) (Activation, error) {
		var r Activation
		var pid, pm, actor sql.NullInt64
		var price int64
		err := rows.Scan(&r.ID, &r.UserID, &r.Username, &r.ManagerID, &r.Manager, &pid, &r.Profile, &price, &r.Payer, &pm, &r.PayerManager,
			&actor, &r.Actor, &r.Source, &r.OldExpiration, &r.NewExpiration, &r.RefundedAt, &r.CreatedAt)
		r.ProfileID, r.PayerManagerID, r.ActorID, r.Price = ptr(pid), ptr(pm), ptr(actor), app.Money(price)
		r.Refunded = !r.RefundedAt.IsZero()
		return r, err
	})
}

// ActivationStat is a row of /admin/reports/activation-stats: the
// activations of one day (UTC) and one plan.
type ActivationStat struct {
	Day            string    `json:"day"` // yyyy-MM-dd
	ProfileID      *int64    `json:"profile_id"`
	Profile        string    `json:"profile"`
	Activations    int64     `json:"activations"`     // including refunded ones
	Refunded       int64     `json:"refunded"`        // how many of them were refunded
	Users          int64     `json:"users"`           // distinct subscribers
	Revenue        app.Money `json:"revenue"`         // prices of the non-refunded ones
	SubscriberPaid app.Money `json:"subscriber_paid"` // part of revenue paid from subscriber balances
	ResellerPaid   app.Money `json:"reseller_paid"`   // part of revenue paid from reseller wallets
}

// ActivationStatsSpec: filters profile_id, manager_id, payer.
var ActivationStatsSpec = spec("day", map[string]string{"day": "g.day", "activations": "g.activations", "revenue": "g.revenue", "profile": "g.profile"},
	map[string]app.FilterKind{"profile_id": app.FilterInt, "manager_id": app.FilterInt, "payer": app.FilterString})

// ActivationStats groups activations by day and plan. Aggregates:
// activations, refunded, revenue, subscriber_paid, reseller_paid.
func ActivationStats(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[ActivationStat], error) {
	if err := act.Require(PermReportActivationStats); err != nil {
		return app.Page[ActivationStat]{}, err
	}
	var w where
	w.scope(act, "u.parent_id")
	w.period(q, "a.created_at")
	w.manager(q, "u.parent_id")
	w.eq(q, "profile_id", "a.profile_id")
	w.eq(q, "payer", "a.payer")
	from := `FROM (SELECT substr(a.created_at, 1, 10) AS day, a.profile_id AS profile_id, COALESCE(MAX(p.name), '') AS profile,
		COUNT(*) AS activations, SUM(a.refunded_at IS NOT NULL) AS refunded, COUNT(DISTINCT a.user_id) AS users,
		COALESCE(SUM(CASE WHEN a.refunded_at IS NULL THEN a.price END), 0) AS revenue,
		COALESCE(SUM(CASE WHEN a.refunded_at IS NULL AND a.payer = 'subscriber' THEN a.price END), 0) AS subscriber_paid,
		COALESCE(SUM(CASE WHEN a.refunded_at IS NULL AND a.payer = 'reseller' THEN a.price END), 0) AS reseller_paid,
		substr(a.created_at, 1, 10) || '#' || printf('%020d', COALESCE(a.profile_id, 0)) AS k
		FROM user_activations a JOIN users u ON u.id = a.user_id LEFT JOIN profiles p ON p.id = a.profile_id` + w.sql() + `
		GROUP BY substr(a.created_at, 1, 10), a.profile_id) g`
	aggs := []agg{count("activations", "SUM(g.activations)"), count("refunded", "SUM(g.refunded)"),
		money("revenue", "SUM(g.revenue)"), money("subscriber_paid", "SUM(g.subscriber_paid)"), money("reseller_paid", "SUM(g.reseller_paid)")}
	return run(ctx, act, q, aggs, `g.day, g.profile_id, g.profile, g.activations, g.refunded, g.users, g.revenue, g.subscriber_paid, g.reseller_paid`,
		from, w.args, "g.k", func(rows *sql.Rows) (ActivationStat, error) {
			var r ActivationStat
			var pid sql.NullInt64
			var rev, sp, rp int64
			err := rows.Scan(&r.Day, &pid, &r.Profile, &r.Activations, &r.Refunded, &r.Users, &rev, &sp, &rp)
			r.ProfileID, r.Revenue, r.SubscriberPaid, r.ResellerPaid = ptr(pid), app.Money(rev), app.Money(sp), app.Money(rp)
			return r, err
		})
}

// Profit is a row of /admin/reports/profits: per day (UTC) and owning
// manager (the subscribers' manager), the money taken for plan activations
// (refunded ones excluded) and add-ons. reseller_cost is the part a
// reseller paid from its wallet (what the reseller owes the operator for
// its subscribers' renewals); net = revenue − reseller_cost is the part
// the operator collected straight from subscriber balances. No purchase
// cost of plans is recorded, so no margin beyond this is claimed. Cards
// sold at the till (not voided) count per day and cashier: card_revenue
// is their face value, and what the cashier's wallet paid for cards minted
// at the sale is part of reseller_cost.
type Profit struct {
	Day               string    `json:"day"`
	ManagerID         int64     `json:"manager_id"`
	Manager           string    `json:"manager"`
	Activations       int64     `json:"activations"`
	ActivationRevenue app.Money `json:"activation_revenue"`
	Addons            int64     `json:"addons"`
	AddonRevenue      app.Money `json:"addon_revenue"`
	CardSales         int64     `json:"card_sales"`
	CardRevenue       app.Money `json:"card_revenue"`
	Revenue           app.Money `json:"revenue"`
	ResellerCost      app.Money `json:"reseller_cost"`
	Net               app.Money `json:"net"`
}

// ProfitsSpec: filter manager_id.
var ProfitsSpec = spec("day", map[string]string{"day": "g.day", "revenue": "g.revenue", "net": "g.net", "manager": "g.manager"},
	map[string]app.FilterKind{"manager_id": app.FilterInt})

// Profits groups revenue by day and manager. Aggregates: activations,
// addons, activation_revenue, addon_revenue, revenue, reseller_cost, net.
func Profits(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[Profit], error) {
	if err := act.Require(PermReportProfits); err != nil {
		return app.Page[Profit]{}, err
	}
	branch := func(table, extra string) (string, []any) {
		var w where
		w.scope(act, "u.parent_id")
		w.period(q, "x.created_at")
		w.manager(q, "u.parent_id")
		if extra != "" {
			w.add(extra)
		}
		isAct := "0"
		if table == "user_activations" {
			isAct = "1"
		}
		return `SELECT substr(x.created_at, 1, 10) AS day, u.parent_id AS mgr, ` + isAct + ` AS is_act, x.price AS price,
			CASE WHEN x.payer = 'reseller' THEN x.price ELSE 0 END AS cost, 0 AS cards
			FROM ` + table + ` x JOIN users u ON u.id = x.user_id` + w.sql(), w.args
	}
	b1, a1 := branch("user_activations", "x.refunded_at IS NULL")
	b2, a2 := branch("user_addons", "")
	// Cards sold at the till: is_act 2, per cashier.
	var wc where
	wc.add("l.kind = 'card' AND x.status = 'completed'")
	wc.scope(act, "x.cashier_id")
	wc.period(q, "x.created_at")
	wc.manager(q, "x.cashier_id")
	b3 := `SELECT substr(x.created_at, 1, 10) AS day, x.cashier_id AS mgr, 2 AS is_act, l.amount AS price, l.cost AS cost, l.quantity AS cards
		FROM pos_sale_lines l JOIN pos_sales x ON x.id = l.sale_id` + wc.sql()
	from := `FROM (SELECT x.day AS day, x.mgr AS manager_id, ` + mname("m") + ` AS manager,
		SUM(x.is_act = 1) AS activations, SUM(CASE WHEN x.is_act = 1 THEN x.price ELSE 0 END) AS activation_revenue,
		SUM(x.is_act = 0) AS addons, SUM(CASE WHEN x.is_act = 0 THEN x.price ELSE 0 END) AS addon_revenue,
		SUM(x.cards) AS card_sales, SUM(CASE WHEN x.is_act = 2 THEN x.price ELSE 0 END) AS card_revenue,
		SUM(x.price) AS revenue, SUM(x.cost) AS reseller_cost, SUM(x.price - x.cost) AS net,
		x.day || '#' || printf('%020d', x.mgr) AS k
		FROM (` + b1 + ` UNION ALL ` + b2 + ` UNION ALL ` + b3 + `) x LEFT JOIN managers m ON m.id = x.mgr GROUP BY x.day, x.mgr) g`
	aggs := []agg{count("activations", "SUM(g.activations)"), count("addons", "SUM(g.addons)"), count("card_sales", "SUM(g.card_sales)"),
		money("activation_revenue", "SUM(g.activation_revenue)"), money("addon_revenue", "SUM(g.addon_revenue)"), money("card_revenue", "SUM(g.card_revenue)"),
		money("revenue", "SUM(g.revenue)"), money("reseller_cost", "SUM(g.reseller_cost)"), money("net", "SUM(g.net)")}
	args := append(append(a1, a2...), wc.args...)
	return run(ctx, act, q, aggs, `g.day, g.manager_id, g.manager, g.activations, g.activation_revenue, g.addons, g.addon_revenue, g.card_sales, g.card_revenue, g.revenue, g.reseller_cost, g.net`,
		from, args, "g.k", func(rows *sql.Rows) (Profit, error) {
			var r Profit
			var ar, adr, cr, rev, rc, net int64
			err := rows.Scan(&r.Day, &r.ManagerID, &r.Manager, &r.Activations, &ar, &r.Addons, &adr, &r.CardSales, &cr, &rev, &rc, &net)
			r.ActivationRevenue, r.AddonRevenue, r.CardRevenue, r.Revenue, r.ResellerCost, r.Net = app.Money(ar), app.Money(adr), app.Money(cr), app.Money(rev), app.Money(rc), app.Money(net)
			return r, err
		})
}
