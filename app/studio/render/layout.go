package render

import (
	"bytes"
	"image"
	_ "image/jpeg" // design images may be JPEG
	_ "image/png"  // or PNG
	"math"
	"strings"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/code128"
	"github.com/boombuler/barcode/ean"
	"github.com/boombuler/barcode/qr"
)

// The drawing both renderers share: layout turns a design and its
// variables into a list of items in millimetres (origin top-left, y down);
// raster.go paints them into pixels and pdf.go writes them as PDF operators.

type rgb struct{ r, g, b uint8 }

func parseColor(s string) (rgb, bool) {
	if len(s) != 7 || s[0] != '#' {
		return rgb{}, false
	}
	var v [3]uint8
	for i := 0; i < 3; i++ {
		hi, ok1 := hexVal(s[1+2*i])
		lo, ok2 := hexVal(s[2+2*i])
		if !ok1 || !ok2 {
			return rgb{}, false
		}
		v[i] = hi<<4 | lo
	}
	return rgb{v[0], v[1], v[2]}, true
}

func hexVal(c byte) (uint8, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func colorOr(s string, def rgb) rgb {
	if c, ok := parseColor(s); ok {
		return c
	}
	return def
}

var black = rgb{0x22, 0x22, 0x22}

// A drawn item; exactly one of the fields is set.
type item struct {
	rect  *rectItem
	line  *lineItem
	text  *textItem
	mods  *modulesItem
	image *imageItem
}

// rectItem is a (rounded) rectangle, filled and/or stroked (the stroke is
// centred on the outline).
type rectItem struct {
	x, y, w, h, r float64
	fill, stroke  *rgb
	sw            float64
}

type lineItem struct {
	x1, y1, x2, y2, sw float64
	c                  rgb
}

// textItem is one shaped line at a baseline origin; size is the em size in
// mm and glyph positions are in font units.
type textItem struct {
	f    *fontRes
	size float64
	c    rgb
	x, y float64
	line shapedLine
	src  string // the logical text, for extraction
}

// modulesItem is a QR code or barcode as dark rectangles.
type modulesItem struct {
	rects [][4]float64 // x, y, w, h
	c     rgb
}

type imageItem struct {
	id         string
	img        image.Image
	x, y, w, h float64
}

const ptMM = 25.4 / 72

// MaxImagePixels bounds a design image's decoded size (width × height);
// a larger one is drawn as a placeholder.
const MaxImagePixels = 40_000_000

// decodedImages decodes each referenced image once; one that is missing
// or cannot be decoded is left out (drawn as a placeholder).
func decodedImages(d *Design, imgs Images) map[string]image.Image {
	out := map[string]image.Image{}
	for _, e := range d.Elements {
		if e.Type != "image" {
			continue
		}
		if _, done := out[e.ImageID]; done {
			continue
		}
		var im image.Image
		if b, ok := imgs[e.ImageID]; ok {
			// the declared size first: a small file may claim a huge image
			if cfg, _, err := image.DecodeConfig(bytes.NewReader(b)); err == nil && cfg.Width*cfg.Height <= MaxImagePixels {
				if m, _, err := image.Decode(bytes.NewReader(b)); err == nil {
					im = m
				}
			}
		}
		out[e.ImageID] = im
	}
	return out
}

// layout draws the design's elements with v, offset by (ox, oy) mm.
func layout(d *Design, v Vars, imgs map[string]image.Image, ox, oy float64, out []item) ([]item, error) {
	if err := loadFonts(); err != nil {
		return out, err
	}
	for i := range d.Elements {
		e := &d.Elements[i]
		x, y := ox+e.X, oy+e.Y
		switch e.Type {
		case "rect":
			r := &rectItem{x: x, y: y, w: e.W, h: e.H, r: math.Min(e.Radius, math.Min(e.W, e.H)/2), sw: e.StrokeWidth}
			if c, ok := parseColor(e.Fill); ok {
				r.fill = &c
			}
			if c, ok := parseColor(e.Stroke); ok && e.StrokeWidth > 0 {
				r.stroke = &c
			}
			if r.fill != nil || r.stroke != nil {
				out = append(out, item{rect: r})
			}
		case "line":
			sw := e.StrokeWidth
			if sw == 0 {
				sw = 0.2
			}
			out = append(out, item{line: &lineItem{x1: x, y1: y, x2: ox + e.X2, y2: oy + e.Y2, sw: sw, c: colorOr(e.Stroke, black)}})
		case "text":
			out = layoutText(e, Substitute(e.Text, v), x, y, out)
		case "qr", "barcode":
			if m := layoutCode(e, Substitute(e.Value, v), x, y); m != nil {
				out = append(out, item{mods: m})
			}
		case "image":
			im := imgs[e.ImageID]
			if im == nil {
				grey := rgb{0xdd, 0xdd, 0xdd}
				out = append(out, item{rect: &rectItem{x: x, y: y, w: e.W, h: e.H, fill: &grey}})
				continue
			}
			b := im.Bounds()
			iw, ih := float64(b.Dx()), float64(b.Dy())
			if iw == 0 || ih == 0 {
				continue
			}
			k := math.Min(e.W/iw, e.H/ih) // contain, centred
			w, h := iw*k, ih*k
			out = append(out, item{image: &imageItem{id: e.ImageID, img: im, x: x + (e.W-w)/2, y: y + (e.H-h)/2, w: w, h: h}})
		}
	}
	return out, nil
}

func layoutText(e *Element, s string, x, y float64, out []item) []item {
	f := regular
	if e.Bold {
		f = bold
	}
	pt := e.FontSize
	if pt == 0 {
		pt = defaultFontSize
	}
	em := pt * ptMM
	k := em / f.upem // mm per font unit
	c := colorOr(e.Color, black)
	lineH := (f.ascent + f.descent + f.lineGap) * k
	baseline := y + f.ascent*k
	const tabGap = 2.0 // mm kept between the two sides of a tab
	for _, ln := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(ln) == "" {
			baseline += lineH
			continue
		}
		// a tab splits a line into a start side and an end side (a
		// receipt's label and amount)
		head, tail, tabbed := strings.Cut(ln, "\t")
		tail = strings.ReplaceAll(tail, "\t", " ")
		sl := f.shape(head, e.LetterSpacing*ptMM/k)
		var sr shapedLine
		total := sl.width
		if tabbed {
			sr = f.shape(tail, e.LetterSpacing*ptMM/k)
			total += sr.width + tabGap/k
		}
		em, k := em, k
		if w := total * k; w > e.W && total > 0 {
			// too wide for its box: shrink this line to fit, down to the
			// smallest font size (then it overflows)
			em = math.Max(em*e.W/w, MinFontSize*ptMM)
			k = em / f.upem
		}
		if tabbed {
			// the start side at the start edge, the end side at the end
			// edge, mirrored in a right-to-left paragraph
			rtl := paragraphRTL([]rune(ln))
			lx, rx := x, x+e.W-sr.width*k
			if rtl {
				lx, rx = x+e.W-sl.width*k, x
			}
			out = append(out, item{text: &textItem{f: f, size: em, c: c, x: lx, y: baseline, line: sl, src: head}})
			out = append(out, item{text: &textItem{f: f, size: em, c: c, x: rx, y: baseline, line: sr, src: tail}})
			baseline += lineH
			continue
		}
		w := sl.width * k
		var dx float64
		switch alignOf(e.Align, sl.rtl) {
		case "center":
			dx = (e.W - w) / 2
		case "right":
			dx = e.W - w
		}
		out = append(out, item{text: &textItem{f: f, size: em, c: c, x: x + dx, y: baseline, line: sl, src: ln}})
		baseline += lineH
	}
	return out
}

