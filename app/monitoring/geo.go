package monitoring

import (
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"xr/app"
	"xr/db"
)

// GeoInput is the body of PUT .../{kind}/{ref}/geo.
type GeoInput struct {
	Lat *float64 `json:"lat"`
	Lon *float64 `json:"lon"`
}

// SetGeo answers PUT .../{kind}/{ref}/geo.
func SetGeo(ctx context.Context, act *app.Actor, kind string, ref int64, in GeoInput) (*Device, error) {
	if err := act.Require(PermMapEdit); err != nil {
		return nil, err
	}
	return updateDevice(ctx, act, kind, ref, func(tx *sql.Tx, d Device) error {
		if in.Lat == nil {
			return app.ErrValidation("field_required", "lat")
		}
		if in.Lon == nil {
			return app.ErrValidation("field_required", "lon")
		}
		if *in.Lat < -90 || *in.Lat > 90 {
			return app.ErrValidation("out_of_range", "lat")
		}
		if *in.Lon < -180 || *in.Lon > 180 {
			return app.ErrValidation("out_of_range", "lon")
		}
		_, err := tx.ExecContext(ctx, `UPDATE mon_devices SET lat = ?, lon = ?, updated_at = ? WHERE id = ?`, *in.Lat, *in.Lon, act.Tenant.NowText(), d.ID)
		return err
	})
}

// ClearGeo answers DELETE .../{kind}/{ref}/geo.
func ClearGeo(ctx context.Context, act *app.Actor, kind string, ref int64) (*Device, error) {
	if err := act.Require(PermMapEdit); err != nil {
		return nil, err
	}
	return updateDevice(ctx, act, kind, ref, func(tx *sql.Tx, d Device) error {
		_, err := tx.ExecContext(ctx, `UPDATE mon_devices SET lat = NULL, lon = NULL, updated_at = ? WHERE id = ?`, act.Tenant.NowText(), d.ID)
		return err
	})
}

// Icons a device may show on the map.
var Icons = []string{"", "router", "switch", "olt", "ap", "server", "tower", "building", "cabinet", "other"}

// IconInput is the body of PUT .../{kind}/{ref}/icon.
type IconInput struct {
	Icon string `json:"icon"`
}

// SetIcon answers PUT .../{kind}/{ref}/icon ("" for the type's default).
func SetIcon(ctx context.Context, act *app.Actor, kind string, ref int64, in IconInput) (*Device, error) {
	if err := act.Require(PermMapEdit); err != nil {
		return nil, err
	}
	return updateDevice(ctx, act, kind, ref, func(tx *sql.Tx, d Device) error {
		if !contains(Icons, in.Icon) {
			return app.ErrValidation("invalid_enum", "icon").With("allowed", Icons[1:])
		}
		_, err := tx.ExecContext(ctx, `UPDATE mon_devices SET icon = ?, updated_at = ? WHERE id = ?`, in.Icon, act.Tenant.NowText(), d.ID)
		return err
	})
}

