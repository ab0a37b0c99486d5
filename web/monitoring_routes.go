package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"xr/app"
	"xr/app/monitoring"
	"xr/app/outbox"
	"xr/app/probes"
)

// Reasons the monitoring rows answer beyond every row's own.
var (
	monDeviceReasons = []string{"400 name_required", "400 name_too_long", "400 ip_required", "400 invalid_ip", "400 target_not_allowed", "400 ip_address_not_allowed",
		"400 invalid_enum", "400 out_of_range", "400 invalid_port", "400 snmp_credentials_required", "400 parent_not_found", "400 link_loop"}
	monProbeReasons = []string{"409 target_not_allowed"}
	monSNMPReasons  = []string{"409 target_not_allowed", "409 snmp_not_configured", "502 snmp_failed"}
	monBulkReasons  = []string{"400 ids_required", "400 invalid_id", "400 too_many_ids"}
)

func (s *Server) monitoringRoutes() []Route {
	view, ack, manage := []app.Perm{monitoring.PermMonitoringView}, []app.Perm{monitoring.PermMonitoringAck}, []app.Perm{monitoring.PermMonitoringManage}
	mapView, mapEdit := []app.Perm{monitoring.PermMapView}, []app.Perm{monitoring.PermMapEdit}
	probe := []string{"t_probe"}
	const dev = "/admin/monitoring/devices/{kind}/{ref}"
	return []Route{
		{M: "GET", P: "/admin/monitoring/alerts", Access: Staff, Perms: view, H: listCall(monitoring.AlertSpec, monitoring.ListAlerts),
			Resp: monitoring.Alert{}, List: true, Summary: "alerts of the caller's devices (filters state, severity, device_id, acked, rule), newest first"},
		{M: "POST", P: "/admin/monitoring/alerts/bulk-delete", Access: Staff, Perms: ack, H: bulkCall(monitoring.DeleteAlert),
			Req: app.BulkIDs{}, Resp: app.BulkResult{}, Reasons: monBulkReasons, Summary: "delete alerts by id"},
		{M: "POST", P: "/admin/monitoring/alerts/clear-all", Access: Staff, Perms: ack, H: actorCall(monitoring.ClearAlerts),
			Resp: monitoring.ClearResult{}, Summary: "delete every resolved or acknowledged alert of the caller's devices; open unacknowledged alerts stay"},
		{M: "GET", P: "/admin/monitoring/alerts/unacked-count", Access: Staff, Perms: view, H: actorCall(monitoring.CountUnacked),
			Resp: monitoring.UnackedCount{}, Summary: "how many alerts nobody acknowledged (and how many of them are critical)"},
		{M: "POST", P: "/admin/monitoring/alerts/{id}/ack", Access: Staff, Perms: ack, H: idCall(monitoring.AckAlert),
			Resp: monitoring.Alert{}, Summary: "acknowledge an alert (a second ack keeps the first)"},
		{M: "GET", P: "/admin/monitoring/alerts/{id}/deliveries", Access: Staff, Perms: view, H: idAllCall(monitoring.AlertDeliveries),
			Resp: []outbox.Delivery{}, Summary: "who was notified of an alert, by which channel, with what result"},
		{M: "GET", P: "/admin/monitoring/devices", Access: Staff, Perms: view, H: listCall(monitoring.ListSpec, monitoring.ListDevices),
			Resp: monitoring.Device{}, List: true, Summary: "monitored devices (every NAS and the added devices) with status, last seen, latency and loss; q matches name and address"},
		{M: "POST", P: "/admin/monitoring/devices", Access: Staff, Perms: manage, H: createCall(monitoring.CreateDevice),
			Req: monitoring.DeviceInput{}, Resp: monitoring.Device{}, Status: http.StatusCreated, Reasons: monDeviceReasons,
			Summary: "add a device to monitor (address inside the tenant's declared network ranges; SNMP credentials sealed, write-only)"},
		{M: "POST", P: "/admin/monitoring/devices/bulk-delete", Access: Staff, Perms: manage, H: bulkCall(monitoring.DeleteDevice),
			Req: app.BulkIDs{}, Resp: app.BulkResult{}, Reasons: monBulkReasons, Summary: "delete added devices by id"},
		{M: "DELETE", P: "/admin/monitoring/devices/{id}", Access: Staff, Perms: manage, H: idAction(monitoring.DeleteDevice),
			Summary: "delete an added device with its samples, alerts, links and attachments"},
		{M: "PUT", P: "/admin/monitoring/devices/{id}", Access: Staff, Perms: manage, H: idBodyCall(monitoring.UpdateDevice),
			Req: monitoring.DeviceInput{}, Resp: monitoring.Device{}, Reasons: monDeviceReasons,
			Summary: "replace an added device's settings (snmp omitted keeps the stored credentials)"},
		{M: "GET", P: dev, Access: Staff, Perms: []app.Perm{monitoring.PermMonitoringView, monitoring.PermMapView}, H: kindCall(monitoring.GetDevice), Resp: monitoring.Device{},
			Summary: "one monitored device: nas/{nas_id} or device/{id}"},
		{M: "DELETE", P: dev + "/geo", Access: Staff, Perms: mapEdit, H: kindCall(monitoring.ClearGeo), Resp: monitoring.Device{},
			Summary: "remove a device's coordinates"},
		{M: "PUT", P: dev + "/geo", Access: Staff, Perms: mapEdit, H: kindBodyCall(monitoring.SetGeo), Req: monitoring.GeoInput{},
			Resp: monitoring.Device{}, Reasons: []string{"400 field_required", "400 out_of_range"}, Summary: "set a device's coordinates"},
		{M: "PUT", P: dev + "/icon", Access: Staff, Perms: mapEdit, H: kindBodyCall(monitoring.SetIcon), Req: monitoring.IconInput{},
			Resp: monitoring.Device{}, Reasons: []string{"400 invalid_enum"}, Summary: "set a device's map icon"},
		{M: "GET", P: dev + "/impact", Access: Staff, Perms: mapView, H: kindCall(monitoring.GetImpact), Resp: monitoring.Impact{},
			Summary: "devices and subscribers downstream that lose service when the device is down, with how many are online now"},
		{M: "GET", P: dev + "/live-traffic", Access: Staff, Perms: view, Buckets: probe, H: s.monLiveTraffic, Resp: monitoring.LiveTraffic{},
			Reasons: append([]string{"400 field_required", "400 interface_not_found"}, monSNMPReasons...),
			Summary: "bits per second of one interface (?interface=ifIndex) from two SNMP polls a second apart"},
		{M: "GET", P: dev + "/live-traffic/stream", Access: Staff, Perms: view, Buckets: probe, H: s.monLiveTrafficStream,
			Reasons: append([]string{"400 field_required", "400 interface_not_found"}, monSNMPReasons...),
			Summary: "server-sent events: `event: traffic` with live-traffic every poll until the client leaves (at most 10 minutes)"},
		{M: "GET", P: dev + "/notify", Access: Staff, Perms: view, H: kindCall(monitoring.GetNotify), Resp: monitoring.NotifySettings{},
			Summary: "who is told about the device's alerts and how, quiet hours and the alert rules"},
		{M: "PUT", P: dev + "/notify", Access: Staff, Perms: manage, H: kindBodyCall(monitoring.SetNotify), Req: monitoring.NotifySettings{},
			Resp: monitoring.NotifySettings{}, Reasons: []string{"400 invalid_email", "400 invalid_phone", "400 invalid_time_of_day", "400 out_of_range"},
			Summary: "replace the device's notification settings and alert rules"},
		{M: "GET", P: dev + "/owners", Access: Staff, Perms: view, H: kindCall(monitoring.GetOwners), Resp: monitoring.OwnersResult{},
			Summary: "the managers responsible for the device (they see it and its alerts without tenant-wide scope)"},
		{M: "PUT", P: dev + "/owners", Access: Staff, Perms: manage, H: kindBodyCall(monitoring.SetOwners), Req: monitoring.OwnersInput{},
			Resp: monitoring.OwnersResult{}, Reasons: []string{"400 invalid_manager_id", "400 out_of_range"}, Summary: "replace the device's owners"},
		{M: "POST", P: dev + "/ping", Access: Staff, Perms: manage, Buckets: probe, H: kindBodyCall(monitoring.Ping), Req: monitoring.PingInput{},
			Resp: monitoring.PingResult{}, Reasons: append([]string{"400 out_of_range"}, monProbeReasons...),
			Summary: "ping the device now (ICMP echo; method tcp when ICMP is unavailable or the device has a probe port)"},
		{M: "GET", P: dev + "/ping/stream", Access: Staff, Perms: manage, Buckets: probe, H: s.monPingStream,
			Reasons: append([]string{"400 out_of_range"}, monProbeReasons...),
			Summary: "server-sent events: `event: echo` per echo (?count=1-100, default 10, one a second), then `event: done` with the summary"},
		{M: "GET", P: dev + "/snmp-interfaces", Access: Staff, Perms: manage, Buckets: probe, H: kindAllCall(monitoring.SNMPInterfaces),
			Resp: []probes.Interface{}, Reasons: monSNMPReasons, Summary: "walk the device's ifTable/ifXTable over SNMP"},
		{M: "GET", P: dev + "/stability", Access: Staff, Perms: view, H: kindCall(monitoring.GetStability), Resp: monitoring.Stability{},
			Summary: "uptime %, outages, flaps and latency percentiles over 24 h, 7 d and 30 d from stored samples"},
		{M: "GET", P: dev + "/users", Access: Staff, Perms: mapView, H: kindAllCall(monitoring.GetUsers), Resp: []monitoring.AttachedUser{},
			Summary: "subscribers attached to the device: explicit, or through the NAS of their live session"},
		{M: "PUT", P: dev + "/users", Access: Staff, Perms: mapEdit, H: kindBodyAllCall(monitoring.SetUsers), Req: monitoring.UsersInput{},
			Resp: []monitoring.AttachedUser{}, Reasons: []string{"400 invalid_subscriber", "400 out_of_range"},
			Summary: "replace the subscribers explicitly attached to the device"},
		{M: "GET", P: "/admin/monitoring/geo", Access: Staff, Perms: mapView, H: s.monGeo, Resp: monitoring.FeatureCollection{},
			Summary: "GeoJSON FeatureCollection of the located devices and the links between them, each with its status; with ?subscribers=true the located subscribers too (online or offline)"},
		{M: "GET", P: "/admin/monitoring/geo/hygiene", Access: Staff, Perms: mapView, H: actorCall(monitoring.GetHygiene), Resp: monitoring.Hygiene{},
			Summary: "devices without coordinates, links in a loop, subscribers attached to a device down over 7 days, duplicate addresses"},
		{M: "POST", P: "/admin/monitoring/geo/import", Access: Staff, Perms: mapEdit, H: bodyCall(monitoring.ImportGeo), Req: monitoring.ImportInput{},
			Resp: monitoring.ImportResult{}, Reasons: []string{"400 invalid_enum", "400 out_of_range"},
			Summary: "set coordinates from CSV (kind, ref, lat, lon) or a GeoJSON FeatureCollection of Points; refused lines are listed with their numbers and nothing is written unless every line is valid (dry_run checks only)"},
		{M: "GET", P: "/admin/monitoring/geo/incidents", Access: Staff, Perms: mapView, H: allCall(monitoring.Incidents), Resp: []monitoring.Incident{},
			Summary: "current outages: each root device (down, with no down uplink) with its impact"},
		{M: "GET", P: "/admin/monitoring/geo/links", Access: Staff, Perms: mapView, H: listCall(monitoring.LinkSpec, monitoring.ListLinks),
			Resp: monitoring.Link{}, List: true, Summary: "links between devices (from is the uplink side), each with the status of its ends"},
		{M: "POST", P: "/admin/monitoring/geo/links", Access: Staff, Perms: mapEdit, H: createCall(monitoring.CreateLink), Req: monitoring.LinkInput{},
			Resp: monitoring.Link{}, Status: http.StatusCreated, Reasons: []string{"400 field_required", "400 device_not_found", "409 link_loop", "409 link_exists"},
			Summary: "link two devices (from_id the uplink side); a link closing a loop is refused"},
		{M: "POST", P: "/admin/monitoring/geo/links/bulk-delete", Access: Staff, Perms: mapEdit, H: bulkCall(monitoring.DeleteLink),
			Req: app.BulkIDs{}, Resp: app.BulkResult{}, Reasons: monBulkReasons, Summary: "delete links by id"},
		{M: "DELETE", P: "/admin/monitoring/geo/links/{id}", Access: Staff, Perms: mapEdit, H: idAction(monitoring.DeleteLink), Summary: "delete a link"},
		{M: "POST", P: "/admin/monitoring/geo/links/{id}/reverse", Access: Staff, Perms: mapEdit, H: idCall(monitoring.ReverseLink),
			Resp: monitoring.Link{}, Reasons: []string{"409 link_loop", "409 link_exists"}, Summary: "swap a link's uplink direction"},
		{M: "GET", P: "/admin/monitoring/settings", Access: Staff, Perms: view, H: actorCall(monitoring.GetSettings), Resp: monitoring.Settings{},
			Summary: "the network ranges devices may be probed in besides the NAS (empty: private and CGNAT space); loopback, link-local and public addresses need a declaration"},
		{M: "PUT", P: "/admin/monitoring/settings", Access: Staff, Perms: manage, H: bodyCall(monitoring.UpdateSettings), Req: monitoring.SettingsInput{},
			Resp: monitoring.Settings{}, Reasons: []string{"400 invalid_cidr", "400 out_of_range", "400 invalid_tile_url", "400 too_long"},
			Summary: "declare the network ranges (CIDR or single addresses) devices may be probed in"},
		{M: "GET", P: "/admin/monitoring/map", Access: Staff, Perms: mapView, H: actorCall(monitoring.GetMap), Resp: monitoring.MapSettings{},
			Summary: "map settings: centre, zoom, tile URL template and layers"},
	}
}

