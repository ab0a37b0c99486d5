package dashboards

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/subs"
)

// Mine is GET /admin/dashboards/me: the dashboard of the caller's role
// with the caller's own layout when it has one.
type Mine struct {
	Dashboard  *Dashboard `json:"dashboard"`
	Tiles      []Tile     `json:"tiles"`
	Customized bool       `json:"customized"`
	Theme      string     `json:"theme"`
	Density    string     `json:"density"`
}

// Appearance is the body of PUT /admin/dashboards/me/appearance.
type Appearance struct {
	Theme   string `json:"theme"`   // system | light | dark
	Density string `json:"density"` // comfortable | compact
}

// Customization is the body of PUT /admin/dashboards/me/customize.
type Customization struct {
	Tiles []Tile `json:"tiles"`
}

func staff(act *app.Actor) error {
	if act.ManagerID == 0 || act.Kind == app.CredSubscriber {
		return app.ErrForbidden("insufficient_permissions")
	}
	return nil
}

// GetMine answers the caller's dashboard.
func GetMine(ctx context.Context, act *app.Actor) (*Mine, error) {
	if err := staff(act); err != nil {
		return nil, err
	}
	t := act.Tenant
	if err := ensureDefaults(ctx, t); err != nil {
		return nil, err
	}
	all, err := list(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	m := &Mine{Tiles: []Tile{}, Theme: "system", Density: "comfortable"}
	// The first definition naming one of the caller's roles, else the
	// first for everyone.
	for _, d := range all {
		for _, r := range d.Roles {
			if m.Dashboard == nil && slices.Contains(act.Roles, r) {
				m.Dashboard = d
			}
		}
	}
	for _, d := range all {
		if m.Dashboard == nil && len(d.Roles) == 0 {
			m.Dashboard = d
		}
	}
	if m.Dashboard != nil {
		m.Tiles = m.Dashboard.Tiles
	}
	var tiles sql.NullString
	err = t.DB.R.QueryRowContext(ctx, `SELECT tiles, theme, density FROM dashboard_prefs WHERE manager_id = ?`, act.ManagerID).Scan(&tiles, &m.Theme, &m.Density)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if tiles.Valid {
		var own []Tile
		if err := json.Unmarshal([]byte(tiles.String), &own); err != nil {
			return nil, fmt.Errorf("dashboard prefs %d: %w", act.ManagerID, err)
		}
		m.Tiles, m.Customized = own, true
	}
	return m, nil
}

// SetAppearance stores the caller's theme and density.
func SetAppearance(ctx context.Context, act *app.Actor, in Appearance) (*Mine, error) {
	if err := staff(act); err != nil {
		return nil, err
	}
	if !slices.Contains([]string{"system", "light", "dark"}, in.Theme) {
		return nil, app.ErrValidation("invalid_enum", "theme").With("allowed", []string{"system", "light", "dark"})
	}
	if !slices.Contains([]string{"comfortable", "compact"}, in.Density) {
		return nil, app.ErrValidation("invalid_enum", "density").With("allowed", []string{"comfortable", "compact"})
	}
	t := act.Tenant
	if err := t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO dashboard_prefs(manager_id, theme, density, updated_at) VALUES (?,?,?,?)
			ON CONFLICT(manager_id) DO UPDATE SET theme = excluded.theme, density = excluded.density, updated_at = excluded.updated_at`,
			act.ManagerID, in.Theme, in.Density, t.NowText())
		return err
	}); err != nil {
		return nil, err
	}
	return GetMine(ctx, act)
}

// Customize stores the caller's own layout.
func Customize(ctx context.Context, act *app.Actor, in Customization) (*Mine, error) {
	if err := staff(act); err != nil {
		return nil, err
	}
	if in.Tiles == nil {
		return nil, app.ErrValidation("tiles_required", "tiles")
	}
	if err := validateTiles(in.Tiles, "tiles"); err != nil {
		return nil, err
	}
	t := act.Tenant
	if err := t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO dashboard_prefs(manager_id, tiles, updated_at) VALUES (?,?,?)
			ON CONFLICT(manager_id) DO UPDATE SET tiles = excluded.tiles, updated_at = excluded.updated_at`, act.ManagerID, js(in.Tiles), t.NowText())
		return err
	}); err != nil {
		return nil, err
	}
	return GetMine(ctx, act)
}

