package render

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"unicode"

	"github.com/go-text/typesetting/bidi"
	"github.com/go-text/typesetting/di"
	"github.com/go-text/typesetting/font"
	"github.com/go-text/typesetting/language"
	"github.com/go-text/typesetting/shaping"
	"golang.org/x/image/math/fixed"

	"xr/assets"
)

// fontRes is one embedded font: its bytes (embedded whole in PDFs, see
// subset.go), its parsed face and metrics in font units.
type fontRes struct {
	name    string // PostScript-ish base name for the PDF
	data    []byte
	face    *font.Face // not safe for concurrent use: guarded by textMu
	upem    float64
	ascent  float64 // font units, positive
	descent float64 // font units, positive
	lineGap float64
	outline map[font.GID][]font.Segment // guarded by textMu
	// advances are every glyph's own advance, font units
	advances []float32
}

var (
	fontsOnce sync.Once
	fontsErr  error
	regular   *fontRes
	bold      *fontRes

	// textMu serialises shaping and outline extraction: go-text faces and
	// the shaper keep caches that are not safe for concurrent use.
	textMu  sync.Mutex
	shaper  shaping.HarfbuzzShaper
	bidiPar bidi.Paragraph
)

func loadFonts() error {
	fontsOnce.Do(func() {
		regular, fontsErr = loadFont("fonts/DejaVuSans.ttf", "DejaVuSans")
		if fontsErr == nil {
			bold, fontsErr = loadFont("fonts/DejaVuSans-Bold.ttf", "DejaVuSans-Bold")
		}
	})
	return fontsErr
}

func loadFont(path, name string) (*fontRes, error) {
	data, err := assets.Fonts.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("render: font %s: %w", path, err)
	}
	face, err := font.ParseTTF(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("render: font %s: %w", path, err)
	}
	f := &fontRes{name: name, data: data, face: face, upem: float64(face.Upem()), outline: map[font.GID][]font.Segment{}}
	tables, err := sfntTables(data)
	if err != nil || len(tables["maxp"]) < 6 {
		return nil, fmt.Errorf("render: font %s: no maxp table", path)
	}
	for g := 0; g < int(binary.BigEndian.Uint16(tables["maxp"][4:])); g++ {
		f.advances = append(f.advances, face.HorizontalAdvance(font.GID(g)))
	}
	if ext, ok := face.FontHExtents(); ok {
		f.ascent, f.descent, f.lineGap = float64(ext.Ascender), -float64(ext.Descender), float64(ext.LineGap)
	} else {
		f.ascent, f.descent = 0.8*f.upem, 0.2*f.upem
	}
	return f, nil
}

// glyph is one positioned glyph of a shaped line, in font units relative
// to the line's origin on its baseline (dy down).
type glyph struct {
	gid    font.GID
	dx, dy float64
	adv    float64 // the advance the shaper gave
	text   string  // the logical text of its cluster, on the cluster's first glyph
}

// shapedLine is one line of text shaped and laid out left to right in
// visual order.
type shapedLine struct {
	glyphs []glyph
	width  float64 // font units
	rtl    bool    // the paragraph direction is right to left
}

