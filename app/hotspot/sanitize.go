package hotspot

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/gorilla/css/scanner"
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
// legacy IE expressions and bindings, the end of the style element, and
// CSS escapes (which could spell any name below).
var cssRefusals = []string{"expression(", "</style", "<", `\`, "behavior:", "-moz-binding", "javascript:"}

// cssFunctions are the CSS functions custom CSS may call: none of them
// fetches anything. Every other one is refused, so the functions that load
// a resource (url and src outside the set's files, image-set,
// -webkit-image-set, image, cross-fade, element, -moz-element, paint, and
// whatever a browser adds next) cannot reach another origin.
var cssFunctions = map[string]bool{
	"rgb": true, "rgba": true, "hsl": true, "hsla": true, "hwb": true, "lab": true, "lch": true, "oklab": true, "oklch": true, "color": true,
	"color-mix": true, "calc": true, "min": true, "max": true, "clamp": true, "var": true, "env": true, "attr": true,
	"linear-gradient": true, "radial-gradient": true, "conic-gradient": true, "repeating-linear-gradient": true,
	"repeating-radial-gradient": true, "repeating-conic-gradient": true,
	"translate": true, "translatex": true, "translatey": true, "translate3d": true, "rotate": true, "rotatex": true, "rotatey": true,
	"rotatez": true, "rotate3d": true, "scale": true, "scalex": true, "scaley": true, "scale3d": true, "skew": true, "skewx": true,
	"skewy": true, "matrix": true, "matrix3d": true, "perspective": true,
	"cubic-bezier": true, "steps": true, "blur": true, "brightness": true, "contrast": true, "drop-shadow": true, "grayscale": true,
	"hue-rotate": true, "invert": true, "opacity": true, "saturate": true, "sepia": true, "counter": true, "counters": true,
	"repeat": true, "minmax": true, "fit-content": true, "not": true, "is": true, "where": true, "has": true, "nth-child": true,
	"nth-last-child": true, "nth-of-type": true, "nth-last-of-type": true, "lang": true, "dir": true, "local": true, "format": true,
}

// cssAtRules are the at-rules custom CSS may hold (no @import, no
// @namespace, nothing that names another document).
var cssAtRules = map[string]bool{"@media": true, "@supports": true, "@keyframes": true, "@-webkit-keyframes": true, "@font-face": true,
	"@layer": true, "@container": true}

func cssRefused(detail string) error {
	return app.ErrValidation("hotspot_css_not_allowed", "custom_css").With("detail", detail)
}

// CheckCSS refuses custom CSS that could load from elsewhere or break out
// of its style sheet: 400 hotspot_css_not_allowed naming what was found
// (details.detail). The CSS is read token by token (gorilla/css, the
// tokenizer bluemonday uses): url() may only name the set's own files
// (img/...), other functions must be in cssFunctions, at-rules in
// cssAtRules.
func CheckCSS(css string) error {
	low := strings.ToLower(css)
	for _, bad := range cssRefusals {
		if strings.Contains(low, bad) {
			return cssRefused(bad)
		}
	}
	sc := scanner.New(low)
	for {
		tok := sc.Next()
		switch tok.Type {
		case scanner.TokenEOF:
			return nil
		case scanner.TokenError:
			return cssRefused("unreadable: " + tok.Value)
		case scanner.TokenURI:
			ref := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(tok.Value, "url("), ")"))
			ref = strings.TrimSpace(strings.Trim(ref, `"'`))
			if !strings.HasPrefix(ref, "img/") || strings.Contains(ref, "..") || strings.Contains(ref, ":") {
				return cssRefused("url(" + ref + ")")
			}
		case scanner.TokenFunction:
			if name := strings.TrimSuffix(tok.Value, "("); !cssFunctions[name] {
				return cssRefused(tok.Value)
			}
		case scanner.TokenAtKeyword:
			if !cssAtRules[tok.Value] {
				return cssRefused(tok.Value)
			}
		}
	}
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
