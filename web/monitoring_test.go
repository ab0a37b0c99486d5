package web_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"xr/app"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// monKit is a kit whose tenant declares loopback as a monitored range.
func monKit(t *testing.T) (*webtest.Kit, string) {
	t.Helper()
	k := webtest.NewWith(t, app.Config{AllowPrivateEgress: true}, nil, nil) // the devices are loopback listeners
	xrtest.Exec(t, k.Acquire("acme"), `INSERT INTO settings(key, value) VALUES ('monitoring_network_ranges', '"127.0.0.0/8, 10.0.0.0/8"')`)
	return k, k.Owner("acme")
}

func monListen(t *testing.T) (net.Listener, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln, ln.Addr().(*net.TCPAddr).Port
}

func TestMonitoringPermissionsScopeAndOwners(t *testing.T) {
	t.Parallel()
	k, owner := monKit(t)
	webtest.CreateRole(k, "acme", "noc", "prm_monitoring_view", "prm_map_view")
	webtest.CreateManager(k, "acme", 0, "noc1", "noc")
	noc := idSession(k, "acme", "noc1")
	nocID := webtest.Scalar(k, "acme", `SELECT id FROM managers WHERE username = 'noc1'`)

	// 403 before anything: a caller without prm_monitoring_manage gets the
	// 403 even for a body that would be a 400.
	r := k.Do("POST", "acme", "/api/v1/admin/monitoring/devices", noc, map[string]any{"name": ""})
	webtest.ExpectErr(t, r, 403, "ERR_FORBIDDEN", "insufficient_permissions")
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM mon_devices WHERE kind = 'device'`); n != 0 {
		t.Fatalf("%d devices stored", n)
	}
	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/devices", owner, map[string]any{"name": "x", "address": "169.254.169.254"})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "target_not_allowed")
	if r.Field() != "address" {
		t.Fatalf("field %q", r.Field())
	}
	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/devices", owner, map[string]any{"name": "olt-1", "address": "10.0.0.7", "type": "olt",
		"snmp": map[string]any{"version": "v2c", "community": "s3cret"}})
	if r.Status != 201 || r.Data()["status"] != "unknown" || r.Data()["snmp_version"] != "v2c" || strings.Contains(string(r.Body), "s3cret") {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := webtest.DataID(r)
	path := fmt.Sprintf("/api/v1/admin/monitoring/devices/device/%d", id)

	// Out of scope answers like missing.
	webtest.ExpectErr(t, k.Do("GET", "acme", path, noc, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, k.Do("GET", "acme", path+"/impact", noc, nil), 404, "ERR_NOT_FOUND", "not_found")
	if r := k.Do("GET", "acme", "/api/v1/admin/monitoring/devices", noc, nil); r.Status != 200 || len(r.List()) != 0 {
		t.Fatalf("noc list before owning: %d %s", r.Status, r.Body)
	}
	// An owner sees the device without tenant-wide scope.
	r = k.Do("PUT", "acme", path+"/owners", owner, map[string]any{"manager_ids": []int64{nocID}})
	if r.Status != 200 || len(r.Data()["owners"].([]any)) != 1 {
		t.Fatalf("set owners: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "acme", path, noc, nil); r.Status != 200 || r.Data()["name"] != "olt-1" || r.Data()["kind"] != "device" {
		t.Fatalf("owner get: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "acme", "/api/v1/admin/monitoring/devices?q=olt", noc, nil); r.Status != 200 || len(r.List()) != 1 {
		t.Fatalf("owner list: %d %s", r.Status, r.Body)
	}
	// Still no manage permission for the owner.
	webtest.ExpectErr(t, k.Do("PUT", "acme", path+"/geo", noc, map[string]any{"lat": 1, "lon": 2}), 403, "ERR_FORBIDDEN", "insufficient_permissions")

	// Every NAS is monitored as nas/{nas_id}.
	nasID := xrtest.Exec(t, k.Acquire("acme"), `INSERT INTO nas(name, ip, secret_sealed, created_at, updated_at) VALUES ('edge', '10.9.9.9', x'00', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`)
	r = k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/monitoring/devices/nas/%d", nasID), owner, nil)
	if r.Status != 200 || r.Data()["kind"] != "nas" || r.Data()["address"] != "10.9.9.9" || int64(r.Data()["ref"].(float64)) != nasID {
		t.Fatalf("nas device: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/monitoring/devices/router/1", owner, nil), 404, "ERR_NOT_FOUND", "not_found")
	// A NAS is not deleted through /devices/{id}.
	nasDev := webtest.Scalar(k, "acme", `SELECT id FROM mon_devices WHERE nas_id = ?`, nasID)
	webtest.ExpectErr(t, k.Do("DELETE", "acme", fmt.Sprintf("/api/v1/admin/monitoring/devices/%d", nasDev), owner, nil), 404, "ERR_NOT_FOUND", "not_found")

	// Links: a tree; a loop is refused; reverse flips the direction.
	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/geo/links", owner, map[string]any{"from_id": nasDev, "to_id": id})
	if r.Status != 201 || r.Data()["status"] != "unknown" {
		t.Fatalf("link: %d %s", r.Status, r.Body)
	}
	link := webtest.DataID(r)
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/monitoring/geo/links", owner, map[string]any{"from_id": id, "to_id": nasDev}), 409, "ERR_CONFLICT", "link_loop")
	r = k.Do("POST", "acme", fmt.Sprintf("/api/v1/admin/monitoring/geo/links/%d/reverse", link), owner, nil)
	if r.Status != 200 || int64(r.Data()["from_id"].(float64)) != id {
		t.Fatalf("reverse: %d %s", r.Status, r.Body)
	}
	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/geo/links/bulk-delete", owner, map[string]any{"ids": []int64{link}})
	if r.Status != 200 || webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM mon_links`) != 0 {
		t.Fatalf("bulk-delete links: %d %s", r.Status, r.Body)
	}
	r = k.Do("PUT", "acme", path+"/geo", owner, map[string]any{"lat": 91, "lon": 2})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "out_of_range")
	if r := k.Do("PUT", "acme", path+"/geo", owner, map[string]any{"lat": 33.51, "lon": 36.29}); r.Status != 200 || r.Data()["lat"] != 33.51 {
		t.Fatalf("geo: %d %s", r.Status, r.Body)
	}
	r = k.Do("GET", "acme", "/api/v1/admin/monitoring/geo", noc, nil)
	if r.Status != 200 || r.Data()["type"] != "FeatureCollection" || len(r.Data()["features"].([]any)) != 1 {
		t.Fatalf("geojson: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "acme", "/api/v1/admin/monitoring/map", noc, nil); r.Status != 200 || r.Data()["center_lat"] != 33.51 {
		t.Fatalf("map: %d %s", r.Status, r.Body)
	}
	// Import: line-numbered errors write nothing; a dry run writes nothing; then it applies.
	csvData := fmt.Sprintf("kind,ref,lat,lon\ndevice,%d,10.5,20.5\nnas,999,1,1\ndevice,%d,95,1\n", id, id)
	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/geo/import", owner, map[string]any{"format": "csv", "data": csvData})
	if errs, _ := r.Data()["errors"].([]any); r.Status != 200 || len(errs) != 2 || r.Data()["applied"] != 0.0 ||
		errs[0].(map[string]any)["line"] != 3.0 || errs[1].(map[string]any)["line"] != 4.0 || errs[1].(map[string]any)["field"] != "lat" {
		t.Fatalf("import with errors: %d %s", r.Status, r.Body)
	}
	gj := fmt.Sprintf(`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[20.5,10.5]},"properties":{"kind":"device","ref":%d}}]}`, id)
	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/geo/import", owner, map[string]any{"format": "geojson", "data": gj, "dry_run": true})
	if r.Status != 200 || r.Data()["valid"] != 1.0 || r.Data()["applied"] != 0.0 || webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM mon_devices WHERE lat = 10.5`) != 0 {
		t.Fatalf("dry run: %d %s", r.Status, r.Body)
	}
	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/geo/import", owner, map[string]any{"format": "geojson", "data": gj})
	if r.Status != 200 || r.Data()["applied"] != 1.0 || webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM mon_devices WHERE lat = 10.5 AND lon = 20.5 AND id = ?`, id) != 1 {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/monitoring/geo/import", noc, map[string]any{"format": "x"}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	// Subscribers get coordinates by import too, and appear with the flag.
	uid := xrtest.Exec(t, k.Acquire("acme"), `INSERT INTO users(username, password_sealed, parent_id, lookup_token, created_at, updated_at) VALUES ('sam', x'00', ?, 'tok-sam', '2026-01-01 00:00:00', '2026-01-01 00:00:00')`,
		webtest.OwnerID(k, "acme"))
	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/geo/import", owner, map[string]any{"format": "csv", "data": fmt.Sprintf("lat,lon,kind,ref\n1.5,2.5,user,%d\n", uid)})
	if r.Status != 200 || r.Data()["applied"] != 1.0 {
		t.Fatalf("import a subscriber: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "acme", "/api/v1/admin/monitoring/geo?subscribers=true", owner, nil); r.Status != 200 || len(r.Data()["features"].([]any)) != 2 ||
		!strings.Contains(string(r.Body), `"layer":"subscribers"`) || !strings.Contains(string(r.Body), `"status":"offline"`) {
		t.Fatalf("geojson with subscribers: %d %s", r.Status, r.Body)
	}

	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/devices/bulk-delete", owner, map[string]any{"ids": []int64{id, nasDev}})
	if r.Status != 200 || webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM mon_devices WHERE kind = 'device'`) != 0 || webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM mon_devices WHERE kind = 'nas'`) != 1 {
		t.Fatalf("bulk-delete devices: %d %s", r.Status, r.Body)
	}
}

func TestMonitoringPingStreamAndSSRF(t *testing.T) {
	t.Parallel()
	k, owner := monKit(t)
	_, port := monListen(t)
	r := k.Do("POST", "acme", "/api/v1/admin/monitoring/devices", owner, map[string]any{"name": "sw", "address": "127.0.0.1", "probe_port": port})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	path := fmt.Sprintf("/api/v1/admin/monitoring/devices/device/%d", webtest.DataID(r))
	r = k.Do("POST", "acme", path+"/ping", owner, map[string]any{"count": 2})
	if r.Status != 200 || r.Data()["received"] != 2.0 || r.Data()["method"] != "tcp" || len(r.Data()["echoes"].([]any)) != 2 {
		t.Fatalf("ping: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", path+"/ping", owner, map[string]any{"count": 50}), 400, "ERR_VALIDATION", "out_of_range")
	r = k.Do("GET", "acme", path+"/ping/stream?count=2", owner, nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") ||
		strings.Count(string(r.Body), "event: echo") != 2 || !strings.Contains(string(r.Body), `event: done`) || !strings.Contains(string(r.Body), `"received":2`) {
		t.Fatalf("stream: %d %s", r.Status, r.Body)
	}
	// The tenant narrows its ranges: the device is no longer a target.
	xrtest.Exec(t, k.Acquire("acme"), `UPDATE settings SET value = '"10.0.0.0/8"' WHERE key = 'monitoring_network_ranges'`)
	webtest.ExpectErr(t, k.Do("POST", "acme", path+"/ping", owner, nil), 409, "ERR_CONFLICT", "target_not_allowed")
	webtest.ExpectErr(t, k.Do("GET", "acme", path+"/ping/stream", owner, nil), 409, "ERR_CONFLICT", "target_not_allowed")
	webtest.ExpectErr(t, k.Do("GET", "acme", path+"/snmp-interfaces", owner, nil), 409, "ERR_CONFLICT", "snmp_not_configured")
	if r := k.Do("GET", "acme", path+"/stability", owner, nil); r.Status != 200 || len(r.Data()["windows"].([]any)) != 3 {
		t.Fatalf("stability: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "acme", "/api/v1/admin/monitoring/alerts/unacked-count", owner, nil); r.Status != 200 || r.Data()["count"] != 0.0 {
		t.Fatalf("unacked: %d %s", r.Status, r.Body)
	}
}

// Declared ranges are the SSRF rule of every probe: loopback is refused
// until declared; a bad range is 400 invalid_cidr naming it and nothing is
// stored; a viewer may read but not change them.
func TestMonitoringSettingsDeclareRanges(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{AllowPrivateEgress: true}, nil, nil) // the device is a loopback listener
	owner := k.Owner("acme")
	_, port := monListen(t)
	r := k.Do("GET", "acme", "/api/v1/admin/monitoring/settings", owner, nil)
	if r.Status != 200 || len(r.Data()["network_ranges"].([]any)) != 0 || len(r.Data()["default_ranges"].([]any)) != 4 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/monitoring/devices", owner, map[string]any{"name": "lo", "address": "127.0.0.1", "probe_port": port}),
		400, "ERR_VALIDATION", "target_not_allowed")
	r = k.Do("PUT", "acme", "/api/v1/admin/monitoring/settings", owner, map[string]any{"network_ranges": []string{"127.0.0.0/8", "10.1.2.3/8"}})
	webtest.ExpectErr(t, k.Do("PUT", "acme", "/api/v1/admin/monitoring/settings", owner, map[string]any{"network_ranges": []string{"127.0.0.0/8", "10.0.0/33"}}),
		400, "ERR_VALIDATION", "invalid_cidr")
	if r.Status != 200 || fmt.Sprint(r.Data()["network_ranges"]) != "[127.0.0.0/8 10.0.0.0/8]" {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	if got := k.Do("GET", "acme", "/api/v1/admin/monitoring/settings", owner, nil); fmt.Sprint(got.Data()["network_ranges"]) != "[127.0.0.0/8 10.0.0.0/8]" {
		t.Fatalf("a refused PUT changed the ranges: %s", got.Body)
	}
	r = k.Do("POST", "acme", "/api/v1/admin/monitoring/devices", owner, map[string]any{"name": "lo", "address": "127.0.0.1", "probe_port": port})
	if r.Status != 201 {
		t.Fatalf("device in a declared range: %d %s", r.Status, r.Body)
	}
	webtest.CreateRole(k, "acme", "noc", "prm_monitoring_view")
	webtest.CreateManager(k, "acme", 0, "noc1", "noc")
	viewer := idSession(k, "acme", "noc1")
	if r := k.Do("GET", "acme", "/api/v1/admin/monitoring/settings", viewer, nil); r.Status != 200 {
		t.Fatalf("viewer reads: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("PUT", "acme", "/api/v1/admin/monitoring/settings", viewer, map[string]any{"network_ranges": []string{"bad"}}),
		403, "ERR_FORBIDDEN", "insufficient_permissions")
}
