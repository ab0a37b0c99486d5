package app

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Money is an exact amount in thousandths of the major unit. On the wire it
// is a JSON number in major units with at most three decimals.
type Money int64

// Scale is thousandths per major unit.
const Scale = 1000

// ErrMoneyPrecision marks an amount with more than three decimals.
var ErrMoneyPrecision = errors.New("more than 3 decimals")

// ParseMoney parses a decimal string such as "12.5" or "-0.125" exactly.
func ParseMoney(s string) (Money, error) {
	s = strings.TrimSpace(s)
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	if s == "" {
		return 0, errors.New("empty amount")
	}
	if strings.ContainsAny(s, "eE") {
		// Exponent notation: accept only if exactly representable.
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, err
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" || strings.Trim(intPart, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 3 {
		return 0, ErrMoneyPrecision
	}
	frac += strings.Repeat("0", 3-len(frac))
	ip, err := strconv.ParseInt(intPart, 10, 64)
	if err != nil || ip > math.MaxInt64/Scale-1 {
		return 0, errors.New("amount out of range")
	}
	fp, _ := strconv.ParseInt(frac, 10, 64)
	v := ip*Scale + fp
	if neg {
		v = -v
	}
	return Money(v), nil
}

// String renders major units with no trailing zeros: 12.5, 3, -0.125.
func (m Money) String() string {
	v := int64(m)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	s := sign + strconv.FormatInt(v/Scale, 10)
	if f := v % Scale; f != 0 {
		s += strings.TrimRight(fmt.Sprintf(".%03d", f), "0")
	}
	return s
}

func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

func (m *Money) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return errors.New("null amount")
	}
	if len(b) > 0 && b[0] != '-' && (b[0] < '0' || b[0] > '9') {
		return &json.UnmarshalTypeError{Value: "non-number", Type: reflect.TypeOf(m).Elem()}
	}
	v, err := ParseMoney(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// TimeLayout is the spec's timestamp format, always UTC.
const TimeLayout = "2006-01-02 15:04:05"

// DateLayout is the date-only form accepted where the spec says so.
const DateLayout = "2006-01-02"

// FormatTime renders t in the spec's format, UTC.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime parses the spec's timestamp; dateOK also accepts yyyy-MM-dd
// (as the start of that day, UTC).
func ParseTime(s string, dateOK bool) (time.Time, error) {
	if t, err := time.ParseInLocation(TimeLayout, s, time.UTC); err == nil {
		return t, nil
	}
	if dateOK {
		if t, err := time.ParseInLocation(DateLayout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a timestamp: %q", s)
}

// Time is a UTC timestamp in the spec's wire format; the zero value is JSON
// null. Its database form is the same text, which sorts chronologically.
type Time struct{ time.Time }

// T wraps t.
func T(t time.Time) Time { return Time{t.UTC().Truncate(time.Second)} }

func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(FormatTime(t.Time))
}

func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*t = Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("timestamp must be a string yyyy-MM-dd HH:mm:ss")
	}
	v, err := ParseTime(s, false)
	if err != nil {
		return err
	}
	*t = Time{v}
	return nil
}

// Value stores the wire text, or NULL for the zero time.
func (t Time) Value() (driver.Value, error) {
	if t.IsZero() {
		return nil, nil
	}
	return FormatTime(t.Time), nil
}

// Scan reads the text form (or NULL).
func (t *Time) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*t = Time{}
	case string:
		p, err := ParseTime(v, true)
		if err != nil {
			return err
		}
		*t = Time{p}
	case []byte:
		return t.Scan(string(v))
	case time.Time:
		*t = T(v)
	default:
		return fmt.Errorf("cannot scan %T into Time", src)
	}
	return nil
}

// DateOrTime is a request timestamp that also accepts yyyy-MM-dd.
type DateOrTime struct{ Time }

func (t *DateOrTime) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*t = DateOrTime{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("timestamp must be a string")
	}
	v, err := ParseTime(s, true)
	if err != nil {
		return err
	}
	t.Time = Time{v}
	return nil
}

// Opt is a PATCH field: Set tells "present in the body", Null "present as
// null", V the value otherwise.
type Opt[T any] struct {
	Set  bool
	Null bool
	V    T
}

func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(b, []byte("null")) {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.V)
}

// Now is the clock, replaceable in tests.
var Now = func() time.Time { return time.Now().UTC() }

// NowText is Now in the wire/database format.
func NowText() string { return FormatTime(Now()) }

// EnumError is returned by enum types' UnmarshalJSON for a value outside
// their set; the decoder turns it into 400 invalid_enum naming the field.
type EnumError struct{ Allowed []string }

func (e *EnumError) Error() string { return "must be one of " + strings.Join(e.Allowed, ", ") }

// ParseEnum decodes a JSON string that must be one of allowed.
func ParseEnum(b []byte, allowed ...string) (string, error) {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return "", &EnumError{Allowed: allowed}
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", &EnumError{Allowed: allowed}
}
