package render

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"io"
	"math"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"unicode/utf16"

	"github.com/go-text/typesetting/font"
	xdraw "golang.org/x/image/draw"

	"xr/app"
)

// Sheet is a PDF card sheet being built: Add one card at a time, then
// WriteTo. Cards are laid out in a grid inside the page's margins (left to
// right, top to bottom, centred), as many pages as needed. Text is set in
// the embedded DejaVu Sans (a subset), shaped (Arabic joined, right to
// left) and extractable: every glyph maps back to its characters through
// the font's ToUnicode CMap. Cards are drawn in the background on every
// core (a QR code's mask selection dominates): Add returns as soon as a
// core takes the card, and WriteTo waits for them all. A Sheet is used by
// one goroutine, and its design must not change until WriteTo returns.
type Sheet struct {
	d          *Design
	imgs       map[string]image.Image
	imgNames   map[string]int // image id → XObject number (Im<n>)
	imgList    []image.Image
	cols, rows int
	ox, oy     float64 // the grid's top-left corner, mm
	pageW      float64 // pt
	pageH      float64 // pt

	cards []*cardOut
	sem   chan struct{}
	wg    sync.WaitGroup
}

// cardOut is one card's drawing: its content-stream operators and the
// glyphs it used.
type cardOut struct {
	buf  bytes.Buffer
	used []usedGlyph
	err  error
}

type usedGlyph struct {
	f    *fontRes
	gid  font.GID
	text string
}

// pdfFont records the glyphs a sheet used: their widths and text.
type pdfFont struct {
	res  *fontRes
	tag  string // F1 regular, F2 bold
	used map[font.GID]string
}

const mmPt = 72 / 25.4

// NewSheet starts a card sheet of a card_sheet design.
func NewSheet(d *Design, imgs Images) (*Sheet, error) {
	if err := Validate(d); err != nil {
		return nil, err
	}
	if d.Kind != KindCardSheet {
		return nil, app.ErrValidation(ReasonKindInvalid, "kind").With("kind", d.Kind)
	}
	if err := loadFonts(); err != nil {
		return nil, err
	}
	c, p := d.Card, d.Page
	aw, ah := p.Width-2*p.Margin, p.Height-2*p.Margin
	cols := int(math.Floor((aw + c.Gap + offCanvasTolMM) / (c.Width + c.Gap)))
	rows := int(math.Floor((ah + c.Gap + offCanvasTolMM) / (c.Height + c.Gap)))
	if cols < 1 || rows < 1 {
		return nil, app.ErrValidation(ReasonSizeInvalid, "card")
	}
	gw := float64(cols)*c.Width + float64(cols-1)*c.Gap
	gh := float64(rows)*c.Height + float64(rows-1)*c.Gap
	s := &Sheet{
		d: d, imgs: decodedImages(d, imgs), imgNames: map[string]int{}, cols: cols, rows: rows,
		ox: p.Margin + (aw-gw)/2, oy: p.Margin + (ah-gh)/2,
		pageW: p.Width * mmPt, pageH: p.Height * mmPt,
		sem: make(chan struct{}, runtime.GOMAXPROCS(0)),
	}
	// each image once, at no more than 300 dpi of its largest placement
	largest := map[string]float64{}
	for _, e := range d.Elements {
		if e.Type == "image" {
			largest[e.ImageID] = math.Max(largest[e.ImageID], math.Max(e.W, e.H))
		}
	}
	for _, e := range d.Elements {
		if im := s.imgs[e.ImageID]; e.Type == "image" && im != nil && s.imgNames[e.ImageID] == 0 {
			s.imgList = append(s.imgList, downscale(im, int(math.Ceil(largest[e.ImageID]/25.4*300))))
			s.imgNames[e.ImageID] = len(s.imgList)
		}
	}
	return s, nil
}

// PerPage is how many cards fit on one page.
func (s *Sheet) PerPage() int { return s.cols * s.rows }

// Cards is how many cards were added.
func (s *Sheet) Cards() int { return len(s.cards) }

