package hotspot

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"xr/app"
	"xr/internal/xrtest"
)

func TestSanitizeRemovesScriptsHandlersAndJavascriptLinks(t *testing.T) {
	t.Parallel()
	in := `<p>Hello <b>guest</b></p><script>alert(1)</script><img src=x onerror="alert(2)">` +
		`<a href="javascript:alert(3)">bad</a><a href="$(link-logout)">out</a><a href="https://isp.example/terms">terms</a>` +
		`<p style="background:url(http://evil/x)" onclick="x()">styled</p><form action="/x"><input name="p"></form>` +
		`<iframe src="https://evil"></iframe><img src="img/promo.png" alt="promo">`
	out := Sanitize(in)
	for _, bad := range []string{"<script", "alert(1)", "onerror", "javascript:", "style=", "onclick", "<form", "<input", "<iframe", `src="x"`} {
		if strings.Contains(out, bad) {
			t.Errorf("sanitized block still has %q: %s", bad, out)
		}
	}
	for _, good := range []string{"<p>Hello <b>guest</b></p>", `<a href="$(link-logout)">out</a>`, `href="https://isp.example/terms"`, "styled", `<img src="img/promo.png" alt="promo">`} {
		if !strings.Contains(out, good) {
			t.Errorf("sanitized block lost %q: %s", good, out)
		}
	}
}

