// Package reports is the read-only reporting area (/admin/reports/*): every
// report is a paginated list scoped to the caller's manager subtree, with a
// period (filter[from], filter[to]; date-only accepted, a date-only "to"
// covering that whole day) and meta.aggregates: rollups over the whole
// filtered set, computed in the same read snapshot as the page.
//
// filter[manager_id] narrows to that manager's subtree (inside the caller's
// scope: an out-of-scope manager gives an empty report, never a leak).
package reports

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"time"

	"xr/app"
)

// Period bounds used when a side is open (text timestamps sort
// chronologically).
const (
	openFrom = "0000-00-00 00:00:00"
	openTo   = "9999-12-31 23:59:59"
)

// Parse applies the list rules with spec, then widens a date-only
// filter[to] to the end of that day.
func Parse(v url.Values, spec app.ListSpec) (app.ListQuery, error) {
	q, err := app.ParseList(v, spec)
	if err != nil {
		return q, err
	}
	if t, ok := q.TimeF("to"); ok && len(strings.TrimSpace(v.Get("filter[to]"))) == len(app.DateLayout) {
		q.Filters["to"] = app.T(t.Add(24*time.Hour - time.Second))
	}
	return q, nil
}

// spec builds a report's allow-list: the period filters are always there.
func spec(defaultSort string, sorts map[string]string, filters map[string]app.FilterKind) app.ListSpec {
	f := map[string]app.FilterKind{"from": app.FilterTime, "to": app.FilterTime}
	for k, v := range filters {
		f[k] = v
	}
	return app.ListSpec{Sorts: sorts, DefaultSort: defaultSort, Filters: f}
}

// agg is one rollup of meta.aggregates: a SQL aggregate over the filtered
// set; money values are thousandths rendered in major units.
type agg = app.Rollup

// count and money make the rollups of a report's meta.aggregates.
func count(key, expr string) agg { return agg{Key: key, Expr: expr} }
func money(key, expr string) agg { return agg{Key: key, Expr: expr, Money: true} }

// where collects conditions and their arguments in order.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *where) scope(act *app.Actor, col string) {
	c, a := act.ScopeSQL(col)
	w.add(c, a...)
}

// period restricts col to [from, to].
func (w *where) period(q app.ListQuery, col string) {
	if v, ok := q.TimeF("from"); ok {
		w.add(col+" >= ?", v)
	}
	if v, ok := q.TimeF("to"); ok {
		w.add(col+" <= ?", v)
	}
}

// manager narrows col to the subtree of filter[manager_id].
func (w *where) manager(q app.ListQuery, col string) {
	if v, ok := q.Int("manager_id"); ok {
		w.add(col+" IN (SELECT descendant_id FROM manager_tree WHERE ancestor_id = ?)", v)
	}
}

// eq adds col = filter[key] for an int or string filter given.
func (w *where) eq(q app.ListQuery, key, col string) {
	if v, ok := q.Filters[key]; ok {
		w.add(col+" = ?", v)
	}
}

// like adds a q search over cols.
func (w *where) like(q app.ListQuery, cols ...string) {
	if q.Q == "" {
		return
	}
	p := "%" + app.LikeEscape(q.Q) + "%"
	var parts []string
	for _, c := range cols {
		parts = append(parts, c+` LIKE ? ESCAPE '\'`)
		w.args = append(w.args, p)
	}
	w.conds = append(w.conds, "("+strings.Join(parts, " OR ")+")")
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// bounds are the period's two sides as bind values (open sides widened).
func bounds(q app.ListQuery) (from, to any) {
	from, to = openFrom, openTo
	if v, ok := q.TimeF("from"); ok {
		from = v
	}
	if v, ok := q.TimeF("to"); ok {
		to = v
	}
	return from, to
}

// run is app.QueryPage with the report's rollups in meta.aggregates.
func run[T any](ctx context.Context, act *app.Actor, q app.ListQuery, aggs []agg, cols, from string, args []any, idExpr string,
	scan func(rows *sql.Rows) (T, error)) (app.Page[T], error) {
	return app.QueryPage(ctx, act.Tenant, q, cols, from, args, idExpr, scan, aggs...)
}

// mname renders a manager's display name from alias m.
func mname(alias string) string {
	return "COALESCE(" + alias + ".username, " + alias + ".email, '')"
}

func ptr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func mptr(v sql.NullInt64) *app.Money {
	if !v.Valid {
		return nil
	}
	m := app.Money(v.Int64)
	return &m
}
