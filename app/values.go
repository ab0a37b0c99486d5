package app

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Money is an exact amount in thousandths of the major unit. On the wire it
// is a JSON number in major units with at most three decimals.
//
// Every amount is within ±MaxAmount (ParseMoney and UnmarshalJSON refuse
// more: 400 amount_out_of_range) and every stored running total (a
// subscriber's balance and debt, a manager's wallet and loans) within
// ±MaxBalance; arithmetic on stored money goes through the checked Add, Sub,
// Neg, Mul and MulDiv, which never wrap.
type Money int64

// Scale is thousandths per major unit.
const Scale = 1000

// MaxAmount is the largest amount a request, a price, a face value or a
// limit may carry: 10^12 major units.
const MaxAmount Money = 1_000_000_000_000 * Scale

// MaxBalance bounds every stored running total of money (subscriber balance
// and debt, manager wallet, outstanding loans): ±10^12 major units. It is
// not above MaxAmount, so any stored outcome reads back as an amount.
const MaxBalance Money = MaxAmount

// MaxPoints bounds reward-point balances (subscribers and managers).
const MaxPoints int64 = 1_000_000_000_000

// ErrMoneyPrecision marks an amount with more than three decimals.
var ErrMoneyPrecision = errors.New("more than 3 decimals")

// ErrMoneyRange marks an amount beyond ±MaxAmount (or not representable at
// all); the decoder answers it with 400 amount_out_of_range.
var ErrMoneyRange = errors.New("amount out of range")

// ErrAmountOutOfRange is the 400 of an amount beyond ±MaxAmount.
func ErrAmountOutOfRange(field string) *Error {
	return ErrValidation("amount_out_of_range", field).With("max_amount", MaxAmount)
}

// ErrBalanceOutOfRange is the 409 of a movement that would take a stored
// balance (or debt, or point balance) beyond its maximum. Nothing is
// written then.
func ErrBalanceOutOfRange() *Error {
	return ErrConflict("balance_out_of_range").With("max_balance", MaxBalance)
}

// ParseMoney parses a decimal string such as "12.5" or "-0.125" exactly.
// More than three decimals is ErrMoneyPrecision; beyond ±MaxAmount is
// ErrMoneyRange.
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
		if errors.Is(err, strconv.ErrRange) {
			return 0, ErrMoneyRange
		}
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
	if err != nil || ip > int64(MaxAmount/Scale) {
		return 0, ErrMoneyRange
	}
	fp, _ := strconv.ParseInt(frac, 10, 64)
	v := ip*Scale + fp
	if v > int64(MaxAmount) {
		return 0, ErrMoneyRange
	}
	if neg {
		v = -v
	}
	return Money(v), nil
}

// InAmountRange tells whether m is within ±MaxAmount.
func (m Money) InAmountRange() bool { return m >= -MaxAmount && m <= MaxAmount }

// Add is m+n as a stored running total: 409 balance_out_of_range when the
// sum overflows or leaves ±MaxBalance.
func (m Money) Add(n Money) (Money, error) {
	s := int64(m) + int64(n)
	if (n > 0 && s < int64(m)) || (n < 0 && s > int64(m)) || s > int64(MaxBalance) || s < -int64(MaxBalance) {
		return m, ErrBalanceOutOfRange()
	}
	return Money(s), nil
}

// Sub is m-n with the checks of Add.
func (m Money) Sub(n Money) (Money, error) {
	neg, err := n.Neg()
	if err != nil {
		return m, ErrBalanceOutOfRange()
	}
	return m.Add(neg)
}

// Neg is -m: 400 amount_out_of_range for the one value without a negation.
func (m Money) Neg() (Money, error) {
	if m == math.MinInt64 {
		return m, ErrAmountOutOfRange("amount")
	}
	return -m, nil
}

// Mul is m×n as an amount (a unit price times a quantity): 400
// amount_out_of_range when it overflows or leaves ±MaxAmount.
func (m Money) Mul(n int64) (Money, error) {
	return m.MulDiv(n, 1)
}

// MulDiv is m×num/den (truncated toward zero) computed without
// intermediate overflow, as an amount: 400 amount_out_of_range beyond
// ±MaxAmount (or for den 0).
func (m Money) MulDiv(num, den int64) (Money, error) {
	if den == 0 {
		return m, ErrAmountOutOfRange("amount")
	}
	p := new(big.Int).Mul(big.NewInt(int64(m)), big.NewInt(num))
	p.Quo(p, big.NewInt(den))
	if !p.IsInt64() || !Money(p.Int64()).InAmountRange() {
		return m, ErrAmountOutOfRange("amount")
	}
	return Money(p.Int64()), nil
}

// AddPoints is a reward-point balance plus delta: 409 balance_out_of_range
// when it overflows or leaves ±MaxPoints.
func AddPoints(cur, delta int64) (int64, error) {
	s := cur + delta
	if (delta > 0 && s < cur) || (delta < 0 && s > cur) || s > MaxPoints || s < -MaxPoints {
		return cur, ErrConflict("balance_out_of_range").With("max_points", MaxPoints)
	}
	return s, nil
}

// String renders major units with no trailing zeros: 12.5, 3, -0.125.
func (m Money) String() string {
	v := int64(m)
	sign := ""
	if v < 0 {
		sign = "-"
	}
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	s := sign + strconv.FormatUint(u/Scale, 10)
	if f := u % Scale; f != 0 {
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
