package render

import (
	"fmt"
	"math"
	"unicode/utf8"

	"xr/app"
)

// Limits of a design.
const (
	MaxSizeMM       = 1000.0 // longest page or card side
	MaxElements     = 200
	MinFontSize     = 2.0   // points
	MaxFontSize     = 200.0 // points
	MaxStrokeWidth  = 20.0  // mm
	MaxTextLen      = 4000  // characters of one text or value
	offCanvasTolMM  = 0.01
	defaultFontSize = 10.0
)

// Refusal reasons of Validate (details.reason of a 400).
const (
	ReasonKindInvalid     = "design_kind_invalid"
	ReasonSizeInvalid     = "design_size_invalid"
	ReasonTooMany         = "design_too_many_elements"
	ReasonElementInvalid  = "design_element_invalid"
	ReasonColorInvalid    = "design_color_invalid"
	ReasonFontSizeInvalid = "design_font_size_invalid"
	ReasonVariableUnknown = "design_variable_unknown"
	ReasonOffCanvas       = "design_element_off_canvas"
)

var elementTypes = map[string]bool{"text": true, "qr": true, "barcode": true, "image": true, "rect": true, "line": true}

// Validate checks a design: kind, sizes, element types, colours, every
// {variable} against the kind's catalogue and every element inside the
// canvas. A refusal is an *app.Error 400 whose details name the element
// (index), the reason (design_variable_unknown, design_element_off_canvas,
// ...) and, for an unknown variable, the variable.
func Validate(d *Design) error {
	if d == nil {
		return app.ErrValidation(ReasonKindInvalid, "kind")
	}
	if _, ok := catalogue[d.Kind]; !ok {
		return app.ErrValidation(ReasonKindInvalid, "kind").With("kind", d.Kind)
	}
	if !sizeOK(d.Page.Width) || !sizeOK(d.Page.Height) {
		return app.ErrValidation(ReasonSizeInvalid, "page")
	}
	if !finite(d.Page.Margin) || d.Page.Margin < 0 || 2*d.Page.Margin >= math.Min(d.Page.Width, d.Page.Height) {
		return app.ErrValidation(ReasonSizeInvalid, "page.margin")
	}
	if d.Kind == KindCardSheet {
		c := d.Card
		if c == nil || !sizeOK(c.Width) || !sizeOK(c.Height) {
			return app.ErrValidation(ReasonSizeInvalid, "card")
		}
		if !finite(c.Gap) || c.Gap < 0 || c.Gap > MaxSizeMM {
			return app.ErrValidation(ReasonSizeInvalid, "card.gap")
		}
		if c.Width > d.Page.Width-2*d.Page.Margin+offCanvasTolMM || c.Height > d.Page.Height-2*d.Page.Margin+offCanvasTolMM {
			// Not even one card fits inside the page's margins.
			return app.ErrValidation(ReasonSizeInvalid, "card")
		}
	} else if d.Card != nil {
		return app.ErrValidation(ReasonSizeInvalid, "card")
	}
	if d.Background != "" && !colorOK(d.Background) {
		return app.ErrValidation(ReasonColorInvalid, "background")
	}
	if len(d.Elements) > MaxElements {
		return app.ErrValidation(ReasonTooMany, "elements").With("max", MaxElements)
	}
	cw, ch := d.canvas()
	for i := range d.Elements {
		if err := validateElement(d.Kind, i, &d.Elements[i], cw, ch); err != nil {
			return err
		}
	}
	return nil
}

