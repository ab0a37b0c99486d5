package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/monitoring"
	"xr/web"
)

// Monitoring pages: the device list with the add form, a device's record
// (status, 24 h stability, impact, its alerts, ping now), and the alert
// list with acknowledge, over the app functions of the
// /admin/monitoring rows with their permissions.
func (s *site) monitoringPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/monitoring", Access: web.Staff, API: "GET /admin/monitoring/devices", H: s.pageMonDevices, Menu: "monitoring"},
		{M: "POST", P: "/monitoring/devices", Access: web.Staff, API: "POST /admin/monitoring/devices", H: s.pageMonCreate},
		{M: "POST", P: "/monitoring/settings", Access: web.Staff, API: "PUT /admin/monitoring/settings", H: s.pageMonSettings},
		{M: "GET", P: "/monitoring/map", Access: web.Staff, API: "GET /admin/monitoring/map", H: s.pageMonMap},
		{M: "GET", P: "/monitoring/map/features", Access: web.Staff, API: "GET /admin/monitoring/geo", H: s.pageMonMapFeatures},
		{M: "GET", P: "/monitoring/devices/{kind}/{ref}", Access: web.Staff, API: "GET /admin/monitoring/devices/{kind}/{ref}", H: s.pageMonDevice},
		{M: "POST", P: "/monitoring/devices/{kind}/{ref}/ping", Access: web.Staff, API: "POST /admin/monitoring/devices/{kind}/{ref}/ping", H: s.pageMonPing},
		{M: "GET", P: "/monitoring/alerts", Access: web.Staff, API: "GET /admin/monitoring/alerts", H: s.pageMonAlerts},
		{M: "POST", P: "/monitoring/alerts/{id}/ack", Access: web.Staff, API: "POST /admin/monitoring/alerts/{id}/ack", H: s.pageMonAck},
	}
}

// monRow is a device with its figures as text.
type monRow struct {
	monitoring.Device
	Latency, Loss string
}

// num1 is a figure with one decimal, "—" when unknown.
func num1(p *float64) string {
	if p == nil {
		return "—"
	}
	return strconv.FormatFloat(*p, 'f', 1, 64)
}

type monDevicesView struct {
	Rows      []monRow
	Total     int
	Q, Status string
	Unacked   int
	Types     []string
	CanManage bool
	Ranges    string // declared network ranges, one per line
	Defaults  string // what no declaration means
	TileURL   string
	Attrib    string
	CanMap    bool
}

func (s *site) monDevicesData(c *web.Ctx) (*monDevicesView, error) {
	q := c.Query()
	lq, err := app.ParseList(q, monitoring.ListSpec)
	if err != nil {
		return nil, err
	}
	lq.PageSize = app.MaxPageSize
	st := q.Get("status")
	if st == "up" || st == "down" || st == "unknown" {
		lq.Filters["status"] = st
	} else {
		st = ""
	}
	p, err := monitoring.ListDevices(c.R.Context(), c.Actor, lq)
	if err != nil {
		return nil, err
	}
	uc, err := monitoring.CountUnacked(c.R.Context(), c.Actor)
	if err != nil {
		return nil, err
	}
	rows := make([]monRow, len(p.Rows))
	for i, d := range p.Rows {
		rows[i] = monRow{Device: d, Latency: num1(d.LatencyMs), Loss: num1(d.LossPct)}
	}
	set, err := monitoring.GetSettings(c.R.Context(), c.Actor)
	if err != nil {
		return nil, err
	}
	return &monDevicesView{Rows: rows, Total: p.Meta.Total, Q: lq.Q, Status: st, Unacked: uc.Count, Types: monitoring.DeviceTypes,
		CanManage: c.Actor.Can(monitoring.PermMonitoringManage), Ranges: strings.Join(set.NetworkRanges, "\n"), Defaults: strings.Join(set.Defaults, ", "),
		TileURL: set.TileURL, Attrib: set.Attribution, CanMap: c.Actor.Can(monitoring.PermMapView)}, nil
}