// kindRef parses {kind}/{ref}: an unknown kind or a non-integer ref is 404.
func KindRef(c *Ctx) (string, int64, error) {
	kind := c.R.PathValue("kind")
	if err := monitoring.ParseKind(kind); err != nil {
		return "", 0, err
	}
	ref, err := c.ID("ref")
	return kind, ref, err
}

func kindCall[T any](fn func(context.Context, *app.Actor, string, int64) (T, error)) HandlerFunc {
	return func(c *Ctx) error {
		kind, ref, err := KindRef(c)
		if err != nil {
			return err
		}
		out, err := fn(c.R.Context(), c.Actor, kind, ref)
		if err != nil {
			return err
		}
		return c.OK(out)
	}
}

func kindAllCall[T any](fn func(context.Context, *app.Actor, string, int64) ([]T, error)) HandlerFunc {
	return func(c *Ctx) error {
		kind, ref, err := KindRef(c)
		if err != nil {
			return err
		}
		out, err := fn(c.R.Context(), c.Actor, kind, ref)
		if err != nil {
			return err
		}
		return oneList(c, out)
	}
}

func kindBodyCall[In, T any](fn func(context.Context, *app.Actor, string, int64, In) (T, error)) HandlerFunc {
	return func(c *Ctx) error {
		kind, ref, err := KindRef(c)
		if err != nil {
			return err
		}
		var in In
		if err := c.Decode(&in); err != nil {
			return err
		}
		out, err := fn(c.R.Context(), c.Actor, kind, ref, in)
		if err != nil {
			return err
		}
		return c.OK(out)
	}
}