// ResetCustomization drops the caller's own layout (back to its role's).
func ResetCustomization(ctx context.Context, act *app.Actor) (*Mine, error) {
	if err := staff(act); err != nil {
		return nil, err
	}
	t := act.Tenant
	if err := t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE dashboard_prefs SET tiles = NULL, updated_at = ? WHERE manager_id = ?`, t.NowText(), act.ManagerID)
		return err
	}); err != nil {
		return nil, err
	}
	return GetMine(ctx, act)
}

// TileValue is one tile's value.
type TileValue struct {
	Metric string `json:"metric"`
	Type   string `json:"type"`
	Title  string `json:"title,omitempty"`
	// Value: a number, money (major units) or null when unavailable; a
	// series tile's days ([]Point), a top tile's managers ([]Ranked).
	Value any `json:"value"`
}

// Series is a series tile's days (nil for another tile).
func (v TileValue) Series() []Point { p, _ := v.Value.([]Point); return p }

// Top is a top tile's rows (nil for another tile).
func (v TileValue) Top() []Ranked { r, _ := v.Value.([]Ranked); return r }

// Bars are a series tile's days scaled to 0-100 for a bar chart.
func (v TileValue) Bars() []Bar {
	pts := v.Series()
	var peak app.Money
	for _, p := range pts {
		peak = max(peak, p.Value)
	}
	out := make([]Bar, len(pts))
	for i, p := range pts {
		out[i] = Bar{Point: p, X: i * 10}
		if peak > 0 && p.Value > 0 {
			out[i].Height = max(int(int64(p.Value)*100/int64(peak)), 1)
		}
		out[i].Y = 100 - out[i].Height
	}
	return out
}

// Bar is one day of a series drawn as an SVG bar.
type Bar struct {
	Point
	X, Y, Height int
}

// Shown is the value as the console prints it ("–" when unavailable).
func (v TileValue) Shown() string {
	if v.Value == nil {
		return "–"
	}
	return fmt.Sprint(v.Value)
}

// Values is GET /admin/dashboards/me/values.
type Values struct {
	At    app.Time       `json:"at"`
	Tiles []TileValue    `json:"tiles"`
	Map   map[string]any `json:"values"`
}

// GetValues answers every tile of the caller's dashboard, scoped to its
// subtree.
func GetValues(ctx context.Context, act *app.Actor) (*Values, error) {
	m, err := GetMine(ctx, act)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, tl := range m.Tiles {
		want[tl.Metric] = true
	}
	vals, err := Compute(ctx, act, want)
	if err != nil {
		return nil, err
	}
	t := act.Tenant
	now := t.Now()
	out := &Values{At: app.Time{Time: now}, Tiles: []TileValue{}, Map: vals}
	err = t.Read(ctx, func(tx *sql.Tx) error {
		loc := app.TenantLocation(ctx, tx)
		for _, tl := range m.Tiles {
			tv := TileValue{Metric: tl.Metric, Type: tl.Type, Title: tl.Title, Value: vals[tl.Metric]}
			var err error
			switch tl.Type {
			case "series":
				tv.Value, err = series(ctx, tx, act, seriesMetrics[tl.Metric], now, loc)
			case "top":
				tv.Value, err = top(ctx, tx, act, tl.Metric, now, loc)
			}
			if err != nil {
				return err
			}
			out.Tiles = append(out.Tiles, tv)
		}
		return nil
	})
	return out, err
}

// subscriberMetrics are the metrics that count subscribers, each the
// subscriber list's figure of the same meaning.
var subscriberMetrics = []struct {
	metric string
	figure subs.Figure
}{{"subscribers_total", subs.FigureTotal}, {"subscribers_active", subs.FigureActive}, {"subscribers_expired", subs.FigureExpired},
	{"subscribers_disabled", subs.FigureDisabled}, {"subscribers_never_activated", subs.FigureNeverActivated},
	{"expiring_7d", subs.FigureExpiring7d}, {"online_now", subs.FigureOnline}}

// Figure answers the subscriber list figure a metric counts, if any: the
// console links its tile to that list.
func Figure(metric string) (subs.Figure, bool) {
	for _, m := range subscriberMetrics {
		if m.metric == metric {
			return m.figure, true
		}
	}
	return "", false
}

// Compute reads the metrics of want (nil = all) in one snapshot.
func Compute(ctx context.Context, act *app.Actor, want map[string]bool) (map[string]any, error) {
	w := func(keys ...string) bool {
		for _, k := range keys {
			if want == nil || want[k] {
				return true
			}
		}
		return false
	}
	t := act.Tenant
	now := t.Now()
	out := map[string]any{}
	// Subscriber counts are the subscriber list's figures: a tile equals
	// the list behind it (subs.CountFigures).
	// They come together (the values answer all of them for any one).
	var figs []subs.Figure
	wanted := false
	for _, m := range subscriberMetrics {
		figs = append(figs, m.figure)
		wanted = wanted || w(m.metric)
	}
	if wanted {
		n, err := subs.CountFigures(ctx, act, figs...)
		if err != nil {
			return nil, err
		}
		for _, m := range subscriberMetrics {
			out[m.metric] = n[m.figure]
		}
	}
	scope, sargs := act.ScopeSQL("u.parent_id")
	err := t.Read(ctx, func(tx *sql.Tx) error {
		loc := app.TenantLocation(ctx, tx)
		l := now.In(loc)
		midnight := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc).UTC()
		if w("new_today") {
			var n int64
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users u WHERE u.deleted_at IS NULL AND u.created_at >= ? AND `+scope,
				append([]any{app.FormatTime(midnight)}, sargs...)...).Scan(&n); err != nil {
				return err
			}
			out["new_today"] = n
		}
		mscope, margs := act.ScopeSQL("d.manager_id")
		money := func(key, metric string, from time.Time) error {
			if !w(key) {
				return nil
			}
			var v int64
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(d.value), 0) FROM dashboard_hourly d WHERE d.metric = ? AND d.hour >= ? AND `+mscope,
				append([]any{metric, hourKey(from)}, margs...)...).Scan(&v); err != nil {
				return err
			}
			out[key] = app.Money(v)
			return nil
		}
		// Local days: from the hour holding the tenant's midnight.
		monthStart := time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, loc).UTC()
		for _, m := range []struct {
			key, metric string
			from        time.Time
		}{{"revenue_today", "debits", midnight}, {"revenue_month", "debits", monthStart}, {"deposits_today", "credits", midnight}, {"card_sales_today", "card_sales", midnight}} {
			if err := money(m.key, m.metric, m.from); err != nil {
				return err
			}
		}
		if w("tickets_open") {
			out["tickets_open"] = nil
			var exists int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'tickets'`).Scan(&exists); err != nil {
				return err
			}
			if exists > 0 && act.TenantWide {
				var n int64
				if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tickets WHERE state NOT IN ('resolved','closed')`).Scan(&n); err != nil {
					return err
				}
				out["tickets_open"] = n
			}
		}
		if w("nas_total", "nas_up", "nas_down") {
			ids, err := app.QueryIDs(ctx, tx, `SELECT id FROM nas ORDER BY id`)
			if err != nil {
				return err
			}
			out["nas_total"] = int64(len(ids))
			out["nas_up"], out["nas_down"] = nil, nil
			if wire := aaa.ServiceOf(t.App).Wire(); wire != nil && wire.Health != nil {
				var up int64
				for _, id := range ids {
					h := wire.Health(t.Slug, id)
					last := h.LastAccessRequest
					if h.LastAccounting.After(last) {
						last = h.LastAccounting
					}
					if !last.IsZero() && now.Sub(last) < 15*time.Minute {
						up++
					}
				}
				out["nas_up"], out["nas_down"] = up, int64(len(ids))-up
			}
		}
		if w("auth_accept_rate", "auth_reject_rate", "auth_requests_hour") {
			hour := app.FormatTime(now.Add(-time.Hour))
			var accept, reject int64
			q := `SELECT COALESCE(SUM(IIF(result = 'accept', decisions, 0)), 0), COALESCE(SUM(IIF(result = 'reject', decisions, 0)), 0) FROM auth_log WHERE at >= ?`
			args := []any{hour}
			if !act.TenantWide {
				q = `SELECT COALESCE(SUM(IIF(a.result = 'accept', a.decisions, 0)), 0), COALESCE(SUM(IIF(a.result = 'reject', a.decisions, 0)), 0) FROM auth_log a JOIN users u ON u.id = a.user_id WHERE a.at >= ? AND ` + scope
				args = append(args, sargs...)
			}
			if err := tx.QueryRowContext(ctx, q, args...).Scan(&accept, &reject); err != nil {
				return err
			}
			out["auth_requests_hour"] = accept + reject
			out["auth_accept_rate"], out["auth_reject_rate"] = nil, nil
			if accept+reject > 0 {
				out["auth_accept_rate"] = float64(accept*1000/(accept+reject)) / 10
				out["auth_reject_rate"] = float64(reject*1000/(accept+reject)) / 10
			}
		}
		if w("accounting_lag_seconds") {
			// The oldest open session's last update: how far behind the
			// accounting of online sessions is.
			var last sql.NullString
			if err := tx.QueryRowContext(ctx, `SELECT MIN(COALESCE(update_time, start_time)) FROM radius_sessions WHERE stop_time IS NULL`).Scan(&last); err != nil {
				return err
			}
			out["accounting_lag_seconds"] = nil
			if last.Valid {
				if at, err := app.ParseTime(last.String, false); err == nil {
					out["accounting_lag_seconds"] = int64(now.Sub(at).Seconds())
				}
			}
		}
		return nil
	})
	return out, err
}
