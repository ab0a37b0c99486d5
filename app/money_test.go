package app

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"testing/quick"
	"time"
)

func TestParseMoney(t *testing.T) {
	t.Parallel()
	ok := map[string]Money{
		"0": 0, "12": 12000, "12.5": 12500, "12.50": 12500, "12.500000": 12500, "0.001": 1, "-0.125": -125,
		"-5": -5000, "-0": 0, "1.2340": 1234, "007.5": 7500, " 3.25 ": 3250,
		"1e3": 1_000_000, "1E3": 1_000_000, "1.5e-2": 15, "2.5E+1": 25000, "1e-3": 1, "-1.25e1": -12500,
		"1000000000000": MaxAmount, "-1000000000000": -MaxAmount, "999999999999.999": MaxAmount - 1, "1e12": MaxAmount,
	}
	for s, want := range ok {
		got, err := ParseMoney(s)
		if err != nil || got != want {
			t.Errorf("ParseMoney(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	precision := []string{"1.2345", "0.0001", "-0.1234", "1e-4", "1.2345e0", "12.3456789"}
	for _, s := range precision {
		if _, err := ParseMoney(s); !errors.Is(err, ErrMoneyPrecision) {
			t.Errorf("ParseMoney(%q): %v, want ErrMoneyPrecision", s, err)
		}
	}
	bad := []string{"", "-", "abc", "1,5", "1.2.3", "--5", "+5", ".5", "0x10", "NaN", "Inf", "1e", "5 5", "١٢"}
	for _, s := range bad {
		if v, err := ParseMoney(s); err == nil {
			t.Errorf("ParseMoney(%q) = %d, want an error", s, v)
		} else if errors.Is(err, ErrMoneyPrecision) || errors.Is(err, ErrMoneyRange) {
			t.Errorf("ParseMoney(%q): a malformed amount is not a precision or range error: %v", s, err)
		}
	}
	// Beyond ±MaxAmount (10^12 major units): ErrMoneyRange, never a wrap.
	huge := []string{"1000000000000.001", "-1000000000000.001", "1e13", "9e15", "9.2e15", "9223372036854774", "9223372036854774.807",
		"9223372036854775807", "9223372036854775", "99999999999999999999", "1e30", "-1e30", "1e400"}
	for _, s := range huge {
		if v, err := ParseMoney(s); !errors.Is(err, ErrMoneyRange) {
			t.Errorf("ParseMoney(%q) = %d, %v; want ErrMoneyRange", s, v, err)
		}
	}
}

func TestMoneyString(t *testing.T) {
	t.Parallel()
	for m, want := range map[Money]string{
		0: "0", 1: "0.001", 10: "0.01", 100: "0.1", 12500: "12.5", 12000: "12", -125: "-0.125", -5000: "-5",
		1234: "1.234", 1_000_001: "1000.001", Money(math.MaxInt64): "9223372036854775.807", Money(math.MinInt64): "-9223372036854775.808",
	} {
		if got := m.String(); got != want {
			t.Errorf("Money(%d).String() = %q, want %q", int64(m), got, want)
		}
	}
}

func TestMoneyJSONRoundTrip(t *testing.T) {
	t.Parallel()
	type body struct {
		Amount Money  `json:"amount"`
		Fee    *Money `json:"fee"`
	}
	for _, m := range []Money{0, 1, -1, 999, 12500, -125, 1_000_000_000_000, MaxAmount, -MaxAmount} {
		b, err := json.Marshal(body{Amount: m})
		if err != nil {
			t.Fatal(err)
		}
		var back body
		if err := json.Unmarshal(b, &back); err != nil || back.Amount != m {
			t.Errorf("round trip of %d via %s: %d %v", int64(m), b, int64(back.Amount), err)
		}
		// The wire form is a JSON number in major units, never a string.
		var generic map[string]any
		json.Unmarshal(b, &generic)
		if _, isNum := generic["amount"].(float64); !isNum {
			t.Errorf("%d marshalled as %s: not a JSON number", int64(m), b)
		}
	}
	if b, _ := json.Marshal(body{Amount: 12500}); !strings.Contains(string(b), `"amount":12.5`) {
		t.Errorf("wire form: %s", b)
	}

	var v body
	if err := json.Unmarshal([]byte(`{"amount": 10.25, "fee": 0.5}`), &v); err != nil || v.Amount != 10250 || v.Fee == nil || *v.Fee != 500 {
		t.Fatalf("decode: %+v %v", v, err)
	}
	if err := json.Unmarshal([]byte(`{"amount": 10.2555}`), &v); !errors.Is(err, ErrMoneyPrecision) {
		t.Fatalf("4 decimals in JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"amount": 1e-4}`), &v); !errors.Is(err, ErrMoneyPrecision) {
		t.Fatalf("exponent with 4 decimals in JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"amount": 9e15}`), &v); !errors.Is(err, ErrMoneyRange) {
		t.Fatalf("9e15 in JSON: %v", err)
	}
	for _, in := range []string{`{"amount": "10"}`, `{"amount": null}`, `{"amount": true}`, `{"amount": 1e30}`} {
		var v body
		if err := json.Unmarshal([]byte(in), &v); err == nil {
			t.Errorf("%s: accepted as %d", in, int64(v.Amount))
		}
	}
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	got, err := ParseTime("2024-02-29 23:59:58", false)
	if err != nil || !got.Equal(time.Date(2024, 2, 29, 23, 59, 58, 0, time.UTC)) || got.Location() != time.UTC {
		t.Fatalf("ParseTime: %v %v", got, err)
	}
	if _, err := ParseTime("2024-02-29", false); err == nil {
		t.Fatal("date-only accepted where not allowed")
	}
	if d, err := ParseTime("2024-02-29", true); err != nil || !d.Equal(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("date-only: %v %v", d, err)
	}
	for _, s := range []string{"", "2024-02-30 00:00:00", "2023-02-29", "2024-01-02T03:04:05Z", "2024-01-02 03:04", "02/01/2024",
		"2024-01-02 03:04:05+02:00", "2024-01-02 24:00:00", "1704164645"} {
		if v, err := ParseTime(s, true); err == nil {
			t.Errorf("ParseTime(%q) accepted as %v", s, v)
		}
	}
	// FormatTime renders UTC whatever the zone of its input.
	tz := time.FixedZone("X", 3*3600)
	if s := FormatTime(time.Date(2024, 1, 2, 3, 4, 5, 999, tz)); s != "2024-01-02 00:04:05" {
		t.Fatalf("FormatTime: %s", s)
	}
}

func TestTimeJSONAndSQL(t *testing.T) {
	t.Parallel()
	type body struct {
		At   Time       `json:"at"`
		From DateOrTime `json:"from"`
	}
	var b body
	if err := json.Unmarshal([]byte(`{"at":"2024-05-06 07:08:09","from":"2024-05-06"}`), &b); err != nil {
		t.Fatal(err)
	}
	if FormatTime(b.At.Time) != "2024-05-06 07:08:09" || FormatTime(b.From.Time.Time) != "2024-05-06 00:00:00" {
		t.Fatalf("decoded %+v", b)
	}
	if err := json.Unmarshal([]byte(`{"from":"2024-05-06 01:02:03"}`), &b); err != nil || FormatTime(b.From.Time.Time) != "2024-05-06 01:02:03" {
		t.Fatalf("DateOrTime full form: %v %v", b.From, err)
	}
	for _, in := range []string{`{"at":"2024-05-06"}`, `{"at":1714979289}`, `{"at":"2024-05-06T07:08:09Z"}`, `{"from":"tomorrow"}`, `{"from":20240506}`} {
		var b body
		if err := json.Unmarshal([]byte(in), &b); err == nil {
			t.Errorf("%s accepted: %+v", in, b)
		}
	}
	// null and zero.
	b = body{}
	if err := json.Unmarshal([]byte(`{"at":null,"from":null}`), &b); err != nil || !b.At.IsZero() || !b.From.IsZero() {
		t.Fatalf("null: %+v %v", b, err)
	}
	out, _ := json.Marshal(body{At: T(time.Date(2024, 5, 6, 7, 8, 9, 123456, time.UTC))})
	if string(out) != `{"at":"2024-05-06 07:08:09","from":null}` {
		t.Fatalf("marshal: %s", out)
	}
	// T truncates to the second and converts to UTC.
	if tt := T(time.Date(2024, 5, 6, 10, 8, 9, 999999999, time.FixedZone("X", 3*3600))); FormatTime(tt.Time) != "2024-05-06 07:08:09" || tt.Nanosecond() != 0 {
		t.Fatalf("T: %v", tt)
	}

	// Database form: the same text, NULL for zero.
	if v, _ := (Time{}).Value(); v != nil {
		t.Fatalf("zero Value: %v", v)
	}
	if v, _ := T(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)).Value(); v != "2024-05-06 07:08:09" {
		t.Fatalf("Value: %v", v)
	}
	var s Time
	for _, src := range []any{"2024-05-06 07:08:09", []byte("2024-05-06 07:08:09"), time.Date(2024, 5, 6, 7, 8, 9, 5, time.UTC)} {
		if err := s.Scan(src); err != nil || FormatTime(s.Time) != "2024-05-06 07:08:09" {
			t.Errorf("Scan(%T): %v %v", src, s, err)
		}
	}
	if err := s.Scan(nil); err != nil || !s.IsZero() {
		t.Fatalf("Scan(nil): %v %v", s, err)
	}
	if err := s.Scan("not a time"); err == nil {
		t.Fatal("Scan of garbage accepted")
	}
	if err := s.Scan(42); err == nil {
		t.Fatal("Scan of an int accepted")
	}
}

func TestOpt(t *testing.T) {
	t.Parallel()
	type patch struct {
		Name  Opt[string] `json:"name"`
		Limit Opt[int64]  `json:"limit"`
		Price Opt[Money]  `json:"price"`
	}
	var p patch
	if err := json.Unmarshal([]byte(`{}`), &p); err != nil || p.Name.Set || p.Limit.Set || p.Price.Set {
		t.Fatalf("absent: %+v %v", p, err)
	}
	p = patch{}
	if err := json.Unmarshal([]byte(`{"name":null,"limit":null}`), &p); err != nil || !p.Name.Set || !p.Name.Null || !p.Limit.Set || !p.Limit.Null || p.Price.Set {
		t.Fatalf("null: %+v %v", p, err)
	}
	p = patch{}
	if err := json.Unmarshal([]byte(`{"name":"","limit":0,"price":1.5}`), &p); err != nil {
		t.Fatal(err)
	}
	if !p.Name.Set || p.Name.Null || p.Name.V != "" || !p.Limit.Set || p.Limit.Null || p.Limit.V != 0 || p.Price.V != 1500 {
		t.Fatalf("set to zero values: %+v", p)
	}
	p = patch{}
	if err := json.Unmarshal([]byte(`{"limit":"ten"}`), &p); err == nil {
		t.Fatal("wrong type inside Opt accepted")
	}
	if err := json.Unmarshal([]byte(`{"price":1.0001}`), &p); !errors.Is(err, ErrMoneyPrecision) {
		t.Fatalf("precision inside Opt: %v", err)
	}
}

func TestParseEnum(t *testing.T) {
	t.Parallel()
	if s, err := ParseEnum([]byte(`"b"`), "a", "b"); err != nil || s != "b" {
		t.Fatalf("%q %v", s, err)
	}
	for _, in := range []string{`"c"`, `"B"`, `1`, `null`, `""`} {
		_, err := ParseEnum([]byte(in), "a", "b")
		var ee *EnumError
		if !errors.As(err, &ee) || strings.Join(ee.Allowed, ",") != "a,b" {
			t.Errorf("%s: %v", in, err)
		}
	}
}

func TestMoneyCheckedArithmetic(t *testing.T) {
	t.Parallel()
	reason := func(err error) string {
		if e := AsError(err); e != nil {
			return e.Reason
		}
		return ""
	}
	if v, err := Money(5).Add(7); err != nil || v != 12 {
		t.Fatalf("5+7: %d %v", v, err)
	}
	if v, err := MaxBalance.Add(0); err != nil || v != MaxBalance {
		t.Fatalf("max+0: %d %v", v, err)
	}
	for _, c := range []struct{ a, b Money }{
		{MaxBalance, 1}, {-MaxBalance, -1}, {Money(math.MaxInt64), 1}, {Money(math.MinInt64), -1},
		{Money(9e15 * Scale / 1000), Money(9.2e15 * Scale / 1000)}, {0, Money(math.MaxInt64)},
	} {
		if v, err := c.a.Add(c.b); reason(err) != "balance_out_of_range" || v != c.a {
			t.Errorf("%d+%d = %d, %v; want balance_out_of_range and the first operand", int64(c.a), int64(c.b), int64(v), err)
		}
	}
	if v, err := Money(5).Sub(7); err != nil || v != -2 {
		t.Fatalf("5-7: %d %v", v, err)
	}
	if _, err := (-MaxBalance).Sub(1); reason(err) != "balance_out_of_range" {
		t.Fatalf("-max-1: %v", err)
	}
	if _, err := Money(0).Sub(Money(math.MinInt64)); reason(err) != "balance_out_of_range" {
		t.Fatalf("0-min: %v", err)
	}
	if v, err := Money(-3).Neg(); err != nil || v != 3 {
		t.Fatalf("neg: %d %v", v, err)
	}
	if _, err := Money(math.MinInt64).Neg(); reason(err) != "amount_out_of_range" {
		t.Fatalf("neg min: %v", err)
	}
	if v, err := Money(1500).Mul(3); err != nil || v != 4500 {
		t.Fatalf("mul: %d %v", v, err)
	}
	for _, n := range []int64{1001, math.MaxInt64, math.MinInt64} {
		if _, err := Money(MaxAmount / 1000).Mul(n); reason(err) != "amount_out_of_range" {
			t.Errorf("mul by %d: %v", n, err)
		}
	}
	if v, err := MaxAmount.MulDiv(99_000, 100_000); err != nil || v != MaxAmount/100*99 {
		t.Fatalf("muldiv: %d %v", v, err)
	}
	if _, err := Money(1).MulDiv(1, 0); reason(err) != "amount_out_of_range" {
		t.Fatalf("muldiv by zero: %v", err)
	}
	if v, err := AddPoints(5, -3); err != nil || v != 2 {
		t.Fatalf("points: %d %v", v, err)
	}
	if _, err := AddPoints(math.MaxInt64, 1); reason(err) != "balance_out_of_range" {
		t.Fatalf("points overflow: %v", err)
	}
	if _, err := AddPoints(MaxPoints, 1); reason(err) != "balance_out_of_range" {
		t.Fatalf("points max: %v", err)
	}
}

// The checked sum agrees with exact arithmetic whenever it answers, and
// refuses exactly when the exact sum leaves ±MaxBalance.
func TestMoneyAddProperty(t *testing.T) {
	t.Parallel()
	f := func(a, b int64) bool {
		exact := new(big.Int).Add(big.NewInt(a), big.NewInt(b))
		in := exact.IsInt64() && exact.Int64() <= int64(MaxBalance) && exact.Int64() >= -int64(MaxBalance)
		v, err := Money(a).Add(Money(b))
		if in {
			return err == nil && int64(v) == exact.Int64()
		}
		return err != nil && v == Money(a)
	}
	cfg := &quick.Config{MaxCount: 5000, Values: func(vs []reflect.Value, r *rand.Rand) {
		pick := func() int64 {
			switch r.Intn(4) {
			case 0:
				return r.Int63() - r.Int63()
			case 1:
				return r.Int63n(2*int64(MaxBalance)+1) - int64(MaxBalance)
			case 2:
				return int64(MaxBalance) - r.Int63n(3) + 1
			}
			return r.Int63n(2001) - 1000
		}
		vs[0], vs[1] = reflect.ValueOf(pick()), reflect.ValueOf(pick())
	}}
	if err := quick.Check(f, cfg); err != nil {
		t.Fatal(err)
	}
}