func kindBodyAllCall[In, T any](fn func(context.Context, *app.Actor, string, int64, In) ([]T, error)) HandlerFunc {
	return func(c *Ctx) error {
		kind, ref, err := KindRef(c)
		if err != nil {
			return err
		}
		var in In
		if err := c.Decode(&in); err != nil {
			return err
		}
		out, err := fn(c.R.Context(), c.Actor, kind, ref, in)
		if err != nil {
			return err
		}
		return oneList(c, out)
	}
}

// sse starts a server-sent event stream and returns its writer.
func sse(c *Ctx) (func(event string, v any), error) {
	flusher, ok := c.W.(http.Flusher)
	if !ok {
		return nil, app.ErrInternal(fmt.Errorf("response writer cannot stream"))
	}
	h := c.W.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	c.W.WriteHeader(http.StatusOK)
	return func(event string, v any) {
		b, _ := json.Marshal(v) // the probes' own types always marshal
		fmt.Fprintf(c.W, "event: %s\ndata: %s\n\n", event, b)
		flusher.Flush()
	}, nil
}

// MonPingInterval is the pause between two echoes of ping/stream.
var MonPingInterval = time.Second

// monPingStream answers GET .../ping/stream: one `event: echo` line per
// echo, `event: done` with the summary after count echoes; it ends early
// when the client hangs up.
func (s *Server) monPingStream(c *Ctx) error {
	kind, ref, err := KindRef(c)
	if err != nil {
		return err
	}
	count := 10
	if v := c.Query().Get("count"); v != "" {
		if count, err = strconv.Atoi(v); err != nil || count < 1 || count > 100 {
			return app.ErrValidation("out_of_range", "count")
		}
	}
	ctx := c.R.Context()
	p, err := monitoring.PingTarget(ctx, c.Actor, kind, ref)
	if err != nil {
		return err
	}
	send, err := sse(c)
	if err != nil {
		return err
	}
	sum := monitoring.PingResult{Echoes: []monitoring.Echo{}}
	for seq := 1; seq <= count; seq++ {
		if seq > 1 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(MonPingInterval):
			}
		}
		e := p.Echo(ctx, seq)
		if ctx.Err() != nil {
			return nil
		}
		send("echo", e)
		sum.Sent++
		sum.Method = e.Method
		if e.OK {
			sum.Received++
		}
	}
	sum.LossPct = float64(sum.Sent-sum.Received) * 100 / float64(sum.Sent)
	send("done", map[string]any{"sent": sum.Sent, "received": sum.Received, "loss_percent": sum.LossPct, "method": sum.Method})
	return nil
}

