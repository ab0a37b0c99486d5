package render

import (
	"bytes"
	"encoding/binary"
	"flag"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-text/typesetting/font"

	"xr/internal/xrtest"
)

var update = flag.Bool("update", false, "rewrite the golden PNGs under testdata/")

// Goldens: the default design of each kind (and a card with Arabic and
// Cyrillic names) rendered at 400 px, compared pixel by pixel with a
// tolerance: antialiasing may move by a step between library versions,
// a moved or missing element may not.
func TestGoldenPNG(t *testing.T) {
	type golden struct {
		name string
		d    *Design
		v    Vars
	}
	var cases []golden
	for _, k := range Kinds() {
		cases = append(cases, golden{k, DefaultDesign(k), SampleVars(k)})
	}
	ar := SampleVars(KindCardSheet)
	ar["tenant_name"] = "شبكة محمد علي"
	ar["plan"] = "Иван Петров — тариф 10"
	ar["username"] = "محمد 123 علي"
	cases = append(cases, golden{"card_sheet_arabic_cyrillic", DefaultDesign(KindCardSheet), ar})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := PNG(c.d, c.v, nil, 400)
			if err != nil {
				t.Fatal(err)
			}
			got, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", c.name+".png")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			f, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (regenerate with go test ./app/studio/render -run TestGoldenPNG -update)", err)
			}
			want, err := png.Decode(bytes.NewReader(f))
			if err != nil {
				t.Fatal(err)
			}
			if got.Bounds() != want.Bounds() {
				t.Fatalf("size %v, golden %v", got.Bounds(), want.Bounds())
			}
			// at most 0.02 % of the pixels may differ by more than 48 on a
			// channel, and the mean difference stays under 0.5
			var far, total int
			var sum float64
			r := got.Bounds()
			for y := r.Min.Y; y < r.Max.Y; y++ {
				for x := r.Min.X; x < r.Max.X; x++ {
					d := pixelDiff(got.At(x, y), want.At(x, y))
					sum += float64(d)
					if d > 48 {
						far++
					}
					total++
				}
			}
			if far*5000 > total || sum/float64(total) > 0.5 {
				t.Fatalf("%d of %d pixels differ, mean difference %.2f (look at the render; if right, -update)", far, total, sum/float64(total))
			}
		})
	}
}

func pixelDiff(a, b color.Color) uint32 {
	r1, g1, b1, _ := a.RGBA()
	r2, g2, b2, _ := b.RGBA()
	d := func(x, y uint32) uint32 {
		if x > y {
			return (x - y) >> 8
		}
		return (y - x) >> 8
	}
	return max(d(r1, r2), d(g1, g2), d(b1, b2))
}

// Arabic is shaped (joined forms, not the isolated letters) and laid out
// right to left; a mixed line keeps its left-to-right words in place.
func TestShapingArabicAndBidi(t *testing.T) {
	if err := loadFonts(); err != nil {
		t.Fatal(err)
	}
	l := regular.shape("محمد", 0)
	if !l.rtl || len(l.glyphs) != 4 {
		t.Fatalf("shape(محمد) = %+v", l)
	}
	// visual order: the last letter (dal) is leftmost, meem rightmost
	if l.glyphs[0].text != "د" || l.glyphs[3].text != "م" {
		t.Fatalf("visual order %q … %q", l.glyphs[0].text, l.glyphs[3].text)
	}
	// joined: the initial meem is not the isolated meem of the cmap
	textMu.Lock()
	iso, _ := regular.face.NominalGlyph('م')
	textMu.Unlock()
	if l.glyphs[3].gid == iso {
		t.Fatal("meem was not joined (isolated form drawn)")
	}
	for i := 1; i < len(l.glyphs); i++ {
		if l.glyphs[i].dx <= l.glyphs[i-1].dx {
			t.Fatalf("glyphs not laid out left to right: %+v", l.glyphs)
		}
	}

	m := regular.shape("Card 123 محمد علي ok", 0)
	if m.rtl {
		t.Fatal("a line starting with Latin is left to right")
	}
	var vis strings.Builder
	for _, g := range m.glyphs {
		vis.WriteString(g.text)
	}
	// the Arabic words swap places and each is reversed; the rest stays
	if got, want := vis.String(), "Card 123 يلع دمحم ok"; got != want {
		t.Fatalf("visual order %q, want %q", got, want)
	}
	if c := regular.shape("Иван", 0); c.rtl || len(c.glyphs) != 4 || c.glyphs[0].text != "И" {
		t.Fatalf("Cyrillic: %+v", c)
	}
}