// shape lays out one line of text: bidi runs (go-text's UAX #9
// implementation), split by script, each shaped by HarfBuzz (go-text's
// port; Arabic joined), then reordered visually (rule L2). letterSpacing is
// added after each character of left-to-right runs, in font units.
func (f *fontRes) shape(s string, letterSpacing float64) shapedLine {
	runes := []rune(s)
	if len(runes) == 0 {
		return shapedLine{}
	}
	textMu.Lock()
	defer textMu.Unlock()
	rtl := paragraphRTL(runes)
	def := bidi.LeftToRight
	if rtl {
		def = bidi.RightToLeft
	}
	type piece struct {
		start, end int
		level      bidi.Level
		script     language.Script
	}
	var pieces []piece
	runs := bidiPar.Segment(runes, def)
	for i := 0; i < runs.NumRuns(); i++ {
		r := runs.Run(i)
		// split the run by script: Common and Inherited characters join
		// their neighbour's script
		start := r.Start
		cur := language.Common
		for j := r.Start; j < r.End; j++ {
			sc := language.LookupScript(runes[j])
			if !sc.Strong() {
				continue
			}
			if cur == language.Common {
				cur = sc
				continue
			}
			if sc != cur {
				pieces = append(pieces, piece{start, j, r.Level, cur})
				start, cur = j, sc
			}
		}
		pieces = append(pieces, piece{start, r.End, r.Level, cur})
	}
	// L2: from the highest level down to the lowest odd one, reverse every
	// sequence of pieces at that level or higher.
	var maxL, minOdd bidi.Level = 0, 127
	for _, p := range pieces {
		maxL = max(maxL, p.level)
		if p.level%2 == 1 {
			minOdd = min(minOdd, p.level)
		}
	}
	for l := maxL; l >= minOdd && l > 0; l-- {
		for i := 0; i < len(pieces); {
			if pieces[i].level < l {
				i++
				continue
			}
			j := i
			for j < len(pieces) && pieces[j].level >= l {
				j++
			}
			for a, b := i, j-1; a < b; a, b = a+1, b-1 {
				pieces[a], pieces[b] = pieces[b], pieces[a]
			}
			i = j
		}
	}
	out := shapedLine{rtl: rtl}
	pen := 0.0
	for _, p := range pieces {
		in := shaping.Input{
			Text:     runes,
			RunStart: p.start,
			RunEnd:   p.end,
			Face:     f.face,
			Size:     fixed.Int26_6(int(f.upem) << 6),
			Script:   p.script,
			Language: scriptLanguage(p.script),
		}
		in.Direction = di.DirectionLTR
		if p.level%2 == 1 {
			in.Direction = di.DirectionRTL
		}
		o := shaper.Shape(in)
		seen := map[int]bool{}
		for _, g := range o.Glyphs {
			gl := glyph{
				gid: g.GlyphID,
				dx:  pen + float64(g.XOffset)/64,
				dy:  -float64(g.YOffset) / 64,
				adv: float64(g.Advance) / 64, // horizontal text: the x advance
			}
			if !seen[g.TextIndex()] {
				seen[g.TextIndex()] = true
				a, b := g.TextIndex(), g.TextIndex()+g.RunesCount()
				if a >= 0 && b <= len(runes) && a < b {
					gl.text = string(runes[a:b])
				}
			}
			pen += gl.adv
			if letterSpacing != 0 && in.Direction == di.DirectionLTR && gl.adv > 0 {
				pen += letterSpacing
			}
			out.glyphs = append(out.glyphs, gl)
		}
	}
	out.width = pen
	return out
}

// paragraphRTL tells the paragraph direction from its first strong
// character (rules P2, P3).
func paragraphRTL(runes []rune) bool {
	for _, r := range runes {
		switch {
		case unicode.In(r, unicode.Arabic, unicode.Hebrew, unicode.Syriac, unicode.Thaana, unicode.Nko):
			return true
		case unicode.IsLetter(r):
			return false
		}
	}
	return false
}

func scriptLanguage(s language.Script) language.Language {
	switch s {
	case language.Arabic:
		return language.NewLanguage("ar")
	case language.Cyrillic:
		return language.NewLanguage("ru")
	case language.Hebrew:
		return language.NewLanguage("he")
	}
	return language.NewLanguage("en")
}

// glyphOutline is the outline of a glyph in font units (y up), cached.
func (f *fontRes) glyphOutline(gid font.GID) []font.Segment {
	textMu.Lock()
	defer textMu.Unlock()
	if segs, ok := f.outline[gid]; ok {
		return segs
	}
	var segs []font.Segment
	if o, ok := f.face.GlyphDataOutline(gid); ok {
		segs = o.Segments
	}
	f.outline[gid] = segs
	return segs
}

// advanceOf is the font's own advance of a glyph (font units), the width
// a PDF viewer assumes. Read without a lock: the table is filled once.
func (f *fontRes) advanceOf(gid font.GID) float64 {
	if int(gid) < len(f.advances) {
		return float64(f.advances[gid])
	}
	return 0
}
