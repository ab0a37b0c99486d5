package hotspot

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"html"
	"html/template"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"xr/app"
	"xr/app/files"
	"xr/app/identity"
	"xr/app/portal"
	"xr/assets"
)

// Template is a shipped page template (GET /hotspot/templates).
type Template struct {
	Key             string   `json:"key"`
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	Langs           []string `json:"langs"`
	Pages           []string `json:"pages"`
	ColorPrimary    string   `json:"color_primary"`
	ColorBackground string   `json:"color_background"`
	ColorText       string   `json:"color_text"`
}

var shipped = []Template{
	{Key: "clean", Name: "Clean", Description: "A white card on a tinted page: username and password; a card code typed as username with no password is sent as both (a card logs in with username = password = its code).",
		ColorPrimary: "#1d4ed8", ColorBackground: "#eef2f7", ColorText: "#1f2937"},
	{Key: "voucher-first", Name: "Voucher first", Description: "One large field for the card code (used as username and password); members open a second form.",
		ColorPrimary: "#0f766e", ColorBackground: "#f0fdfa", ColorText: "#134e4a"},
}

func templateByKey(k string) (Template, bool) {
	for _, t := range shipped {
		if t.Key == k {
			return t, true
		}
	}
	return Template{}, false
}

// TemplateKeys are the shipped templates' keys.
func TemplateKeys() []string {
	out := make([]string, len(shipped))
	for i, t := range shipped {
		out[i] = t.Key
	}
	return out
}

// ListTemplates answers GET /hotspot/templates.
func ListTemplates(ctx context.Context, act *app.Actor) ([]Template, error) {
	if err := act.Require(PermHotspotManage); err != nil {
		return nil, err
	}
	out := make([]Template, len(shipped))
	for i, t := range shipped {
		t.Langs = []string{"en", "ar"}
		t.Pages = FileNames()
		out[i] = t
	}
	return out, nil
}

// FileNames are the HTML pages of a set as RouterOS names them.
func FileNames() []string {
	out := make([]string, len(PageKeys))
	for i, k := range PageKeys {
		out[i] = k + ".html"
	}
	return out
}

var (
	pagesTmpl = template.Must(template.New("pages").ParseFS(assets.Hotspot, "hotspot/pages.tmpl"))
	texts     = func() map[string]map[string]string {
		b, err := fs.ReadFile(assets.Hotspot, "hotspot/texts.json")
		if err != nil {
			panic(err)
		}
		m := map[string]map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			panic(err)
		}
		return m
	}()
)

func asset(name string) []byte {
	b, err := fs.ReadFile(assets.Hotspot, "hotspot/"+name)
	if err != nil {
		panic(err) // embedded: present by construction
	}
	return b
}

// view is what pages.tmpl fills a page with.
type view struct {
	Lang, Dir, Title, Template, Page string
	Logo                             template.URL
	Blocks                           map[string]template.HTML
	SignupURL, ShopURL               string
	T                                map[string]string
	InlineCSS                        bool
	CSS                              template.CSS
}

// logo is a set's logo file: its zip name and bytes.
type logo struct {
	name, contentType string
	data              []byte
}

// built is a page set ready to render: its view (without Page) and its
// style sheet.
type built struct {
	v    view
	css  string
	logo *logo
}

// branding is the part of the tenant's branding setting a page set uses.
type branding struct {
	Name         string `json:"name"`
	Color        string `json:"color"`
	PrimaryColor string `json:"primary_color"`
}