func TestCheckCSS(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", ".card{border-radius:0}", `.brand{background:url("img/bg.png")}`, "h1{color:#123456}",
		".b{background:linear-gradient(90deg, rgb(1,2,3), var(--primary));width:calc(100% - 2px)}", "@media (max-width:600px){p:not(.x){margin:0}}",
		"@font-face{font-family:x;src:url(img/f.woff2) format('woff2'), local(Arial)}", "@keyframes k{from{transform:translateX(0)}}"} {
		if err := CheckCSS(ok); err != nil {
			t.Errorf("CheckCSS(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"@import 'http://x/y.css';", "a{background:url(https://evil.example/x.png)}", "a{background:url(//evil/x)}",
		"a{width:expression(alert(1))}", "</style><script>alert(1)</script>", `a{background:u\72l(http://x)}`, "a{background:url(/etc/x)}",
		"a{background:url(img/../../x)}", "a{background:URL( 'data:image/png;base64,AA')}",
		// Every function that fetches, not only url().
		`a{background:image-set("https://evil.example/x.png" 1x)}`, `a{background:-webkit-image-set(url(https://evil.example/x.png) 1x)}`,
		`a{background:image("https://evil.example/x.png")}`, `a{background:cross-fade(url(img/a.png), "https://evil.example/x.png", 50%)}`,
		`a{background:element(#x)}`, `a{background:-moz-element(#x)}`, `a{background:src("https://evil.example/x.png")}`,
		`a{background:paint(worklet)}`, `@import url(img/x.css);`, `@namespace svg url(http://www.w3.org/2000/svg);`,
		`a{background:IMAGE-SET("https://evil.example/x.png" 1x)}`, `a{background:url(img/x.png`} {
		xrtest.WantReason(t, CheckCSS(bad), 400, "hotspot_css_not_allowed")
	}
}

func TestFillVars(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"chap-id": `\061`, "error": "", "username": "a<b", "login-by": "mac"}
	page := `$(if chap-id)CHAP $(chap-id)$(else)PAP$(endif)|$(if error)E=$(error)$(elif username)U=$(username)$(endif)|` +
		`$(if login-by == 'mac')MAC$(else)FORM$(endif)|$(if login-by != 'mac')X$(endif)|$(unknown)|$(if error)$(if chap-id)no$(endif)$(endif)end`
	want := `CHAP \061|U=a&lt;b|MAC|||end`
	if got := FillVars(page, vars); got != want {
		t.Fatalf("FillVars = %q, want %q", got, want)
	}
}

func newTenant(t *testing.T) (*app.Tenant, *app.Actor) { t.Helper(); return newTenantB(t) }

func newTenantB(t testing.TB) (*app.Tenant, *app.Actor) {
	t.Helper()
	a := xrtest.TenantApp(t, "acme", Module)
	ten := xrtest.Acquire(t, a, "acme")
	return ten, xrtest.System(t, ten)
}

func TestPageSetStoresSanitizedHTMLAndZipLayout(t *testing.T) {
	t.Parallel()
	ten, act := newTenant(t)
	ctx := context.Background()
	p, err := CreatePage(ctx, act, PageInput{Name: "Lobby", Template: "voucher-first", Lang: "ar",
		Blocks:    map[string]string{"login": `<p>Welcome</p><script>alert(1)</script><img src=x onerror=alert(1)><a href="javascript:alert(1)">x</a>`},
		CustomCSS: ".card{border:0}", ColorPrimary: "#AA3300"})
	if err != nil {
		t.Fatal(err)
	}
	stored := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM hotspot_pages WHERE id = ? AND blocks LIKE '%script%'`, p.ID)
	if stored != 0 || strings.Contains(p.Blocks["login"], "onerror") || strings.Contains(p.Blocks["login"], "javascript:") {
		t.Fatalf("stored block not sanitized: %q", p.Blocks["login"])
	}
	if p.Blocks["login"] != "<p>Welcome</p>x" || p.ColorPrimary != "#aa3300" {
		t.Fatalf("block %q colour %q", p.Blocks["login"], p.ColorPrimary)
	}
	arc, err := Download(ctx, act, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(arc.Data), int64(len(arc.Data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	body := map[string]string{}
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		body[f.Name] = string(b)
	}
	want := []string{"hotspot/login.html", "hotspot/alogin.html", "hotspot/status.html", "hotspot/logout.html", "hotspot/error.html",
		"hotspot/redirect.html", "hotspot/rlogin.html", "hotspot/md5.js", "hotspot/css/style.css"}
	if !slices.Equal(names, want) {
		t.Fatalf("zip names %v, want %v", names, want)
	}
	login := body["hotspot/login.html"]
	for _, s := range []string{`action="$(link-login-only)"`, `data-chap-id="$(chap-id)"`, `$(if chap-id)`, `$(endif)`, `<script src="md5.js"></script>`,
		`<link rel="stylesheet" href="css/style.css">`, `lang="ar" dir="rtl"`, "<p>Welcome</p>", `<label for="code">`} {
		if !strings.Contains(login, s) {
			t.Errorf("login.html lacks %q", s)
		}
	}
	if strings.Contains(login, `src="http`) || strings.Contains(login, `src="//`) || !strings.Contains(login, `<a href="http://acme.xr.test/shop">`) {
		t.Errorf("login.html loads from elsewhere or lacks the shop link: %s", login)
	}
	if !strings.Contains(body["hotspot/css/style.css"], "--primary:#aa3300") || !strings.Contains(body["hotspot/css/style.css"], ".card{border:0}") {
		t.Errorf("style.css lacks the branding or the custom CSS")
	}
	if !strings.Contains(body["hotspot/md5.js"], "js-md5@0.9.2") || !strings.Contains(body["hotspot/status.html"], "$(bytes-in-nice)") {
		t.Errorf("md5.js header or status variables missing")
	}
	if arc.Name != "hotspot-lobby.zip" {
		t.Errorf("archive name %q", arc.Name)
	}
}

func TestPageSetRefusals(t *testing.T) {
	t.Parallel()
	_, act := newTenant(t)
	ctx := context.Background()
	_, err := CreatePage(ctx, act, PageInput{Name: "a", Template: "fancy"})
	xrtest.WantReason(t, err, 400, "invalid_enum")
	_, err = CreatePage(ctx, act, PageInput{Name: "a", Template: "clean", CustomCSS: "@import url(http://x)"})
	xrtest.WantReason(t, err, 400, "hotspot_css_not_allowed")
	_, err = CreatePage(ctx, act, PageInput{Name: "a", Template: "clean", ColorText: "#777777", ColorBackground: "#888888"})
	xrtest.WantReason(t, err, 400, "hotspot_low_contrast")
	_, err = CreatePage(ctx, act, PageInput{Name: "a", Template: "clean", Blocks: map[string]string{"home": "x"}})
	xrtest.WantReason(t, err, 400, "invalid_enum")
	_, err = CreatePage(ctx, act, PageInput{Name: "a", Template: "clean", Blocks: map[string]string{"login": strings.Repeat("x", MaxBlockLen+1)}})
	xrtest.WantReason(t, err, 400, "too_long")
	id := int64(999)
	_, err = CreatePage(ctx, act, PageInput{Name: "a", Template: "clean", LogoFileID: &id})
	xrtest.WantReason(t, err, 400, "hotspot_logo_invalid")
	p, err := CreatePage(ctx, act, PageInput{Name: "a", Template: "clean"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = CreatePage(ctx, act, PageInput{Name: "a", Template: "clean"})
	xrtest.WantReason(t, err, 409, "name_taken")
	c1, err := DuplicatePage(ctx, act, p.ID, DuplicateInput{})
	if err != nil || c1.Name != "a (copy)" {
		t.Fatalf("duplicate: %v %+v", err, c1)
	}
	c2, err := DuplicatePage(ctx, act, p.ID, DuplicateInput{})
	if err != nil || c2.Name != "a (copy 2)" {
		t.Fatalf("duplicate 2: %v %+v", err, c2)
	}
	html, err := Preview(ctx, act, PreviewInput{ID: p.ID, Page: "status"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "152.4 MiB") || strings.Contains(string(html), "$(") {
		t.Fatalf("preview not filled: %s", html)
	}
	_, err = Preview(ctx, act, PreviewInput{ID: p.ID, Page: "index"})
	xrtest.WantReason(t, err, 400, "invalid_enum")
}

func TestTemplatesEveryLanguage(t *testing.T) {
	t.Parallel()
	if len(texts["en"]) != len(texts["ar"]) {
		t.Fatalf("texts: %d English, %d Arabic", len(texts["en"]), len(texts["ar"]))
	}
	for k := range texts["en"] {
		if texts["ar"][k] == "" {
			t.Errorf("no Arabic text %q", k)
		}
	}
	_, act := newTenant(t)
	ctx := context.Background()
	tpls, err := ListTemplates(ctx, act)
	if err != nil || len(tpls) < 2 {
		t.Fatalf("templates %v %v", tpls, err)
	}
	for _, tpl := range tpls {
		for _, lang := range tpl.Langs {
			p, err := CreatePage(ctx, act, PageInput{Name: tpl.Key + lang, Template: tpl.Key, Lang: lang})
			if err != nil {
				t.Fatal(err)
			}
			for _, page := range PageKeys {
				out, err := Preview(ctx, act, PreviewInput{ID: p.ID, Page: page})
				if err != nil {
					t.Fatal(err)
				}
				s := string(out)
				dir := map[string]string{"en": "ltr", "ar": "rtl"}[lang]
				for _, want := range []string{`<html lang="` + lang + `" dir="` + dir + `">`, "<title>ACME</title>", `name="viewport"`} {
					if !strings.Contains(s, want) {
						t.Errorf("%s/%s/%s lacks %q", tpl.Key, lang, page, want)
					}
				}
				for _, bad := range []string{"$(", "{{", `src="http`, `href="//`, "@import", "<script"} {
					if strings.Contains(s, bad) {
						t.Errorf("%s/%s/%s has %q", tpl.Key, lang, page, bad)
					}
				}
			}
		}
	}
}