func TestPNGSizeAndElements(t *testing.T) {
	d := &Design{
		Kind:       KindHotspotPage,
		Page:       Size{Width: 100, Height: 50},
		Background: "#ffffff",
		Elements: []Element{
			{Type: "image", X: 0, Y: 0, W: 20, H: 20, ImageID: "logo"},
			{Type: "barcode", X: 25, Y: 0, W: 40, H: 10, Value: "{support_phone}"},
			{Type: "barcode", X: 25, Y: 15, W: 40, H: 10, Value: "4006381333931", Symbology: "ean13"},
			{Type: "barcode", X: 25, Y: 30, W: 40, H: 10, Value: "not digits", Symbology: "ean13"},
			{Type: "rect", X: 70, Y: 5, W: 20, H: 10, Fill: "#ff0000", Stroke: "#0000ff", StrokeWidth: 1, Radius: 2},
			{Type: "line", X: 70, Y: 40, X2: 95, Y2: 40, Stroke: "#00ff00", StrokeWidth: 2},
			{Type: "image", X: 0, Y: 25, W: 20, H: 20, ImageID: "missing"},
		},
	}
	logo := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range logo.Pix {
		logo.Pix[i] = 0xff
		if i%4 == 1 || i%4 == 2 {
			logo.Pix[i] = 0 // red
		}
	}
	var lb bytes.Buffer
	if err := png.Encode(&lb, logo); err != nil {
		t.Fatal(err)
	}
	img, err := Raster(d, SampleVars(KindHotspotPage), Images{"logo": lb.Bytes()}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1000 || b.Dy() != 500 {
		t.Fatalf("bounds %v, want 1000×500 (10 px/mm)", b)
	}
	at := func(xmm, ymm float64) color.RGBA { return img.RGBAAt(int(xmm*10), int(ymm*10)) }
	if c := at(10, 10); c != (color.RGBA{0xff, 0, 0, 0xff}) {
		t.Fatalf("image pixel %v, want red", c)
	}
	if c := at(80, 10); c != (color.RGBA{0xff, 0, 0, 0xff}) {
		t.Fatalf("rect fill %v, want red", c)
	}
	if c := at(70, 10); c.B < 0xf0 || c.R > 0x10 {
		t.Fatalf("rect stroke %v, want blue", c)
	}
	if c := at(80, 40); c.G < 0xf0 || c.R > 0x10 {
		t.Fatalf("line %v, want green", c)
	}
	if c := at(10, 35); c != (color.RGBA{0xdd, 0xdd, 0xdd, 0xff}) {
		t.Fatalf("a missing image draws a grey placeholder, got %v", c)
	}
	darkIn := func(y0, y1 float64) int {
		n := 0
		for x := 250; x < 650; x++ {
			for y := int(y0 * 10); y < int(y1*10); y++ {
				if img.RGBAAt(x, y).R < 0x80 {
					n++
				}
			}
		}
		return n
	}
	if darkIn(0, 10) == 0 || darkIn(15, 25) == 0 {
		t.Fatal("code128 or ean13 drew nothing")
	}
	if darkIn(30, 40) != 0 {
		t.Fatal("an EAN-13 of letters cannot be encoded: nothing is drawn")
	}

	// the longer side is maxPx, whatever the orientation; defaults and caps
	for _, c := range []struct{ max, w, h int }{{0, DefaultMaxPx, DefaultMaxPx / 2}, {64, 64, 32}, {99999, MaxPx, MaxPx / 2}} {
		b, err := PNG(d, nil, nil, c.max)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != c.w || cfg.Height != c.h {
			t.Fatalf("maxPx %d: %dx%d %v, want %dx%d", c.max, cfg.Width, cfg.Height, err, c.w, c.h)
		}
	}
	bad := DefaultDesign(KindCardSheet)
	bad.Elements[0].Stroke = "blue"
	if _, err := PNG(bad, nil, nil, 100); err == nil {
		t.Fatal("PNG of an invalid design must fail")
	}
}

// The subset keeps the glyph ids: used glyphs keep their outlines,
// others are empty, and the font still parses.
func TestSubsetKeepsUsedGlyphs(t *testing.T) {
	if err := loadFonts(); err != nil {
		t.Fatal(err)
	}
	textMu.Lock()
	a, _ := regular.face.NominalGlyph('A')
	z, _ := regular.face.NominalGlyph('Z')
	textMu.Unlock()
	sub, err := subsetTrueType(regular.data, []int{int(a)})
	if err != nil {
		t.Fatal(err)
	}
	if len(sub) > len(regular.data)/4 {
		t.Fatalf("subset of one glyph is %d bytes of %d", len(sub), len(regular.data))
	}
	tables, err := sfntTables(sub)
	if err != nil {
		t.Fatal(err)
	}
	loca := tables["loca"] // long offsets
	size := func(g font.GID) uint32 {
		return binary.BigEndian.Uint32(loca[4*int(g)+4:]) - binary.BigEndian.Uint32(loca[4*int(g):])
	}
	if size(a) == 0 {
		t.Fatal("the used glyph lost its outline")
	}
	if size(z) != 0 {
		t.Fatal("an unused glyph kept its outline")
	}
	if _, ok := tables["hmtx"]; !ok {
		t.Fatal("hmtx dropped")
	}
	if checksum(sub) != 0xB1B0AFBA {
		t.Fatalf("file checksum %x", checksum(sub))
	}
}

func TestSheetTextIsExtractable(t *testing.T) {
	s, err := NewSheet(DefaultDesign(KindCardSheet), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.PerPage() != 10 {
		t.Fatalf("per page %d, want 10 (2×5 cards on A4)", s.PerPage())
	}
	names := []string{"Иван Петров", "محمد علي", "Card 123 محمد علي ok"}
	v := SampleVars(KindCardSheet)
	for i := 0; i < 23; i++ {
		v["tenant_name"] = names[i%3]
		v["code"] = "CODE-" + itoa(1000+i)
		if err := s.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	if s.Cards() != 23 {
		t.Fatalf("Cards() = %d", s.Cards())
	}
	var buf bytes.Buffer
	n, err := s.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo = %d, %v (wrote %d)", n, err, buf.Len())
	}
	pdf := buf.Bytes()
	if got := bytes.Count(pdf, []byte("/Type /Page /Parent")); got != 3 {
		t.Fatalf("%d pages, want 3 for 23 cards", got)
	}
	if !bytes.Contains(pdf, []byte("/CIDFontType2")) || !bytes.Contains(pdf, []byte("/ToUnicode")) {
		t.Fatal("text is not in an embedded CID font with a ToUnicode map")
	}
	if len(pdf) > 600<<10 {
		t.Fatalf("23 cards make %d bytes: is the font subset?", len(pdf))
	}
	text := xrtest.PDFText(t, pdf)
	lines := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, want := range []string{"Иван Петров", "محمد علي", "CODE-1000", "CODE-1022", "Expires 2026-12-31"} {
		if !lines[want] {
			t.Errorf("extracted text lacks the line %q:\n%s", want, text)
		}
	}
	// the mixed line: pdftotext moves a space at the direction change, so
	// compare without spaces; words and letters are in logical order
	mixed := false
	for l := range lines {
		if strings.ReplaceAll(l, " ", "") == "Card123محمدعليok" {
			mixed = true
		}
	}
	if !mixed {
		t.Errorf("extracted text lacks the mixed line:\n%s", text)
	}
	if strings.Contains(text, "?") {
		t.Error("a character was replaced by '?'")
	}
}

func TestSheetEmptyAndImages(t *testing.T) {
	d := DefaultDesign(KindCardSheet)
	d.Elements = append(d.Elements, Element{Type: "image", X: 60, Y: 36, W: 21, H: 10, ImageID: "logo"})
	logo := image.NewNRGBA(image.Rect(0, 0, 4, 2))
	logo.Pix[3] = 0x80 // a translucent pixel: a soft mask
	var lb bytes.Buffer
	if err := png.Encode(&lb, logo); err != nil {
		t.Fatal(err)
	}
	s, err := NewSheet(d, Images{"logo": lb.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.Add(SampleVars(KindCardSheet)); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	// one image object, drawn three times
	if c := bytes.Count(buf.Bytes(), []byte("/Subtype /Image")); c != 2 {
		t.Fatalf("%d image objects, want the image and its soft mask", c)
	}
	text := xrtest.PDFText(t, buf.Bytes())
	if !strings.Contains(text, "Example Net") {
		t.Fatalf("text: %s", text)
	}

	empty, err := NewSheet(DefaultDesign(KindCardSheet), nil)
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if _, err := empty.WriteTo(&buf); err != nil || !bytes.HasPrefix(buf.Bytes(), []byte("%PDF-1.7")) || !bytes.Contains(buf.Bytes(), []byte("/Count 1")) {
		t.Fatalf("an empty sheet is one blank page: %v", err)
	}
	if _, err := NewSheet(DefaultDesign(KindReceipt), nil); err == nil {
		t.Fatal("a receipt design is not a card sheet")
	}
}

// Odd text never breaks a render: empty values, marks alone, tabs and
// control characters, unassigned code points, emoji, a line far too long
// (shrunk to its box).
func TestOddTextRenders(t *testing.T) {
	d := DefaultDesign(KindCardSheet)
	odd := []string{"", " ", "\u064e\u064e", "a\tb\x00c\x07", "\U0010fffd", "😀 ok", "لا إله", strings.Repeat("W", 400), "\u202egnp.exe", "x\u0301\u0301\u0301"}
	for _, s := range odd {
		v := SampleVars(KindCardSheet)
		v["tenant_name"], v["code"], v["qr_payload"] = s, s, s
		if _, err := PNG(d, v, nil, 200); err != nil {
			t.Fatalf("PNG with %q: %v", s, err)
		}
	}
	sh, err := NewSheet(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range odd {
		v := SampleVars(KindCardSheet)
		v["tenant_name"], v["code"], v["qr_payload"] = s, s, s
		if err := sh.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := sh.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	// the long line was shrunk into its 50 mm box
	if err := loadFonts(); err != nil {
		t.Fatal(err)
	}
	items, err := layout(d, Vars{"tenant_name": strings.Repeat("W", 40)}, nil, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.text != nil && strings.HasPrefix(it.text.src, "WWW") {
			if w := it.text.line.width * it.text.size / it.text.f.upem; w > 50.01 {
				t.Fatalf("a too long line is %.1f mm wide in a 50 mm box", w)
			}
		}
	}
}

// Thumbnails are rendered from many requests at once (run with -race).
func TestPNGConcurrent(t *testing.T) {
	done := make(chan error)
	for i := 0; i < 4; i++ {
		go func() {
			v := SampleVars(KindCardSheet)
			v["tenant_name"] = "محمد علي " + itoa(i)
			_, err := PNG(DefaultDesign(KindCardSheet), v, nil, 128)
			done <- err
		}()
	}
	for i := 0; i < 4; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// A large photo is embedded once at 300 dpi of its placement; an image
// that declares more than MaxImagePixels is not decoded (a placeholder).
func TestImagesBounded(t *testing.T) {
	big := image.NewRGBA(image.Rect(0, 0, 2000, 1000))
	var bb bytes.Buffer
	if err := png.Encode(&bb, big); err != nil {
		t.Fatal(err)
	}
	d := DefaultDesign(KindCardSheet)
	d.Elements = append(d.Elements, Element{Type: "image", X: 60, Y: 36, W: 20, H: 10, ImageID: "photo"})
	s, err := NewSheet(d, Images{"photo": bb.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(SampleVars(KindCardSheet)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	// 20 mm at 300 dpi is 237 px
	if !bytes.Contains(buf.Bytes(), []byte("/Width 237 /Height 118")) {
		t.Fatal("the image was not downscaled to 300 dpi of its 20 mm placement")
	}

	// a PNG header claiming 100000×100000 pixels
	var hb bytes.Buffer
	if err := png.Encode(&hb, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	bomb := hb.Bytes()
	binary.BigEndian.PutUint32(bomb[16:], 100000)
	binary.BigEndian.PutUint32(bomb[20:], 100000)
	binary.BigEndian.PutUint32(bomb[29:], crc32.ChecksumIEEE(bomb[12:29]))
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(bomb)); err != nil || cfg.Width != 100000 {
		t.Fatalf("the forged header does not read: %v", err)
	}
	got := decodedImages(d, Images{"photo": bomb})
	if got["photo"] != nil {
		t.Fatal("an image over MaxImagePixels was decoded")
	}
}

// A tab puts the rest of the line at the end edge, mirrored for a
// right-to-left line.
func TestTabbedLines(t *testing.T) {
	d := DefaultDesign(KindReceipt)
	el := d.Elements[8] // {items}: x 4, w 72
	if el.Text != "{items}" {
		t.Fatalf("element 8 is %q", el.Text)
	}
	items, err := layout(d, Vars{"items": "Plan\t20.00\nالباقة\t٢٠"}, nil, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]float64{}
	right := map[string]float64{}
	for _, it := range items {
		if tx := it.text; tx != nil {
			pos[tx.src] = tx.x
			right[tx.src] = tx.x + tx.line.width*tx.size/tx.f.upem
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.01 }
	if !near(pos["Plan"], el.X) || !near(right["20.00"], el.X+el.W) {
		t.Fatalf("LTR: Plan at %.2f, 20.00 ends at %.2f", pos["Plan"], right["20.00"])
	}
	if !near(right["الباقة"], el.X+el.W) || !near(pos["٢٠"], el.X) {
		t.Fatalf("RTL: label ends at %.2f, amount at %.2f", right["الباقة"], pos["٢٠"])
	}
}