// prepare reads what a set needs beyond its row (tenant branding, the
// logo bytes, the portal's links) and builds its style sheet.
func prepare(ctx context.Context, t *app.Tenant, q app.Querier, p PageSet) (*built, error) {
	tpl, _ := templateByKey(p.Template)
	var br branding
	if raw, err := identity.SettingBranding.Get(ctx, q); err != nil {
		return nil, err
	} else if len(raw) > 0 && raw[0] == '{' {
		if err := json.Unmarshal(raw, &br); err != nil {
			br = branding{} // a branding object of another shape: template defaults
		}
	}
	title := firstOf(p.Title, br.Name, t.Name)
	primary := firstOf(p.ColorPrimary, validColor(br.PrimaryColor), validColor(br.Color), tpl.ColorPrimary)
	bg := firstOf(p.ColorBackground, tpl.ColorBackground)
	text := firstOf(p.ColorText, tpl.ColorText)
	if contrast(text, bg) < 4.5 {
		text = onColor(bg)
	}
	link := primary
	if contrast(link, "#ffffff") < 4.5 {
		link = text
	}
	var css strings.Builder
	css.WriteString(":root{--primary:" + primary + ";--on-primary:" + onColor(primary) + ";--bg:" + bg + ";--text:" + text +
		";--surface:#ffffff;--border:#8a94a6;--link:" + link + "}\n")
	css.Write(asset("base.css"))
	css.Write(asset(p.Template + ".css"))
	if p.CustomCSS != "" {
		css.WriteString("\n/* custom */\n" + p.CustomCSS + "\n")
	}
	b := &built{css: css.String()}
	if p.LogoFileID != nil {
		f, err := files.Get(ctx, q, *p.LogoFileID)
		if err != nil {
			return nil, err
		}
		fh, err := files.Open(t, f)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(fh, MaxLogoBytes+1))
		cerr := fh.Close()
		if err != nil {
			return nil, err
		}
		if cerr != nil {
			return nil, cerr
		}
		ext := map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}[f.ContentType]
		b.logo = &logo{name: "logo" + ext, contentType: f.ContentType, data: data}
	}
	base := p.PublicURL
	if base == "" {
		base = defaultPublicURL(t)
	}
	signup, err := portal.SettingPortalSignup.Get(ctx, q)
	if err != nil {
		return nil, err
	}
	dir := "ltr"
	if p.Lang == "ar" {
		dir = "rtl"
	}
	b.v = view{Lang: p.Lang, Dir: dir, Title: title, Template: p.Template, T: texts[p.Lang], Blocks: map[string]template.HTML{}}
	for k, v := range p.Blocks {
		// Sanitized when stored; sanitized again so that a row written
		// before a stricter policy never renders unchecked.
		b.v.Blocks[k] = template.HTML(Sanitize(v)) //nolint:gosec // allow-list sanitized
	}
	if base != "" && p.ShowSignup && signup {
		b.v.SignupURL = base + "/my/signup"
	}
	if base != "" && p.ShowShop {
		b.v.ShopURL = base + "/shop"
	}
	return b, nil
}

// defaultPublicURL is the tenant's own host (<slug>.<domain>), https
// when the instance runs behind TLS; "" when no domain is configured.
func defaultPublicURL(t *app.Tenant) string {
	d := t.App.Cfg.Domain
	if d == "" {
		return ""
	}
	scheme := "http"
	if t.App.Cfg.SecureCookies {
		scheme = "https"
	}
	return scheme + "://" + t.Slug + "." + d
}

var colorOK = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

