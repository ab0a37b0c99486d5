package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"

	"xr/app"
)

// MaxBody is the largest JSON body accepted.
const MaxBody = 1 << 20

// decodeBody decodes a JSON object into the struct dst field by field, so a
// bad value is a 400 that names its field: malformed JSON, a wrong type, an
// unknown enum value, too many decimals. Unknown fields are ignored. An
// empty body is an empty object.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) error {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return app.ErrValidation("body_too_large", "")
		}
		return app.ErrValidation("unreadable_body", "")
	}
	return DecodeJSON(raw, dst)
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
	return decodeFields(fields, v)
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
	case errors.As(err, &te):
		return app.ErrValidation("invalid_type", field)
	}
	return app.ErrValidation("invalid_value", field)
}
