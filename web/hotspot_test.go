package web_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"testing"

	"xr/app/hotspot"
	"xr/app/subs"
	"xr/internal/webtest"
)

func hotspotPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zipNames(t *testing.T, data []byte) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	var out []string
	for _, f := range zr.File {
		out = append(out, f.Name)
	}
	return out
}

func TestHotspotPagesAPI(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	ten := k.Acquire("acme")

	tpl := k.Do("GET", "acme", "/api/v1/hotspot/templates", tok, nil)
	if tpl.Status != 200 || len(tpl.List()) < 2 {
		t.Fatalf("templates: %d %s", tpl.Status, tpl.Body)
	}
	var keys []string
	for _, x := range tpl.List() {
		keys = append(keys, x.(map[string]any)["key"].(string))
	}
	if !slices.Equal(keys, []string{"clean", "voucher-first"}) {
		t.Fatalf("template keys %v", keys)
	}

	// Create: the block's script, handler and javascript: link are gone
	// from the answer and from the row.
	r := k.Do("POST", "acme", "/api/v1/hotspot/pages", tok, map[string]any{"name": "Lobby", "template": "clean",
		"blocks": map[string]string{"login": `<p>Free wifi</p><script>alert(1)</script><img src=x onerror=alert(2)><a href="javascript:alert(3)">terms</a>`}})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := int64(r.Data()["id"].(float64))
	login := r.Data()["blocks"].(map[string]any)["login"].(string)
	if login != "<p>Free wifi</p>terms" {
		t.Fatalf("answered block %q", login)
	}
	var stored string
	if err := ten.DB.R.QueryRow(`SELECT blocks FROM hotspot_pages WHERE id = ?`, id).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, "script") || strings.Contains(stored, "onerror") || strings.Contains(stored, "javascript") || !strings.Contains(stored, "Free wifi") {
		t.Fatalf("stored block %s", stored)
	}

	// Refusals: CSS, contrast, template, name.
	for _, c := range []struct {
		body   map[string]any
		status int
		reason string
		field  string
	}{
		{map[string]any{"custom_css": "@import url(https://evil.example/x.css);"}, 400, "hotspot_css_not_allowed", "custom_css"},
		{map[string]any{"custom_css": "body{background:url(https://evil.example/t.gif)}"}, 400, "hotspot_css_not_allowed", "custom_css"},
		{map[string]any{"custom_css": "</style><script>alert(1)</script>"}, 400, "hotspot_css_not_allowed", "custom_css"},
		{map[string]any{"custom_css": "p{width:expression(alert(1))}"}, 400, "hotspot_css_not_allowed", "custom_css"},
		{map[string]any{"color_text": "#777777", "color_background": "#888888"}, 400, "hotspot_low_contrast", "color_text"},
		{map[string]any{"color_primary": "red"}, 400, "invalid_color", "color_primary"},
		{map[string]any{"blocks": map[string]string{"index": "<p>x</p>"}}, 400, "invalid_enum", "blocks.index"},
		{map[string]any{"template": "fancy"}, 400, "invalid_enum", "template"},
		{map[string]any{"logo_file_id": 4242}, 400, "hotspot_logo_invalid", "logo_file_id"},
	} {
		r := k.Do("PATCH", "acme", fmt.Sprintf("/api/v1/hotspot/pages/%d", id), tok, c.body)
		if r.Status != c.status || r.Reason() != c.reason || r.Field() != c.field {
			t.Errorf("%v: got %d %s", c.body, r.Status, r.Body)
		}
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM hotspot_pages WHERE custom_css != '' OR color_text != ''`); n != 0 {
		t.Fatalf("a refused patch was stored")
	}
	r = k.Do("PATCH", "acme", fmt.Sprintf("/api/v1/hotspot/pages/%d", id), tok, map[string]any{"custom_css": ".card{border-radius:0}", "color_primary": "#AA3300", "lang": "ar"})
	if r.Status != 200 || r.Data()["color_primary"] != "#aa3300" || r.Data()["lang"] != "ar" {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}

	// Logo, duplicate, list.
	up := k.Do("POST", "acme", fmt.Sprintf("/api/v1/hotspot/pages/%d/logo?filename=logo.png", id), tok, hotspotPNG(t), "Content-Type", "image/png")
	if up.Status != 201 || up.Data()["logo_file_id"] == nil {
		t.Fatalf("logo: %d %s", up.Status, up.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", fmt.Sprintf("/api/v1/hotspot/pages/%d/logo?filename=logo.png", id), tok, []byte("not an image at all"), "Content-Type", "image/png"),
		400, "ERR_VALIDATION", "file_type_not_allowed")
	dup := k.Do("POST", "acme", fmt.Sprintf("/api/v1/hotspot/pages/%d/duplicate", id), tok, map[string]any{})
	if dup.Status != 201 || dup.Data()["name"] != "Lobby (copy)" {
		t.Fatalf("duplicate: %d %s", dup.Status, dup.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", fmt.Sprintf("/api/v1/hotspot/pages/%d/duplicate", id), tok, map[string]any{"name": "Lobby"}), 409, "ERR_CONFLICT", "name_taken")
	list := k.Do("GET", "acme", "/api/v1/hotspot/pages?q=lobby", tok, nil)
	if list.Status != 200 || len(list.List()) != 2 || list.Meta()["total"].(float64) != 2 {
		t.Fatalf("list: %d %s", list.Status, list.Body)
	}

	// The zip: RouterOS's layout, as an attachment.
	dl := k.Do("GET", "acme", fmt.Sprintf("/api/v1/hotspot/pages/%d/download", id), tok, nil)
	if dl.Status != 200 || dl.Header.Get("Content-Type") != "application/zip" || dl.Header.Get("Content-Disposition") != `attachment; filename=hotspot-lobby.zip` {
		t.Fatalf("download: %d %v", dl.Status, dl.Header)
	}
	want := []string{"hotspot/login.html", "hotspot/alogin.html", "hotspot/status.html", "hotspot/logout.html", "hotspot/error.html",
		"hotspot/redirect.html", "hotspot/rlogin.html", "hotspot/md5.js", "hotspot/css/style.css", "hotspot/img/logo.png"}
	if got := zipNames(t, dl.Body); !slices.Equal(got, want) {
		t.Fatalf("zip names %v, want %v", got, want)
	}

	// Preview: HTML under the sandbox CSP, sample values filled.
	pv := k.Do("POST", "acme", "/api/v1/hotspot/preview", tok, map[string]any{"id": id, "page": "login", "error": "invalid password"})
	if pv.Status != 200 || !strings.HasPrefix(pv.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("preview: %d %v %s", pv.Status, pv.Header, pv.Body)
	}
	csp := pv.Header.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "script-src 'none'", "img-src data:", "sandbox"} {
		if !strings.Contains(csp, d) {
			t.Errorf("preview CSP %q lacks %q", csp, d)
		}
	}
	if pv.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("preview without nosniff")
	}
	body := string(pv.Body)
	if !strings.Contains(body, "Free wifi") || !strings.Contains(body, "invalid password") || !strings.Contains(body, `dir="rtl"`) ||
		strings.Contains(body, "$(") || !strings.Contains(body, "data:image/png;base64,") || strings.Contains(body, "<script") {
		t.Fatalf("preview body: %s", body)
	}
	unsaved := k.Do("POST", "acme", "/api/v1/hotspot/preview", tok, map[string]any{"set": map[string]any{"template": "voucher-first",
		"blocks": map[string]string{"status": "<b>Hi $(username)</b><script>x()</script>"}}, "page": "status"})
	if unsaved.Status != 200 || !strings.Contains(string(unsaved.Body), "<b>Hi card-1234</b>") || strings.Contains(string(unsaved.Body), "x()") {
		t.Fatalf("unsaved preview: %d %s", unsaved.Status, unsaved.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/hotspot/preview", tok, map[string]any{"set": map[string]any{"template": "clean", "custom_css": "@import 'x';"}}),
		400, "ERR_VALIDATION", "hotspot_css_not_allowed")

	// Bulk delete: the set and its logo (no other set... the copy shares it).
	dupID := int64(dup.Data()["id"].(float64))
	bd := k.Do("POST", "acme", "/api/v1/hotspot/pages/bulk-delete", tok, map[string]any{"ids": []int64{id, 99999}})
	if bd.Status != 200 {
		t.Fatalf("bulk delete: %d %s", bd.Status, bd.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM files WHERE area = 'hotspot'`); n != 1 {
		t.Fatalf("the copy's shared logo was deleted (%d files)", n)
	}
	if r := k.Do("DELETE", "acme", fmt.Sprintf("/api/v1/hotspot/pages/%d", dupID), tok, nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM files WHERE area = 'hotspot'`) + webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM hotspot_pages`); n != 0 {
		t.Fatalf("left %d rows", n)
	}
}