func updateDevice(ctx context.Context, act *app.Actor, kind string, ref int64, fn func(tx *sql.Tx, d Device) error) (*Device, error) {
	var out Device
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		if err := fn(tx, d); err != nil {
			return err
		}
		out, err = visibleByID(ctx, tx, wide(act.Tenant), d.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Link is a link between two devices: From is the uplink side.
type Link struct {
	ID        int64    `json:"id"`
	FromID    int64    `json:"from_id"`
	ToID      int64    `json:"to_id"`
	From      string   `json:"from"`
	To        string   `json:"to"`
	Status    string   `json:"status"` // up when both ends are up, down when either is down, else unknown
	CreatedAt app.Time `json:"created_at"`
}

const linkCols = `l.id, l.from_id, l.to_id, f.name, t.name, f.status, t.status, l.created_at`
const linkFrom = ` FROM mon_links l JOIN mon_devices f ON f.id = l.from_id JOIN mon_devices t ON t.id = l.to_id`

func scanLink(row interface{ Scan(...any) error }) (Link, error) {
	var l Link
	var fs, ts string
	err := row.Scan(&l.ID, &l.FromID, &l.ToID, &l.From, &l.To, &fs, &ts, &l.CreatedAt)
	l.Status = linkStatus(fs, ts)
	return l, err
}

func linkStatus(a, b string) string {
	switch {
	case a == "down" || b == "down":
		return "down"
	case a == "up" && b == "up":
		return "up"
	}
	return "unknown"
}

// linkVisible: both ends among the caller's devices.
func linkVisible(act *app.Actor) (string, []any) {
	c1, a1 := visibleSQL(act)
	if c1 == "1=1" {
		return c1, nil
	}
	c2, a2 := visibleSQL(act)
	return strings.ReplaceAll(c1, "d.", "f.") + " AND " + strings.ReplaceAll(c2, "d.", "t."), append(a1, a2...)
}

// LinkSpec is the links list's sorts and filters.
var LinkSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "l.id"},
	DefaultSort: "id",
	DefaultAsc:  true,
	Filters:     map[string]app.FilterKind{"device_id": app.FilterInt},
	Aliases:     []string{"device_id"},
}

// ListLinks answers GET /admin/monitoring/geo/links.
func ListLinks(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Link], error) {
	if err := act.Require(PermMapView); err != nil {
		return app.Page[Link]{}, err
	}
	cond, args := linkVisible(act)
	if v, ok := lq.Int("device_id"); ok {
		cond += " AND (l.from_id = ? OR l.to_id = ?)"
		args = append(args, v, v)
	}
	return app.QueryPage(ctx, act.Tenant, lq, linkCols, linkFrom+" WHERE "+cond, args, "l.id",
		func(rows *sql.Rows) (Link, error) { return scanLink(rows) })
}

// LinkInput is the body of POST /geo/links (device row ids).
type LinkInput struct {
	FromID int64 `json:"from_id"`
	ToID   int64 `json:"to_id"`
}

func loadLink(ctx context.Context, q app.Querier, act *app.Actor, id int64) (Link, error) {
	cond, args := linkVisible(act)
	l, err := scanLink(q.QueryRowContext(ctx, `SELECT `+linkCols+linkFrom+` WHERE l.id = ? AND `+cond, append([]any{id}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return l, app.ErrNotFound()
	}
	return l, err
}

// CreateLink answers POST /geo/links: the links form a tree rooted at the
// core, so a link that closes a loop is refused (409 link_loop) and so is
// a second uplink of the same device... a device may have several uplinks
// (redundancy), but never one from its own downstream.
func CreateLink(ctx context.Context, act *app.Actor, in LinkInput) (*Link, error) {
	if err := act.Require(PermMapEdit); err != nil {
		return nil, err
	}
	var out Link
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if in.FromID <= 0 {
			return app.ErrValidation("field_required", "from_id")
		}
		if in.ToID <= 0 {
			return app.ErrValidation("field_required", "to_id")
		}
		if _, err := visibleByID(ctx, tx, act, in.FromID); err != nil {
			return app.ErrValidation("device_not_found", "from_id")
		}
		if _, err := visibleByID(ctx, tx, act, in.ToID); err != nil {
			return app.ErrValidation("device_not_found", "to_id")
		}
		if in.FromID == in.ToID {
			return app.ErrConflict("link_loop")
		}
		loop, err := reaches(ctx, tx, in.ToID, in.FromID)
		if err != nil {
			return err
		}
		if loop {
			return app.ErrConflict("link_loop")
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO mon_links(from_id, to_id, created_at) VALUES (?, ?, ?)`, in.FromID, in.ToID, act.Tenant.NowText())
		if db.IsUnique(err) {
			return app.ErrConflict("link_exists")
		}
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		out, err = loadLink(ctx, tx, act, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteLink answers DELETE /geo/links/{id}.
func DeleteLink(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermMapEdit); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := loadLink(ctx, tx, act, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM mon_links WHERE id = ?`, id)
		return err
	})
}