func validColor(c string) string {
	if colorOK.MatchString(c) {
		return strings.ToLower(c)
	}
	return ""
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// render fills one page (key) of a built set: RouterOS variables are left
// as they are.
func (b *built) render(key string, inline bool) ([]byte, error) {
	v := b.v
	v.Page = key
	v.InlineCSS = inline
	if inline {
		v.CSS = template.CSS(b.css) //nolint:gosec // checked by CheckCSS
		if b.logo != nil {
			// A sniffed image of the allow-list, base64: a safe data: URL.
			v.Logo = template.URL("data:" + b.logo.contentType + ";base64," + base64.StdEncoding.EncodeToString(b.logo.data)) //nolint:gosec

		}
	} else if b.logo != nil {
		v.Logo = template.URL("img/" + b.logo.name) //nolint:gosec // a fixed name
	}
	var out bytes.Buffer
	if err := pagesTmpl.ExecuteTemplate(&out, key+".html", v); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// SampleVars are the RouterOS variables a preview is filled with.
var SampleVars = map[string]string{
	"link-login-only": "#login", "link-login": "#login", "link-orig": "http://example.com/", "link-orig-esc": "http%3A%2F%2Fexample.com%2F",
	"link-redirect": "#redirect", "link-status": "#status", "link-logout": "#logout", "link-advert": "#advert",
	"chap-id": `\061`, "chap-challenge": `\244\333\017\120\232\376\013\315\033\377\004\221\373\365\264\342`,
	"error": "", "username": "card-1234", "ip": "10.5.50.23", "mac": "02:00:00:00:00:01", "uptime": "1h12m5s",
	"session-time-left": "22h47m55s", "bytes-in-nice": "152.4 MiB", "bytes-out-nice": "12.9 MiB", "remain-bytes-total": "",
	"login-by": "http-chap", "refresh-timeout": "", "refresh-timeout-secs": "60", "identity": "hotspot1", "server-name": "hotspot1",
	"hostname": "hotspot.lan", "server-address": "10.5.50.1:80",
}

var rosToken = regexp.MustCompile(`\$\(([^()]*)\)`)

var rosCond = regexp.MustCompile(`^([a-z0-9-]+)\s*(?:(==|!=)\s*'([^']*)')?$`)

// FillVars evaluates RouterOS's page language with vars: $(name) is the
// value (HTML-escaped), $(if name), $(if name == 'v'), $(if name != 'v'),
// $(elif ...), $(else) and $(endif) keep or drop what they enclose. An
// unknown variable is empty, as on the router.
func FillVars(page string, vars map[string]string) string {
	type frame struct{ parent, active, taken bool }
	stack := []frame{}
	active := true
	cond := func(expr string) bool {
		m := rosCond.FindStringSubmatch(strings.TrimSpace(expr))
		if m == nil {
			return false
		}
		v := vars[m[1]]
		switch m[2] {
		case "==":
			return v == m[3]
		case "!=":
			return v != m[3]
		}
		return v != ""
	}
	var out strings.Builder
	last := 0
	for _, loc := range rosToken.FindAllStringSubmatchIndex(page, -1) {
		if active {
			out.WriteString(page[last:loc[0]])
		}
		last = loc[1]
		tok := strings.TrimSpace(page[loc[2]:loc[3]])
		switch {
		case strings.HasPrefix(tok, "if "):
			c := active && cond(tok[3:])
			stack = append(stack, frame{parent: active, active: c, taken: c})
			active = c
		case strings.HasPrefix(tok, "elif ") && len(stack) > 0:
			f := &stack[len(stack)-1]
			f.active = f.parent && !f.taken && cond(tok[5:])
			f.taken = f.taken || f.active
			active = f.active
		case tok == "else" && len(stack) > 0:
			f := &stack[len(stack)-1]
			f.active = f.parent && !f.taken
			f.taken = true
			active = f.active
		case tok == "endif" && len(stack) > 0:
			active = stack[len(stack)-1].parent
			stack = stack[:len(stack)-1]
		default:
			if active {
				out.WriteString(html.EscapeString(vars[tok]))
			}
		}
	}
	if active {
		out.WriteString(page[last:])
	}
	return out.String()
}

// PreviewInput asks for one page of a saved set (id) or of an unsaved one
// (set); page is login (default), alogin, status, logout, error, redirect
// or rlogin; error fills $(error) (to see the login page's error).
type PreviewInput struct {
	ID    int64      `json:"id,omitempty"`
	Set   *PageInput `json:"set,omitempty"`
	Page  string     `json:"page,omitempty"`
	Error string     `json:"error,omitempty"`
}

// Preview answers POST /hotspot/preview: the page's HTML with the style
// sheet and logo inlined and sample values for the RouterOS variables.
// The caller serves it under a CSP that runs no script.
func Preview(ctx context.Context, act *app.Actor, in PreviewInput) ([]byte, error) {
	if err := act.Require(PermHotspotManage); err != nil {
		return nil, err
	}
	page := strings.TrimSuffix(in.Page, ".html")
	if page == "" {
		page = "login"
	}
	if !isPage(page) {
		return nil, app.ErrValidation("invalid_enum", "page").With("allowed", PageKeys)
	}
	if len(in.Error) > 200 {
		return nil, app.ErrValidation("too_long", "error")
	}
	var set PageSet
	switch {
	case in.Set != nil:
		set = fromInput(*in.Set)
		if strings.TrimSpace(set.Name) == "" {
			set.Name = "preview"
		}
		if err := normalize(&set); err != nil {
			return nil, err
		}
	case in.ID > 0:
	default:
		return nil, app.ErrValidation("required", "id")
	}
	var b *built
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var err error
		if in.Set == nil {
			if set, err = get(ctx, tx, act, in.ID); err != nil {
				return err
			}
		} else if err := checkLogo(ctx, tx, set.LogoFileID); err != nil {
			return err
		}
		b, err = prepare(ctx, act.Tenant, tx, set)
		return err
	})
	if err != nil {
		return nil, err
	}
	raw, err := b.render(page, true)
	if err != nil {
		return nil, err
	}
	vars := SampleVars
	if in.Error != "" {
		vars = map[string]string{}
		for k, v := range SampleVars {
			vars[k] = v
		}
		vars["error"] = in.Error
	}
	return []byte(FillVars(string(raw), vars)), nil
}

