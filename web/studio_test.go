package web_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"mime/multipart"
	"strings"
	"testing"

	"xr/internal/webtest"
)

// Tests of the design studio rows (prefix st).

func stPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		img.Set(x, x%h, color.RGBA{200, 30, 30, 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// stUpload posts a multipart design image as token on slug.
func stUpload(k *webtest.Kit, slug, token, name string, content []byte) webtest.Resp {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(content)
	mw.Close()
	return k.Do("POST", slug, "/api/v1/studio/images", token, buf.Bytes(), "Content-Type", mw.FormDataContentType())
}

func stDesign(t *testing.T, k *webtest.Kit, slug, token, name string) map[string]any {
	t.Helper()
	r := k.Do("POST", slug, "/api/v1/studio/designs", token, map[string]any{"name": name, "kind": "card_sheet"})
	if r.Status != 201 {
		t.Fatalf("create design: %d %s", r.Status, r.Body)
	}
	return r.Data()
}

func TestStudioDesignReasons(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	s.Tenant("beta")
	beta := s.Owner("beta")
	_, viewer := s.Manager(s.OwnerID, "viewer", "prm_studio_index")
	d := stDesign(t, s.Kit, "acme", s.Tok, "Cards")
	id := int64(d["id"].(float64))
	stDesign(t, s.Kit, "beta", beta, "Theirs 1")
	foreign := int64(stDesign(t, s.Kit, "beta", beta, "Theirs 2")["id"].(float64)) // no such id in acme
	var g bytes.Buffer
	if err := gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 2, 2), []color.Color{color.Black, color.White}), nil); err != nil {
		t.Fatal(err)
	}
	badVar := map[string]any{"name": "Bad", "kind": "card_sheet", "doc": map[string]any{
		"kind": "card_sheet", "page": map[string]any{"width": 210, "height": 297, "margin": 10}, "card": map[string]any{"width": 85, "height": 54},
		"elements": []any{map[string]any{"type": "text", "x": 1, "y": 1, "w": 30, "h": 6, "text": "{code}"},
			map[string]any{"type": "text", "x": 1, "y": 10, "w": 30, "h": 6, "text": "{secret_var}"}}}}
	offCanvas := map[string]any{"name": "Off", "kind": "card_sheet", "doc": map[string]any{
		"kind": "card_sheet", "page": map[string]any{"width": 210, "height": 297, "margin": 10}, "card": map[string]any{"width": 85, "height": 54},
		"elements": []any{map[string]any{"type": "rect", "x": 80, "y": 1, "w": 30, "h": 6}}}}
	for _, c := range []struct {
		name                string
		do                  func() webtest.Resp
		status              int
		code, reason, field string
	}{
		{"403 before validation", func() webtest.Resp { return s.Call("POST", "/studio/designs", viewer, map[string]any{"kind": "nope"}) }, 403, "ERR_FORBIDDEN", "insufficient_permissions", ""},
		{"403 upload before reading", func() webtest.Resp { return stUpload(s.Kit, "acme", viewer, "a.gif", g.Bytes()) }, 403, "ERR_FORBIDDEN", "insufficient_permissions", ""},
		{"404 another tenant's design", func() webtest.Resp { return s.Call("GET", fmt.Sprintf("/studio/designs/%d", foreign), s.Tok, nil) }, 404, "ERR_NOT_FOUND", "not_found", ""},
		{"404 another tenant's thumbnail", func() webtest.Resp {
			return s.Call("GET", fmt.Sprintf("/studio/designs/%d/thumbnail", foreign), s.Tok, nil)
		}, 404, "ERR_NOT_FOUND", "not_found", ""},
		{"409 stale patch", func() webtest.Resp {
			return s.Call("PATCH", fmt.Sprintf("/studio/designs/%d", id), s.Tok, map[string]any{"version": 7, "name": "X"})
		}, 409, "ERR_CONFLICT", "design_version_stale", "version"},
		{"409 stale delete", func() webtest.Resp {
			return s.Call("DELETE", fmt.Sprintf("/studio/designs/%d?version=3", id), s.Tok, nil)
		}, 409, "ERR_CONFLICT", "design_version_stale", "version"},
		{"400 delete without version", func() webtest.Resp { return s.Call("DELETE", fmt.Sprintf("/studio/designs/%d", id), s.Tok, nil) }, 400, "ERR_VALIDATION", "required", "version"},
		{"400 unknown kind", func() webtest.Resp {
			return s.Call("POST", "/studio/designs", s.Tok, map[string]any{"name": "x", "kind": "poster"})
		}, 400, "ERR_VALIDATION", "invalid_enum", "kind"},
		{"400 unknown variable", func() webtest.Resp { return s.Call("POST", "/studio/designs", s.Tok, badVar) }, 400, "ERR_VALIDATION", "design_variable_unknown", "elements[1].text"},
		{"400 off canvas", func() webtest.Resp { return s.Call("POST", "/studio/designs", s.Tok, offCanvas) }, 400, "ERR_VALIDATION", "design_element_off_canvas", "elements[0].x"},
		{"400 gif refused", func() webtest.Resp { return stUpload(s.Kit, "acme", s.Tok, "a.gif", g.Bytes()) }, 400, "ERR_VALIDATION", "file_type_not_allowed", "file"},
		{"400 html refused", func() webtest.Resp {
			return stUpload(s.Kit, "acme", s.Tok, "a.png", []byte("<html><script>x</script></html>"))
		}, 400, "ERR_VALIDATION", "file_type_not_allowed", "file"},
	} {
		r := c.do()
		webtest.ExpectErr(t, r, c.status, c.code, c.reason)
		if r.Field() != c.field {
			t.Errorf("%s: field %q, want %q", c.name, r.Field(), c.field)
		}
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM designs`); n != 1 {
		t.Fatalf("%d designs stored after refusals", n)
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM design_images`); n != 0 {
		t.Fatalf("%d images stored after refusals", n)
	}
	// The unknown variable is named in details.
	r := s.Call("POST", "/studio/designs", s.Tok, badVar)
	det := r.JSON["error"].(map[string]any)["details"].(map[string]any)
	if det["variable"] != "secret_var" || det["element"] != float64(1) {
		t.Fatalf("details %v", det)
	}
	// PATCH with the read version works and bumps it.
	r = s.Call("PATCH", fmt.Sprintf("/studio/designs/%d", id), s.Tok, map[string]any{"version": 1, "name": "Cards 2"})
	if r.Status != 200 || r.Data()["version"] != float64(2) {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	// The list filters by kind.
	r = s.Call("GET", "/studio/designs?filter[kind]=receipt", s.Tok, nil)
	if r.Status != 200 || len(r.List()) != 0 {
		t.Fatalf("filter: %s", r.Body)
	}
	r = s.Call("GET", "/studio/designs?filter[kind]=card_sheet&q=cards", viewer, nil)
	if r.Status != 200 || len(r.List()) != 1 {
		t.Fatalf("list: %s", r.Body)
	}
	// An image upload, then the variable catalogue.
	r = stUpload(s.Kit, "acme", s.Tok, "logo.png", stPNG(t, 12, 8))
	if r.Status != 201 || r.Data()["width"] != float64(12) {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	raw := s.Do("POST", "acme", "/api/v1/studio/images?filename=raw.png", s.Tok, stPNG(t, 5, 7), "Content-Type", "image/png")
	if raw.Status != 201 || raw.Data()["height"] != float64(7) {
		t.Fatalf("raw upload: %d %s", raw.Status, raw.Body)
	}
	img := s.Call("GET", fmt.Sprintf("/studio/images/%d", int64(raw.Data()["id"].(float64))), viewer, nil)
	if img.Status != 200 || img.Header.Get("Content-Type") != "image/png" || img.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("image file: %d %v", img.Status, img.Header)
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM files WHERE area = 'studio'`); n != 2 {
		t.Fatalf("%d studio files", n)
	}
	r = s.Call("GET", "/studio/variables", viewer, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"name":"code"`) {
		t.Fatalf("variables: %s", r.Body)
	}
	// Bulk delete.
	r = s.Call("POST", "/studio/designs/bulk-delete", s.Tok, map[string]any{"ids": []int64{id, foreign}})
	if r.Status != 200 || len(r.Data()["updated"].([]any)) != 1 || len(r.Data()["failed"].([]any)) != 1 {
		t.Fatalf("bulk: %s", r.Body)
	}
}

