package render

import (
	"encoding/json"
	"math"
	"slices"
	"testing"

	"xr/app"
)

func TestDefaultDesignsPassValidate(t *testing.T) {
	for _, k := range Kinds() {
		d := DefaultDesign(k)
		if d == nil || d.Kind != k {
			t.Fatalf("DefaultDesign(%q) = %+v", k, d)
		}
		if err := Validate(d); err != nil {
			t.Errorf("DefaultDesign(%q) fails Validate: %v", k, err)
		}
		// every variable a default design uses has a sample
		v := SampleVars(k)
		for _, e := range d.Elements {
			for _, name := range append(variables(e.Text), variables(e.Value)...) {
				if v[name] == "" {
					t.Errorf("%s: {%s} has no sample", k, name)
				}
			}
		}
	}
	if DefaultDesign("poster") != nil {
		t.Fatal("an unknown kind has no default design")
	}
	// a fresh copy each call: changing one does not change the next
	d := DefaultDesign(KindCardSheet)
	d.Elements[0].X = 99
	if DefaultDesign(KindCardSheet).Elements[0].X == 99 {
		t.Fatal("DefaultDesign returned shared state")
	}
}

// The card engineer fills exactly these names from a card; receipts and
// hotspot pages have theirs.
func TestCatalogueNames(t *testing.T) {
	want := map[string][]string{
		KindCardSheet:   {"code", "serial", "username", "password", "plan", "face_value", "currency", "expiration", "tenant_name", "qr_payload"},
		KindReceipt:     {"tenant_name", "number", "date", "customer", "username", "plan", "amount", "currency", "cashier", "items"},
		KindInvoice:     {"tenant_name", "number", "date", "customer", "username", "plan", "amount", "currency", "cashier", "items"},
		KindHotspotPage: {"tenant_name", "portal_url", "shop_url", "signup_url", "support_phone"},
	}
	c := Catalogue()
	if len(c) != len(want) {
		t.Fatalf("kinds = %d, want %d", len(c), len(want))
	}
	for k, names := range want {
		var got []string
		for _, v := range c[k] {
			if v.Description == "" || v.Sample == "" {
				t.Errorf("%s.%s lacks a description or sample", k, v.Name)
			}
			got = append(got, v.Name)
		}
		if !slices.Equal(got, names) {
			t.Errorf("%s: %v, want %v", k, got, names)
		}
	}
	// the published copy cannot change the catalogue
	c[KindCardSheet][0].Name = "changed"
	if Catalogue()[KindCardSheet][0].Name != "code" {
		t.Fatal("Catalogue returned shared state")
	}
	if got := Substitute("{code}-{serial}{nope} {x", Vars{"code": "A", "serial": "B"}); got != "A-B {x" {
		t.Fatalf("Substitute = %q", got)
	}
}

