package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"xr/app"
)

// MaxBody is the largest JSON body accepted.
const MaxBody = 1 << 20

// decodeBody decodes a JSON object into the struct dst field by field, so a
// bad value is a 400 that names its field: malformed JSON, a wrong type, an
// unknown enum value, too many decimals. A field dst does not declare, at
// the top or inside a nested object (keys match exactly, as written in the
// json tags), is 400 unknown_field naming it ("items[0].name" when nested),
// so a misspelt or unsupported field is never silently dropped; only a
// top-level request_id passes everywhere. An empty body is an empty object.
//
// Text must be valid UTF-8: a field whose value holds invalid UTF-8 or a
// lone UTF-16 surrogate escape (which Go's decoder would silently replace
// by U+FFFD) is 400 invalid_utf8 naming it. A body not sent within the
// row's body deadline (see Server.BodyTimeout) is 408 request_timeout.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) error {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		err = bodyReadError(err)
		if app.AsError(err).Status == http.StatusRequestTimeout {
			// The rest of the body may still trickle in: never reuse.
			w.Header().Set("Connection", "close")
		}
		return err
	}
	return DecodeJSON(raw, dst)
}

// bodyReadError maps an error reading a request body.
func bodyReadError(err error) error {
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		return app.ErrValidation("body_too_large", "")
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &app.Error{Code: app.CodeTimeout, Status: http.StatusRequestTimeout, Reason: "request_timeout", Cause: err}
	}
	return app.ErrValidation("unreadable_body", "")
}

// DecodeJSON is decodeBody on bytes already read.
func DecodeJSON(raw []byte, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return app.ErrValidation("body_not_object", "")
		}
		return app.ErrValidation("malformed_json", "")
	}
	v := reflect.ValueOf(dst).Elem()
	if err := decodeFields(fields, v); err != nil {
		return err
	}
	if !validJSONText(raw) {
		// Outside every field we read (an object key, an ignored field):
		// still refused, as nothing of the body can be trusted to be text.
		for name, val := range fields {
			if !validJSONText(val) {
				return app.ErrValidation("invalid_utf8", name)
			}
		}
		return app.ErrValidation("invalid_utf8", "")
	}
	return unknownFields(fields, v.Type(), "", true)
}

// validJSONText tells whether JSON text is valid UTF-8 and every \u escape
// in it is a scalar value (a surrogate only as half of a pair), so decoding
// changes no character.
func validJSONText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			continue
		}
		if b[i+1] != 'u' {
			i++ // a two-byte escape; skipping it keeps "\\u" literal
			continue
		}
		r, ok := hex4(b, i+2)
		if !ok {
			return false
		}
		i += 5
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low surrogate alone
		case r >= 0xD800 && r <= 0xDBFF:
			if i+6 >= len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return false
			}
			lo, ok := hex4(b, i+3)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func decodeFields(fields map[string]json.RawMessage, v reflect.Value) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		// An embedded struct promotes its fields, as in encoding/json, even
		// when its type is unexported.
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if err := decodeFields(fields, v.Field(i)); err != nil {
				return err
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		name := jsonName(f)
		if name == "" {
			continue
		}
		raw, ok := fields[name]
		if !ok {
			continue
		}
		if !validJSONText(raw) {
			return app.ErrValidation("invalid_utf8", name)
		}
		if err := json.Unmarshal(raw, v.Field(i).Addr().Interface()); err != nil {
			return fieldError(name, err)
		}
	}
	return nil
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

func fieldError(field string, err error) error {
	var te *json.UnmarshalTypeError
	var ee *app.EnumError
	switch {
	case errors.As(err, &ee):
		return app.ErrValidation("invalid_enum", field).With("allowed", ee.Allowed)
	case errors.Is(err, app.ErrMoneyPrecision):
		return app.ErrValidation("too_many_decimals", field)
	case errors.Is(err, app.ErrMoneyRange):
		return app.ErrAmountOutOfRange(field)
	case errors.As(err, &te):
		return app.ErrValidation("invalid_type", field)
	}
	return app.ErrValidation("invalid_value", field)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// unknownFields refuses, with 400 unknown_field, an object key that struct
// type t does not declare, and recurses into nested objects and arrays of
// objects. A type with its own UnmarshalJSON (app.Opt, app.Money, enums) and
// a map or interface value accept what they accept; a value of the wrong
// shape is left to the decoder, which names it (invalid_type).
func unknownFields(fields map[string]json.RawMessage, t reflect.Type, prefix string, top bool) error {
	known := map[string]reflect.Type{}
	structFields(t, known)
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names) // several unknown fields: always the same one named
	for _, name := range names {
		raw := fields[name]
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		ft, ok := known[name]
		if !ok {
			if top && name == "request_id" {
				continue
			}
			return app.ErrValidation("unknown_field", path)
		}
		if err := unknownIn(raw, ft, path); err != nil {
			return err
		}
	}
	return nil
}

// structFields collects the JSON names of t's fields (embedded structs
// promote theirs) with their types.
func structFields(t reflect.Type, into map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			structFields(f.Type, into)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name := jsonName(f); name != "" {
			into[name] = f.Type
		}
	}
}

func unknownIn(raw json.RawMessage, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil {
			return nil // not an object (or null): the decoder answers
		}
		return unknownFields(fields, t, path, false)
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, item := range items {
			if err := unknownIn(item, t.Elem(), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		var items map[string]json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for k, item := range items {
			if err := unknownIn(item, t.Elem(), path+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}