func validateElement(kind string, i int, e *Element, cw, ch float64) error {
	field := func(f string) string { return fmt.Sprintf("elements[%d].%s", i, f) }
	bad := func(reason, f string) *app.Error {
		return app.ErrValidation(reason, field(f)).With("element", i)
	}
	if !elementTypes[e.Type] {
		return bad(ReasonElementInvalid, "type")
	}
	for _, v := range []float64{e.X, e.Y, e.W, e.H, e.X2, e.Y2, e.FontSize, e.StrokeWidth, e.Radius, e.LetterSpacing} {
		if !finite(v) {
			return bad(ReasonElementInvalid, "x")
		}
	}
	for _, c := range [...]struct{ f, v string }{{"color", e.Color}, {"fill", e.Fill}, {"stroke", e.Stroke}} {
		if c.v != "" && !colorOK(c.v) {
			return bad(ReasonColorInvalid, c.f)
		}
	}
	if e.StrokeWidth < 0 || e.StrokeWidth > MaxStrokeWidth {
		return bad(ReasonElementInvalid, "stroke_width")
	}
	if e.Type != "line" {
		if e.W <= 0 || e.W > MaxSizeMM {
			return bad(ReasonElementInvalid, "w")
		}
		if e.H <= 0 || e.H > MaxSizeMM {
			return bad(ReasonElementInvalid, "h")
		}
	}
	switch e.Type {
	case "text":
		if e.FontSize != 0 && (e.FontSize < MinFontSize || e.FontSize > MaxFontSize) {
			return bad(ReasonFontSizeInvalid, "font_size").With("min", MinFontSize).With("max", MaxFontSize)
		}
		switch e.Align {
		case "", "left", "center", "right", "start", "end":
		default:
			return bad(ReasonElementInvalid, "align")
		}
		if e.LetterSpacing < -5 || e.LetterSpacing > 50 {
			return bad(ReasonElementInvalid, "letter_spacing")
		}
		if e.Text == "" || utf8.RuneCountInString(e.Text) > MaxTextLen || !utf8.ValidString(e.Text) {
			return bad(ReasonElementInvalid, "text")
		}
	case "qr", "barcode":
		if e.Value == "" || utf8.RuneCountInString(e.Value) > MaxTextLen || !utf8.ValidString(e.Value) {
			return bad(ReasonElementInvalid, "value")
		}
		if e.Type == "barcode" {
			switch e.Symbology {
			case "", "code128", "ean13":
			default:
				return bad(ReasonElementInvalid, "symbology")
			}
		}
	case "image":
		if e.ImageID == "" {
			return bad(ReasonElementInvalid, "image_id")
		}
	case "rect":
		if e.Radius < 0 || e.Radius > MaxSizeMM {
			return bad(ReasonElementInvalid, "radius")
		}
	case "line":
		if e.X == e.X2 && e.Y == e.Y2 {
			return bad(ReasonElementInvalid, "x2")
		}
	}
	for _, f := range []struct{ name, s string }{{"text", e.Text}, {"value", e.Value}} {
		for _, v := range variables(f.s) {
			if !knownVar(kind, v) {
				return bad(ReasonVariableUnknown, f.name).With("variable", v)
			}
		}
	}
	x0, y0, x1, y1 := e.X, e.Y, e.X+e.W, e.Y+e.H
	if e.Type == "line" {
		x0, x1 = math.Min(e.X, e.X2), math.Max(e.X, e.X2)
		y0, y1 = math.Min(e.Y, e.Y2), math.Max(e.Y, e.Y2)
	}
	if x0 < -offCanvasTolMM || y0 < -offCanvasTolMM || x1 > cw+offCanvasTolMM || y1 > ch+offCanvasTolMM {
		return bad(ReasonOffCanvas, "x")
	}
	return nil
}

// canvas is the size the elements are placed on: the card of a card sheet,
// the page otherwise.
func (d *Design) canvas() (w, h float64) {
	if d.Kind == KindCardSheet && d.Card != nil {
		return d.Card.Width, d.Card.Height
	}
	return d.Page.Width, d.Page.Height
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func sizeOK(v float64) bool { return finite(v) && v > 0 && v <= MaxSizeMM }

func colorOK(s string) bool {
	_, ok := parseColor(s)
	return ok
}
