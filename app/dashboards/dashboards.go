// Package dashboards is the dashboard manager (/admin/tools/dashboards*:
// tenant-wide definitions, the roles that see them, the shipped defaults)
// and the caller's own dashboard (/admin/dashboards/me*: its layout,
// appearance and tile values, scoped to the caller's subtree and computed
// from indexes, rollups and counters, never a scan of a raw table).
package dashboards

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"xr/app"
)

// Module is the dashboards area's contribution to an instance.
var Module = app.Module{Name: "dashboards", Permissions: permCatalogue}

// Metrics is the catalogue of tile metrics.
var Metrics = []string{"subscribers_total", "subscribers_active", "subscribers_expired", "subscribers_disabled", "subscribers_never_activated", "online_now", "new_today",
	"expiring_7d", "revenue_today", "revenue_month", "deposits_today", "card_sales_today", "tickets_open", "nas_total", "nas_up", "nas_down",
	"auth_accept_rate", "auth_reject_rate", "auth_requests_hour", "accounting_lag_seconds"}

// TileTypes are the ways a tile shows its metric.
var TileTypes = []string{"kpi", "series", "top", "gauge"}

// Tile is one tile of a dashboard.
type Tile struct {
	Metric string `json:"metric"`
	Type   string `json:"type"`
	Title  string `json:"title,omitempty"`
}

// Dashboard is a tenant-wide definition.
type Dashboard struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Roles     []string `json:"roles"`
	Tiles     []Tile   `json:"tiles"`
	Builtin   *string  `json:"builtin"`
	CreatedAt app.Time `json:"created_at"`
	UpdatedAt app.Time `json:"updated_at"`
}

// Input is the body of POST and PUT /admin/tools/dashboards[/{id}].
type Input struct {
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
	Tiles []Tile   `json:"tiles"`
}

// MaxTiles bounds a dashboard.
const MaxTiles = 40

func validateTiles(tiles []Tile, field string) error {
	if len(tiles) > MaxTiles {
		return app.ErrValidation("too_many_tiles", field)
	}
	for i := range tiles {
		f := fmt.Sprintf("%s[%d]", field, i)
		if !slices.Contains(Metrics, tiles[i].Metric) {
			return app.ErrValidation("unknown_metric", f+".metric").With("allowed", Metrics)
		}
		if tiles[i].Type == "" {
			tiles[i].Type = "kpi"
		}
		if !slices.Contains(TileTypes, tiles[i].Type) {
			return app.ErrValidation("invalid_enum", f+".type").With("allowed", TileTypes)
		}
		if ok, allowed := supports(tiles[i].Type, tiles[i].Metric); !ok {
			return app.ErrValidation("tile_type_unsupported", f+".type").With("allowed_metrics", allowed)
		}
		if len(tiles[i].Title) > 100 {
			return app.ErrValidation("invalid_name", f+".title")
		}
	}
	return nil
}

func (in *Input) validate() error {
	if in.Name == "" {
		return app.ErrValidation("name_required", "name")
	}
	if len(in.Name) > 100 {
		return app.ErrValidation("invalid_name", "name")
	}
	if in.Roles == nil {
		in.Roles = []string{}
	}
	if len(in.Roles) > 50 {
		return app.ErrValidation("too_many_ids", "roles")
	}
	if in.Tiles == nil {
		in.Tiles = []Tile{}
	}
	return validateTiles(in.Tiles, "tiles")
}

const cols = `id, name, roles, tiles, builtin, created_at, updated_at`

func scan(row interface{ Scan(...any) error }) (*Dashboard, error) {
	d := &Dashboard{}
	var roles, tiles string
	if err := row.Scan(&d.ID, &d.Name, &roles, &tiles, &d.Builtin, &d.CreatedAt, &d.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(roles), &d.Roles); err != nil {
		return nil, fmt.Errorf("dashboard %d roles: %w", d.ID, err)
	}
	if err := json.Unmarshal([]byte(tiles), &d.Tiles); err != nil {
		return nil, fmt.Errorf("dashboard %d tiles: %w", d.ID, err)
	}
	return d, nil
}

