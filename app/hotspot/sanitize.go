package hotspot

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/microcosm-cc/bluemonday"

	"xr/app"
)

// blockPolicy is the allow-list of the HTML a tenant writes into a page's
// block: text formatting, lists, links (http, https, mailto or relative,
// such as $(link-logout)) and images from the set's own files (img/...).
// No script, no event handler, no style attribute, no form, no iframe:
// everything else is dropped (the text of a dropped element is kept, the
// content of script and style is not).
var blockPolicy = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "strong", "b", "em", "i", "u", "s", "small", "mark", "sub", "sup", "span", "div",
		"h2", "h3", "h4", "ul", "ol", "li", "blockquote", "code", "pre", "abbr")
	p.AllowAttrs("title").Globally()
	p.AllowAttrs("lang").Matching(regexp.MustCompile(`^[a-zA-Z-]{2,12}$`)).Globally()
	p.AllowAttrs("dir").Matching(regexp.MustCompile(`^(ltr|rtl|auto)$`)).Globally()
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.AllowRelativeURLs(true)
	p.RequireParseableURLs(true)
	p.AddTargetBlankToFullyQualifiedLinks(false)
	p.AllowAttrs("src").Matching(regexp.MustCompile(`^img/[A-Za-z0-9._-]{1,80}$`)).OnElements("img")
	p.AllowAttrs("alt").OnElements("img")
	p.AllowAttrs("width", "height").Matching(bluemonday.Integer).OnElements("img")
	return p
}()

// Sanitize is a block's HTML after the allow-list: what is stored.
func Sanitize(html string) string { return blockPolicy.Sanitize(html) }

// cssRefusals are what custom CSS may not contain (compared lower case):
// imports, legacy IE expressions and bindings, the end of the style
// element, and CSS escapes (which could spell any of them).
var cssRefusals = []string{"@import", "expression(", "</style", "<", `\`, "behavior:", "-moz-binding", "javascript:"}

var cssURL = regexp.MustCompile(`url\(\s*(['"]?)([^'")]*)`)

// CheckCSS refuses custom CSS that could load from elsewhere or break out
// of its style sheet: 400 hotspot_css_not_allowed naming what was found
// (details.detail). url() may only name the set's own files (img/...).
func CheckCSS(css string) error {
	low := strings.ToLower(css)
	for _, bad := range cssRefusals {
		if strings.Contains(low, bad) {
			return app.ErrValidation("hotspot_css_not_allowed", "custom_css").With("detail", bad)
		}
	}
	for _, m := range cssURL.FindAllStringSubmatch(low, -1) {
		ref := strings.TrimSpace(m[2])
		if !strings.HasPrefix(ref, "img/") || strings.Contains(ref, "..") || strings.Contains(ref, ":") {
			return app.ErrValidation("hotspot_css_not_allowed", "custom_css").With("detail", "url("+ref+")")
		}
	}
	return nil
}

// luminance is the WCAG relative luminance of #rrggbb.
func luminance(hex string) float64 {
	v, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	if err != nil {
		return 0
	}
	ch := func(c uint64) float64 {
		s := float64(c) / 255
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(v>>16&0xff) + 0.7152*ch(v>>8&0xff) + 0.0722*ch(v&0xff)
}

// contrast is the WCAG contrast ratio of two #rrggbb colours (1 to 21).
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// onColor is black or white, whichever reads better on bg.
func onColor(bg string) string {
	if contrast("#ffffff", bg) >= contrast("#111111", bg) {
		return "#ffffff"
	}
	return "#111111"
}
