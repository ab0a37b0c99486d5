package studio

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/app/studio/render"
	"xr/internal/xrtest"
)

var ctx = context.Background()

// testPNG is a w×h PNG; with text set it carries a tEXt chunk (metadata a
// published copy must not keep).
func testPNG(t testing.TB, w, h int, text string) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		for y := 0; y < h; y++ {
			img.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 5), 200, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	out := b.Bytes()
	if text == "" {
		return out
	}
	// Insert a tEXt chunk right after IHDR (8-byte signature + 25-byte IHDR chunk).
	data := append([]byte("Author\x00"), text...)
	chunk := make([]byte, 8, 12+len(data))
	binary.BigEndian.PutUint32(chunk, uint32(len(data)))
	copy(chunk[4:], "tEXt")
	chunk = append(chunk, data...)
	crc := crc32.ChecksumIEEE(chunk[4:])
	chunk = binary.BigEndian.AppendUint32(chunk, crc)
	at := 8 + 25
	return append(append(append([]byte{}, out[:at]...), chunk...), out[at:]...)
}

type env struct {
	a        *app.App
	t1, t2   *app.Tenant
	sys1     *app.Actor
	sys2     *app.Actor
	tenant1N string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	a := xrtest.App(t, Module)
	xrtest.CreateTenant(t, a, app.NewTenant{Slug: "acme", Name: "Acme Secret Networks"})
	xrtest.CreateTenant(t, a, app.NewTenant{Slug: "beta", Name: "Beta Fibre"})
	e := &env{a: a, t1: xrtest.Acquire(t, a, "acme"), t2: xrtest.Acquire(t, a, "beta"), tenant1N: "Acme Secret Networks"}
	e.sys1, e.sys2 = xrtest.System(t, e.t1), xrtest.System(t, e.t2)
	return e
}

// cardWithImage is a card_sheet design with one text and one image element.
func cardWithImage(imageID string) *render.Design {
	d := render.DefaultDesign(render.KindCardSheet)
	d.Elements = []render.Element{
		{Type: "text", X: 2, Y: 2, W: 40, H: 8, Text: "Code {code}", FontSize: 10},
		{Type: "image", X: 50, Y: 2, W: 20, H: 20, ImageID: imageID},
	}
	return d
}

func upload(t *testing.T, act *app.Actor, name string, b []byte) *Image {
	t.Helper()
	im, err := UploadImage(ctx, act, name, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("upload %s: %v", name, err)
	}
	return im
}

func TestDesignVersioning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d, err := Create(ctx, e.sys1, CreateInput{Name: "Cards", Kind: render.KindCardSheet})
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != 1 || d.Doc == nil || len(d.Doc.Elements) == 0 {
		t.Fatalf("created %+v", d)
	}
	// A stale version writes nothing.
	_, err = Patch(ctx, e.sys1, d.ID, PatchInput{Version: 2, Name: app.Opt[string]{Set: true, V: "Renamed"}})
	xrtest.WantError(t, err, 409, app.CodeConflict, "design_version_stale")
	if got := xrtest.Scalar(t, e.t1, `SELECT COUNT(*) FROM designs WHERE name = 'Cards' AND version = 1`); got != 1 {
		t.Fatalf("stale patch wrote")
	}
	d2, err := Patch(ctx, e.sys1, d.ID, PatchInput{Version: 1, Name: app.Opt[string]{Set: true, V: "Renamed"}, IsDefault: app.Opt[bool]{Set: true, V: true}})
	if err != nil || d2.Version != 2 || d2.Name != "Renamed" || !d2.IsDefault {
		t.Fatalf("patch: %+v %v", d2, err)
	}
	// One default per kind: a second default takes it over.
	d3, err := Create(ctx, e.sys1, CreateInput{Name: "Other", Kind: render.KindCardSheet, IsDefault: true})
	if err != nil || !d3.IsDefault {
		t.Fatalf("second default: %v", err)
	}
	if n := xrtest.Scalar(t, e.t1, `SELECT COUNT(*) FROM designs WHERE is_default = 1 AND kind = 'card_sheet'`); n != 1 {
		t.Fatalf("%d defaults", n)
	}
	xrtest.WantError(t, Delete(ctx, e.sys1, d.ID, "1"), 409, app.CodeConflict, "design_version_stale")
	if err := Delete(ctx, e.sys1, d.ID, "2"); err != nil {
		t.Fatal(err)
	}
	if n := xrtest.Scalar(t, e.t1, `SELECT COUNT(*) FROM designs WHERE id = ?`, d.ID); n != 0 {
		t.Fatal("not deleted")
	}
	// Another tenant's design is not found.
	_, err = Get(ctx, e.sys2, d3.ID)
	xrtest.WantError(t, err, 404, app.CodeNotFound, "not_found")
}