func (s *site) pageMonDevices(c *web.Ctx) error {
	d, err := s.monDevicesData(c)
	if err != nil {
		return err
	}
	v := s.NewView(c, "monitoring", "menu.monitoring")
	v.Form = url.Values{"type": {"router"}, "ping_interval": {"30"}, "tile_url": {d.TileURL}, "attribution": {d.Attrib}}
	v.Data = d
	return s.Render(c, http.StatusOK, "monitoring", v)
}

func monFormInt(f url.Values, key string) (int, error) {
	s := strings.TrimSpace(f.Get(key))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, app.ErrValidation("out_of_range", key)
	}
	return n, nil
}

func (s *site) pageMonCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "monitoring", "menu.monitoring")
	v.Form = f
	d, err := s.monDevicesData(c)
	if err != nil {
		return err
	}
	v.Data = d
	if !f.Has("tile_url") { // the settings form beside the device form keeps its values
		f.Set("tile_url", d.TileURL)
		f.Set("attribution", d.Attrib)
	}
	in := monitoring.DeviceInput{Name: f.Get("name"), Address: f.Get("address"), Type: f.Get("type")}
	if in.PingInterval, err = monFormInt(f, "ping_interval"); err != nil {
		return s.FormError(c, "monitoring", v, err)
	}
	if in.ProbePort, err = monFormInt(f, "probe_port"); err != nil {
		return s.FormError(c, "monitoring", v, err)
	}
	dev, err := monitoring.CreateDevice(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.FormError(c, "monitoring", v, err)
	}
	s.SetFlash(c, v.T("mon.created"), false)
	return web.Redirect(c, "/monitoring/devices/"+dev.Path())
}

// pageMonSettings declares the network ranges devices may be probed in
// (one per line, or comma-separated).
func (s *site) pageMonSettings(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	tiles, attrib := f.Get("tile_url"), f.Get("attribution")
	ranges := strings.FieldsFunc(f.Get("network_ranges"), func(r rune) bool { return r == ',' || r == '\n' || r == '\r' })
	in := monitoring.SettingsInput{NetworkRanges: &ranges, TileURL: &tiles, Attribution: &attrib}
	if _, err := monitoring.UpdateSettings(c.R.Context(), c.Actor, in); err != nil {
		v := s.NewView(c, "monitoring", "menu.monitoring")
		d, derr := s.monDevicesData(c)
		if derr != nil {
			return derr
		}
		v.Data, v.Form = d, url.Values{"type": {"router"}, "ping_interval": {"30"}, "network_ranges": {f.Get("network_ranges")}, "tile_url": {tiles}, "attribution": {attrib}}
		return s.FormError(c, "monitoring", v, err)
	}
	s.SetFlash(c, s.NewView(c, "monitoring", "menu.monitoring").T("mon.ranges_saved"), false)
	return web.Redirect(c, "/monitoring")
}

type monDeviceView struct {
	Device    *monitoring.Device
	Day       monitoring.Window
	Figures   map[string]string // latency, loss, uptime, p50, p95 as text
	Impact    *monitoring.Impact
	Alerts    []monitoring.Alert
	Ping      *monitoring.PingResult
	CanManage bool
	CanAck    bool
}

func (s *site) monDeviceData(c *web.Ctx) (*monDeviceView, error) {
	kind, ref, err := web.KindRef(c)
	if err != nil {
		return nil, err
	}
	ctx := c.R.Context()
	st, err := monitoring.GetStability(ctx, c.Actor, kind, ref)
	if err != nil {
		return nil, err
	}
	day := st.Windows[0]
	d := &monDeviceView{Device: &st.Device, Day: day, Figures: map[string]string{"latency": num1(st.Device.LatencyMs), "loss": num1(st.Device.LossPct),
		"uptime": num1(day.UptimePct), "p50": num1(day.LatencyP50), "p95": num1(day.LatencyP95)}, CanManage: c.Actor.Can(monitoring.PermMonitoringManage), CanAck: c.Actor.Can(monitoring.PermMonitoringAck)}
	if c.Actor.Can(monitoring.PermMapView) {
		if d.Impact, err = monitoring.GetImpact(ctx, c.Actor, kind, ref); err != nil {
			return nil, err
		}
	}
	p, err := monitoring.ListAlerts(ctx, c.Actor, app.ListQuery{Page: 1, PageSize: 20, Desc: true, SortExpr: "a.id", Filters: map[string]any{"device_id": st.Device.ID}})
	if err != nil {
		return nil, err
	}
	d.Alerts = p.Rows
	return d, nil
}

