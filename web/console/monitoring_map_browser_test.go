package console_test

// Browser test of the network map page (prefix cmap).

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/app/monitoring"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
	"xr/web"
)

// cmapSeed places a core, two sectors (one down) linked under it, and
// three subscribers attached to the down sector; the map has no tiles (no
// request leaves the test).
func cmapSeed(t *testing.T, k *webtest.Kit) {
	t.Helper()
	ctx, sys := t.Context(), k.System("acme")
	none := ""
	if _, err := monitoring.UpdateSettings(ctx, sys, monitoring.SettingsInput{NetworkRanges: &[]string{"127.0.0.0/8"}, TileURL: &none}); err != nil {
		t.Fatal(err)
	}
	ten := k.Acquire("acme")
	var ids []int64
	for i, name := range []string{"core <b>1</b>", "sector A", "sector B"} {
		d, err := monitoring.CreateDevice(ctx, sys, monitoring.DeviceInput{Name: name, Address: "127.0.3." + string(rune('1'+i)), Type: "router"})
		if err != nil {
			t.Fatal(err)
		}
		lat, lon := 33.5+float64(i)/100, 36.3+float64(i)/100
		if _, err := monitoring.SetGeo(ctx, sys, monitoring.KindDevice, d.ID, monitoring.GeoInput{Lat: &lat, Lon: &lon}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	for _, to := range ids[1:] {
		if _, err := monitoring.CreateLink(ctx, sys, monitoring.LinkInput{FromID: ids[0], ToID: to}); err != nil {
			t.Fatal(err)
		}
	}
	xrtest.Exec(t, ten, `UPDATE mon_devices SET status = CASE WHEN id = ? THEN 'down' ELSE 'up' END, status_since = '2026-03-02 10:00:00'`, ids[2])
	owner := xrtest.Scalar(t, ten, `SELECT id FROM managers WHERE parent_id IS NULL`)
	var users []int64
	for _, u := range []string{"amal", "boris", "chen"} {
		users = append(users, xrtest.Exec(t, ten, `INSERT INTO users(username, password_sealed, parent_id, lookup_token, created_at, updated_at) VALUES (?, x'00', ?, ?, '2026-01-01 00:00:00', '2026-01-01 00:00:00')`,
			u, owner, "tok-"+u))
		xrtest.Exec(t, ten, `INSERT INTO mon_user_geo(user_id, lat, lon, updated_at) VALUES (?, 33.52, 36.32, '2026-01-01 00:00:00')`, users[len(users)-1])
	}
	if _, err := monitoring.SetUsers(ctx, sys, monitoring.KindDevice, ids[2], monitoring.UsersInput{UserIDs: users}); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleMonitoringMapInBrowser: the owner opens the map from the
// monitoring page, sees the devices and links drawn with a count, the
// incident of the down sector in the table with its three subscribers,
// adds the subscriber layer, and opens a device's popup (its name as text,
// a link to its page).
func TestConsoleMonitoringMapInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{AllowPrivateEgress: true}, nil, nil) // devices on loopback
	cmapSeed(t, k)
	b := browsertest.New(t, k)
	b.SignIn("owner")
	b.Run("monitoring", chromedp.Navigate(b.Base+"/monitoring"), chromedp.WaitVisible("#mon-map-link", chromedp.ByQuery),
		chromedp.Click("#mon-map-link", chromedp.ByQuery), chromedp.WaitVisible(`#mon-map[data-ready="true"]`, chromedp.ByQuery))
	if got := b.Text("#mon-map-count"); !strings.Contains(got, "3 devices, 2 links and 0 subscribers") {
		t.Fatalf("count %q", got)
	}
	var paths int
	b.Run("drawn", chromedp.Evaluate(`document.querySelectorAll("#mon-map path.leaflet-interactive").length`, &paths))
	if paths != 5 {
		t.Fatalf("%d shapes drawn, want 3 devices and 2 links", paths)
	}
	if got := b.Text("#mon-incidents tbody"); !strings.Contains(got, "sector B") || !strings.Contains(got, "3") {
		t.Fatalf("incidents %q", got)
	}
	b.Axe("map")
	b.Run("subscribers", chromedp.Click("#map-l-subscribers", chromedp.ByQuery))
	b.Run("subscribers drawn", chromedp.Poll(`document.getElementById("mon-map-count").textContent.includes("3 devices, 2 links and 3 subscribers")`, nil))
	b.Run("hide links", chromedp.Click("#map-l-links", chromedp.ByQuery))
	b.Run("drawn", chromedp.Evaluate(`document.querySelectorAll("#mon-map path.leaflet-interactive").length`, &paths))
	if paths != 6 {
		t.Fatalf("%d shapes with subscribers and without links, want 6", paths)
	}
	// The first device marker: its popup names it as text (no markup).
	b.Run("popup", chromedp.Evaluate(`(function(){var p=document.querySelectorAll("#mon-map path.leaflet-interactive");for(var i=0;i<p.length;i++){if(p[i].getAttribute("stroke")==="#fff"){p[i].dispatchEvent(new MouseEvent("click",{bubbles:true}));return true}}return false})()`, nil),
		chromedp.WaitVisible(".leaflet-popup-content a", chromedp.ByQuery))
	if got := b.Text(".leaflet-popup-content a"); !strings.HasPrefix(got, "core <b>1</b>") && !strings.HasPrefix(got, "sector") {
		t.Fatalf("popup %q", got)
	}
	b.Axe("map with subscribers and a popup")
}

// The map page's CSP allows images from the tile server only when tiles
// are set, and only that origin ({s} as any subdomain); other console
// pages keep the strict policy.
func TestConsoleMapCSPFollowsTiles(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	cookie := consoleCookie(t, k)
	get := func(path string) http.Header {
		req := httptest.NewRequest("GET", path, nil)
		req.Host = "acme.xr.test"
		req.AddCookie(cookie)
		w := httptest.NewRecorder()
		k.Srv.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		return w.Header()
	}
	if got := get("/monitoring/map").Get("Content-Security-Policy"); !strings.Contains(got, "img-src 'self' data: https://tile.openstreetmap.org;") {
		t.Fatalf("default tiles CSP %q", got)
	}
	tiles := "https://{s}.tiles.example.net/{z}/{x}/{y}.png"
	if _, err := monitoring.UpdateSettings(t.Context(), k.System("acme"), monitoring.SettingsInput{TileURL: &tiles}); err != nil {
		t.Fatal(err)
	}
	if got := get("/monitoring/map").Get("Content-Security-Policy"); !strings.Contains(got, "img-src 'self' data: https://*.tiles.example.net;") {
		t.Fatalf("{s} tiles CSP %q", got)
	}
	if got := get("/monitoring").Get("Content-Security-Policy"); got != web.PageCSP {
		t.Fatalf("monitoring page CSP %q", got)
	}
	for _, bad := range []string{"ftp://x/{z}/{x}/{y}", "https://x/{z}/{x}", "https://a.{s}.x/{z}/{x}/{y}", "https://x y/{z}/{x}/{y}", "https://u:p@x/{z}/{x}/{y}"} {
		_, err := monitoring.UpdateSettings(t.Context(), k.System("acme"), monitoring.SettingsInput{TileURL: &bad})
		xrtest.WantReason(t, err, 400, "invalid_tile_url")
	}
}
