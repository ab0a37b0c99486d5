package monitoring

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"xr/app"
	"xr/app/probes"
)

// Kinds of monitored device in {kind}/{ref}.
const (
	KindDevice = "device"
	KindNAS    = "nas"
	// KindUser names a subscriber in a coordinates import.
	KindUser = "user"
)

// DeviceTypes are the kinds of equipment a device can be.
var DeviceTypes = []string{"router", "switch", "olt", "ap", "server", "other"}

// Device is a monitored device as the API shows it. SNMP credentials are
// write-only: only whether they are set and their version are shown.
type Device struct {
	ID           int64    `json:"id"`
	Kind         string   `json:"kind"`
	Ref          int64    `json:"ref"`
	NASID        *int64   `json:"nas_id"`
	Name         string   `json:"name"`
	Address      string   `json:"address"`
	Type         string   `json:"type"`
	SNMPVersion  string   `json:"snmp_version"`
	PingInterval int      `json:"ping_interval"`
	SNMPInterval int      `json:"snmp_interval"`
	ProbePort    int      `json:"probe_port"`
	ParentID     *int64   `json:"parent_id"`
	ManagerID    *int64   `json:"manager_id"`
	Status       string   `json:"status"`
	StatusSince  app.Time `json:"status_since"`
	LastSeen     app.Time `json:"last_seen"`
	LastProbe    app.Time `json:"last_probe"`
	LatencyMs    *float64 `json:"latency_ms"`
	LossPct      *float64 `json:"loss_percent"`
	Method       string   `json:"method"`
	Lat          *float64 `json:"lat"`
	Lon          *float64 `json:"lon"`
	Icon         string   `json:"icon"`
	CreatedAt    app.Time `json:"created_at"`
	UpdatedAt    app.Time `json:"updated_at"`
}

// Path is the device's {kind}/{ref}.
func (d *Device) Path() string { return d.Kind + "/" + strconv.FormatInt(d.Ref, 10) }

const deviceCols = `d.id, d.kind, d.nas_id, d.name, d.address, d.device_type, d.snmp_version, d.ping_interval, d.snmp_interval,
	d.probe_port, (SELECT MIN(l.from_id) FROM mon_links l WHERE l.to_id = d.id), d.manager_id, d.status, d.status_since, d.last_seen,
	d.last_probe, d.latency_ms, d.loss_pct, d.method, d.lat, d.lon, d.icon, d.created_at, d.updated_at`

const deviceFrom = ` FROM mon_devices d`

func scanDevice(row interface{ Scan(...any) error }) (Device, error) {
	var d Device
	var nas, parent, mgr sql.NullInt64
	var lat, lon, lt, loss sql.NullFloat64
	err := row.Scan(&d.ID, &d.Kind, &nas, &d.Name, &d.Address, &d.Type, &d.SNMPVersion, &d.PingInterval, &d.SNMPInterval,
		&d.ProbePort, &parent, &mgr, &d.Status, &d.StatusSince, &d.LastSeen, &d.LastProbe, &lt, &loss, &d.Method,
		&lat, &lon, &d.Icon, &d.CreatedAt, &d.UpdatedAt)
	if err != nil {
		return d, err
	}
	d.Ref = d.ID
	if nas.Valid {
		d.NASID = &nas.Int64
		d.Ref = nas.Int64
	}
	d.ParentID = nullInt(parent)
	d.ManagerID = nullInt(mgr)
	d.LatencyMs, d.LossPct, d.Lat, d.Lon = nullFloat(lt), nullFloat(loss), nullFloat(lat), nullFloat(lon)
	return d, nil
}

func nullInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func nullFloat(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}

// visibleSQL restricts alias d to the devices the caller sees: every one
// for a tenant-wide caller; else those created inside its subtree and those
// it (or a manager of its subtree) is an owner of.
func visibleSQL(act *app.Actor) (string, []any) {
	if act.TenantWide {
		return "1=1", nil
	}
	c1, a1 := act.ScopeSQL("d.manager_id")
	c2, a2 := act.ScopeSQL("o.manager_id")
	return "(" + c1 + " OR EXISTS(SELECT 1 FROM mon_owners o WHERE o.device_id = d.id AND " + c2 + "))", append(a1, a2...)
}

