package render

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"

	"github.com/go-text/typesetting/font"
	"github.com/go-text/typesetting/font/opentype"
	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/vector"
)

// Limits of PNG.
const (
	DefaultMaxPx = 512
	MaxPx        = 4096
)

// PNG renders the design's canvas (one card for a card sheet) with vars
// to a PNG at most maxPx pixels on its longer side (DefaultMaxPx when
// maxPx ≤ 0, at most MaxPx). The design must be valid (Validate).
func PNG(d *Design, v Vars, imgs Images, maxPx int) ([]byte, error) {
	img, err := Raster(d, v, imgs, maxPx)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Raster is PNG before encoding.
func Raster(d *Design, v Vars, imgs Images, maxPx int) (*image.RGBA, error) {
	if err := Validate(d); err != nil {
		return nil, err
	}
	if maxPx <= 0 {
		maxPx = DefaultMaxPx
	}
	maxPx = min(maxPx, MaxPx)
	cw, ch := d.canvas()
	scale := float64(maxPx) / math.Max(cw, ch) // px per mm
	w, h := max(1, int(math.Round(cw*scale))), max(1, int(math.Round(ch*scale)))
	items, err := layout(d, v, decodedImages(d, imgs), 0, 0, nil)
	if err != nil {
		return nil, err
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	bg := colorOr(d.Background, rgb{0xff, 0xff, 0xff})
	xdraw.Draw(dst, dst.Bounds(), image.NewUniform(rgba(bg)), image.Point{}, xdraw.Src)
	p := painter{dst: dst, s: scale, z: vector.NewRasterizer(w, h)}
	for _, it := range items {
		p.paint(it)
	}
	return dst, nil
}

func rgba(c rgb) color.RGBA { return color.RGBA{c.r, c.g, c.b, 0xff} }

// painter fills one shape at a time: the rasterizer covers only the
// shape's bounding box (area, in pixels), so a small element costs little
// on a large canvas.
type painter struct {
	dst  *image.RGBA
	s    float64 // px per mm
	z    *vector.Rasterizer
	area image.Rectangle
}

// begin starts a shape inside the box x0,y0 – x1,y1 (mm).
func (p *painter) begin(x0, y0, x1, y1 float64) {
	r := image.Rect(int(math.Floor(x0*p.s))-1, int(math.Floor(y0*p.s))-1, int(math.Ceil(x1*p.s))+1, int(math.Ceil(y1*p.s))+1)
	p.area = r.Intersect(p.dst.Bounds())
	p.z.Reset(max(p.area.Dx(), 1), max(p.area.Dy(), 1))
}

func (p *painter) fill(c rgb) {
	if p.area.Empty() {
		return
	}
	p.z.Draw(p.dst, p.area, image.NewUniform(rgba(c)), image.Point{})
}

func (p *painter) pt(x, y float64) (float32, float32) {
	return float32(x*p.s) - float32(p.area.Min.X), float32(y*p.s) - float32(p.area.Min.Y)
}

func (p *painter) paint(it item) {
	switch {
	case it.rect != nil:
		r := it.rect
		if r.fill != nil {
			p.begin(r.x, r.y, r.x+r.w, r.y+r.h)
			p.rrect(r.x, r.y, r.w, r.h, r.r, false)
			p.fill(*r.fill)
		}
		if r.stroke != nil {
			h := r.sw / 2
			p.begin(r.x-h, r.y-h, r.x+r.w+h, r.y+r.h+h)
			p.rrect(r.x-h, r.y-h, r.w+r.sw, r.h+r.sw, r.r+h, false)
			if r.w > r.sw && r.h > r.sw {
				p.rrect(r.x+h, r.y+h, r.w-r.sw, r.h-r.sw, math.Max(r.r-h, 0), true)
			}
			p.fill(*r.stroke)
		}
	case it.line != nil:
		l := it.line
		dx, dy := l.x2-l.x1, l.y2-l.y1
		n := math.Hypot(dx, dy)
		if n == 0 {
			return
		}
		// a butt-capped stroke is the rectangle around the segment
		nx, ny := -dy/n*l.sw/2, dx/n*l.sw/2
		p.begin(math.Min(l.x1, l.x2)-l.sw, math.Min(l.y1, l.y2)-l.sw, math.Max(l.x1, l.x2)+l.sw, math.Max(l.y1, l.y2)+l.sw)
		p.z.MoveTo(p.pt(l.x1+nx, l.y1+ny))
		p.z.LineTo(p.pt(l.x2+nx, l.y2+ny))
		p.z.LineTo(p.pt(l.x2-nx, l.y2-ny))
		p.z.LineTo(p.pt(l.x1-nx, l.y1-ny))
		p.z.ClosePath()
		p.fill(l.c)
	case it.text != nil:
		t := it.text
		k := t.size / t.f.upem
		// generous: marks and accents may reach past the line's metrics
		p.begin(t.x-t.size, t.y-(t.f.ascent*k+t.size/2), t.x+t.line.width*k+t.size, t.y+t.f.descent*k+t.size/2)
		for _, g := range t.line.glyphs {
			ox, oy := t.x+g.dx*k, t.y+g.dy*k
			p.glyph(t.f.glyphOutline(g.gid), ox, oy, k)
		}
		p.fill(t.c)
	case it.mods != nil:
		// modules snap to whole pixels: crisp edges that scan
		u := image.NewUniform(rgba(it.mods.c))
		for _, r := range it.mods.rects {
			x0, y0 := int(math.Round(r[0]*p.s)), int(math.Round(r[1]*p.s))
			x1, y1 := int(math.Round((r[0]+r[2])*p.s)), int(math.Round((r[1]+r[3])*p.s))
			xdraw.Draw(p.dst, image.Rect(x0, y0, x1, y1), u, image.Point{}, xdraw.Over)
		}
	case it.image != nil:
		im := it.image
		r := image.Rect(int(math.Round(im.x*p.s)), int(math.Round(im.y*p.s)),
			int(math.Round((im.x+im.w)*p.s)), int(math.Round((im.y+im.h)*p.s)))
		xdraw.ApproxBiLinear.Scale(p.dst, r, im.img, im.img.Bounds(), xdraw.Over, nil)
	}
}

// glyph adds an outline (font units, y up) at a baseline origin (mm).
func (p *painter) glyph(segs []font.Segment, ox, oy, k float64) {
	tp := func(q font.SegmentPoint) (float32, float32) {
		return p.pt(ox+float64(q.X)*k, oy-float64(q.Y)*k)
	}
	open := false
	for _, s := range segs {
		switch s.Op {
		case opentype.SegmentOpMoveTo:
			if open {
				p.z.ClosePath()
			}
			p.z.MoveTo(tp(s.Args[0]))
			open = true
		case opentype.SegmentOpLineTo:
			p.z.LineTo(tp(s.Args[0]))
		case opentype.SegmentOpQuadTo:
			ax, ay := tp(s.Args[0])
			bx, by := tp(s.Args[1])
			p.z.QuadTo(ax, ay, bx, by)
		case opentype.SegmentOpCubeTo:
			ax, ay := tp(s.Args[0])
			bx, by := tp(s.Args[1])
			cx, cy := tp(s.Args[2])
			p.z.CubeTo(ax, ay, bx, by, cx, cy)
		}
	}
	if open {
		p.z.ClosePath()
	}
}

// kappa places the control points of a cubic quarter circle.
const kappa = 0.5522847498

// rrect adds a rounded rectangle, clockwise on screen or, with ccw, the
// other way (a hole inside a clockwise one).
func (p *painter) rrect(x, y, w, h, r float64, ccw bool) {
	for _, s := range rrectPath(x, y, w, h, r, ccw) {
		switch len(s) {
		case 2:
			p.z.LineTo(p.pt(s[0], s[1]))
		case 6:
			ax, ay := p.pt(s[0], s[1])
			bx, by := p.pt(s[2], s[3])
			cx, cy := p.pt(s[4], s[5])
			p.z.CubeTo(ax, ay, bx, by, cx, cy)
		case 3: // move
			p.z.MoveTo(p.pt(s[0], s[1]))
		}
	}
	p.z.ClosePath()
}

// rrectPath is a rounded rectangle as segments: {x, y, 0} a move, {x, y}
// a line, six numbers a cubic. Clockwise on screen (y down) unless ccw.
func rrectPath(x, y, w, h, r float64, ccw bool) [][]float64 {
	r = math.Max(0, math.Min(r, math.Min(w, h)/2))
	c := r * (1 - kappa)
	x1, y1 := x+w, y+h
	if !ccw {
		return [][]float64{
			{x + r, y, 0},
			{x1 - r, y},
			{x1 - c, y, x1, y + c, x1, y + r},
			{x1, y1 - r},
			{x1, y1 - c, x1 - c, y1, x1 - r, y1},
			{x + r, y1},
			{x + c, y1, x, y1 - c, x, y1 - r},
			{x, y + r},
			{x, y + c, x + c, y, x + r, y},
		}
	}
	return [][]float64{
		{x + r, y, 0},
		{x + c, y, x, y + c, x, y + r},
		{x, y1 - r},
		{x, y1 - c, x + c, y1, x + r, y1},
		{x1 - r, y1},
		{x1 - c, y1, x1, y1 - c, x1, y1 - r},
		{x1, y + r},
		{x1, y + c, x1 - c, y, x1 - r, y},
		{x + r, y},
	}
}