func (s *site) pageMonDevice(c *web.Ctx) error {
	d, err := s.monDeviceData(c)
	if err != nil {
		return err
	}
	v := s.NewView(c, "monitoring", "menu.monitoring")
	v.Title = d.Device.Name
	v.Data = d
	return s.Render(c, http.StatusOK, "monitoring_device", v)
}

func (s *site) pageMonPing(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	d, err := s.monDeviceData(c)
	if err != nil {
		return err
	}
	v := s.NewView(c, "monitoring", "menu.monitoring")
	v.Title = d.Device.Name
	v.Data = d
	d.Ping, err = monitoring.Ping(c.R.Context(), c.Actor, d.Device.Kind, d.Device.Ref, monitoring.PingInput{Count: 3})
	if err != nil {
		return s.FormError(c, "monitoring_device", v, err)
	}
	return s.Render(c, http.StatusOK, "monitoring_device", v)
}

type monAlertsView struct {
	Rows   []monitoring.Alert
	State  string
	CanAck bool
}

func (s *site) pageMonAlerts(c *web.Ctx) error {
	lq, err := app.ParseList(c.Query(), monitoring.AlertSpec)
	if err != nil {
		return err
	}
	lq.PageSize = app.MaxPageSize
	st := c.Query().Get("state")
	if st == "open" || st == "resolved" {
		lq.Filters["state"] = st
	} else {
		st = ""
	}
	p, err := monitoring.ListAlerts(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	v := s.NewView(c, "monitoring", "mon.alerts")
	v.Data = &monAlertsView{Rows: p.Rows, State: st, CanAck: c.Actor.Can(monitoring.PermMonitoringAck)}
	return s.Render(c, http.StatusOK, "monitoring_alerts", v)
}

func (s *site) pageMonAck(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	if _, err := monitoring.AckAlert(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	v := s.NewView(c, "monitoring", "mon.alerts")
	s.SetFlash(c, v.T("mon.acked"), false)
	next := c.R.PostForm.Get("next")
	if !strings.HasPrefix(next, "/monitoring") || strings.HasPrefix(next, "//") {
		next = "/monitoring/alerts"
	}
	return web.Redirect(c, fmt.Sprint(next))
}

type monMapView struct {
	Map       *monitoring.MapSettings
	Incidents []monitoring.Incident
}

// pageMonMap is the network map: devices, links and (on demand) subscribers
// drawn by Leaflet over the tenant's tiles, beside the current incidents as
// a table (what a screen reader and a printout get).
func (s *site) pageMonMap(c *web.Ctx) error {
	m, err := monitoring.GetMap(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	inc, err := monitoring.Incidents(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	src, err := monitoring.TileSource(m.TileURL)
	if err != nil { // stored before the rule: shown without a base map
		m.TileURL, src = "", ""
	}
	v := s.NewView(c, "monitoring", "mon.map")
	v.Data = &monMapView{Map: m, Incidents: inc}
	if src != "" { // the tiles come from their server: only there, images only
		c.W.Header().Set("Content-Security-Policy", strings.Replace(web.PageCSP, "img-src 'self' data:", "img-src 'self' data: "+src, 1))
	}
	return s.Render(c, http.StatusOK, "monitoring_map", v)
}

// pageMonMapFeatures is the map's GeoJSON for the page's script (the
// console session's caller; ?subscribers=1 adds the subscriber layer).
func (s *site) pageMonMapFeatures(c *web.Ctx) error {
	fc, err := monitoring.Geo(c.R.Context(), c.Actor, monitoring.GeoQuery{Subscribers: c.Query().Get("subscribers") == "1"})
	if err != nil {
		return err
	}
	b, err := fc.AppendJSON(nil)
	if err != nil {
		return err
	}
	return c.Encoded(http.StatusOK, b)
}
