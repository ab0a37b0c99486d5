package render

import (
	"errors"
	"io"
)

// CONTRACT (lead): the signatures below are what app/studio, app/cards and
// app/hotspot call. The render engineer replaces these bodies (and this
// comment) with the real implementation in their own files.

var errNotBuilt = errors.New("render: not built yet")

// Variable is one entry of the published variable catalogue.
type Variable struct {
	Name        string `json:"name"` // without braces
	Description string `json:"description"`
	Sample      string `json:"sample"`
}

// Catalogue lists the variables each kind may use, by kind.
func Catalogue() map[string][]Variable { return map[string][]Variable{} }

// Validate checks a design: kind, sizes, element types, colours, every
// {variable} against the kind's catalogue and every element inside the
// canvas. A refusal is an *app.Error 400 whose details name the element
// (index) and the reason (design_variable_unknown, design_element_off_canvas, ...).
func Validate(d *Design) error { return errNotBuilt }

// DefaultDesign is the built-in design of a kind, used when none is chosen.
func DefaultDesign(kind string) *Design { return &Design{Kind: kind} }

// SampleVars are the catalogue's sample values for a kind (thumbnails, previews).
func SampleVars(kind string) Vars { return Vars{} }

// PNG renders the design's canvas (one card for a card sheet) with vars
// to a PNG at most maxPx pixels on its longer side.
func PNG(d *Design, v Vars, imgs Images, maxPx int) ([]byte, error) { return nil, errNotBuilt }

// Sheet is a PDF card sheet being built: Add one card at a time, then
// WriteTo. Text is set in an embedded Unicode font, shaped (Arabic joined,
// right to left) and extractable.
type Sheet struct{}

// NewSheet starts a card sheet of a card_sheet design.
func NewSheet(d *Design, imgs Images) (*Sheet, error) { return nil, errNotBuilt }

// Add lays out one card.
func (s *Sheet) Add(v Vars) error { return errNotBuilt }

// WriteTo writes the PDF.
func (s *Sheet) WriteTo(w io.Writer) (int64, error) { return 0, errNotBuilt }