func ifIndex(c *Ctx) int {
	n, err := strconv.Atoi(c.Query().Get("interface"))
	if err != nil {
		return 0
	}
	return n
}

func (s *Server) monLiveTraffic(c *Ctx) error {
	kind, ref, err := KindRef(c)
	if err != nil {
		return err
	}
	out, err := monitoring.GetLiveTraffic(c.R.Context(), c.Actor, kind, ref, ifIndex(c))
	if err != nil {
		return err
	}
	return c.OK(out)
}

// monLiveTrafficStream answers GET .../live-traffic/stream: the first
// reading decides the status (an error answers as JSON); then `event:
// traffic` per reading until the client leaves or ten minutes pass.
func (s *Server) monLiveTrafficStream(c *Ctx) error {
	kind, ref, err := KindRef(c)
	if err != nil {
		return err
	}
	ctx := c.R.Context()
	idx := ifIndex(c)
	first, err := monitoring.GetLiveTraffic(ctx, c.Actor, kind, ref, idx)
	if err != nil {
		return err
	}
	send, err := sse(c)
	if err != nil {
		return err
	}
	send("traffic", first)
	end := time.Now().Add(10 * time.Minute)
	for ctx.Err() == nil && time.Now().Before(end) {
		lt, err := monitoring.GetLiveTraffic(ctx, c.Actor, kind, ref, idx)
		if err != nil {
			if ctx.Err() == nil {
				send("end", map[string]any{})
			}
			return nil
		}
		send("traffic", lt)
	}
	return nil
}

func (s *Server) monGeo(c *Ctx) error {
	v := c.Query().Get("subscribers")
	out, err := monitoring.Geo(c.R.Context(), c.Actor, monitoring.GeoQuery{Subscribers: v == "true" || v == "1"})
	if err != nil {
		return err
	}
	b, err := out.AppendJSON([]byte(`{"data":`))
	if err != nil {
		return err
	}
	return c.Encoded(http.StatusOK, append(b, '}'))
}
