package web

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"

	"xr/app"
)

// Words a person reads: counts with the language's plural rules, dates
// with the language's month names, amounts with their currency, durations
// in days, hours and minutes. Texts come from the one page catalogue
// (assets/messages/console/*.json).

// pluralSep joins a catalogue key and a plural form ("days_left#one"): a
// catalogue value may be an object of CLDR plural forms (zero, one, two,
// few, many, other) instead of a string.
const pluralSep = "#"

// catalogueEntries reads one catalogue file: a key's value is a string, or
// an object of plural forms (kept as key#form; "other" is required).
func catalogueEntries(b []byte) (map[string]string, error) {
	raw := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			out[k] = s
			continue
		}
		forms := map[string]string{}
		if err := json.Unmarshal(v, &forms); err != nil {
			return nil, fmt.Errorf("key %s: a string or an object of plural forms", k)
		}
		if _, ok := forms["other"]; !ok {
			return nil, fmt.Errorf("key %s: plural forms without \"other\"", k)
		}
		for form, s := range forms {
			if _, known := pluralForms[form]; !known {
				return nil, fmt.Errorf("key %s: unknown plural form %q", k, form)
			}
			out[k+pluralSep+form] = s
		}
	}
	return out, nil
}

var pluralForms = map[string]plural.Form{"zero": plural.Zero, "one": plural.One, "two": plural.Two, "few": plural.Few,
	"many": plural.Many, "other": plural.Other}

// pluralName is the catalogue name of the plural form of n in lang.
func pluralName(lang string, n int64) string {
	if n < 0 {
		n = -n
	}
	i := int(n)
	if n >= 1_000_000 { // the rules read the last digits: keep them, bounded
		i = int(n%1_000_000) + 1_000_000
	}
	f := plural.Cardinal.MatchPlural(language.Make(lang), i, 0, 0, 0, 0)
	for name, form := range pluralForms {
		if form == f {
			return name
		}
	}
	return "other"
}

// N translates a count: the plural form of n of key in the page's
// language, with n in place of its %d.
func (v *View) N(key string, n int64) string {
	form := pluralName(v.Lang, n)
	for _, cat := range []struct {
		m    map[string]string
		form string
	}{{v.text, form}, {v.text, "other"}, {v.en, pluralName("en", n)}, {v.en, "other"}} {
		if s, ok := cat.m[key+pluralSep+cat.form]; ok {
			return withCount(s, n)
		}
	}
	return withCount(v.T(key), n)
}

// withCount puts n in a text's %d; a form that spells its number ("one
// day", "يومان") has none.
func withCount(s string, n int64) string {
	if !strings.Contains(s, "%") {
		return s
	}
	return fmt.Sprintf(s, n)
}

// Date is a day in the page's language ("2 March 2026", "2 مارس 2026"),
// in the tenant's time zone.
func (v *View) Date(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	l := t.In(v.Loc)
	return fmt.Sprintf("%d %s %d", l.Day(), v.T(fmt.Sprintf("date.month_%d", int(l.Month()))), l.Year())
}

// bidi isolates keep an amount and its sign and currency in reading order
// inside a right-to-left page ("-35.000 USD", never "USD 35.000-").
const (
	ltrIsolate = "\u2066"
	popIsolate = "\u2069"
)

// Money formats an amount with the tenant's currency; on a right-to-left
// page as one isolated left-to-right run.
func (v *View) Money(m app.Money) string { return v.MoneyIn(m, v.currency) }

// MoneyIn formats an amount in a named currency (a payment's, a store's)
// the way Money formats the tenant's.
func (v *View) MoneyIn(m app.Money, currency string) string {
	if v.Dir != "rtl" {
		return m.String() + " " + currency
	}
	return ltrIsolate + m.String() + "\u00a0" + currency + popIsolate
}

// Duration shows seconds as days, hours and minutes in the page's
// language ("2 d 3 h", "3 h 05 min", "12 min").
func (v *View) Duration(sec int64) string {
	if sec < 0 {
		sec = 0
	}
	d, h, m := sec/86400, sec%86400/3600, sec%3600/60
	var parts []string
	switch {
	case d > 0:
		parts = append(parts, fmt.Sprintf(v.T("unit.days_short"), d), fmt.Sprintf(v.T("unit.hours_short"), h))
	case h > 0:
		parts = append(parts, fmt.Sprintf(v.T("unit.hours_short"), h), fmt.Sprintf(v.T("unit.minutes_short"), m))
	default:
		parts = append(parts, fmt.Sprintf(v.T("unit.minutes_short"), m))
	}
	return strings.Join(parts, " ")
}

// Code words a stored code for a person ("card_refill" → "Card refill"):
// the catalogue's <prefix>.<code> text, else the code in words, never
// the raw code.
func (v *View) Code(prefix, code string) string {
	key := prefix + "." + code
	if s := v.T(key); s != key {
		return s
	}
	words := strings.ReplaceAll(code, "_", " ")
	if words == "" {
		return "—"
	}
	return strings.ToUpper(words[:1]) + words[1:]
}