func TestValidateRefusals(t *testing.T) {
	card := func(mut func(d *Design)) *Design {
		d := DefaultDesign(KindCardSheet)
		mut(d)
		return d
	}
	textAt := func(e Element) func(d *Design) {
		return func(d *Design) { d.Elements = append(d.Elements, e) }
	}
	many := make([]Element, MaxElements+1)
	for i := range many {
		many[i] = Element{Type: "rect", X: 1, Y: 1, W: 1, H: 1, Fill: "#000000"}
	}
	n := len(DefaultDesign(KindCardSheet).Elements) // index of an appended element
	cases := []struct {
		name    string
		d       *Design
		reason  string
		field   string
		element int // -1: no element named
	}{
		{"nil", nil, ReasonKindInvalid, "kind", -1},
		{"kind", card(func(d *Design) { d.Kind = "poster" }), ReasonKindInvalid, "kind", -1},
		{"page zero", card(func(d *Design) { d.Page.Width = 0 }), ReasonSizeInvalid, "page", -1},
		{"page huge", card(func(d *Design) { d.Page.Height = 1000.5 }), ReasonSizeInvalid, "page", -1},
		{"page NaN", card(func(d *Design) { d.Page.Width = math.NaN() }), ReasonSizeInvalid, "page", -1},
		{"margin", card(func(d *Design) { d.Page.Margin = 105 }), ReasonSizeInvalid, "page.margin", -1},
		{"no card", card(func(d *Design) { d.Card = nil }), ReasonSizeInvalid, "card", -1},
		{"card negative", card(func(d *Design) { d.Card.Height = -1 }), ReasonSizeInvalid, "card", -1},
		{"card bigger than page", card(func(d *Design) { d.Card.Width = 200 }), ReasonSizeInvalid, "card", -1},
		{"gap", card(func(d *Design) { d.Card.Gap = -1 }), ReasonSizeInvalid, "card.gap", -1},
		{"background", card(func(d *Design) { d.Background = "white" }), ReasonColorInvalid, "background", -1},
		{"too many", card(func(d *Design) { d.Elements = many }), ReasonTooMany, "elements", -1},
		{"type", card(textAt(Element{Type: "circle", X: 1, Y: 1, W: 1, H: 1})), ReasonElementInvalid, "type", n},
		{"no width", card(textAt(Element{Type: "rect", X: 1, Y: 1, H: 1})), ReasonElementInvalid, "w", n},
		{"empty text", card(textAt(Element{Type: "text", X: 1, Y: 1, W: 10, H: 5})), ReasonElementInvalid, "text", n},
		{"align", card(textAt(Element{Type: "text", X: 1, Y: 1, W: 10, H: 5, Text: "a", Align: "justify"})), ReasonElementInvalid, "align", n},
		{"symbology", card(textAt(Element{Type: "barcode", X: 1, Y: 1, W: 10, H: 5, Value: "1", Symbology: "pdf417"})), ReasonElementInvalid, "symbology", n},
		{"qr value", card(textAt(Element{Type: "qr", X: 1, Y: 1, W: 10, H: 10})), ReasonElementInvalid, "value", n},
		{"image id", card(textAt(Element{Type: "image", X: 1, Y: 1, W: 10, H: 10})), ReasonElementInvalid, "image_id", n},
		{"zero line", card(textAt(Element{Type: "line", X: 1, Y: 1, X2: 1, Y2: 1})), ReasonElementInvalid, "x2", n},
		{"stroke width", card(textAt(Element{Type: "line", X: 1, Y: 1, X2: 5, Y2: 1, StrokeWidth: 21})), ReasonElementInvalid, "stroke_width", n},
		{"colour", card(func(d *Design) { d.Elements[3].Color = "#fff" }), ReasonColorInvalid, "color", 3},
		{"fill", card(func(d *Design) { d.Elements[1].Fill = "#12345g" }), ReasonColorInvalid, "fill", 1},
		{"font small", card(func(d *Design) { d.Elements[4].FontSize = 1 }), ReasonFontSizeInvalid, "font_size", 4},
		{"font big", card(func(d *Design) { d.Elements[4].FontSize = 201 }), ReasonFontSizeInvalid, "font_size", 4},
		{"variable", card(func(d *Design) { d.Elements[6].Text = "PIN {pin}" }), ReasonVariableUnknown, "text", 6},
		{"variable of another kind", card(func(d *Design) { d.Elements[10].Value = "{portal_url}" }), ReasonVariableUnknown, "value", 10},
		{"off canvas right", card(textAt(Element{Type: "rect", X: 80, Y: 1, W: 5.02, H: 1, Fill: "#000000"})), ReasonOffCanvas, "x", n},
		{"off canvas top", card(textAt(Element{Type: "text", X: 1, Y: -0.02, W: 5, H: 1, Text: "x"})), ReasonOffCanvas, "x", n},
		{"line off canvas", card(textAt(Element{Type: "line", X: 1, Y: 1, X2: 86, Y2: 1})), ReasonOffCanvas, "x", n},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(c.d)
			e := app.AsError(err)
			if e == nil {
				t.Fatalf("Validate = %v, want a 400 %s", err, c.reason)
			}
			if e.Status != 400 || e.Code != app.CodeValidation || e.Reason != c.reason {
				t.Fatalf("Validate = %d %s %s, want 400 %s %s", e.Status, e.Code, e.Reason, app.CodeValidation, c.reason)
			}
			wantField := c.field
			if c.element >= 0 {
				wantField = "elements[" + itoa(c.element) + "]." + c.field
				if got, ok := e.Details["element"]; !ok || got != c.element {
					t.Fatalf("details.element = %v, want %d", got, c.element)
				}
			}
			if e.Field != wantField {
				t.Fatalf("field = %q, want %q", e.Field, wantField)
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// An unknown variable and an element off the canvas name the element (and
// the variable); inside the 0.01 mm tolerance is accepted.
func TestValidateNamesElementAndVariable(t *testing.T) {
	d := DefaultDesign(KindReceipt)
	d.Elements[4].Text = "Customer: {customer} ({phone})"
	e := app.AsError(Validate(d))
	if e == nil || e.Reason != ReasonVariableUnknown || e.Details["element"] != 4 || e.Details["variable"] != "phone" {
		t.Fatalf("unknown variable: %+v", e)
	}

	d = DefaultDesign(KindReceipt)
	d.Elements[2].X = 10 // 10 + 72 > 80
	e = app.AsError(Validate(d))
	if e == nil || e.Reason != ReasonOffCanvas || e.Details["element"] != 2 || e.Field != "elements[2].x" {
		t.Fatalf("off canvas: %+v", e)
	}

	d = DefaultDesign(KindCardSheet)
	d.Elements = append(d.Elements, Element{Type: "rect", X: -0.009, Y: 0, W: 85.018, H: 54.009, Fill: "#000000"})
	if err := Validate(d); err != nil {
		t.Fatalf("inside the tolerance: %v", err)
	}
	// JSON names the others rely on
	b, err := json.Marshal(DefaultDesign(KindCardSheet))
	if err != nil {
		t.Fatal(err)
	}
	var round Design
	if err := json.Unmarshal(b, &round); err != nil || Validate(&round) != nil {
		t.Fatalf("round trip: %v %v", err, Validate(&round))
	}
}
