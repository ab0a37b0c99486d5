package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"xr/app"
	"xr/assets"
)

// templatesFS holds the partials every site's templates may call
// ("flash").
//
//go:embed templates
var templatesFS embed.FS

// View is what every page template gets: the request's language, the
// caller, the menu, and the page's own data.
type View struct {
	Lang, Dir string
	Title     string
	// Description, on a page anyone may open (sign-in, shop), is its meta
	// description: the text "description.<title key>".
	Description string
	Active      string
	Actor       *app.Actor
	Username    string
	Tenant      string
	Menu        []menuSection
	Flash       string
	FlashBad    bool
	URLs        map[string]string
	Data        any
	Errors      map[string]string // field → message
	Form        url.Values
	// Standby, on a standby server, is how far it is behind the primary
	// (the console's banner says the box is read-only).
	Standby string
	// Fenced: another box holds the replica; this one refuses writes.
	Fenced bool
	// Loc is the tenant's time zone.
	Loc      *time.Location
	currency string
	text     map[string]string
	en       map[string]string
}

type menuItem struct{ Key, Href, Label string }

// menuSection is a heading of the menu and the items the caller may use
// under it.
type menuSection struct {
	Key, Label string
	Items      []menuItem
}

// T translates a page text key.
func (v *View) T(key string) string {
	if s, ok := v.text[key]; ok {
		return s
	}
	if s, ok := v.en[key]; ok {
		return s
	}
	return key
}

// When shows a timestamp in the tenant's timezone.
func (v *View) When(t app.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Time.In(v.Loc).Format("2006-01-02 15:04")
}

// FieldError is the message for a form field, "" when none.
func (v *View) FieldError(field string) string { return v.Errors[field] }

// Value is the submitted value of a form field (to refill a refused form).
func (v *View) Value(field string) string { return v.Form.Get(field) }

// CanMap is which of perms the actor holds, keyed by the code as a string:
// templates read it as .Can.prm_users_update (a template cannot index a
// map by app.Perm). Go code asks c.Actor.Can instead of reading it.
func CanMap(act *app.Actor, perms ...app.Perm) map[string]bool {
	m := make(map[string]bool, len(perms))
	for _, p := range perms {
		m[string(p)] = act.Can(p)
	}
	return m
}

// Lang is the page language: the session's choice, Accept-Language, then
// the tenant's default.
func (s *Site) Lang(c *Ctx) string {
	text := s.srv.pageText
	if l := s.sm.GetString(c.R.Context(), sessionLang); l != "" {
		return l
	}
	if l := pickLanguage(c.R.Header.Get("Accept-Language")); l != "" {
		if _, ok := text[l]; ok {
			return l
		}
	}
	if c.Tenant != nil {
		if l := app.SettingDefaultLanguage.GetOr(context.WithoutCancel(c.R.Context()), c.Tenant.DB.R); text[l] != nil {
			return l
		}
	}
	return "en"
}

// SetLanguage keeps the language a caller chose in the session; false for
// a language without a page catalogue.
func (s *Site) SetLanguage(c *Ctx, lang string) bool {
	if _, ok := s.srv.pageText[lang]; !ok {
		return false
	}
	s.sm.Put(c.R.Context(), sessionLang, lang)
	return true
}

// Text translates a page text key in the request's language (without
// taking the flash, as a new view would).
func (s *Site) Text(c *Ctx, key string) string {
	if t, ok := s.srv.pageText[s.Lang(c)][key]; ok {
		return t
	}
	if t, ok := s.srv.pageText["en"][key]; ok {
		return t
	}
	return key
}

// NewView starts the view of a page: active is the menu key to mark,
// titleKey the text key of the title.
func (s *Site) NewView(c *Ctx, active, titleKey string) *View {
	lang := s.Lang(c)
	text := s.srv.pageText
	v := &View{Lang: lang, Dir: "ltr", Active: active, Actor: c.Actor, URLs: s.srv.static.urls, text: text[lang],
		en: text["en"], Loc: time.UTC, currency: "", Form: url.Values{}, Errors: map[string]string{}}
	if lang == "ar" {
		v.Dir = "rtl"
	}
	v.Title = v.T(titleKey)
	if r, ok := s.srv.app.Replication(); ok {
		v.Standby = r.Lag.Round(time.Second).String()
	}
	_, v.Fenced = s.srv.app.Fenced()
	if c.Actor == nil {
		if d := "description." + titleKey; v.T(d) != d {
			v.Description = v.T(d)
		}
	}
	if c.Tenant != nil {
		ctx := context.WithoutCancel(c.R.Context())
		v.Tenant = c.Tenant.Name
		v.currency = app.SettingCurrency.GetOr(ctx, c.Tenant.DB.R)
		if loc, err := time.LoadLocation(app.SettingTimezone.GetOr(ctx, c.Tenant.DB.R)); err == nil {
			v.Loc = loc
		}
	}
	if c.Actor != nil {
		v.Username = s.sm.GetString(c.R.Context(), SessionUsername)
		v.Menu = s.menuFor(c.Actor, v)
	}
	if f := s.sm.PopString(c.R.Context(), sessionFlash); f != "" {
		v.Flash, v.FlashBad = strings.TrimPrefix(f, "!"), strings.HasPrefix(f, "!")
	}
	return v
}