func TestHotspotAccess(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	r := k.Do("POST", "acme", "/api/v1/hotspot/pages", tok, map[string]any{"name": "Lobby", "template": "clean"})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := int64(r.Data()["id"].(float64))

	// Without prm_hotspot_manage: 403 first, whatever the body.
	webtest.CreateRole(k, "acme", "viewer", string(subs.PermUsersIndex))
	webtest.CreateManager(k, "acme", 0, "viewer1", "viewer")
	vt := idSession(k, "acme", "viewer1")
	for _, c := range []struct{ m, p string }{{"GET", "/hotspot/templates"}, {"GET", "/hotspot/pages"}, {"POST", "/hotspot/pages"},
		{"GET", fmt.Sprintf("/hotspot/pages/%d", id)}, {"PATCH", fmt.Sprintf("/hotspot/pages/%d", id)}, {"DELETE", fmt.Sprintf("/hotspot/pages/%d", id)},
		{"GET", fmt.Sprintf("/hotspot/pages/%d/download", id)}, {"POST", fmt.Sprintf("/hotspot/pages/%d/duplicate", id)},
		{"POST", "/hotspot/preview"}, {"POST", "/hotspot/pages/bulk-delete"}} {
		webtest.ExpectErr(t, k.Do(c.m, "acme", "/api/v1"+c.p, vt, `{"custom_css":"@import x"`), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	}

	// Another tenant's set is missing there.
	k.Tenant("other")
	ot := k.Owner("other")
	for _, c := range []struct{ m, p string }{{"GET", fmt.Sprintf("/hotspot/pages/%d", id)}, {"GET", fmt.Sprintf("/hotspot/pages/%d/download", id)},
		{"POST", fmt.Sprintf("/hotspot/pages/%d/duplicate", id)}, {"DELETE", fmt.Sprintf("/hotspot/pages/%d", id)}} {
		webtest.ExpectErr(t, k.Do(c.m, "other", "/api/v1"+c.p, ot, map[string]any{}), 404, "ERR_NOT_FOUND", "not_found")
	}
	webtest.ExpectErr(t, k.Do("POST", "other", "/api/v1/hotspot/preview", ot, map[string]any{"id": id}), 404, "ERR_NOT_FOUND", "not_found")

	// A reseller sees only the sets of its subtree.
	webtest.CreateRole(k, "acme", "hs", string(hotspot.PermHotspotManage))
	webtest.CreateManager(k, "acme", 0, "reseller1", "hs")
	rt := idSession(k, "acme", "reseller1")
	webtest.ExpectErr(t, k.Do("GET", "acme", fmt.Sprintf("/api/v1/hotspot/pages/%d", id), rt, nil), 404, "ERR_NOT_FOUND", "not_found")
	if l := k.Do("GET", "acme", "/api/v1/hotspot/pages", rt, nil); l.Status != 200 || len(l.List()) != 0 {
		t.Fatalf("reseller list: %d %s", l.Status, l.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM hotspot_pages`); n != 1 {
		t.Fatalf("rows %d", n)
	}
}