// Add lays out one card with v (copied: the caller may reuse v). A
// failure is reported by WriteTo.
func (s *Sheet) Add(v Vars) error {
	i := len(s.cards) % s.PerPage()
	c := s.d.Card
	x := s.ox + float64(i%s.cols)*(c.Width+c.Gap)
	y := s.oy + float64(i/s.cols)*(c.Height+c.Gap)
	out := &cardOut{}
	s.cards = append(s.cards, out)
	vc := make(Vars, len(v))
	for k, val := range v {
		vc[k] = val
	}
	s.sem <- struct{}{}
	s.wg.Add(1)
	go func() {
		defer func() { <-s.sem; s.wg.Done() }()
		w := &cardWriter{s: s, out: out}
		if bg, ok := parseColor(s.d.Background); ok && bg != (rgb{0xff, 0xff, 0xff}) {
			w.item(item{rect: &rectItem{x: x, y: y, w: c.Width, h: c.Height, fill: &bg}})
		}
		items, err := layout(s.d, vc, s.imgs, x, y, nil)
		if err != nil {
			out.err = err
			return
		}
		for _, it := range items {
			w.item(it)
		}
	}()
	return nil
}

// cardWriter writes one card's operators.
type cardWriter struct {
	s   *Sheet
	out *cardOut
	num []byte
}

// f writes a number: at most 3 decimals, no trailing zeros.
func (c *cardWriter) f(v float64) {
	c.num = strconv.AppendFloat(c.num[:0], v, 'f', 3, 64)
	b := c.num
	if bytes.IndexByte(b, '.') >= 0 {
		b = bytes.TrimRight(b, "0")
		b = bytes.TrimSuffix(b, []byte("."))
	}
	if len(b) == 0 || string(b) == "-" || string(b) == "-0" {
		b = []byte("0")
	}
	c.out.buf.Write(b)
	c.out.buf.WriteByte(' ')
}

func (c *cardWriter) x(mm float64)    { c.f(mm * mmPt) }
func (c *cardWriter) y(mm float64)    { c.f(c.s.pageH - mm*mmPt) }
func (c *cardWriter) op(s string)     { c.out.buf.WriteString(s) }
func (c *cardWriter) pt(x, y float64) { c.x(x); c.y(y) }
func (c *cardWriter) color(k rgb, op string) {
	c.f(float64(k.r) / 255)
	c.f(float64(k.g) / 255)
	c.f(float64(k.b) / 255)
	c.op(op + "\n")
}

func (c *cardWriter) path(segs [][]float64) {
	for _, sg := range segs {
		switch len(sg) {
		case 3:
			c.pt(sg[0], sg[1])
			c.op("m ")
		case 2:
			c.pt(sg[0], sg[1])
			c.op("l ")
		case 6:
			for k := 0; k < 6; k += 2 {
				c.pt(sg[k], sg[k+1])
			}
			c.op("c ")
		}
	}
	c.op("h\n")
}

func (c *cardWriter) item(it item) {
	switch {
	case it.rect != nil:
		r := it.rect
		segs := rrectPath(r.x, r.y, r.w, r.h, r.r, false)
		if r.fill != nil {
			c.color(*r.fill, "rg")
			c.path(segs)
			c.op("f\n")
		}
		if r.stroke != nil {
			c.color(*r.stroke, "RG")
			c.f(r.sw * mmPt)
			c.op("w\n")
			c.path(segs)
			c.op("S\n")
		}
	case it.line != nil:
		l := it.line
		c.color(l.c, "RG")
		c.f(l.sw * mmPt)
		c.op("w ")
		c.pt(l.x1, l.y1)
		c.op("m ")
		c.pt(l.x2, l.y2)
		c.op("l S\n")
	case it.mods != nil:
		c.color(it.mods.c, "rg")
		for _, r := range it.mods.rects {
			c.pt(r[0], r[1]+r[3])
			c.f(r[2] * mmPt)
			c.f(r[3] * mmPt)
			c.op("re\n")
		}
		c.op("f\n")
	case it.image != nil:
		im := it.image
		c.op("q ")
		c.f(im.w * mmPt)
		c.op("0 0 ")
		c.f(im.h * mmPt)
		c.pt(im.x, im.y+im.h)
		c.op("cm /Im" + strconv.Itoa(c.s.imgNames[im.id]) + " Do Q\n")
	case it.text != nil:
		c.text(it.text)
	}
}