// menuFor is the menu an actor sees: the site's sections in order, each
// with the rows it lists whose permissions (the route row's Perms) the
// actor holds; a section with none is left out.
func (s *Site) menuFor(act *app.Actor, v *View) []menuSection {
	byKey := map[string]*Route{}
	for _, rt := range s.rows {
		if rt.Menu != "" {
			byKey[rt.Menu] = rt
		}
	}
	var menu []menuSection
	for _, sec := range s.MenuSections {
		ms := menuSection{Key: sec.Key, Label: v.T("menu.section." + sec.Key)}
		for _, k := range sec.Items {
			rt := byKey[k]
			if len(rt.Perms) > 0 && !act.Can(rt.Perms...) {
				continue
			}
			href := rt.P
			if href == s.Prefix+"{$}" {
				href = s.Prefix
			}
			ms.Items = append(ms.Items, menuItem{Key: k, Href: href, Label: v.T("menu." + k)})
		}
		if len(ms.Items) > 0 {
			menu = append(menu, ms)
		}
	}
	return menu
}

// Render writes a page (or, for an htmx request naming a block, only that
// block) with the pages' security headers.
func (s *Site) Render(c *Ctx, status int, page string, v *View) error {
	t := s.pages[page]
	if t == nil {
		return fmt.Errorf("%s: no page %q", s.Name, page)
	}
	name := "layout.tmpl"
	if blk := c.R.Header.Get("HX-Target"); blk != "" && c.R.Header.Get("HX-Request") == "true" && t.Lookup(blk) != nil {
		name = blk
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, v); err != nil {
		return err
	}
	h := c.W.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "HX-Request, HX-Target") // beside gzhttp's Accept-Encoding
	c.W.WriteHeader(status)
	_, err := c.W.Write(buf.Bytes())
	return err
}

// FormError re-renders a form page with the refusal next to its field
// (or on top when it concerns no field).
func (s *Site) FormError(c *Ctx, page string, v *View, err error) error {
	e := app.AsError(err)
	if e == nil || e.Status >= 500 || e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || e.Status == http.StatusNotFound {
		return err
	}
	msg := Message(v.Lang, e.Reason, e.Code)
	if e.Field != "" {
		v.Errors[e.Field] = msg
	} else {
		v.Flash, v.FlashBad = msg, true
	}
	return s.Render(c, e.Status, page, v)
}

// LoginRefused re-renders a sign-in page with the one message for a wrong
// name or password, so the page never tells which accounts exist.
func (s *Site) LoginRefused(c *Ctx, page string, v *View, err error) error {
	e := app.AsError(err)
	if e == nil {
		return err
	}
	switch e.Reason {
	case "invalid_credentials":
		v.Flash = v.T("login.refused")
	default:
		v.Flash = Message(v.Lang, e.Reason, e.Code)
	}
	v.FlashBad = true
	return s.Render(c, http.StatusUnauthorized, page, v)
}

// parsedPages holds parsePages's result per product: a product's templates
// are embedded and its helpers declared with them, so the servers of one
// process (a test builds one per test) parse them once. Executing a
// template set is safe from several goroutines; nothing changes it after
// the parse.
var parsedPages sync.Map // pagesKey -> map[string]*template.Template

type pagesKey struct {
	name      string
	templates fs.FS
}

// pagesOf is parsePages, from parsedPages when the templates are a
// comparable value (embed.FS; a test's map FS is parsed each time).
func pagesOf(p Pages) map[string]*template.Template {
	if p.Templates == nil || !reflect.TypeOf(p.Templates).Comparable() {
		return parsePages(p)
	}
	k := pagesKey{p.Name, p.Templates}
	if v, ok := parsedPages.Load(k); ok {
		return v.(map[string]*template.Template)
	}
	v, _ := parsedPages.LoadOrStore(k, parsePages(p))
	return v.(map[string]*template.Template)
}