func TestDesignValidationNamesTheElement(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := cardWithImage("")
	d.Elements = d.Elements[:1]
	d.Elements = append(d.Elements, render.Element{Type: "text", X: 2, Y: 20, W: 40, H: 8, Text: "{nope}"})
	_, err := Create(ctx, e.sys1, CreateInput{Name: "Bad", Kind: render.KindCardSheet, Doc: d})
	ae := xrtest.WantError(t, err, 400, app.CodeValidation, "design_variable_unknown")
	if ae.Details["element"] != 1 || ae.Details["variable"] != "nope" {
		t.Fatalf("details %v", ae.Details)
	}
	// An image element must name one of the tenant's images.
	other := upload(t, e.sys2, "logo.png", testPNG(t, 8, 8, ""))
	_, err = Create(ctx, e.sys1, CreateInput{Name: "Img", Kind: render.KindCardSheet, Doc: cardWithImage(strconv.FormatInt(other.ID+100, 10))})
	ae = xrtest.WantError(t, err, 400, app.CodeValidation, "design_image_unknown")
	if ae.Field != "elements[1].image_id" {
		t.Fatalf("field %v", ae.Details)
	}
	if n := xrtest.Scalar(t, e.t1, `SELECT COUNT(*) FROM designs`); n != 0 {
		t.Fatalf("%d designs stored", n)
	}
}

func TestImagesTypeAndSize(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var g bytes.Buffer
	if err := gif.Encode(&g, image.NewPaletted(image.Rect(0, 0, 4, 4), []color.Color{color.Black, color.White}), nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		body   []byte
		reason string
	}{
		{"a.gif", g.Bytes(), "file_type_not_allowed"},
		{"a.txt", []byte("hello"), "file_type_not_allowed"},
		{"a.html", []byte("<html><script>alert(1)</script>"), "file_type_not_allowed"},
		{"a.png", append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 40)...), "image_unreadable"},
		{"big.png", testPNG(t, MaxImageSide+1, 1, ""), "image_dimensions_too_large"},
	} {
		_, err := UploadImage(ctx, e.sys1, c.name, bytes.NewReader(c.body))
		xrtest.WantError(t, err, 400, app.CodeValidation, c.reason)
	}
	if n := xrtest.Scalar(t, e.t1, `SELECT COUNT(*) FROM files`); n != 0 {
		t.Fatalf("%d files kept", n)
	}
	im := upload(t, e.sys1, "logo.png", testPNG(t, 30, 20, ""))
	if im.Width != 30 || im.Height != 20 || im.ContentType != "image/png" {
		t.Fatalf("%+v", im)
	}
	d, err := Create(ctx, e.sys1, CreateInput{Name: "Img", Kind: render.KindCardSheet, Doc: cardWithImage(strconv.FormatInt(im.ID, 10))})
	if err != nil {
		t.Fatal(err)
	}
	xrtest.WantError(t, DeleteImage(ctx, e.sys1, im.ID), 409, app.CodeConflict, "design_image_in_use")
	if err := Delete(ctx, e.sys1, d.ID, strconv.FormatInt(d.Version, 10)); err != nil {
		t.Fatal(err)
	}
	if err := DeleteImage(ctx, e.sys1, im.ID); err != nil {
		t.Fatal(err)
	}
	if n := xrtest.Scalar(t, e.t1, `SELECT COUNT(*) FROM files`); n != 0 {
		t.Fatalf("file row kept")
	}
}