// text sets a shaped line: one TJ array whose numbers move the pen from
// the font's own advances to the shaper's positions; a glyph shifted
// vertically (an Arabic mark) gets its own text matrix.
func (c *cardWriter) text(t *textItem) {
	k := t.size / t.f.upem // mm per font unit
	c.op("BT ")
	c.color(t.c, "rg")
	if t.f == bold {
		c.op("/F2 ")
	} else {
		c.op("/F1 ")
	}
	c.f(t.size * mmPt)
	c.op("Tf\n")
	inArr := false
	pen, penY := math.NaN(), 0.0
	var hex [4]byte
	for _, g := range t.line.glyphs {
		c.out.used = append(c.out.used, usedGlyph{t.f, g.gid, g.text})
		if math.IsNaN(pen) || g.dy != penY {
			if inArr {
				c.op("] TJ\n")
			}
			c.op("1 0 0 1 ")
			c.pt(t.x+g.dx*k, t.y+g.dy*k)
			c.op("Tm [")
			inArr, penY = true, g.dy
		} else if d := g.dx - pen; math.Abs(d) > 0.5 {
			c.f(-d * 1000 / t.f.upem)
		}
		const digits = "0123456789ABCDEF"
		for i := range hex {
			hex[i] = digits[(uint16(g.gid)>>(12-4*i))&0xF]
		}
		c.out.buf.WriteByte('<')
		c.out.buf.Write(hex[:])
		c.out.buf.WriteByte('>')
		pen = g.dx + t.f.advanceOf(g.gid)
	}
	if inArr {
		c.op("] TJ\n")
	}
	c.op("ET\n")
}

// pdfWriter numbers and writes indirect objects.
type pdfWriter struct {
	w       *bufio.Writer
	n       int64
	offsets []int64 // by object number - 1
	err     error
}

func (p *pdfWriter) printf(format string, a ...any) {
	if p.err != nil {
		return
	}
	k, err := fmt.Fprintf(p.w, format, a...)
	p.n += int64(k)
	p.err = err
}

func (p *pdfWriter) write(b []byte) {
	if p.err != nil {
		return
	}
	k, err := p.w.Write(b)
	p.n += int64(k)
	p.err = err
}

// reserve allocates an object number.
func (p *pdfWriter) reserve() int {
	p.offsets = append(p.offsets, -1)
	return len(p.offsets)
}

func (p *pdfWriter) begin(id int) {
	p.offsets[id-1] = p.n
	p.printf("%d 0 obj\n", id)
}

func (p *pdfWriter) stream(id int, dict string, data []byte) {
	p.begin(id)
	p.printf("<<%s /Length %d>>\nstream\n", dict, len(data))
	p.write(data)
	p.printf("\nendstream\nendobj\n")
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&buf, zlib.BestSpeed) // a valid level: no error
	_, _ = zw.Write(b)                                 // into memory: cannot fail
	_ = zw.Close()
	return buf.Bytes()
}

