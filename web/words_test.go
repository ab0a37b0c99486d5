package web

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"xr/app"
)

func TestParseSpeed(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int64{"20M": 20_000, "20m": 20_000, "512k": 512, "512": 512, "1.5G": 1_500_000, "2.5 Mbit/s": 2_500,
		"10 mbps": 10_000, " 8M ": 8_000, "0": 0, "100G": MaxSpeedKbps} {
		if got, err := ParseSpeed(raw, "rate"); err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "fast", "-1M", "101G", "1e400", "NaN", "20X", "M", "1,5M", "99999999999999999999999M"} {
		_, err := ParseSpeed(raw, "rate")
		if e := app.AsError(err); e == nil || e.Status != 400 || e.Reason != "invalid_speed" || e.Field != "rate" {
			t.Errorf("%q: %v, want 400 invalid_speed naming rate", raw, err)
		}
	}
	for _, kbps := range []int64{0, 512, 20_000, 1_500, 1_000_000} {
		if got, err := ParseSpeed(SpeedInput(kbps), "rate"); err != nil || got != kbps {
			t.Errorf("SpeedInput(%d) = %q reads back %d %v", kbps, SpeedInput(kbps), got, err)
		}
	}
	for kbps, want := range map[int64]string{512: "512 kbit/s", 20_000: "20 Mbit/s", 1_500: "1.5 Mbit/s", 2_000_000: "2 Gbit/s"} {
		if got := HumanSpeed(kbps); got != want {
			t.Errorf("HumanSpeed(%d) = %q, want %q", kbps, got, want)
		}
	}
}

func TestWordsPluralDatesMoney(t *testing.T) {
	t.Parallel()
	cat := PageCatalogue()
	view := func(lang string) *View {
		return &View{Lang: lang, Loc: time.UTC, currency: "USD", text: cat[lang], en: cat["en"]}
	}
	en, ar := view("en"), view("ar")
	ar.Dir = "rtl"
	for _, c := range []struct {
		v    *View
		n    int64
		want string
	}{{en, 1, "1 day"}, {en, 0, "0 days"}, {en, 2, "2 days"}, {en, 21, "21 days"},
		{ar, 1, "يوم واحد"}, {ar, 2, "يومان"}, {ar, 3, "3 أيام"}, {ar, 11, "11 يومًا"}, {ar, 100, "100 يوم"}, {ar, 1_000_003, "1000003 أيام"}} {
		if got := c.v.N("n.days", c.n); got != c.want {
			t.Errorf("%s N(n.days, %d) = %q, want %q", c.v.Lang, c.n, got, c.want)
		}
	}
	d := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	if got := en.Date(d); got != "2 March 2026" {
		t.Errorf("en date %q", got)
	}
	if got := ar.Date(d); got != "2 مارس 2026" {
		t.Errorf("ar date %q", got)
	}
	// An amount, its sign and its currency are one left-to-right run.
	if got := en.Money(app.Money(-35_500)); got != "-35.5 USD" {
		t.Errorf("money %q", got)
	}
	if got := ar.Money(app.Money(-35_000)); got != "\u2066-35\u00a0USD\u2069" {
		t.Errorf("money %q", got)
	}
	if got := en.Duration(2*86400 + 3*3600 + 59); got != "2 d 3 h" {
		t.Errorf("duration %q", got)
	}
	if got := en.Duration(3*3600 + 5*60); got != "3 h 05 min" {
		t.Errorf("duration %q", got)
	}
	// Codes are words, never the raw code.
	for _, c := range []struct {
		v          *View
		code, want string
	}{{en, "card_refill", "Card refill"}, {ar, "deposit", "إيداع"}, {en, "some_new_kind", "Some new kind"}, {en, "", "—"}} {
		if got := c.v.Code("ledger", c.code); got != c.want {
			t.Errorf("%s Code(%q) = %q, want %q", c.v.Lang, c.code, got, c.want)
		}
	}
	// Every plural key has its "other" form in both languages.
	for _, lang := range []string{"en", "ar"} {
		for k := range cat[lang] {
			if i := len(k) - len("#one"); i > 0 && k[i:] == "#one" {
				if _, ok := cat[lang][k[:i]+"#other"]; !ok {
					t.Errorf("%s: %s without other", lang, k)
				}
			}
		}
	}
}

// TestDatesAndAmountsLocalised: every month of an Arabic date is an Arabic
// word (no Latin letter), and an amount in a named currency reads like the
// tenant's own.
func TestDatesAndAmountsLocalised(t *testing.T) {
	t.Parallel()
	cat := PageCatalogue()
	ar := &View{Lang: "ar", Dir: "rtl", Loc: time.UTC, currency: "USD", text: cat["ar"], en: cat["en"]}
	en := &View{Lang: "en", Loc: time.UTC, currency: "USD", text: cat["en"], en: cat["en"]}
	for m := time.January; m <= time.December; m++ {
		got := ar.Date(time.Date(2026, m, 15, 12, 0, 0, 0, time.UTC))
		if strings.IndexFunc(got, func(r rune) bool { return r < 128 && unicode.IsLetter(r) }) >= 0 || !strings.HasPrefix(got, "15 ") {
			t.Errorf("ar date of month %d: %q", m, got)
		}
	}
	for _, c := range []struct {
		v    *View
		m    app.Money
		cur  string
		want string
	}{{en, 12_500, "EUR", "12.5 EUR"}, {en, -3_000, "IQD", "-3 IQD"}, {ar, -3_000, "IQD", "\u2066-3\u00a0IQD\u2069"}} {
		if got := c.v.MoneyIn(c.m, c.cur); got != c.want {
			t.Errorf("%s MoneyIn(%d, %s) = %q, want %q", c.v.Lang, c.m, c.cur, got, c.want)
		}
	}
}
