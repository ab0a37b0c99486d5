package dashboards

import (
	"context"
	"database/sql"
	"time"

	"xr/app"
)

// Tiles other than a number: a series tile shows its metric over the last
// SeriesDays local days, a top tile the managers contributing most to it
// (this month for money, now for subscribers). Both read the rollups: the
// hourly money table (dashboard_hourly) and the per-manager subscriber
// counters, never a raw table.

// SeriesDays is the length of a series tile.
const SeriesDays = 30

// TopN is the length of a top tile.
const TopN = 5

// seriesMetrics are the metrics with a history: their rollup metric.
var seriesMetrics = map[string]string{"revenue_today": "debits", "revenue_month": "debits", "deposits_today": "credits", "card_sales_today": "card_sales"}

// topMetrics are the metrics a top tile can rank managers by.
var topMetrics = map[string]string{"revenue_today": "debits", "revenue_month": "debits", "deposits_today": "credits", "card_sales_today": "card_sales",
	"subscribers_total": "", "subscribers_active": ""}

// supports reports whether a tile type can show metric, and which metrics
// it can show.
func supports(typ, metric string) (bool, []string) {
	var m map[string]string
	switch typ {
	case "series":
		m = seriesMetrics
	case "top":
		m = topMetrics
	default:
		return true, nil
	}
	_, ok := m[metric]
	allowed := make([]string, 0, len(m))
	for _, k := range Metrics {
		if _, in := m[k]; in {
			allowed = append(allowed, k)
		}
	}
	return ok, allowed
}

// Point is one day of a series tile.
type Point struct {
	Day   string    `json:"day"` // local date, yyyy-MM-dd
	Value app.Money `json:"value"`
}

// Ranked is one row of a top tile.
type Ranked struct {
	ManagerID int64  `json:"manager_id"`
	Manager   string `json:"manager"`
	Value     any    `json:"value"` // money (major units) or a count
}

func hourKey(t time.Time) string { return t.UTC().Format("2006-01-02 15") }

// series sums the rollup metric per local day over the last SeriesDays
// days, oldest first, every day present (zero when nothing happened).
func series(ctx context.Context, tx *sql.Tx, act *app.Actor, rollup string, now time.Time, loc *time.Location) ([]Point, error) {
	l := now.In(loc)
	first := time.Date(l.Year(), l.Month(), l.Day()-(SeriesDays-1), 0, 0, 0, 0, loc)
	scope, sargs := act.ScopeSQL("d.manager_id")
	rows, err := tx.QueryContext(ctx, `SELECT d.hour, SUM(d.value) FROM dashboard_hourly d WHERE d.metric = ? AND d.hour >= ? AND `+scope+` GROUP BY d.hour`,
		append([]any{rollup, hourKey(first)}, sargs...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byDay := map[string]int64{}
	for rows.Next() {
		var hour string
		var v int64
		if err := rows.Scan(&hour, &v); err != nil {
			return nil, err
		}
		at, err := time.ParseInLocation("2006-01-02 15", hour, time.UTC)
		if err != nil {
			return nil, err
		}
		byDay[at.In(loc).Format("2006-01-02")] += v
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Point, 0, SeriesDays)
	for i := 0; i < SeriesDays; i++ {
		d := first.AddDate(0, 0, i).Format("2006-01-02")
		out = append(out, Point{Day: d, Value: app.Money(byDay[d])})
	}
	return out, nil
}

// top ranks the managers of the caller's subtree by the metric.
func top(ctx context.Context, tx *sql.Tx, act *app.Actor, metric string, now time.Time, loc *time.Location) ([]Ranked, error) {
	rollup := topMetrics[metric]
	var q string
	var args []any
	if rollup == "" {
		scope, sargs := act.ScopeSQL("c.manager_id")
		col := "c.total"
		if metric == "subscribers_active" {
			col = "c.enabled" // enabled ones; the expired are not split per manager
		}
		q = `SELECT c.manager_id, COALESCE(m.username, ''), ` + col + ` AS v FROM dashboard_user_counts c LEFT JOIN managers m ON m.id = c.manager_id
			WHERE ` + col + ` > 0 AND ` + scope + ` ORDER BY v DESC, c.manager_id LIMIT ?`
		args = append(sargs, TopN)
	} else {
		l := now.In(loc)
		from := time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc)
		if metric != "revenue_month" {
			from = time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc)
		}
		scope, sargs := act.ScopeSQL("d.manager_id")
		q = `SELECT d.manager_id, COALESCE(m.username, ''), SUM(d.value) AS v FROM dashboard_hourly d LEFT JOIN managers m ON m.id = d.manager_id
			WHERE d.metric = ? AND d.hour >= ? AND ` + scope + ` GROUP BY d.manager_id HAVING v > 0 ORDER BY v DESC, d.manager_id LIMIT ?`
		args = append(append([]any{rollup, hourKey(from)}, sargs...), TopN)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Ranked{}
	for rows.Next() {
		var r Ranked
		var v int64
		if err := rows.Scan(&r.ManagerID, &r.Manager, &v); err != nil {
			return nil, err
		}
		r.Value = v
		if rollup != "" {
			r.Value = app.Money(v)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