// WriteTo waits for the cards and writes the PDF.
func (s *Sheet) WriteTo(out io.Writer) (int64, error) {
	s.wg.Wait()
	regularF := &pdfFont{res: regular, tag: "F1", used: map[font.GID]string{}}
	boldF := &pdfFont{res: bold, tag: "F2", used: map[font.GID]string{}}
	for _, c := range s.cards {
		if c.err != nil {
			return 0, c.err
		}
		for _, u := range c.used {
			f := regularF
			if u.f == bold {
				f = boldF
			}
			// a glyph maps to one text: prefer the shortest non-empty
			// one (a letter alone over the letter with its mark)
			if txt, ok := f.used[u.gid]; !ok || (u.text != "" && (txt == "" || len(u.text) < len(txt))) {
				f.used[u.gid] = u.text
			}
		}
	}
	var fonts []*pdfFont
	for _, f := range []*pdfFont{regularF, boldF} {
		if len(f.used) > 0 {
			fonts = append(fonts, f)
		}
	}
	// each page's content stream, compressed on every core
	per := s.PerPage()
	pages := make([][]byte, max(1, (len(s.cards)+per-1)/per))
	var wg sync.WaitGroup
	for i := range pages {
		s.sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-s.sem; wg.Done() }()
			var pg bytes.Buffer
			for _, c := range s.cards[min(i*per, len(s.cards)):min((i+1)*per, len(s.cards))] {
				pg.Write(c.buf.Bytes())
			}
			pages[i] = deflate(pg.Bytes())
		}()
	}
	wg.Wait()
	p := &pdfWriter{w: bufio.NewWriterSize(out, 64<<10)}
	catalog, pagesID, resID := p.reserve(), p.reserve(), p.reserve()
	p.printf("%%PDF-1.7\n%%\xe2\xe3\xcf\xd3\n")

	fontIDs := make([]int, len(fonts))
	for i, f := range fonts {
		fontIDs[i] = writeFont(p, f)
	}
	imgIDs := make([]int, len(s.imgList))
	for i, im := range s.imgList {
		imgIDs[i] = writeImage(p, im)
	}

	p.begin(resID)
	p.printf("<</ProcSet [/PDF /Text /ImageC] /Font <<")
	for i, f := range fonts {
		p.printf("/%s %d 0 R ", f.tag, fontIDs[i])
	}
	p.printf(">> /XObject <<")
	for i, id := range imgIDs {
		p.printf("/Im%d %d 0 R ", i+1, id)
	}
	p.printf(">> >>\nendobj\n")

	var kids []int
	for _, pg := range pages {
		pageID, contentID := p.reserve(), p.reserve()
		kids = append(kids, pageID)
		p.begin(pageID)
		p.printf("<</Type /Page /Parent %d 0 R /MediaBox [0 0 %.3f %.3f] /Resources %d 0 R /Contents %d 0 R>>\nendobj\n",
			pagesID, s.pageW, s.pageH, resID, contentID)
		p.stream(contentID, " /Filter /FlateDecode", pg)
	}
	p.begin(pagesID)
	p.printf("<</Type /Pages /Count %d /Kids [", len(kids))
	for _, k := range kids {
		p.printf("%d 0 R ", k)
	}
	p.printf("]>>\nendobj\n")
	p.begin(catalog)
	p.printf("<</Type /Catalog /Pages %d 0 R>>\nendobj\n", pagesID)

	xref := p.n
	p.printf("xref\n0 %d\n0000000000 65535 f \n", len(p.offsets)+1)
	for _, off := range p.offsets {
		if off < 0 {
			p.err = errors.Join(p.err, errors.New("render: pdf object never written"))
		}
		p.printf("%010d 00000 n \n", off)
	}
	p.printf("trailer\n<</Size %d /Root %d 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(p.offsets)+1, catalog, xref)
	if p.err == nil {
		p.err = p.w.Flush()
	}
	return p.n, p.err
}