// alignOf resolves start/end (and the default, start) by the paragraph's
// direction.
func alignOf(a string, rtl bool) string {
	switch a {
	case "left", "center", "right":
		return a
	case "end":
		if rtl {
			return "left"
		}
		return "right"
	}
	if rtl {
		return "right"
	}
	return "left"
}

// layoutCode encodes a QR code (level M) or a barcode (code128, ean13)
// filling the element's box; nil when the value cannot be encoded (an
// EAN-13 of letters): nothing is drawn.
func layoutCode(e *Element, value string, x, y float64) *modulesItem {
	if value == "" {
		return nil
	}
	var bc barcode.Barcode
	var err error
	switch {
	case e.Type == "qr":
		bc, err = qr.Encode(value, qr.M, qr.Auto)
	case e.Symbology == "ean13":
		bc, err = ean.Encode(value)
	default:
		bc, err = code128.Encode(value)
	}
	if err != nil {
		return nil
	}
	b := bc.Bounds()
	m := &modulesItem{c: colorOr(e.Color, black)}
	if e.Type == "qr" {
		n := b.Dx()
		s := math.Min(e.W, e.H) / float64(n)
		x0, y0 := x+(e.W-s*float64(n))/2, y+(e.H-s*float64(n))/2
		for j := 0; j < n; j++ {
			for i := 0; i < n; {
				if !dark(bc, b.Min.X+i, b.Min.Y+j) {
					i++
					continue
				}
				k := i
				for k < n && dark(bc, b.Min.X+k, b.Min.Y+j) {
					k++
				}
				m.rects = append(m.rects, [4]float64{x0 + float64(i)*s, y0 + float64(j)*s, float64(k-i) * s, s})
				i = k
			}
		}
		return m
	}
	n := b.Dx()
	s := e.W / float64(n)
	for i := 0; i < n; {
		if !dark(bc, b.Min.X+i, b.Min.Y) {
			i++
			continue
		}
		k := i
		for k < n && dark(bc, b.Min.X+k, b.Min.Y) {
			k++
		}
		m.rects = append(m.rects, [4]float64{x + float64(i)*s, y, float64(k-i) * s, e.H})
		i = k
	}
	return m
}

func dark(bc barcode.Barcode, x, y int) bool {
	r, _, _, _ := bc.At(x, y).RGBA()
	return r < 0x8000
}
