package web_test

import (
	"testing"

	"xr/app"
	"xr/web"
)

// TestDecodeJSONUnknownFieldsNested: an undeclared key inside a nested
// object, an array of objects or a map of objects is 400 unknown_field
// naming its path; request_id passes only at the top; a type with its own
// UnmarshalJSON, a map or an interface value takes what it takes.
func TestDecodeJSONUnknownFieldsNested(t *testing.T) {
	t.Parallel()
	type item struct {
		Name string `json:"name"`
	}
	type body struct {
		Item   item            `json:"item"`
		Ptr    *item           `json:"ptr"`
		Items  []item          `json:"items"`
		ByName map[string]item `json:"by_name"`
		Free   map[string]any  `json:"free"`
		Any    any             `json:"any"`
		Opt    app.Opt[int64]  `json:"opt"`
	}
	for in, field := range map[string]string{
		`{"item":{"name":"a","nmae":"b"}}`:            "item.nmae",
		`{"ptr":{"x":1}}`:                             "ptr.x",
		`{"items":[{"name":"a"},{"name":"b","x":1}]}`: "items[1].x",
		`{"by_name":{"k":{"x":1}}}`:                   "by_name.k.x",
		`{"item":{"request_id":"r"}}`:                 "item.request_id",
		`{"items":[{"name":"a"}],"zz":1}`:             "zz",
	} {
		var b body
		xrtest400(t, in, web.DecodeJSON([]byte(in), &b), "unknown_field", field)
	}
	var b body
	ok := `{"request_id":"r","item":{"name":"a"},"ptr":null,"items":[],"by_name":{"k":{"name":"n"}},"free":{"any":{"thing":1}},"any":{"x":[1]},"opt":null}`
	if err := web.DecodeJSON([]byte(ok), &b); err != nil || b.ByName["k"].Name != "n" || b.Item.Name != "a" {
		t.Fatalf("%s: %+v %v", ok, b, err)
	}
	// A value of the wrong shape is still the decoder's invalid_type.
	xrtest400(t, `{"item":[1]}`, web.DecodeJSON([]byte(`{"item":[1]}`), &b), "invalid_type", "item")
}

func xrtest400(t *testing.T, in string, err error, reason, field string) {
	t.Helper()
	e := app.AsError(err)
	if e == nil || e.Status != 400 || e.Code != app.CodeValidation || e.Reason != reason || e.Field != field {
		t.Errorf("%s: %v, want 400 %s field %q", in, err, reason, field)
	}
}
