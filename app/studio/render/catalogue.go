package render

import (
	"regexp"
	"sort"
	"strings"
)

// Variable is one entry of the published variable catalogue.
type Variable struct {
	Name        string `json:"name"` // without braces
	Description string `json:"description"`
	Sample      string `json:"sample"`
}

// catalogue is the published variable list of each kind, in display order.
var catalogue = map[string][]Variable{
	KindCardSheet: {
		{"code", "The card's voucher code (its PIN).", "4827 1936 5502"},
		{"serial", "The card's serial number.", "S-000123"},
		{"username", "The login name the card creates.", "c482719"},
		{"password", "The password of that login.", "7Hq2xk"},
		{"plan", "The name of the card's plan.", "Home 10 Mbps"},
		{"face_value", "The card's printed price.", "10.00"},
		{"currency", "The currency of the face value.", "USD"},
		{"expiration", "The date the card expires if unused.", "2026-12-31"},
		{"tenant_name", "The ISP's name.", "Example Net"},
		{"qr_payload", "The text the QR code carries (the card's code for scanning apps).", "xr:c:482719365502"},
	},
	KindReceipt: receiptVars(),
	KindInvoice: receiptVars(),
	KindHotspotPage: {
		{"tenant_name", "The ISP's name.", "Example Net"},
		{"portal_url", "The customer portal's address.", "https://portal.example.net"},
		{"shop_url", "The address of the shop selling cards.", "https://portal.example.net/shop"},
		{"signup_url", "The address of the sign-up page.", "https://portal.example.net/signup"},
		{"support_phone", "The support phone number.", "+1 555 0100"},
	},
}

func receiptVars() []Variable {
	return []Variable{
		{"tenant_name", "The ISP's name.", "Example Net"},
		{"number", "The document's number.", "R-2026-00042"},
		{"date", "The document's date.", "2026-11-24"},
		{"customer", "The customer's name.", "Jane Doe"},
		{"username", "The subscriber's login name.", "jane"},
		{"plan", "The subscriber's plan.", "Home 10 Mbps"},
		{"amount", "The total amount.", "25.00"},
		{"currency", "The currency of the amount.", "USD"},
		{"cashier", "Who took the payment.", "Front desk"},
		{"items", "The billed lines, one per line; a tab puts what follows it at the end of the line (the amount).", "Home 10 Mbps, 1 month\t20.00\nInstallation\t5.00"},
	}
}

// Kinds lists the design kinds, sorted.
func Kinds() []string {
	ks := make([]string, 0, len(catalogue))
	for k := range catalogue {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Catalogue lists the variables each kind may use, by kind. The result is
// a copy: callers may keep or change it.
func Catalogue() map[string][]Variable {
	out := make(map[string][]Variable, len(catalogue))
	for k, vs := range catalogue {
		out[k] = append([]Variable(nil), vs...)
	}
	return out
}

// SampleVars are the catalogue's sample values for a kind (thumbnails, previews).
func SampleVars(kind string) Vars {
	v := Vars{}
	for _, c := range catalogue[kind] {
		v[c.Name] = c.Sample
	}
	return v
}

func knownVar(kind, name string) bool {
	for _, c := range catalogue[kind] {
		if c.Name == name {
			return true
		}
	}
	return false
}

// varRE matches a {variable} reference. Names are matched loosely (any
// letters, digits, _ . -) so that a misspelt {Code} is reported rather than
// printed literally.
var varRE = regexp.MustCompile(`\{([A-Za-z0-9_.\-]+)\}`)

// variables lists the names s refers to, in order.
func variables(s string) []string {
	if !strings.Contains(s, "{") {
		return nil
	}
	var out []string
	for _, m := range varRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// Substitute replaces every {variable} of s by its value in v (empty when
// absent).
func Substitute(s string, v Vars) string {
	if !strings.Contains(s, "{") {
		return s
	}
	return varRE.ReplaceAllStringFunc(s, func(m string) string { return v[m[1:len(m)-1]] })
}