func TestStudioStoreHTTP(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	s.Tenant("beta")
	beta := s.Owner("beta")
	d := stDesign(t, s.Kit, "acme", s.Tok, "Blue voucher")
	id := int64(d["id"].(float64))
	// Thumbnail: a PNG with an ETag; the same tag answers 304.
	th := s.Call("GET", fmt.Sprintf("/studio/designs/%d/thumbnail", id), s.Tok, nil)
	if th.Status != 200 || th.Header.Get("Content-Type") != "image/png" || th.Header.Get("ETag") == "" {
		t.Fatalf("thumbnail: %d %v", th.Status, th.Header)
	}
	if _, err := png.Decode(bytes.NewReader(th.Body)); err != nil {
		t.Fatalf("thumbnail is not a PNG: %v", err)
	}
	nm := s.Do("GET", "acme", fmt.Sprintf("/api/v1/studio/designs/%d/thumbnail", id), s.Tok, nil, "If-None-Match", th.Header.Get("ETag"))
	if nm.Status != 304 || len(nm.Body) != 0 {
		t.Fatalf("If-None-Match: %d", nm.Status)
	}
	r := s.Call("POST", "/studio/store", s.Tok, map[string]any{"design_id": id, "publisher_name": "Studio Nine", "description": "A blue card"})
	if r.Status != 201 {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	item := int64(r.Data()["id"].(float64))
	// Another tenant's list: meta.cached and cached_at, no tenant data.
	r = s.Do("GET", "beta", "/api/v1/studio/store?q=blue", beta, nil)
	if r.Status != 200 || len(r.List()) != 1 {
		t.Fatalf("store list: %d %s", r.Status, r.Body)
	}
	if r.Meta()["cached"] != true || r.Meta()["cached_at"] == nil || r.Meta()["total"] != float64(1) {
		t.Fatalf("meta: %v", r.Meta())
	}
	for _, path := range []string{"/api/v1/studio/store", fmt.Sprintf("/api/v1/studio/store/%d", item)} {
		body := strings.ToLower(string(s.Do("GET", "beta", path, beta, nil).Body))
		for _, leak := range []string{"acme", "owner", "tenant_id", "manager"} {
			if strings.Contains(body, leak) {
				t.Fatalf("%s leaks %q: %s", path, leak, body)
			}
		}
	}
	st := s.Do("GET", "beta", fmt.Sprintf("/api/v1/studio/store/%d/thumbnail", item), beta, nil)
	if st.Status != 200 || st.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("store thumbnail: %d", st.Status)
	}
	// Star (idempotent), review, comment, import.
	for i := 0; i < 2; i++ {
		r = s.Do("POST", "beta", fmt.Sprintf("/api/v1/studio/store/%d/star", item), beta, nil)
		if r.Status != 200 || r.Data()["stars"] != float64(1) {
			t.Fatalf("star: %s", r.Body)
		}
	}
	r = s.Do("POST", "beta", fmt.Sprintf("/api/v1/studio/store/%d/reviews", item), beta, map[string]any{"stars": 0, "text": "x"})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "review_stars_out_of_range")
	r = s.Do("POST", "beta", fmt.Sprintf("/api/v1/studio/store/%d/reviews", item), beta, map[string]any{"stars": 4, "text": "Good"})
	if r.Status != 200 {
		t.Fatalf("review: %s", r.Body)
	}
	r = s.Do("GET", "acme", fmt.Sprintf("/api/v1/studio/store/%d/reviews", item), s.Tok, nil)
	if r.Status != 200 || r.Meta()["aggregates"].(map[string]any)["average"] != float64(4) {
		t.Fatalf("reviews: %s", r.Body)
	}
	r = s.Do("POST", "beta", fmt.Sprintf("/api/v1/studio/store/%d/comments", item), beta, map[string]any{"text": strings.Repeat("a", 1001)})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "text_too_long")
	r = s.Do("POST", "beta", fmt.Sprintf("/api/v1/studio/store/%d/comments", item), beta, map[string]any{"text": "<script>x</script>"})
	if r.Status != 201 || r.Data()["text"] != "<script>x</script>" {
		t.Fatalf("comment kept as text: %s", r.Body)
	}
	r = s.Do("POST", "beta", fmt.Sprintf("/api/v1/studio/store/%d/import", item), beta, map[string]any{})
	if r.Status != 201 || r.Data()["version"] != float64(1) || r.Data()["name"] != "Blue voucher" {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	// Unpublish: beta may not; acme may.
	r = s.Do("DELETE", "beta", fmt.Sprintf("/api/v1/studio/store/%d", item), beta, nil)
	webtest.ExpectErr(t, r, 403, "ERR_FORBIDDEN", "store_not_publisher")
	r = s.Call("DELETE", fmt.Sprintf("/studio/store/%d", item), s.Tok, nil)
	if r.Status != 200 {
		t.Fatalf("unpublish: %s", r.Body)
	}
	r = s.Do("GET", "beta", "/api/v1/studio/store", beta, nil)
	if len(r.List()) != 0 {
		t.Fatalf("still listed: %s", r.Body)
	}
	r = s.Do("GET", "beta", "/api/v1/studio/designs", beta, nil)
	if len(r.List()) != 1 {
		t.Fatalf("imported copy gone: %s", r.Body)
	}
}

// BenchmarkStudioThumbnailHTTP is GET /api/v1/studio/designs/{id}/thumbnail
// by the owner over real HTTP once the thumbnail is cached (authentication,
// the version lookup, the LRU hit and the PNG bytes written).
//
//	go test ./web -run '^$' -bench BenchmarkStudioThumbnailHTTP -benchtime 500x
func BenchmarkStudioThumbnailHTTP(b *testing.B) {
	k := webtest.New(b)
	tok := k.Owner("acme")
	r := k.Do("POST", "acme", "/api/v1/studio/designs", tok, map[string]any{"name": "Bench", "kind": "card_sheet"})
	if r.Status != 201 {
		b.Fatalf("create: %d %s", r.Status, r.Body)
	}
	path := fmt.Sprintf("/api/v1/studio/designs/%d/thumbnail", int64(r.Data()["id"].(float64)))
	if r := k.Do("GET", "acme", path, tok, nil); r.Status != 200 {
		b.Fatalf("thumbnail: %d", r.Status)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := k.Do("GET", "acme", path, tok, nil); r.Status != 200 || len(r.Body) == 0 {
			b.Fatalf("thumbnail: %d", r.Status)
		}
	}
}
