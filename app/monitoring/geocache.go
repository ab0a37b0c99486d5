package monitoring

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"sync"

	"xr/app"
)

// The map's subscriber layer is tens of thousands of features that rarely
// change (a coordinate, a username, a move to another reseller) while the
// map is read often. Each tenant's layer is kept here pre-encoded, one JSON
// fragment per subscriber, and reused while mon_geo_version (bumped by
// triggers on every change the layer shows) is the same. Only the online
// flag is read afresh on every request.

// userLayer is one tenant's located subscribers, encoded.
type userLayer struct {
	version int64
	ids     []int64
	parents []int64
	ends    []int // fragment i is buf[ends[i-1]:ends[i]]
	buf     []byte
	maxID   int64
}

// layerCache holds a tenant's layer for the opening of its files
// (app.Tenant.Cache): it leaves when the tenant closes.
type layerCache struct {
	sync.Mutex
	l *userLayer
}

type layerCacheKey struct{}

// loadUserLayer answers the tenant's current layer, from the cache when
// its version is current.
func loadUserLayer(ctx context.Context, tx *sql.Tx, t *app.Tenant) (*userLayer, error) {
	var v int64
	if err := tx.QueryRowContext(ctx, `SELECT v FROM mon_geo_version WHERE id = 1`).Scan(&v); err != nil {
		return nil, err
	}
	c := t.Cache(layerCacheKey{}, func() any { return &layerCache{} }).(*layerCache)
	c.Lock()
	l := c.l
	c.Unlock()
	if l != nil && l.version == v {
		return l, nil
	}
	l, err := buildUserLayer(ctx, tx, v)
	if err != nil {
		return nil, err
	}
	c.Lock()
	c.l = l
	c.Unlock()
	return l, nil
}

// buildUserLayer encodes every located subscriber; the fragment stops
// before the status, which each request appends.
func buildUserLayer(ctx context.Context, tx *sql.Tx, version int64) (*userLayer, error) {
	rows, err := tx.QueryContext(ctx, `SELECT u.id, u.parent_id, u.username, g.lat, g.lon
		FROM mon_user_geo g JOIN users u ON u.id = g.user_id ORDER BY u.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	l := &userLayer{version: version, buf: make([]byte, 0, 1<<16)}
	var id, parent int64
	var name string
	var lat, lon float64
	for rows.Next() {
		if err := rows.Scan(&id, &parent, &name, &lat, &lon); err != nil {
			return nil, err
		}
		b := l.buf
		b = append(b, `{"type":"Feature","geometry":{"type":"Point","coordinates":[`...)
		b = strconv.AppendFloat(b, lon, 'f', -1, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, lat, 'f', -1, 64)
		b = append(b, `]},"properties":{"layer":"subscribers","id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, `,"username":`...)
		q, err := json.Marshal(name) // JSON quoting (strconv's is Go's)
		if err != nil {
			return nil, err
		}
		b = append(b, q...)
		l.buf = append(b, `,"status":"`...)
		l.ids = append(l.ids, id)
		l.parents = append(l.parents, parent)
		l.ends = append(l.ends, len(l.buf))
		l.maxID = max(l.maxID, id)
	}
	return l, rows.Err()
}

// appendUsers writes the layer's features the actor sees, each with its
// online status, as a JSON array.
func (l *userLayer) appendUsers(ctx context.Context, tx *sql.Tx, act *app.Actor, buf []byte) ([]byte, error) {
	var inScope map[int64]bool
	if !act.TenantWide {
		inScope = map[int64]bool{}
		rows, err := tx.QueryContext(ctx, `SELECT descendant_id FROM manager_tree WHERE ancestor_id = ?`, act.ManagerID)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var m int64
			if err := rows.Scan(&m); err != nil {
				rows.Close()
				return nil, err
			}
			inScope[m] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	online := make([]bool, l.maxID+1)
	rows, err := tx.QueryContext(ctx, `SELECT user_id FROM radius_sessions WHERE stop_time IS NULL AND user_id IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var u int64
		if err := rows.Scan(&u); err != nil {
			rows.Close()
			return nil, err
		}
		if u >= 0 && u <= l.maxID {
			online[u] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	buf = append(buf, '[')
	start, n := 0, 0
	for i, id := range l.ids {
		end := l.ends[i]
		if inScope == nil || inScope[l.parents[i]] {
			if n > 0 {
				buf = append(buf, ',')
			}
			n++
			buf = append(buf, l.buf[start:end]...)
			if online[id] {
				buf = append(buf, `online"}}`...)
			} else {
				buf = append(buf, `offline"}}`...)
			}
		}
		start = end
	}
	return append(buf, ']'), nil
}
