// Package render is the design studio's document model and its renderers:
// the JSON design every printed or served thing is drawn from (card sheets,
// receipts, invoices, hotspot pages), its validation against the published
// variable catalogue, a PNG thumbnail and the PDF card sheet. It knows no
// database: callers load designs and images and pass them in.
package render

// Design kinds.
const (
	KindCardSheet   = "card_sheet"
	KindReceipt     = "receipt"
	KindInvoice     = "invoice"
	KindHotspotPage = "hotspot_page"
)

// Design is a design document. Lengths are millimetres; the origin is the
// top-left corner of the canvas. The canvas is Card for a card sheet (the
// cards are laid out in a grid on Page) and Page for every other kind.
type Design struct {
	Kind       string    `json:"kind"`
	Page       Size      `json:"page"`           // sheet or page size
	Card       *CardGrid `json:"card,omitempty"` // card_sheet only
	Background string    `json:"background,omitempty"`
	Elements   []Element `json:"elements"`
}

// Size is a page size with its margin.
type Size struct {
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Margin float64 `json:"margin,omitempty"`
}

// CardGrid is the size of one card of a sheet and the gap between cards.
type CardGrid struct {
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Gap    float64 `json:"gap,omitempty"`
}

// Element is one drawn thing. Type is text, qr, barcode, image, rect or
// line; the fields each type reads are listed beside them.
type Element struct {
	Type string  `json:"type"`
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	W    float64 `json:"w,omitempty"`  // text, qr, barcode, image, rect
	H    float64 `json:"h,omitempty"`  // text, qr, barcode, image, rect
	X2   float64 `json:"x2,omitempty"` // line
	Y2   float64 `json:"y2,omitempty"` // line

	// Text may hold {variables} and line breaks; a tab in a line puts
	// what follows it at the box's end edge (Align is then ignored). A
	// line wider than W is shrunk to fit (down to 2 pt). The first
	// baseline sits one ascent below Y.
	Text     string  `json:"text,omitempty"`      // text: may hold {variables}
	FontSize float64 `json:"font_size,omitempty"` // text, points
	Bold     bool    `json:"bold,omitempty"`      // text
	Align    string  `json:"align,omitempty"`     // text: left, center, right (mirrored for right-to-left text when "start"/"end")
	Color    string  `json:"color,omitempty"`     // text, qr, barcode: #rrggbb
	// LetterSpacing is extra space after every character, in points (text).
	LetterSpacing float64 `json:"letter_spacing,omitempty"`

	Value     string `json:"value,omitempty"`     // qr, barcode: may hold {variables}
	Symbology string `json:"symbology,omitempty"` // barcode: code128 (default) or ean13

	ImageID string `json:"image_id,omitempty"` // image: the design image's id

	Fill        string  `json:"fill,omitempty"`         // rect: #rrggbb
	Stroke      string  `json:"stroke,omitempty"`       // rect, line: #rrggbb
	StrokeWidth float64 `json:"stroke_width,omitempty"` // rect, line
	Radius      float64 `json:"radius,omitempty"`       // rect
}

// Vars are the values of one rendering's variables, by name without braces
// ("code" for {code}).
type Vars map[string]string

// Images are the decoded bytes of the images a design refers to, by image id.
type Images map[string][]byte