func get(ctx context.Context, q app.Querier, id int64) (*Dashboard, error) {
	d, err := scan(q.QueryRowContext(ctx, `SELECT `+cols+` FROM dashboards WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return d, err
}

func list(ctx context.Context, q app.Querier) ([]*Dashboard, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+cols+` FROM dashboards ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*Dashboard{}
	for rows.Next() {
		d, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func js(v any) string {
	b, _ := json.Marshal(v) // roles and tiles always marshal
	return string(b)
}

// Defaults are the shipped dashboards (restore-defaults brings them back).
var Defaults = []Input{
	{Name: "Overview", Roles: []string{}, Tiles: []Tile{
		{Metric: "subscribers_active", Type: "kpi"}, {Metric: "online_now", Type: "kpi"}, {Metric: "new_today", Type: "kpi"},
		{Metric: "expiring_7d", Type: "kpi"}, {Metric: "revenue_today", Type: "kpi"}, {Metric: "revenue_month", Type: "kpi"},
		{Metric: "subscribers_expired", Type: "kpi"}, {Metric: "subscribers_disabled", Type: "kpi"}}},
	{Name: "Network", Roles: []string{}, Tiles: []Tile{
		{Metric: "online_now", Type: "gauge"}, {Metric: "nas_up", Type: "kpi"}, {Metric: "nas_down", Type: "kpi"},
		{Metric: "auth_accept_rate", Type: "gauge"}, {Metric: "auth_reject_rate", Type: "gauge"}, {Metric: "accounting_lag_seconds", Type: "kpi"}}},
	{Name: "Finance", Roles: []string{}, Tiles: []Tile{
		{Metric: "revenue_today", Type: "kpi"}, {Metric: "revenue_month", Type: "kpi"}, {Metric: "deposits_today", Type: "kpi"},
		{Metric: "card_sales_today", Type: "kpi"}, {Metric: "revenue_today", Type: "series", Title: "Revenue, last 30 days"},
		{Metric: "revenue_month", Type: "top", Title: "Top resellers this month"}}},
}

var builtinKeys = []string{"overview", "network", "finance"}

// ensureDefaults inserts the shipped dashboards when the tenant has none.
func ensureDefaults(ctx context.Context, t *app.Tenant) error {
	var n int
	if err := t.DB.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM dashboards`).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	return t.Write(ctx, func(tx *sql.Tx) error { return restore(ctx, tx, t.NowText()) })
}

func restore(ctx context.Context, tx *sql.Tx, now string) error {
	for i, d := range Defaults {
		if _, err := tx.ExecContext(ctx, `INSERT INTO dashboards(name, roles, tiles, builtin, created_at, updated_at) VALUES (?,?,?,?,?,?)
			ON CONFLICT(builtin) WHERE builtin IS NOT NULL DO UPDATE SET name = excluded.name, roles = excluded.roles, tiles = excluded.tiles, updated_at = excluded.updated_at`,
			d.Name, js(d.Roles), js(d.Tiles), builtinKeys[i], now, now); err != nil {
			return err
		}
	}
	return nil
}

// List answers every dashboard definition.
func List(ctx context.Context, act *app.Actor) ([]*Dashboard, error) {
	if err := act.Require(PermToolsDashboardManager); err != nil {
		return nil, err
	}
	if err := ensureDefaults(ctx, act.Tenant); err != nil {
		return nil, err
	}
	return list(ctx, act.Tenant.DB.R)
}

// Get answers one definition.
func Get(ctx context.Context, act *app.Actor, id int64) (*Dashboard, error) {
	if err := act.Require(PermToolsDashboardManager); err != nil {
		return nil, err
	}
	return get(ctx, act.Tenant.DB.R, id)
}

// Create stores a definition.
func Create(ctx context.Context, act *app.Actor, in Input) (*Dashboard, error) {
	if err := act.Require(PermToolsDashboardManager); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	t := act.Tenant
	var d *Dashboard
	err := t.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO dashboards(name, roles, tiles, created_at, updated_at) VALUES (?,?,?,?,?)`,
			in.Name, js(in.Roles), js(in.Tiles), t.NowText(), t.NowText())
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		d, err = get(ctx, tx, id)
		return err
	})
	return d, err
}

// Replace overwrites a definition (PUT).
func Replace(ctx context.Context, act *app.Actor, id int64, in Input) (*Dashboard, error) {
	if err := act.Require(PermToolsDashboardManager); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	t := act.Tenant
	var d *Dashboard
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := get(ctx, tx, id); err != nil {
			return err
		}
		var p app.Patch
		p.Set("name", in.Name)
		p.Set("roles", js(in.Roles))
		p.Set("tiles", js(in.Tiles))
		if _, err := p.Exec(ctx, tx, "dashboards", id, t.NowText()); err != nil {
			return err
		}
		var err error
		d, err = get(ctx, tx, id)
		return err
	})
	return d, err
}

// Delete removes a definition.
func Delete(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermToolsDashboardManager); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM dashboards WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return app.ErrNotFound()
		}
		return nil
	})
}

// RestoreDefaults brings back the shipped dashboards as shipped (the
// tenant's own ones stay).
func RestoreDefaults(ctx context.Context, act *app.Actor) ([]*Dashboard, error) {
	if err := act.Require(PermToolsDashboardManager); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out []*Dashboard
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := restore(ctx, tx, t.NowText()); err != nil {
			return err
		}
		var err error
		out, err = list(ctx, tx)
		return err
	})
	return out, err
}