func TestDesignForPrint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	got, imgs, err := DesignForPrint(ctx, e.t1, e.t1.DB.R, nil, render.KindCardSheet)
	if err != nil || len(imgs) != 0 || len(got.Elements) != len(render.DefaultDesign(render.KindCardSheet).Elements) {
		t.Fatalf("built-in: %v", err)
	}
	im := upload(t, e.sys1, "logo.png", testPNG(t, 10, 10, ""))
	ref := strconv.FormatInt(im.ID, 10)
	chosen, err := Create(ctx, e.sys1, CreateInput{Name: "Chosen", Kind: render.KindCardSheet, Doc: cardWithImage(ref)})
	if err != nil {
		t.Fatal(err)
	}
	def := render.DefaultDesign(render.KindCardSheet)
	def.Elements = def.Elements[:1]
	if _, err := Create(ctx, e.sys1, CreateInput{Name: "Default", Kind: render.KindCardSheet, Doc: def, IsDefault: true}); err != nil {
		t.Fatal(err)
	}
	got, imgs, err = DesignForPrint(ctx, e.t1, e.t1.DB.R, &chosen.ID, render.KindCardSheet)
	if err != nil || len(got.Elements) != 2 || len(imgs[ref]) == 0 {
		t.Fatalf("chosen: %d elements, %d images, %v", len(got.Elements), len(imgs), err)
	}
	// Another kind, or an id of no design: the tenant's default.
	missing := chosen.ID + 50
	for _, id := range []*int64{nil, &missing} {
		got, _, err = DesignForPrint(ctx, e.t1, e.t1.DB.R, id, render.KindCardSheet)
		if err != nil || len(got.Elements) != 1 {
			t.Fatalf("default: %v", err)
		}
	}
	got, _, err = DesignForPrint(ctx, e.t1, e.t1.DB.R, &chosen.ID, render.KindReceipt)
	if err != nil || got.Kind != render.KindReceipt {
		t.Fatalf("receipt: %v", err)
	}
	// Inside a transaction too.
	err = e.t1.Read(ctx, func(tx *sql.Tx) error {
		_, imgs, err := DesignForPrint(ctx, e.t1, tx, &chosen.ID, render.KindCardSheet)
		if err == nil && len(imgs) != 1 {
			t.Errorf("images in tx: %d", len(imgs))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStoreIsolationAndImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	im := upload(t, e.sys1, "logo.png", testPNG(t, 16, 16, "Secret Owner of acme"))
	ref := strconv.FormatInt(im.ID, 10)
	d, err := Create(ctx, e.sys1, CreateInput{Name: "Voucher", Kind: render.KindCardSheet, Doc: cardWithImage(ref)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Publish(ctx, e.sys1, PublishInput{DesignID: d.ID})
	xrtest.WantError(t, err, 400, app.CodeValidation, "required")
	_, err = Publish(ctx, e.sys2, PublishInput{DesignID: d.ID, Publisher: "B"})
	xrtest.WantError(t, err, 400, app.CodeValidation, "design_not_found")
	it, err := Publish(ctx, e.sys1, PublishInput{DesignID: d.ID, Publisher: "Studio Nine", Description: "Blue card"})
	if err != nil {
		t.Fatal(err)
	}
	// The stored image is a re-encoded copy: no tEXt chunk.
	var blob []byte
	if err := e.a.Inst.R.QueryRow(`SELECT data FROM store_images WHERE item_id = ?`, it.ID).Scan(&blob); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(blob, []byte("Secret Owner")) || bytes.Contains(blob, []byte("tEXt")) {
		t.Fatal("published image kept its metadata")
	}
	var doc string
	if err := e.a.Inst.R.QueryRow(`SELECT doc FROM store_items WHERE id = ?`, it.ID).Scan(&doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, `"image_id":"1"`) {
		t.Fatalf("snapshot image ids not local: %s", doc)
	}
	// What another tenant sees carries nothing of the publisher's tenant.
	seen, err := GetStoreItem(ctx, e.sys2, it.ID)
	if err != nil {
		t.Fatal(err)
	}
	page, err := ListStore(ctx, e.sys2, mustList(t, StoreListSpec, ""))
	if err != nil || len(page.Rows) != 1 {
		t.Fatalf("list: %v %d", err, len(page.Rows))
	}
	for _, v := range []any{seen, page.Rows} {
		b, _ := json.Marshal(v)
		for _, leak := range []string{"acme", e.tenant1N, "tenant", "owner", "Secret Owner"} {
			if strings.Contains(strings.ToLower(string(b)), strings.ToLower(leak)) {
				t.Fatalf("store answer leaks %q: %s", leak, b)
			}
		}
	}
	if seen.Mine || page.Rows[0].Mine || page.Rows[0].Publisher != "Studio Nine" {
		t.Fatalf("mine for another tenant")
	}
	// Import into beta: an independent copy with its own image.
	cp, err := Import(ctx, e.sys2, it.ID, ImportInput{})
	if err != nil {
		t.Fatal(err)
	}
	if cp.Version != 1 || cp.Name != "Voucher" || cp.Doc.Elements[1].ImageID == "" {
		t.Fatalf("import %+v", cp)
	}
	newRef := cp.Doc.Elements[1].ImageID
	if n := xrtest.Scalar(t, e.t2, `SELECT COUNT(*) FROM design_images WHERE id = ?`, newRef); n != 1 {
		t.Fatal("imported image not in beta's images")
	}
	// Changing the original changes neither the snapshot nor the copy.
	od := cardWithImage(ref)
	od.Elements[0].Text = "Changed {serial}"
	if _, err := Patch(ctx, e.sys1, d.ID, PatchInput{Version: 1, Doc: app.Opt[render.Design]{Set: true, V: *od}}); err != nil {
		t.Fatal(err)
	}
	again, _ := GetStoreItem(ctx, e.sys2, it.ID)
	mine, _ := Get(ctx, e.sys2, cp.ID)
	if again.Doc.Elements[0].Text != "Code {code}" || mine.Doc.Elements[0].Text != "Code {code}" {
		t.Fatal("snapshot or copy followed the original")
	}
	// Changing the copy leaves the snapshot as published.
	cd := *mine.Doc
	cd.Elements = append([]render.Element(nil), mine.Doc.Elements...)
	cd.Elements[0].Text = "Copy {plan}"
	if _, err := Patch(ctx, e.sys2, cp.ID, PatchInput{Version: 1, Doc: app.Opt[render.Design]{Set: true, V: cd}}); err != nil {
		t.Fatal(err)
	}
	if again, _ = GetStoreItem(ctx, e.sys1, it.ID); again.Doc.Elements[0].Text != "Code {code}" {
		t.Fatal("the snapshot followed the copy")
	}
	// Unpublish: only the publisher; the copy stays usable.
	xrtest.WantError(t, Unpublish(ctx, e.sys2, it.ID), 403, app.CodeForbidden, "store_not_publisher")
	if err := Unpublish(ctx, e.sys1, it.ID); err != nil {
		t.Fatal(err)
	}
	if _, imgs, err := DesignForPrint(ctx, e.t2, e.t2.DB.R, &cp.ID, render.KindCardSheet); err != nil || len(imgs[newRef]) == 0 {
		t.Fatalf("copy after unpublish: %v", err)
	}
	_, err = GetStoreItem(ctx, e.sys2, it.ID)
	xrtest.WantError(t, err, 404, app.CodeNotFound, "not_found")
}

func mustList(t *testing.T, spec app.ListSpec, query string) app.ListQuery {
	t.Helper()
	v, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	q, err := app.ParseList(v, spec)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestStoreSocialAndCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	e.a.SetClock(func() time.Time { return now })
	d, err := Create(ctx, e.sys1, CreateInput{Name: "Receipt", Kind: render.KindReceipt})
	if err != nil {
		t.Fatal(err)
	}
	it, err := Publish(ctx, e.sys1, PublishInput{DesignID: d.ID, Publisher: "P"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ListStore(ctx, e.sys2, mustList(t, StoreListSpec, ""))
	if err != nil || !*p.Meta.Cached || !p.Meta.CachedAt.Equal(now) || len(p.Rows) != 1 || p.Rows[0].Stars != 0 {
		t.Fatalf("after publish: %+v %v", p, err)
	}
	// Star twice: once.
	for i := 0; i < 2; i++ {
		s, err := Star(ctx, e.sys2, it.ID)
		if err != nil || !s.Starred || s.Stars != 1 {
			t.Fatalf("star: %+v %v", s, err)
		}
	}
	// The list is the cache: the star shows once it is rebuilt.
	p, _ = ListStore(ctx, e.sys2, mustList(t, StoreListSpec, ""))
	if !*p.Meta.Cached || p.Rows[0].Stars != 0 || !p.Rows[0].Starred {
		t.Fatalf("cached: %+v", p)
	}
	now = now.Add(StoreCacheTTL)
	p, _ = ListStore(ctx, e.sys2, mustList(t, StoreListSpec, ""))
	if *p.Meta.Cached || !p.Meta.CachedAt.Equal(now) || p.Rows[0].Stars != 1 {
		t.Fatalf("rebuilt: %+v", p)
	}
	// Reviews: 1..5, one per tenant, posting again edits it.
	_, err = PostReview(ctx, e.sys2, it.ID, ReviewInput{Stars: 6})
	xrtest.WantError(t, err, 400, app.CodeValidation, "review_stars_out_of_range")
	if _, err := PostReview(ctx, e.sys2, it.ID, ReviewInput{Stars: 2, Text: "meh"}); err != nil {
		t.Fatal(err)
	}
	if _, err := PostReview(ctx, e.sys2, it.ID, ReviewInput{Stars: 4, Text: "better"}); err != nil {
		t.Fatal(err)
	}
	if _, err := PostReview(ctx, e.sys1, it.ID, ReviewInput{Stars: 5}); err != nil {
		t.Fatal(err)
	}
	rv, err := Reviews(ctx, e.sys2, it.ID, mustList(t, ReviewListSpec, ""))
	if err != nil || len(rv.Rows) != 2 {
		t.Fatalf("reviews %v %d", err, len(rv.Rows))
	}
	if agg := rv.Meta.Aggregates.(map[string]any); agg["average"] != 4.5 || agg["count"] != int64(2) {
		t.Fatalf("aggregates %v", agg)
	}
	// Comments: text only, bounded, no control characters.
	_, err = AddComment(ctx, e.sys2, it.ID, CommentInput{Text: strings.Repeat("x", MaxCommentLen+1)})
	xrtest.WantError(t, err, 400, app.CodeValidation, "text_too_long")
	_, err = AddComment(ctx, e.sys2, it.ID, CommentInput{Text: "bell\x07"})
	xrtest.WantError(t, err, 400, app.CodeValidation, "text_control_characters")
	c, err := AddComment(ctx, e.sys2, it.ID, CommentInput{Text: "<b>nice</b>\nthanks", Author: "Bea"})
	if err != nil || c.Text != "<b>nice</b>\nthanks" {
		t.Fatalf("comment %+v %v", c, err)
	}
	cs, err := Comments(ctx, e.sys1, it.ID, mustList(t, CommentListSpec, ""))
	if err != nil || len(cs.Rows) != 1 || cs.Rows[0].Mine || cs.Rows[0].Author != "Bea" {
		t.Fatalf("comments %+v %v", cs, err)
	}
	// Hide: out of beta's list only.
	if _, err := Hide(ctx, e.sys2, it.ID); err != nil {
		t.Fatal(err)
	}
	p, _ = ListStore(ctx, e.sys2, mustList(t, StoreListSpec, ""))
	h, _ := ListStore(ctx, e.sys2, mustList(t, StoreListSpec, "filter[hidden]=true"))
	o, _ := ListStore(ctx, e.sys1, mustList(t, StoreListSpec, ""))
	if len(p.Rows) != 0 || len(h.Rows) != 1 || len(o.Rows) != 1 || !o.Rows[0].Mine {
		t.Fatalf("hide: %d %d %d", len(p.Rows), len(h.Rows), len(o.Rows))
	}
	if _, err := Unhide(ctx, e.sys2, it.ID); err != nil {
		t.Fatal(err)
	}
	if p, _ = ListStore(ctx, e.sys2, mustList(t, StoreListSpec, "")); len(p.Rows) != 1 {
		t.Fatal("unhide")
	}
}

func TestThumbnailCachedByVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d, err := Create(ctx, e.sys1, CreateInput{Name: "T", Kind: render.KindCardSheet})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Thumbnail(ctx, e.sys1, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(a.PNG)); err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	b, _ := Thumbnail(ctx, e.sys1, d.ID)
	if b.ETag != a.ETag || &b.PNG[0] != &a.PNG[0] {
		t.Fatal("second thumbnail not from the cache")
	}
	if _, err := Patch(ctx, e.sys1, d.ID, PatchInput{Version: 1, Name: app.Opt[string]{Set: true, V: "T2"}}); err != nil {
		t.Fatal(err)
	}
	c, _ := Thumbnail(ctx, e.sys1, d.ID)
	if c.ETag == a.ETag {
		t.Fatal("etag kept after a change")
	}
}

// BenchmarkThumbnailCached: a thumbnail already rendered (the version
// lookup and the LRU hit).
func BenchmarkThumbnailCached(b *testing.B) {
	a := xrtest.TenantApp(b, "acme", Module)
	ten := xrtest.Acquire(b, a, "acme")
	sys := xrtest.System(b, ten)
	d, err := Create(ctx, sys, CreateInput{Name: "T", Kind: render.KindCardSheet})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Thumbnail(ctx, sys, d.ID); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Thumbnail(ctx, sys, d.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkThumbnailCold renders the default card design each time.
func BenchmarkThumbnailCold(b *testing.B) {
	d := render.DefaultDesign(render.KindCardSheet)
	for i := 0; i < b.N; i++ {
		if _, err := renderPNG(d, render.Images{}); err != nil {
			b.Fatal(err)
		}
	}
}
