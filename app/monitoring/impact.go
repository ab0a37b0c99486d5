package monitoring

import (
	"context"
	"database/sql"
	"strings"

	"xr/app"
)

// downstreamCTE is the device ids downstream of ? (itself included),
// following links from the uplink side.
const downstreamCTE = `WITH RECURSIVE down(id) AS (SELECT ? UNION SELECT l.to_id FROM mon_links l JOIN down ON l.from_id = down.id)`

// affectedFrom selects the subscribers served by the devices of down:
// attached explicitly, or with a live session on a NAS among them.
const affectedUsers = ` SELECT a.user_id FROM mon_attached a WHERE a.device_id IN (SELECT id FROM down)
	UNION SELECT s.user_id FROM radius_sessions s JOIN mon_devices nd ON nd.nas_id = s.nas_id
	WHERE s.stop_time IS NULL AND s.user_id IS NOT NULL AND nd.id IN (SELECT id FROM down)`

// Impact is the answer of GET .../{kind}/{ref}/impact.
type Impact struct {
	Device            Device         `json:"device"`
	Devices           int            `json:"devices"` // downstream devices (itself excluded)
	DevicesDown       int            `json:"devices_down"`
	Subscribers       int            `json:"subscribers"`
	SubscribersOnline int            `json:"subscribers_online"`
	DownstreamDevices []Device       `json:"downstream_devices"` // first 500
	AffectedUsers     []AttachedUser `json:"affected_subscribers"`
}

