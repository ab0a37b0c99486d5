package monitoring

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/netip"
	"slices"
	"time"

	"xr/app"
	"xr/app/probes"
)

// Feature is one GeoJSON feature.
type Feature struct {
	Type       string   `json:"type"` // Feature
	Geometry   Geometry `json:"geometry"`
	Properties any      `json:"properties"` // DeviceProps, LinkProps or SubscriberProps
}

// DeviceProps are a device feature's properties.
type DeviceProps struct {
	Layer  string `json:"layer"` // devices
	ID     int64  `json:"id"`
	Kind   string `json:"kind"`
	Ref    int64  `json:"ref"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Status string `json:"status"`
	Icon   string `json:"icon"`
}

// LinkProps are a link feature's properties.
type LinkProps struct {
	Layer  string `json:"layer"` // links
	ID     int64  `json:"id"`
	FromID int64  `json:"from_id"`
	ToID   int64  `json:"to_id"`
	Status string `json:"status"`
}

// SubscriberProps are a subscriber feature's properties.
type SubscriberProps struct {
	Layer    string `json:"layer"` // subscribers
	ID       int64  `json:"id"`
	Username string `json:"username"`
	Status   string `json:"status"` // online or offline
}

// Geometry is a GeoJSON Point or LineString ([lon, lat] order).
type Geometry struct {
	Type        string `json:"type"`
	Coordinates any    `json:"coordinates"`
}

// FeatureCollection is the answer of GET /admin/monitoring/geo.
type FeatureCollection struct {
	Type     string    `json:"type"` // FeatureCollection
	Features []Feature `json:"features"`
	// subscribers are the subscriber features as a JSON array built by
	// SQLite (tens of thousands of rows: one string instead of a row
	// each), appended to Features when the collection is written.
	subscribers json.RawMessage
}

// SubscriberFeatures is how many subscriber features the collection holds
// beyond Features.
func (fc *FeatureCollection) SubscriberFeatures() (int, error) {
	if len(fc.subscribers) == 0 {
		return 0, nil
	}
	var list []json.RawMessage
	err := json.Unmarshal(fc.subscribers, &list)
	return len(list), err
}

// MarshalJSON writes the collection with the subscriber features last.
func (fc FeatureCollection) MarshalJSON() ([]byte, error) { return fc.AppendJSON(nil) }

// AppendJSON appends the collection's JSON to b. The route writes it as
// is: encoding/json would validate and copy the megabytes of the
// subscriber layer once more.
func (fc *FeatureCollection) AppendJSON(b []byte) ([]byte, error) {
	feats, err := json.Marshal(fc.Features)
	if err != nil {
		return nil, err
	}
	b = slices.Grow(b, len(feats)+len(fc.subscribers)+48)
	b = append(b, `{"type":"FeatureCollection","features":`...)
	if n := len(fc.subscribers); n > 2 { // more than "[]"
		if len(feats) > 2 {
			b = append(b, feats[:len(feats)-1]...)
			b = append(b, ',')
		} else {
			b = append(b, '[')
		}
		b = append(b, fc.subscribers[1:]...)
	} else {
		b = append(b, feats...)
	}
	return append(b, '}'), nil
}

// GeoQuery is the query of GET /geo: Subscribers adds the located subscribers of the
// caller's subtree (status online or offline).
type GeoQuery struct {
	Subscribers bool
}

// Geo answers GET /admin/monitoring/geo: the caller's devices with
// coordinates and the links between two located devices, each with its
// status; with q.Subscribers, the located subscribers too.
func Geo(ctx context.Context, act *app.Actor, q GeoQuery) (*FeatureCollection, error) {
	if err := act.Require(PermMapView); err != nil {
		return nil, err
	}
	cond, args := visibleSQL(act)
	fc := &FeatureCollection{Type: "FeatureCollection", Features: []Feature{}}
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT d.id, d.kind, COALESCE(d.nas_id, d.id), d.name, d.device_type, d.status, d.icon, d.lat, d.lon
			FROM mon_devices d WHERE d.lat IS NOT NULL AND d.lon IS NOT NULL AND `+cond, args...)
		if err != nil {
			return err
		}
		type pt struct{ lat, lon float64 }
		at := map[int64]pt{}
		for rows.Next() {
			var id, ref int64
			var kind, name, typ, status, icon string
			var p pt
			if err := rows.Scan(&id, &kind, &ref, &name, &typ, &status, &icon, &p.lat, &p.lon); err != nil {
				rows.Close()
				return err
			}
			at[id] = p
			fc.Features = append(fc.Features, Feature{Type: "Feature", Geometry: Geometry{Type: "Point", Coordinates: []float64{p.lon, p.lat}},
				Properties: DeviceProps{Layer: "devices", ID: id, Kind: kind, Ref: ref, Name: name, Type: typ, Status: status, Icon: icon}})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT l.id, l.from_id, l.to_id, f.status, t.status FROM mon_links l
			JOIN mon_devices f ON f.id = l.from_id JOIN mon_devices t ON t.id = l.to_id
			WHERE f.lat IS NOT NULL AND t.lat IS NOT NULL`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, from, to int64
			var fs, ts string
			if err := rows.Scan(&id, &from, &to, &fs, &ts); err != nil {
				return err
			}
			a, okA := at[from]
			b, okB := at[to]
			if !okA || !okB {
				continue // an end the caller does not see
			}
			fc.Features = append(fc.Features, Feature{Type: "Feature",
				Geometry:   Geometry{Type: "LineString", Coordinates: [][]float64{{a.lon, a.lat}, {b.lon, b.lat}}},
				Properties: LinkProps{Layer: "links", ID: id, FromID: from, ToID: to, Status: linkStatus(fs, ts)}})
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !q.Subscribers {
			return nil
		}
		l, err := loadUserLayer(ctx, tx, act.Tenant)
		if err != nil {
			return err
		}
		fc.subscribers, err = l.appendUsers(ctx, tx, act, make([]byte, 0, len(l.buf)+16*len(l.ids)))
		return err
	})
	if err != nil {
		return nil, err
	}
	return fc, nil
}

// MapSettings is the answer of GET /admin/monitoring/map.
type MapSettings struct {
	CenterLat   float64  `json:"center_lat"`
	CenterLon   float64  `json:"center_lon"`
	Zoom        int      `json:"zoom"`
	TileURL     string   `json:"tile_url"`
	Attribution string   `json:"attribution"`
	Layers      []string `json:"layers"`
}

// GetMap answers GET /admin/monitoring/map: the centre is the mean of the
// caller's located devices (0,0 and zoom 2 when none).
func GetMap(ctx context.Context, act *app.Actor) (*MapSettings, error) {
	if err := act.Require(PermMapView); err != nil {
		return nil, err
	}
	cond, args := visibleSQL(act)
	set, err := readSettings(ctx, act.Tenant.DB.R)
	if err != nil {
		return nil, err
	}
	m := &MapSettings{Zoom: 2, TileURL: set.TileURL, Attribution: set.Attribution, Layers: []string{"devices", "links", "subscribers"}}
	var n int
	var lat, lon sql.NullFloat64
	if err := act.Tenant.DB.R.QueryRowContext(ctx, `SELECT COUNT(*), AVG(d.lat), AVG(d.lon) FROM mon_devices d WHERE d.lat IS NOT NULL AND `+cond, args...).
		Scan(&n, &lat, &lon); err != nil {
		return nil, err
	}
	if n > 0 {
		m.CenterLat, m.CenterLon, m.Zoom = lat.Float64, lon.Float64, 12
	}
	return m, nil
}

// snmpTarget resolves a device with SNMP credentials, guarded.
func snmpTarget(ctx context.Context, act *app.Actor, kind string, ref int64) (probes.Target, *probes.SNMPCred, error) {
	var tg probes.Target
	var cred *probes.SNMPCred
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		if cred, err = snmpCred(ctx, tx, act.Tenant, d.ID); err != nil {
			return err
		}
		if cred == nil {
			return app.ErrConflict("snmp_not_configured")
		}
		g, err := probes.TenantGuard(ctx, act.Tenant.App, tx)
		if err != nil {
			return err
		}
		addr, err := netip.ParseAddr(d.Address)
		if err != nil || !g.Allow(addr) {
			return app.ErrConflict("target_not_allowed")
		}
		tg = g.Target(addr, 0)
		return nil
	})
	return tg, cred, err
}

// SNMPInterfaces answers GET .../{kind}/{ref}/snmp-interfaces: a walk of
// ifTable/ifXTable (502 snmp_failed when the agent does not answer).
func SNMPInterfaces(ctx context.Context, act *app.Actor, kind string, ref int64) ([]probes.Interface, error) {
	if err := act.Require(PermMonitoringManage); err != nil {
		return nil, err
	}
	tg, cred, err := snmpTarget(ctx, act, kind, ref)
	if err != nil {
		return nil, err
	}
	var out []probes.Interface
	var werr error
	if err := pool(act.Tenant.App).Do(ctx, func() { out, werr = probes.Interfaces(ctx, tg, *cred, ProbeTimeout) }); err != nil {
		return nil, err
	}
	if werr != nil {
		return nil, app.ErrBadGateway("snmp_failed")
	}
	return out, nil
}

// LiveTraffic is the answer of GET .../live-traffic.
type LiveTraffic struct {
	Interface int     `json:"interface"`
	Name      string  `json:"name"`
	InBps     float64 `json:"in_bps"`
	OutBps    float64 `json:"out_bps"`
	Source    string  `json:"source"` // snmp
	Counter64 bool    `json:"counter64"`
	Seconds   float64 `json:"seconds"` // between the two polls
}

// LiveTrafficGap is the time between the two polls of a live-traffic read.
var LiveTrafficGap = time.Second

// GetLiveTraffic answers GET .../live-traffic?interface=N: bits per second
// from two SNMP polls of the interface's octet counters LiveTrafficGap
// apart (wraps handled). 400 field_required without interface, 404
// interface_not_found when the agent has no such interface.
func GetLiveTraffic(ctx context.Context, act *app.Actor, kind string, ref int64, ifIndex int) (*LiveTraffic, error) {
	if err := act.Require(PermMonitoringView); err != nil {
		return nil, err
	}
	if ifIndex <= 0 {
		return nil, app.ErrValidation("field_required", "interface")
	}
	tg, cred, err := snmpTarget(ctx, act, kind, ref)
	if err != nil {
		return nil, err
	}
	poll := func() (*probes.Interface, time.Time, error) {
		var list []probes.Interface
		var werr error
		if err := pool(act.Tenant.App).Do(ctx, func() { list, werr = probes.Interfaces(ctx, tg, *cred, ProbeTimeout) }); err != nil {
			return nil, time.Time{}, err
		}
		if werr != nil {
			return nil, time.Time{}, app.ErrBadGateway("snmp_failed")
		}
		for i := range list {
			if list[i].Index == ifIndex {
				return &list[i], time.Now(), nil
			}
		}
		return nil, time.Time{}, app.ErrValidation("interface_not_found", "interface")
	}
	a, ta, err := poll()
	if err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(LiveTrafficGap):
	}
	b, tb, err := poll()
	if err != nil {
		return nil, err
	}
	secs := tb.Sub(ta).Seconds()
	if secs <= 0 {
		secs = LiveTrafficGap.Seconds()
	}
	return &LiveTraffic{Interface: ifIndex, Name: b.Name, Source: "snmp", Counter64: b.Counter64, Seconds: secs,
		InBps:  float64(probes.CounterDelta(a.InOctets, b.InOctets, b.Counter64)) * 8 / secs,
		OutBps: float64(probes.CounterDelta(a.OutOctets, b.OutOctets, b.Counter64)) * 8 / secs}, nil
}