// writeFont writes a Type0 font with Identity-H encoding over a
// CIDFontType2 (glyph ids are the character codes), its widths, a subset
// of the TrueType program and the ToUnicode CMap; it returns the Type0
// font's object number.
func writeFont(p *pdfWriter, f *pdfFont) int {
	r := f.res
	type0, cid, desc, file, tu := p.reserve(), p.reserve(), p.reserve(), p.reserve(), p.reserve()
	gids := make([]int, 0, len(f.used))
	for g := range f.used {
		gids = append(gids, int(g))
	}
	sort.Ints(gids)
	// a subset tag from the glyph set, as PDF asks for subset fonts
	h := uint32(2166136261)
	for _, g := range gids {
		h = (h ^ uint32(g)) * 16777619
	}
	var tag [6]byte
	for i := range tag {
		tag[i] = byte('A' + h%26)
		h /= 26
	}
	base := string(tag[:]) + "+" + r.name
	scale := 1000 / r.upem

	p.begin(type0)
	p.printf("<</Type /Font /Subtype /Type0 /BaseFont /%s /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R>>\nendobj\n", base, cid, tu)

	p.begin(cid)
	p.printf("<</Type /Font /Subtype /CIDFontType2 /BaseFont /%s /CIDSystemInfo <</Registry (Adobe) /Ordering (Identity) /Supplement 0>> /FontDescriptor %d 0 R /CIDToGIDMap /Identity /DW 1000 /W [", base, desc)
	for _, g := range gids {
		p.printf("%d [%d] ", g, int(math.Round(r.advanceOf(font.GID(g))*scale)))
	}
	p.printf("]>>\nendobj\n")

	p.begin(desc)
	p.printf("<</Type /FontDescriptor /FontName /%s /Flags 32 /FontBBox [-1021 -463 1793 1232] /ItalicAngle 0 /Ascent %d /Descent %d /CapHeight %d /StemV 80 /FontFile2 %d 0 R>>\nendobj\n",
		base, int(r.ascent*scale), -int(r.descent*scale), int(0.73*1000), file)

	prog, err := subsetTrueType(r.data, gids)
	if err != nil { // never expected: fall back to the whole font
		prog = r.data
	}
	p.stream(file, fmt.Sprintf(" /Filter /FlateDecode /Length1 %d", len(prog)), deflate(prog))

	var cm bytes.Buffer
	cm.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo <</Registry (Adobe) /Ordering (UCS) /Supplement 0>> def\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
	var entries []int
	for _, g := range gids {
		if f.used[font.GID(g)] != "" {
			entries = append(entries, g)
		}
	}
	for i := 0; i < len(entries); i += 100 {
		chunk := entries[i:min(i+100, len(entries))]
		fmt.Fprintf(&cm, "%d beginbfchar\n", len(chunk))
		for _, g := range chunk {
			fmt.Fprintf(&cm, "<%04X> <", g)
			for _, u := range utf16.Encode([]rune(f.used[font.GID(g)])) {
				fmt.Fprintf(&cm, "%04X", u)
			}
			cm.WriteString(">\n")
		}
		cm.WriteString("endbfchar\n")
	}
	cm.WriteString("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
	p.stream(tu, " /Filter /FlateDecode", deflate(cm.Bytes()))
	return type0
}

// downscale shrinks an image whose longer side exceeds maxPx.
func downscale(im image.Image, maxPx int) image.Image {
	b := im.Bounds()
	long := max(b.Dx(), b.Dy())
	if long <= maxPx || maxPx <= 0 {
		return im
	}
	w, h := max(1, b.Dx()*maxPx/long), max(1, b.Dy()*maxPx/long)
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	xdraw.CatmullRom.Scale(dst, dst.Bounds(), im, b, xdraw.Src, nil)
	return dst
}

// writeImage writes an RGB image XObject (with a soft mask when it has
// transparency); it returns its object number.
func writeImage(p *pdfWriter, im image.Image) int {
	b := im.Bounds()
	rgba := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(rgba, rgba.Bounds(), im, b.Min, draw.Src)
	n := b.Dx() * b.Dy()
	rgbBuf := make([]byte, 0, 3*n)
	alpha := make([]byte, 0, n)
	opaque := true
	for i := 0; i < n; i++ {
		px := rgba.Pix[4*i : 4*i+4]
		rgbBuf = append(rgbBuf, px[0], px[1], px[2])
		alpha = append(alpha, px[3])
		if px[3] != 0xff {
			opaque = false
		}
	}
	id := p.reserve()
	smask := ""
	if !opaque {
		sm := p.reserve()
		p.stream(sm, fmt.Sprintf(" /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", b.Dx(), b.Dy()), deflate(alpha))
		smask = fmt.Sprintf(" /SMask %d 0 R", sm)
	}
	p.stream(id, fmt.Sprintf(" /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode%s", b.Dx(), b.Dy(), smask), deflate(rgbBuf))
	return id
}