// ParseKind checks a {kind} path value.
func ParseKind(kind string) error {
	if kind != KindDevice && kind != KindNAS {
		return app.ErrNotFound()
	}
	return nil
}

// resolve finds {kind}/{ref} among the caller's devices (404 otherwise).
func resolve(ctx context.Context, q app.Querier, act *app.Actor, kind string, ref int64) (Device, error) {
	if err := ParseKind(kind); err != nil {
		return Device{}, err
	}
	col := "d.id = ? AND d.kind = 'device'"
	if kind == KindNAS {
		col = "d.nas_id = ?"
	}
	cond, args := visibleSQL(act)
	d, err := scanDevice(q.QueryRowContext(ctx, `SELECT `+deviceCols+deviceFrom+` WHERE `+col+` AND `+cond, append([]any{ref}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return d, app.ErrNotFound()
	}
	return d, err
}

// GetDevice answers GET /admin/monitoring/devices/{kind}/{ref}.
func GetDevice(ctx context.Context, act *app.Actor, kind string, ref int64) (*Device, error) {
	if err := act.Require(PermMonitoringView, PermMapView); err != nil {
		return nil, err
	}
	var d Device
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) (err error) {
		d, err = resolve(ctx, tx, act, kind, ref)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// ListSpec is the device list's sorts and filters.
var ListSpec = app.ListSpec{
	Sorts: map[string]string{"id": "d.id", "name": "d.name", "address": "d.address", "status": "d.status",
		"last_seen": "d.last_seen", "latency_ms": "d.latency_ms", "created_at": "d.created_at"},
	DefaultSort: "name",
	DefaultAsc:  true,
	Filters: map[string]app.FilterKind{"status": app.FilterString, "kind": app.FilterString, "type": app.FilterString,
		"parent_id": app.FilterInt, "has_geo": app.FilterBool},
	Aliases: []string{"status", "kind", "type", "parent_id", "has_geo"},
}

// ListDevices answers GET /admin/monitoring/devices: status, last seen,
// latency and loss of every device the caller sees (q matches name and
// address).
func ListDevices(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Device], error) {
	if err := act.Require(PermMonitoringView); err != nil {
		return app.Page[Device]{}, err
	}
	cond, args := visibleSQL(act)
	where := []string{cond}
	if lq.Q != "" {
		where = append(where, "(d.name LIKE ? ESCAPE '\\' OR d.address LIKE ? ESCAPE '\\')")
		like := "%" + escapeLike(lq.Q) + "%"
		args = append(args, like, like)
	}
	for _, f := range []struct{ key, col string }{{"status", "d.status"}, {"kind", "d.kind"}, {"type", "d.device_type"}} {
		if v, ok := lq.Str(f.key); ok {
			where = append(where, f.col+" = ?")
			args = append(args, v)
		}
	}
	if v, ok := lq.Int("parent_id"); ok {
		where = append(where, "EXISTS(SELECT 1 FROM mon_links l WHERE l.to_id = d.id AND l.from_id = ?)")
		args = append(args, v)
	}
	if v, ok := lq.Bool("has_geo"); ok {
		if v {
			where = append(where, "d.lat IS NOT NULL")
		} else {
			where = append(where, "d.lat IS NULL")
		}
	}
	return app.QueryPage(ctx, act.Tenant, lq, deviceCols, deviceFrom+" WHERE "+strings.Join(where, " AND "), args, "d.id",
		func(rows *sql.Rows) (Device, error) { return scanDevice(rows) })
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// DeviceInput is the body of POST /devices and PUT /devices/{id}. SNMP is
// write-only: omitted on PUT keeps the stored credentials, a version ""
// removes them. ParentID makes that device the one uplink (a link); on PUT,
// omitted keeps the device's links.
type DeviceInput struct {
	Name         string           `json:"name"`
	Address      string           `json:"address"`
	Type         string           `json:"type"`
	SNMP         *probes.SNMPCred `json:"snmp"`
	PingInterval int              `json:"ping_interval"`
	SNMPInterval int              `json:"snmp_interval"`
	ProbePort    int              `json:"probe_port"`
	ParentID     *int64           `json:"parent_id"`
}

func (in *DeviceInput) validate(ctx context.Context, a *app.App, tx *sql.Tx) error {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		return app.ErrValidation("name_required", "name")
	}
	if utf8.RuneCountInString(in.Name) > 100 {
		return app.ErrValidation("name_too_long", "name")
	}
	in.Address = strings.TrimSpace(in.Address)
	if in.Address == "" {
		return app.ErrValidation("ip_required", "address")
	}
	addr, err := netip.ParseAddr(in.Address)
	if err != nil || addr.Zone() != "" {
		return app.ErrValidation("invalid_ip", "address")
	}
	in.Address = addr.Unmap().String()
	g, err := probes.TenantGuard(ctx, a, tx)
	if err != nil {
		return err
	}
	if c := g.Egress.Refusal(addr); c != "" { // the NAS rule (app/aaa checkNASAddress)
		return app.ErrValidation("ip_address_not_allowed", "address").With("address", in.Address).With("class", c)
	}
	if !g.Allow(addr) {
		return app.ErrValidation("target_not_allowed", "address")
	}
	if in.Type == "" {
		in.Type = "router"
	}
	if !contains(DeviceTypes, in.Type) {
		return app.ErrValidation("invalid_enum", "type")
	}
	if in.PingInterval == 0 {
		in.PingInterval = 30
	}
	if in.PingInterval < 10 || in.PingInterval > 3600 {
		return app.ErrValidation("out_of_range", "ping_interval")
	}
	if in.SNMPInterval == 0 {
		in.SNMPInterval = 60
	}
	if in.SNMPInterval < 30 || in.SNMPInterval > 3600 {
		return app.ErrValidation("out_of_range", "snmp_interval")
	}
	if in.ProbePort < 0 || in.ProbePort > 65535 {
		return app.ErrValidation("invalid_port", "probe_port")
	}
	if c := in.SNMP; c != nil {
		switch c.Version {
		case "":
		case "v2c":
			if c.Community == "" {
				return app.ErrValidation("snmp_credentials_required", "snmp.community")
			}
		case "v3":
			if c.User == "" {
				return app.ErrValidation("snmp_credentials_required", "snmp.user")
			}
		default:
			return app.ErrValidation("invalid_enum", "snmp.version")
		}
		if c.Port < 0 || c.Port > 65535 {
			return app.ErrValidation("invalid_port", "snmp.port")
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// sealSNMP turns credentials into the stored version and sealed blob.
func sealSNMP(t *app.Tenant, c *probes.SNMPCred) (string, []byte, error) {
	if c == nil || c.Version == "" {
		return "", nil, nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", nil, err
	}
	return c.Version, t.App.Keys.Seal(b), nil
}

// snmpCred opens a device's stored credentials (nil when none).
func snmpCred(ctx context.Context, q app.Querier, t *app.Tenant, id int64) (*probes.SNMPCred, error) {
	var sealed []byte
	if err := q.QueryRowContext(ctx, `SELECT snmp_sealed FROM mon_devices WHERE id = ?`, id).Scan(&sealed); err != nil {
		return nil, err
	}
	if len(sealed) == 0 {
		return nil, nil
	}
	b, err := t.App.Keys.Open(sealed)
	if err != nil {
		return nil, err
	}
	var c probes.SNMPCred
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// setParent makes parent the device's one uplink (nil removes it).
func setParent(ctx context.Context, tx *sql.Tx, act *app.Actor, id int64, parent *int64, now string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM mon_links WHERE to_id = ?`, id); err != nil {
		return err
	}
	if parent == nil {
		return nil
	}
	if _, err := visibleByID(ctx, tx, act, *parent); err != nil {
		return app.ErrValidation("parent_not_found", "parent_id")
	}
	if *parent == id {
		return app.ErrValidation("link_loop", "parent_id")
	}
	loop, err := reaches(ctx, tx, id, *parent)
	if err != nil {
		return err
	}
	if loop {
		return app.ErrValidation("link_loop", "parent_id")
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO mon_links(from_id, to_id, created_at) VALUES (?, ?, ?)`, *parent, id, now)
	return err
}

// visibleByID reads any device (either kind) by its row id among the
// caller's.
func visibleByID(ctx context.Context, q app.Querier, act *app.Actor, id int64) (Device, error) {
	cond, args := visibleSQL(act)
	d, err := scanDevice(q.QueryRowContext(ctx, `SELECT `+deviceCols+deviceFrom+` WHERE d.id = ? AND `+cond, append([]any{id}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return d, app.ErrNotFound()
	}
	return d, err
}

// reaches reports whether to is downstream of from (following links).
func reaches(ctx context.Context, q app.Querier, from, to int64) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `WITH RECURSIVE down(id) AS (SELECT ? UNION SELECT l.to_id FROM mon_links l JOIN down ON l.from_id = down.id)
		SELECT COUNT(*) FROM down WHERE id = ?`, from, to).Scan(&n)
	return n > 0, err
}

// CreateDevice answers POST /admin/monitoring/devices.
func CreateDevice(ctx context.Context, act *app.Actor, in DeviceInput) (*Device, error) {
	if err := act.Require(PermMonitoringManage); err != nil {
		return nil, err
	}
	t := act.Tenant
	var d Device
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := in.validate(ctx, act.Tenant.App, tx); err != nil {
			return err
		}
		ver, sealed, err := sealSNMP(t, in.SNMP)
		if err != nil {
			return err
		}
		now := t.NowText()
		res, err := tx.ExecContext(ctx, `INSERT INTO mon_devices(kind, name, address, device_type, snmp_version, snmp_sealed, ping_interval,
			snmp_interval, probe_port, manager_id, next_probe, created_at, updated_at) VALUES ('device', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			in.Name, in.Address, in.Type, ver, sealed, in.PingInterval, in.SNMPInterval, in.ProbePort, managerOrNil(act), now, now, now)
		if err != nil {
			return err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if err := setParent(ctx, tx, act, id, in.ParentID, now); err != nil {
			return err
		}
		devicesChanged(ctx, tx, t)
		d, err = visibleByID(ctx, tx, wide(t), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

func managerOrNil(act *app.Actor) any {
	if act.ManagerID > 0 {
		return act.ManagerID
	}
	return nil
}

// UpdateDevice answers PUT /admin/monitoring/devices/{id}.
func UpdateDevice(ctx context.Context, act *app.Actor, id int64, in DeviceInput) (*Device, error) {
	if err := act.Require(PermMonitoringManage); err != nil {
		return nil, err
	}
	t := act.Tenant
	var d Device
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := resolve(ctx, tx, act, KindDevice, id); err != nil {
			return err
		}
		if err := in.validate(ctx, act.Tenant.App, tx); err != nil {
			return err
		}
		now := t.NowText()
		if _, err := tx.ExecContext(ctx, `UPDATE mon_devices SET name = ?, address = ?, device_type = ?, ping_interval = ?, snmp_interval = ?,
			probe_port = ?, next_probe = ?, updated_at = ? WHERE id = ?`,
			in.Name, in.Address, in.Type, in.PingInterval, in.SNMPInterval, in.ProbePort, now, now, id); err != nil {
			return err
		}
		if in.SNMP != nil {
			ver, sealed, err := sealSNMP(t, in.SNMP)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE mon_devices SET snmp_version = ?, snmp_sealed = ? WHERE id = ?`, ver, sealed, id); err != nil {
				return err
			}
		}
		devicesChanged(ctx, tx, t)
		// parent_id set replaces the device's uplinks; omitted keeps its
		// links (remove one with DELETE /geo/links/{id}).
		if in.ParentID != nil {
			if err := setParent(ctx, tx, act, id, in.ParentID, now); err != nil {
				return err
			}
		}
		var err error
		d, err = visibleByID(ctx, tx, wide(t), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// DeleteDevice answers DELETE /admin/monitoring/devices/{id}: its samples,
// alerts, links and attachments go with it (a NAS is deleted as a NAS).
func DeleteDevice(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermMonitoringManage); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := resolve(ctx, tx, act, KindDevice, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM mon_devices WHERE id = ?`, id)
		return err
	})
}