// PreviewCSP is the Content-Security-Policy a preview is served with:
// nothing is loaded (inline styles and data: images only), no script
// runs, and the page is sandboxed (no same origin, no forms, no popups).
const PreviewCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'none'; form-action 'none'; frame-ancestors 'self'; base-uri 'none'; sandbox"

// Archive is a set's RouterOS zip.
type Archive struct {
	Name string // file name for Content-Disposition
	Data []byte
}

// Download answers GET /hotspot/pages/{id}/download: a zip laid out as
// RouterOS's hotspot directory (hotspot/login.html ... hotspot/md5.js,
// hotspot/css/style.css, hotspot/img/logo.<ext>). Upload its hotspot
// folder to the router and point the server profile's
// html-override-directory at it.
func Download(ctx context.Context, act *app.Actor, id int64) (*Archive, error) {
	if err := act.Require(PermHotspotManage); err != nil {
		return nil, err
	}
	var set PageSet
	var b *built
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) (err error) {
		if set, err = get(ctx, tx, act, id); err != nil {
			return err
		}
		b, err = prepare(ctx, act.Tenant, tx, set)
		return err
	})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: path.Join("hotspot", name), Method: zip.Deflate, Modified: set.UpdatedAt.Time})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	for _, k := range PageKeys {
		page, err := b.render(k, false)
		if err != nil {
			return nil, err
		}
		if err := add(k+".html", page); err != nil {
			return nil, err
		}
	}
	if err := add("md5.js", asset("md5.js")); err != nil {
		return nil, err
	}
	if err := add("css/style.css", []byte(b.css)); err != nil {
		return nil, err
	}
	if b.logo != nil {
		if err := add("img/"+b.logo.name, b.logo.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return &Archive{Name: "hotspot-" + fileSlug(set.Name) + ".zip", Data: buf.Bytes()}, nil
}

var slugStrip = regexp.MustCompile(`[^a-z0-9]+`)

// fileSlug is name reduced to [a-z0-9-] for a download's file name.
func fileSlug(name string) string {
	s := strings.Trim(slugStrip.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if s == "" {
		return "pages"
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// UploadLogo stores an image as the set's logo (POST
// /hotspot/pages/{id}/logo): PNG, JPEG, GIF or WebP up to MaxLogoBytes,
// sniffed. The previous logo is deleted when no other set uses it.
func UploadLogo(ctx context.Context, act *app.Actor, id int64, name string, body io.Reader) (*PageSet, error) {
	if err := act.Require(PermHotspotManage); err != nil {
		return nil, err
	}
	if err := act.Tenant.Read(ctx, func(tx *sql.Tx) error { _, err := get(ctx, tx, act, id); return err }); err != nil {
		return nil, err
	}
	st, err := files.Stage(act.Tenant, name, body, files.Policy{MaxBytes: MaxLogoBytes, Allow: LogoAllow})
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	var out PageSet
	var gone []string
	err = act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		cur, err := get(ctx, tx, act, id)
		if err != nil {
			return err
		}
		f, err := st.Insert(ctx, tx, fileArea)
		if err != nil {
			return err
		}
		var p app.Patch
		p.Set("logo_file_id", f.ID)
		if _, err := p.Exec(ctx, tx, "hotspot_pages", id, act.Tenant.NowText()); err != nil {
			return err
		}
		if gone, err = dropUnusedLogo(ctx, tx, cur.LogoFileID); err != nil {
			return err
		}
		out, err = get(ctx, tx, act, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	st.Keep()
	files.Remove(act.Tenant, gone...)
	return &out, nil
}