// GetImpact answers GET .../{kind}/{ref}/impact: the devices and
// subscribers downstream that lose service when it is down (a graph walk
// over links and attachments), with how many are online now.
func GetImpact(ctx context.Context, act *app.Actor, kind string, ref int64) (*Impact, error) {
	if err := act.Require(PermMapView); err != nil {
		return nil, err
	}
	var out Impact
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		out.Device = d
		imp, err := impactOf(ctx, tx, act, d.ID, true)
		if err != nil {
			return err
		}
		imp.Device = d
		out = *imp
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func impactOf(ctx context.Context, tx *sql.Tx, act *app.Actor, id int64, lists bool) (*Impact, error) {
	out := &Impact{DownstreamDevices: []Device{}, AffectedUsers: []AttachedUser{}}
	if err := tx.QueryRowContext(ctx, downstreamCTE+` SELECT COUNT(*) - 1, COALESCE(SUM(d.status = 'down' AND d.id <> ?), 0) FROM down JOIN mon_devices d ON d.id = down.id`,
		id, id).Scan(&out.Devices, &out.DevicesDown); err != nil {
		return nil, err
	}
	cond, args := act.ScopeSQL("u.parent_id")
	if err := tx.QueryRowContext(ctx, downstreamCTE+`, aff(uid) AS (`+affectedUsers+`)
		SELECT COUNT(*), COALESCE(SUM(EXISTS(SELECT 1 FROM radius_sessions s WHERE s.user_id = u.id AND s.stop_time IS NULL)), 0)
		FROM aff JOIN users u ON u.id = aff.uid WHERE `+cond, append([]any{id}, args...)...).Scan(&out.Subscribers, &out.SubscribersOnline); err != nil {
		return nil, err
	}
	if !lists {
		return out, nil
	}
	rows, err := tx.QueryContext(ctx, downstreamCTE+` SELECT `+deviceCols+` FROM down JOIN mon_devices d ON d.id = down.id WHERE d.id <> ? ORDER BY d.id LIMIT 500`, id, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		dd, err := scanDevice(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out.DownstreamDevices = append(out.DownstreamDevices, dd)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.QueryContext(ctx, downstreamCTE+`, aff(uid) AS (`+affectedUsers+`)
		SELECT u.id, u.username, EXISTS(SELECT 1 FROM radius_sessions s WHERE s.user_id = u.id AND s.stop_time IS NULL)
		FROM aff JOIN users u ON u.id = aff.uid WHERE `+cond+` ORDER BY u.id LIMIT 500`, append([]any{id}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		u := AttachedUser{Source: "downstream"}
		if err := rows.Scan(&u.UserID, &u.Username, &u.Online); err != nil {
			return nil, err
		}
		out.AffectedUsers = append(out.AffectedUsers, u)
	}
	return out, rows.Err()
}

// Incident is a current outage: its root device (a down device whose
// uplinks are all up, or that has none) and its impact.
type Incident struct {
	Root              Device   `json:"root"`
	Since             app.Time `json:"since"`
	Devices           int      `json:"devices"`
	DevicesDown       int      `json:"devices_down"`
	Subscribers       int      `json:"subscribers"`
	SubscribersOnline int      `json:"subscribers_online"`
}

// Incidents answers GET /admin/monitoring/geo/incidents.
func Incidents(ctx context.Context, act *app.Actor) ([]Incident, error) {
	if err := act.Require(PermMapView); err != nil {
		return nil, err
	}
	cond, args := visibleSQL(act)
	out := []Incident{}
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+deviceCols+deviceFrom+` WHERE d.status = 'down' AND NOT EXISTS(
			SELECT 1 FROM mon_links l JOIN mon_devices p ON p.id = l.from_id WHERE l.to_id = d.id AND p.status = 'down') AND `+cond+
			` ORDER BY d.status_since, d.id LIMIT 1000`, args...)
		if err != nil {
			return err
		}
		var roots []Device
		for rows.Next() {
			d, err := scanDevice(rows)
			if err != nil {
				rows.Close()
				return err
			}
			roots = append(roots, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range roots {
			imp, err := impactOf(ctx, tx, act, r.ID, false)
			if err != nil {
				return err
			}
			out = append(out, Incident{Root: r, Since: r.StatusSince, Devices: imp.Devices, DevicesDown: imp.DevicesDown,
				Subscribers: imp.Subscribers, SubscribersOnline: imp.SubscribersOnline})
		}
		return nil
	})
	return out, err
}

// Hygiene is the answer of GET /geo/hygiene: what is wrong with the map.
type Hygiene struct {
	WithoutCoordinates []Device  `json:"without_coordinates"`
	LoopLinks          []int64   `json:"loop_links"`
	DownForever        []Device  `json:"attached_to_down_forever"` // down over 7 days with subscribers attached
	DuplicateAddresses []DupAddr `json:"duplicate_addresses"`
}

// DupAddr is an address shared by several devices.
type DupAddr struct {
	Address   string  `json:"address"`
	DeviceIDs []int64 `json:"device_ids"`
}

// GetHygiene answers GET /admin/monitoring/geo/hygiene.
func GetHygiene(ctx context.Context, act *app.Actor) (*Hygiene, error) {
	if err := act.Require(PermMapView); err != nil {
		return nil, err
	}
	cond, args := visibleSQL(act)
	out := &Hygiene{WithoutCoordinates: []Device{}, LoopLinks: []int64{}, DownForever: []Device{}, DuplicateAddresses: []DupAddr{}}
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		list := func(where string, extra ...any) ([]Device, error) {
			rows, err := tx.QueryContext(ctx, `SELECT `+deviceCols+deviceFrom+` WHERE `+where+` AND `+cond+` ORDER BY d.id LIMIT 1000`, append(extra, args...)...)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			out := []Device{}
			for rows.Next() {
				d, err := scanDevice(rows)
				if err != nil {
					return nil, err
				}
				out = append(out, d)
			}
			return out, rows.Err()
		}
		var err error
		if out.WithoutCoordinates, err = list("d.lat IS NULL"); err != nil {
			return err
		}
		week := app.FormatTime(act.Tenant.Now().AddDate(0, 0, -7))
		if out.DownForever, err = list("d.status = 'down' AND d.status_since < ? AND EXISTS(SELECT 1 FROM mon_attached a WHERE a.device_id = d.id)", week); err != nil {
			return err
		}
		// A link is in a loop when its from end is downstream of its to end.
		ids, err := app.QueryIDs(ctx, tx, `SELECT l.id FROM mon_links l WHERE EXISTS(
			WITH RECURSIVE down(id) AS (SELECT l.to_id UNION SELECT k.to_id FROM mon_links k JOIN down ON k.from_id = down.id)
			SELECT 1 FROM down WHERE id = l.from_id) ORDER BY l.id LIMIT 1000`)
		if err != nil {
			return err
		}
		out.LoopLinks = append(out.LoopLinks, ids...)
		rows, err := tx.QueryContext(ctx, `SELECT d.address, group_concat(d.id) FROM mon_devices d WHERE d.address <> '' AND `+cond+
			` GROUP BY d.address HAVING COUNT(*) > 1 ORDER BY d.address LIMIT 1000`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var da DupAddr
			var idsText string
			if err := rows.Scan(&da.Address, &idsText); err != nil {
				return err
			}
			for _, s := range strings.Split(idsText, ",") {
				var id int64
				for _, c := range s {
					id = id*10 + int64(c-'0')
				}
				da.DeviceIDs = append(da.DeviceIDs, id)
			}
			out.DuplicateAddresses = append(out.DuplicateAddresses, da)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