// ReverseLink answers POST /geo/links/{id}/reverse: the uplink direction
// flips (409 link_loop when the reversed link would close a loop).
func ReverseLink(ctx context.Context, act *app.Actor, id int64) (*Link, error) {
	if err := act.Require(PermMapEdit); err != nil {
		return nil, err
	}
	var out Link
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		l, err := loadLink(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mon_links WHERE id = ?`, id); err != nil {
			return err
		}
		loop, err := reaches(ctx, tx, l.FromID, l.ToID)
		if err != nil {
			return err
		}
		if loop {
			return app.ErrConflict("link_loop")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO mon_links(id, from_id, to_id, created_at) VALUES (?, ?, ?, ?)`, id, l.ToID, l.FromID, app.FormatTime(l.CreatedAt.Time)); err != nil {
			if db.IsUnique(err) {
				return app.ErrConflict("link_exists")
			}
			return err
		}
		out, err = loadLink(ctx, tx, act, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// AttachedUser is a subscriber attached to a device.
type AttachedUser struct {
	UserID   int64  `json:"user_id"`
	Username string `json:"username"`
	Source   string `json:"source"` // explicit, or session (the NAS of a live session)
	Online   bool   `json:"online"`
}

// GetUsers answers GET .../{kind}/{ref}/users: the subscribers attached
// explicitly and, for a NAS, those whose live session runs through it (only
// subscribers in the caller's subtree).
func GetUsers(ctx context.Context, act *app.Actor, kind string, ref int64) ([]AttachedUser, error) {
	if err := act.Require(PermMapView); err != nil {
		return nil, err
	}
	var out []AttachedUser
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		cond, args := act.ScopeSQL("u.parent_id")
		nas := int64(-1)
		if d.NASID != nil {
			nas = *d.NASID
		}
		rows, err := tx.QueryContext(ctx, `SELECT u.id, u.username, CASE WHEN a.user_id IS NOT NULL THEN 'explicit' ELSE 'session' END,
			EXISTS(SELECT 1 FROM radius_sessions s WHERE s.user_id = u.id AND s.stop_time IS NULL)
			FROM users u LEFT JOIN mon_attached a ON a.user_id = u.id AND a.device_id = ?
			WHERE (a.user_id IS NOT NULL OR u.id IN (SELECT user_id FROM radius_sessions WHERE nas_id = ? AND stop_time IS NULL)) AND `+cond+`
			ORDER BY u.id LIMIT 5000`, append([]any{d.ID, nas}, args...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var u AttachedUser
			if err := rows.Scan(&u.UserID, &u.Username, &u.Source, &u.Online); err != nil {
				return err
			}
			out = append(out, u)
		}
		return rows.Err()
	})
	return out, err
}

// UsersInput is the body of PUT .../users: the explicit attachments.
type UsersInput struct {
	UserIDs []int64 `json:"user_ids"`
}

// SetUsers answers PUT .../{kind}/{ref}/users (replaces the explicit list
// of the caller's subscribers; others' attachments stay).
func SetUsers(ctx context.Context, act *app.Actor, kind string, ref int64, in UsersInput) ([]AttachedUser, error) {
	if err := act.Require(PermMapEdit); err != nil {
		return nil, err
	}
	if len(in.UserIDs) > 10000 {
		return nil, app.ErrValidation("out_of_range", "user_ids")
	}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		cond, args := act.ScopeSQL("u.parent_id")
		for i, uid := range in.UserIDs {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM users u WHERE u.id = ? AND `+cond, append([]any{uid}, args...)...).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				return app.ErrValidation("invalid_subscriber", fmt.Sprintf("user_ids[%d]", i))
			}
			if err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mon_attached WHERE device_id = ? AND user_id IN (SELECT u.id FROM users u WHERE `+cond+`)`,
			append([]any{d.ID}, args...)...); err != nil {
			return err
		}
		for _, uid := range in.UserIDs {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO mon_attached(device_id, user_id) VALUES (?, ?)`, d.ID, uid); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return GetUsers(ctx, act, kind, ref)
}

// ImportInput is the body of POST /geo/import: coordinates as CSV (a
// header naming kind, ref, lat and lon, in any order) or as a GeoJSON
// FeatureCollection of Points whose properties name kind and ref. Kind is
// device, nas, or user (a subscriber of the caller's subtree, by id).
type ImportInput struct {
	Format string `json:"format"` // csv or geojson
	Data   string `json:"data"`
	DryRun bool   `json:"dry_run"`
}

// ImportError is one refused line (CSV: the line number, header = 1;
// GeoJSON: the feature's index + 1).
type ImportError struct {
	Line   int    `json:"line"`
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// ImportResult is the answer of POST /geo/import. Nothing is written when
// any line is refused or on a dry run.
type ImportResult struct {
	DryRun  bool          `json:"dry_run"`
	Total   int           `json:"total"`
	Valid   int           `json:"valid"`
	Applied int           `json:"applied"`
	Errors  []ImportError `json:"errors"`
}

// MaxImportBytes bounds an import's data.
const MaxImportBytes = 4 << 20

type geoRow struct {
	line     int
	kind     string
	ref      int64
	lat, lon float64
}

// ImportGeo answers POST /admin/monitoring/geo/import.
func ImportGeo(ctx context.Context, act *app.Actor, in ImportInput) (*ImportResult, error) {
	if err := act.Require(PermMapEdit); err != nil {
		return nil, err
	}
	if len(in.Data) > MaxImportBytes {
		return nil, app.ErrValidation("out_of_range", "data")
	}
	var rows []geoRow
	out := &ImportResult{DryRun: in.DryRun, Errors: []ImportError{}}
	switch in.Format {
	case "csv":
		rows, out.Errors = parseGeoCSV(in.Data)
	case "geojson":
		rows, out.Errors = parseGeoJSON(in.Data)
	default:
		return nil, app.ErrValidation("invalid_enum", "format").With("allowed", []string{"csv", "geojson"})
	}
	out.Total = len(rows) + len(out.Errors)
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		ids := make([]int64, len(rows))
		ucond, uargs := act.ScopeSQL("u.parent_id")
		for i, r := range rows {
			if r.kind == KindUser {
				var one int
				err := tx.QueryRowContext(ctx, `SELECT 1 FROM users u WHERE u.id = ? AND `+ucond, append([]any{r.ref}, uargs...)...).Scan(&one)
				if errors.Is(err, sql.ErrNoRows) {
					out.Errors = append(out.Errors, ImportError{Line: r.line, Field: "ref", Reason: "invalid_subscriber"})
					continue
				}
				if err != nil {
					return err
				}
				ids[i] = r.ref
				continue
			}
			d, err := resolve(ctx, tx, act, r.kind, r.ref)
			if err != nil {
				if e := app.AsError(err); e != nil && e.Status == 404 {
					out.Errors = append(out.Errors, ImportError{Line: r.line, Field: "ref", Reason: "device_not_found"})
					continue
				}
				return err
			}
			ids[i] = d.ID
		}
		out.Valid = out.Total - len(out.Errors)
		if in.DryRun || len(out.Errors) > 0 {
			return nil
		}
		now := act.Tenant.NowText()
		for i, r := range rows {
			q := `UPDATE mon_devices SET lat = ?, lon = ?, updated_at = ? WHERE id = ?`
			if r.kind == KindUser {
				q = `INSERT INTO mon_user_geo(lat, lon, updated_at, user_id) VALUES (?, ?, ?, ?)
					ON CONFLICT(user_id) DO UPDATE SET lat = excluded.lat, lon = excluded.lon, updated_at = excluded.updated_at`
			}
			if _, err := tx.ExecContext(ctx, q, r.lat, r.lon, now, ids[i]); err != nil {
				return err
			}
			out.Applied++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out.Errors, func(i, j int) bool { return out.Errors[i].Line < out.Errors[j].Line })
	return out, nil
}

func checkGeoRow(r *geoRow, kind, ref, lat, lon string) []ImportError {
	var errs []ImportError
	bad := func(field, reason string) {
		errs = append(errs, ImportError{Line: r.line, Field: field, Reason: reason})
	}
	r.kind = strings.TrimSpace(kind)
	if r.kind != KindDevice && r.kind != KindNAS && r.kind != KindUser {
		bad("kind", "invalid_enum")
	}
	var err error
	if r.ref, err = strconv.ParseInt(strings.TrimSpace(ref), 10, 64); err != nil || r.ref <= 0 {
		bad("ref", "invalid_id")
	}
	if r.lat, err = strconv.ParseFloat(strings.TrimSpace(lat), 64); err != nil || r.lat < -90 || r.lat > 90 {
		bad("lat", "out_of_range")
	}
	if r.lon, err = strconv.ParseFloat(strings.TrimSpace(lon), 64); err != nil || r.lon < -180 || r.lon > 180 {
		bad("lon", "out_of_range")
	}
	return errs
}

func parseGeoCSV(data string) ([]geoRow, []ImportError) {
	rd := csv.NewReader(strings.NewReader(data))
	rd.FieldsPerRecord = -1
	head, err := rd.Read()
	if err != nil {
		return nil, []ImportError{{Line: 1, Field: "header", Reason: "header_required"}}
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, need := range []string{"kind", "ref", "lat", "lon"} {
		if _, ok := col[need]; !ok {
			return nil, []ImportError{{Line: 1, Field: need, Reason: "header_required"}}
		}
	}
	var rows []geoRow
	var errs []ImportError
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		line, _ := rd.FieldPos(0)
		if err != nil {
			errs = append(errs, ImportError{Line: line, Field: "", Reason: "invalid_value"})
			continue
		}
		get := func(k string) string {
			if i := col[k]; i < len(rec) {
				return rec[i]
			}
			return ""
		}
		r := geoRow{line: line}
		if e := checkGeoRow(&r, get("kind"), get("ref"), get("lat"), get("lon")); len(e) > 0 {
			errs = append(errs, e...)
			continue
		}
		rows = append(rows, r)
	}
	return rows, errs
}

func parseGeoJSON(data string) ([]geoRow, []ImportError) {
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			Geometry struct {
				Type        string    `json:"type"`
				Coordinates []float64 `json:"coordinates"`
			} `json:"geometry"`
			Properties map[string]any `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal([]byte(data), &fc); err != nil || fc.Type != "FeatureCollection" {
		return nil, []ImportError{{Line: 0, Field: "data", Reason: "invalid_value"}}
	}
	var rows []geoRow
	var errs []ImportError
	for i, f := range fc.Features {
		r := geoRow{line: i + 1}
		if f.Geometry.Type != "Point" || len(f.Geometry.Coordinates) < 2 {
			errs = append(errs, ImportError{Line: r.line, Field: "geometry", Reason: "invalid_value"})
			continue
		}
		str := func(k string) string {
			switch v := f.Properties[k].(type) {
			case string:
				return v
			case float64:
				return strconv.FormatFloat(v, 'f', -1, 64)
			}
			return ""
		}
		c := f.Geometry.Coordinates
		if e := checkGeoRow(&r, str("kind"), str("ref"), strconv.FormatFloat(c[1], 'f', -1, 64), strconv.FormatFloat(c[0], 'f', -1, 64)); len(e) > 0 {
			errs = append(errs, e...)
			continue
		}
		rows = append(rows, r)
	}
	return rows, errs
}