// parsePages builds one template set per page of a site: the shared
// partials, the site's layout and partials, then the page.
func parsePages(p Pages) map[string]*template.Template {
	funcs := template.FuncMap{}
	for k, f := range pageFuncs {
		funcs[k] = f
	}
	for k, f := range p.Funcs {
		funcs[k] = f
	}
	base := template.Must(template.New("layout.tmpl").Funcs(funcs).ParseFS(templatesFS, "templates/*.tmpl"))
	base = template.Must(base.ParseFS(p.Templates, "layout.tmpl"))
	if _, err := fs.Stat(p.Templates, "partials.tmpl"); err == nil {
		base = template.Must(base.ParseFS(p.Templates, "partials.tmpl"))
	}
	names, err := fs.Glob(p.Templates, "*.tmpl")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(n, ".tmpl")
		if name == "layout" || name == "partials" {
			continue
		}
		out[name] = template.Must(template.Must(base.Clone()).ParseFS(p.Templates, n))
	}
	return out
}

// pageFuncs are the template helpers of every site; the per-request ones
// (T, Money, When) are methods of the view so they know the language and
// tenant.
var pageFuncs = template.FuncMap{
	"add":   func(a, b int) int { return a + b },
	"add64": func(a, b int64) int64 { return a + b },
	"list":  func(v ...any) []any { return v },
	"pct": func(used, limit int64) int64 {
		if limit <= 0 {
			return 0
		}
		return min(used*100/limit, 100)
	},
	"bytes": HumanBytes,
	"speed": HumanSpeed,
	"deref": func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	},
}

// HumanBytes shows a byte count in binary units ("1.5 MiB").
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// PageCatalogue reads the pages' texts, by language: <lang>.json and, so
// each area keeps its own strings, <area>.<lang>.json, merged per language
// (assets/messages/console).
func PageCatalogue() map[string]map[string]string {
	out := map[string]map[string]string{}
	entries, err := fs.ReadDir(assets.Messages, "messages/console")
	if err != nil {
		panic("page catalogue: " + err.Error())
	}
	for _, e := range entries {
		b, err := fs.ReadFile(assets.Messages, "messages/console/"+e.Name())
		if err != nil {
			panic(err)
		}
		m, err := catalogueEntries(b) // words.go: strings and plural forms
		if err != nil {
			panic("page catalogue " + e.Name() + ": " + err.Error())
		}
		name := strings.TrimSuffix(e.Name(), ".json")
		lang := name[strings.LastIndexByte(name, '.')+1:]
		if out[lang] == nil {
			out[lang] = map[string]string{}
		}
		for k, v := range m {
			if _, dup := out[lang][k]; dup {
				panic("page catalogue: key " + k + " twice in " + lang)
			}
			out[lang][k] = v
		}
	}
	return out
}

// ParseForm reads a urlencoded form within the body limit; a body that is
// not a form is 400.
func ParseForm(c *Ctx) error {
	c.R.Body = http.MaxBytesReader(c.W, c.R.Body, MaxBody)
	if err := c.R.ParseForm(); err != nil {
		return app.ErrValidation("malformed_form", "")
	}
	return nil
}

// FormMoney reads an amount typed in a form: unset when empty, 400 naming
// the field when it is not an amount.
func FormMoney(f url.Values, field string) (app.Opt[app.Money], error) {
	raw := strings.TrimSpace(f.Get(field))
	if raw == "" {
		return app.Opt[app.Money]{}, nil
	}
	m, err := app.ParseMoney(raw)
	switch {
	case errors.Is(err, app.ErrMoneyPrecision):
		return app.Opt[app.Money]{}, app.ErrValidation("too_many_decimals", field)
	case errors.Is(err, app.ErrMoneyRange):
		return app.Opt[app.Money]{}, app.ErrValidation("amount_out_of_range", field)
	case err != nil:
		return app.Opt[app.Money]{}, app.ErrValidation("invalid_type", field)
	}
	return app.Opt[app.Money]{Set: true, V: m}, nil
}

// Pager is a list page's previous and next links: path (empty for the
// current page) with keep's query values and the page number; "" where
// there is no such page.
func Pager(path string, keep url.Values, m app.Meta) (prev, next string) {
	link := func(p int) string {
		l := url.Values{}
		for k, vals := range keep {
			l[k] = vals
		}
		l.Set("page", strconv.Itoa(p))
		return path + "?" + l.Encode()
	}
	if m.Page > 1 {
		prev = link(m.Page - 1)
	}
	if m.HasNext {
		next = link(m.Page + 1)
	}
	return prev, next
}

// NonEmpty is {key: [value]}, or no values when value is empty.
func NonEmpty(key, value string) url.Values {
	if value == "" {
		return url.Values{}
	}
	return url.Values{key: {value}}
}

// RefererPath is the path of a same-origin Referer ("" otherwise).
func RefererPath(r *http.Request) string {
	u, err := url.Parse(r.Referer())
	if err != nil || u.Host != r.Host {
		return ""
	}
	return u.RequestURI()
}
