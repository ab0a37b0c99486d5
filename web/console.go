package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"

	"xr/app"
	"xr/app/dashboards"
	"xr/app/identity"
	"xr/assets"
)

// The staff console: server-rendered pages on the tenant's host over the
// same app functions as the API. A page row is a Route with Page set: it
// goes through the same pipeline as an API row (tenant, credential,
// licence, permission, buckets); its credential is the API session the
// console signed in with, kept in a cookie session (scs), so a console
// session is listed and revoked with the API's sessions.

//go:embed console my
var consoleFS embed.FS

// consoleCSP allows nothing but this origin: no inline script or style,
// no frames, forms only to this origin.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Session keys of a console cookie session.
const (
	csTenant  = "tenant"  // slug the session belongs to
	csToken   = "token"   // API session token
	csRefresh = "refresh" // its refresh token
	csExp     = "exp"     // token expiry, unix seconds
	csLang    = "lang"    // chosen language, "" = Accept-Language / tenant default
	csFlash   = "flash"   // one-shot message after a redirect
	csPending = "pending" // sealed password of a sign-in waiting for its TOTP code
	csPendID  = "pending_id"
	csPendExp = "pending_exp"
)

type console struct {
	sm     *scs.SessionManager
	pages  map[string]*template.Template
	static map[string]staticFile // by URL path
	urls   map[string]string     // logical name → hashed URL
	text   map[string]map[string]string
}

type staticFile struct {
	body  []byte
	gz    []byte // gzip of body, made once at start
	ctype string
}

// gzipped compresses an embedded asset once, at start.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		panic(err)
	}
	if _, err := zw.Write(b); err != nil {
		panic(err)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// acceptsGzip reports whether Accept-Encoding allows gzip (a q=0 refuses it).
func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q, _ := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		return q == "" || strings.Trim(q, "0.") != ""
	}
	return false
}

func (s *Server) newConsole() *console {
	cs := &console{static: map[string]staticFile{}, urls: map[string]string{}, text: loadConsoleText()}
	sm := scs.New()
	sm.Store = s.app.ConsoleSessions()
	sm.Lifetime = 30 * 24 * time.Hour // bounded by the API session's refresh anyway
	sm.IdleTimeout = 12 * time.Hour
	sm.Cookie.Name = "xr_console"
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Path = "/"
	// Secure only when told (--secure-cookies): xr itself serves plain HTTP,
	// where a browser would drop a Secure cookie; behind a TLS proxy it is
	// what keeps the cookie off plain connections.
	sm.Cookie.Secure = s.app.Cfg.SecureCookies
	sm.ErrorFunc = func(w http.ResponseWriter, r *http.Request, err error) {
		s.log.Error("console session", "err", err)
		http.Error(w, "session store unavailable", http.StatusServiceUnavailable)
	}
	cs.sm = sm
	for _, f := range []struct{ name, file, ctype string }{
		{"app.css", "console/app.css", "text/css; charset=utf-8"},
		{"console.js", "console/console.js", "text/javascript; charset=utf-8"},
		{"htmx.js", "vendor/htmx/htmx.min.js", "text/javascript; charset=utf-8"},
		{"uplot.js", "vendor/uplot/uPlot.iife.min.js", "text/javascript; charset=utf-8"},
		{"uplot.css", "vendor/uplot/uPlot.min.css", "text/css; charset=utf-8"},
		// The network map page (pages_monitoring.go): Leaflet and the page's script.
		{"leaflet.js", "vendor/leaflet/leaflet.js", "text/javascript; charset=utf-8"},
		{"leaflet.css", "vendor/leaflet/leaflet.css", "text/css; charset=utf-8"},
		{"monmap.js", "console/monmap.js", "text/javascript; charset=utf-8"},
		// The remote console page (pages_devgw.go): xterm.js and its fit addon (ES modules devgw.js imports), the page's own script and style.
		{"xterm.mjs", "vendor/xterm/xterm.mjs", "text/javascript; charset=utf-8"},
		{"xterm-fit.mjs", "vendor/xterm/addon-fit.mjs", "text/javascript; charset=utf-8"},
		{"xterm.css", "vendor/xterm/xterm.css", "text/css; charset=utf-8"},
		{"devgw.js", "console/devgw.js", "text/javascript; charset=utf-8"},
		{"devgw.css", "console/devgw.css", "text/css; charset=utf-8"},
	} {
		b, err := fs.ReadFile(assets.Static, f.file)
		if err != nil {
			panic("console asset " + f.file + ": " + err.Error())
		}
		sum := sha256.Sum256(b)
		u := "/static/" + hex.EncodeToString(sum[:6]) + "/" + f.name
		cs.urls[f.name] = u
		cs.static[u] = staticFile{body: b, gz: gzipped(b), ctype: f.ctype}
	}
	cs.pages = parsePages(cs)
	return cs
}

// loadConsoleText reads the console catalogues: <lang>.json and, so each
// area keeps its own strings, <area>.<lang>.json, merged per language.
func loadConsoleText() map[string]map[string]string {
	out := map[string]map[string]string{}
	entries, err := fs.ReadDir(assets.Messages, "messages/console")
	if err != nil {
		panic("console catalogue: " + err.Error())
	}
	for _, e := range entries {
		b, err := fs.ReadFile(assets.Messages, "messages/console/"+e.Name())
		if err != nil {
			panic(err)
		}
		m := map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			panic("console catalogue " + e.Name() + ": " + err.Error())
		}
		name := strings.TrimSuffix(e.Name(), ".json")
		lang := name[strings.LastIndexByte(name, '.')+1:]
		if out[lang] == nil {
			out[lang] = map[string]string{}
		}
		for k, v := range m {
			if _, dup := out[lang][k]; dup {
				panic("console catalogue: key " + k + " twice in " + lang)
			}
			out[lang][k] = v
		}
	}
	return out
}

// parsePages builds one template set per page: the layout plus the page.
func parsePages(cs *console) map[string]*template.Template {
	base := template.Must(template.New("layout.tmpl").Funcs(consoleFuncs).ParseFS(consoleFS, "console/layout.tmpl", "console/partials.tmpl"))
	names, err := fs.Glob(consoleFS, "console/*.tmpl")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".tmpl")
		if name == "layout" || name == "partials" {
			continue
		}
		out[name] = template.Must(template.Must(base.Clone()).ParseFS(consoleFS, n))
	}
	// Subscriber pages: their own layout, the same partials, keyed "my/<name>".
	myBase := template.Must(template.New("layout.tmpl").Funcs(consoleFuncs).ParseFS(consoleFS, "my/layout.tmpl", "console/partials.tmpl", "my/partials.tmpl"))
	if names, err = fs.Glob(consoleFS, "my/*.tmpl"); err != nil {
		panic(err)
	}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".tmpl")
		if name == "layout" || name == "partials" {
			continue
		}
		out["my/"+name] = template.Must(template.Must(myBase.Clone()).ParseFS(consoleFS, n))
	}
	return out
}

// tileData is what the "tile" partial renders.
type tileData struct {
	View *view
	V    dashboards.TileValue
}

// consoleFuncs are the template helpers; the per-request ones (t, money,
// when) are methods of the view so they know the language and tenant.
var consoleFuncs = template.FuncMap{
	"add":   func(a, b int) int { return a + b },
	"add64": func(a, b int64) int64 { return a + b },
	"list":  func(v ...any) []any { return v },
	"pct": func(used, limit int64) int64 {
		if limit <= 0 {
			return 0
		}
		return min(used*100/limit, 100)
	},
	"bytes": humanBytes,
	// tileOf pairs a dashboard tile with the view (its texts) for the
	// "tile" partial.
	"tileOf": func(v *view, t dashboards.TileValue) tileData { return tileData{View: v, V: t} },
	"deref": func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	},
}

func humanBytes(n int64) string {
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

// view is what every page template gets: the request's language, the
// caller, the menu, and the page's own data.
type view struct {
	Lang, Dir string
	Title     string
	Active    string
	Actor     *app.Actor
	Username  string
	Tenant    string
	Menu      []menuItem
	Flash     string
	FlashBad  bool
	URLs      map[string]string
	Data      any
	Errors    map[string]string // field → message
	Form      url.Values
	loc       *time.Location
	currency  string
	text      map[string]string
	en        map[string]string
}

type menuItem struct{ Key, Href, Label string }

// T translates a console text key.
func (v *view) T(key string) string {
	if s, ok := v.text[key]; ok {
		return s
	}
	if s, ok := v.en[key]; ok {
		return s
	}
	return key
}

// Money formats an amount with the tenant's currency.
func (v *view) Money(m app.Money) string { return m.String() + " " + v.currency }

// When shows a timestamp in the tenant's timezone.
func (v *view) When(t app.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Time.In(v.loc).Format("2006-01-02 15:04")
}

// Duration shows seconds as hours and minutes ("3 h 05 min").
func (v *view) Duration(sec int64) string {
	if sec < 3600 {
		return fmt.Sprintf("%d min", sec/60)
	}
	return fmt.Sprintf("%d h %02d min", sec/3600, sec%3600/60)
}

// FieldError is the message for a form field, "" when none.
func (v *view) FieldError(field string) string { return v.Errors[field] }

// Value is the submitted value of a form field (to refill a refused form).
func (v *view) Value(field string) string { return v.Form.Get(field) }

// canMap is which of perms the actor holds, keyed by the code as a string:
// templates read it as .Can.prm_users_update (a template cannot index a
// map by app.Perm). Go code asks c.Actor.Can instead of reading it.
func canMap(act *app.Actor, perms ...app.Perm) map[string]bool {
	m := make(map[string]bool, len(perms))
	for _, p := range perms {
		m[string(p)] = act.Can(p)
	}
	return m
}

// The menu is made of the page rows that name a Menu key, in table order;
// an item the caller may not use (the row's Perms) is not shown.
// lang picks the page language: the session's choice, Accept-Language,
// then the tenant's default.
func (s *Server) consoleLang(c *Ctx) string {
	if l := s.cookieSessions(c).GetString(c.R.Context(), csLang); l != "" {
		return l
	}
	if l := pickLanguage(c.R.Header.Get("Accept-Language")); l != "" {
		if _, ok := s.console.text[l]; ok {
			return l
		}
	}
	if c.Tenant != nil {
		if l := app.SettingDefaultLanguage.GetOr(context.WithoutCancel(c.R.Context()), c.Tenant.DB.R); s.console.text[l] != nil {
			return l
		}
	}
	return "en"
}

func (s *Server) newView(c *Ctx, active, titleKey string) *view {
	lang := s.consoleLang(c)
	v := &view{Lang: lang, Dir: "ltr", Active: active, Actor: c.Actor, URLs: s.console.urls, text: s.console.text[lang],
		en: s.console.text["en"], loc: time.UTC, currency: "", Form: url.Values{}, Errors: map[string]string{}}
	if lang == "ar" {
		v.Dir = "rtl"
	}
	v.Title = v.T(titleKey)
	if c.Tenant != nil {
		ctx := context.WithoutCancel(c.R.Context())
		v.Tenant = c.Tenant.Name
		v.currency = app.SettingCurrency.GetOr(ctx, c.Tenant.DB.R)
		if loc, err := time.LoadLocation(app.SettingTimezone.GetOr(ctx, c.Tenant.DB.R)); err == nil {
			v.loc = loc
		}
	}
	if c.Actor != nil && isMy(c.Route) {
		v.Username = s.mySM.GetString(c.R.Context(), msUser)
	} else if c.Actor != nil {
		v.Username = s.console.sm.GetString(c.R.Context(), "username")
		for _, rt := range s.pages {
			if rt.Menu != "" && (len(rt.Perms) == 0 || c.Actor.Can(rt.Perms...)) {
				href := rt.P
				if href == "/{$}" {
					href = "/"
				}
				v.Menu = append(v.Menu, menuItem{Key: rt.Menu, Href: href, Label: v.T("menu." + rt.Menu)})
			}
		}
	}
	if f := s.cookieSessions(c).PopString(c.R.Context(), csFlash); f != "" {
		v.Flash, v.FlashBad = strings.TrimPrefix(f, "!"), strings.HasPrefix(f, "!")
	}
	return v
}

// setFlash leaves a message for the next page; bad ones are shown as errors.
func (s *Server) setFlash(c *Ctx, msg string, bad bool) {
	if bad {
		msg = "!" + msg
	}
	s.cookieSessions(c).Put(c.R.Context(), csFlash, msg)
}

// render writes a page (or, for an htmx request naming a block, only that
// block) with the console's security headers.
func (s *Server) render(c *Ctx, status int, page string, v *view) error {
	t := s.console.pages[page]
	if t == nil {
		return fmt.Errorf("console: no page %q", page)
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
	h.Set("Vary", "HX-Request, HX-Target")
	c.W.WriteHeader(status)
	_, err := c.W.Write(buf.Bytes())
	return err
}

// pager is a list page's previous and next links: path (empty for the
// current page) with keep's query values and the page number; "" where
// there is no such page.
func pager(path string, keep url.Values, m app.Meta) (prev, next string) {
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

// nonEmpty is {key: [value]}, or no values when value is empty.
func nonEmpty(key, value string) url.Values {
	if value == "" {
		return url.Values{}
	}
	return url.Values{key: {value}}
}

// redirect answers a form post: 303 to the next page (htmx follows it).
func redirect(c *Ctx, to string) error {
	http.Redirect(c.W, c.R, to, http.StatusSeeOther)
	return nil
}

// consoleCredential is the API session token of the console session on
// this host, refreshed when it has expired; "" when signed out.
func (s *Server) consoleCredential(c *Ctx) (string, error) {
	ctx := c.R.Context()
	sm := s.console.sm
	if c.Tenant == nil || sm.GetString(ctx, csTenant) != c.Tenant.Slug {
		return "", nil
	}
	tok := sm.GetString(ctx, csToken)
	if time.Now().Unix() < sm.GetInt64(ctx, csExp)-30 {
		return tok, nil
	}
	res, err := identity.Refresh(ctx, s.app, c.Tenant, sm.GetString(ctx, csRefresh), c.IP, c.R.UserAgent())
	if err != nil {
		// Revoked, expired or reused: the console session ends with it.
		if derr := sm.Destroy(ctx); derr != nil {
			return "", derr
		}
		return "", nil
	}
	s.keepLogin(c, res)
	return res.Token, nil
}

// keepLogin stores a login result in the cookie session.
func (s *Server) keepLogin(c *Ctx, res *identity.LoginResult) {
	ctx := c.R.Context()
	s.console.sm.Put(ctx, csTenant, res.TenantSlug)
	s.console.sm.Put(ctx, csToken, res.Token)
	s.console.sm.Put(ctx, csRefresh, res.RefreshToken)
	s.console.sm.Put(ctx, csExp, res.ExpiresAt)
}

// pageError renders an error as a page: signed out → the sign-in page,
// 403 and 404 as pages with the API's status.
func (s *Server) pageError(c *Ctx, err error) {
	e := app.AsError(err)
	if e == nil && errors.Is(err, context.DeadlineExceeded) {
		e = app.ErrTimeout()
	}
	if e == nil {
		e = app.ErrInternal(err)
		s.log.Error("console page failed", "request_id", c.ReqID, "path", c.R.URL.Path, "err", err)
	}
	if e.Status == http.StatusUnauthorized && isMy(c.Route) {
		myLoginRedirect(c)
		return
	}
	if e.Status == http.StatusUnauthorized {
		next := c.R.URL.RequestURI()
		if c.R.Method != "GET" {
			next = "/"
		}
		if c.R.Header.Get("HX-Request") == "true" {
			c.W.Header().Set("HX-Redirect", "/login?next="+url.QueryEscape(next))
			c.W.WriteHeader(http.StatusUnauthorized)
			return
		}
		http.Redirect(c.W, c.R, "/login?next="+url.QueryEscape(next), http.StatusSeeOther)
		return
	}
	v := s.newView(c, "", "error.title")
	lang := v.Lang
	v.Data = map[string]any{"Status": e.Status, "Message": message(lang, e.Reason, e.Code), "RequestID": c.ReqID}
	page := "error"
	if isMy(c.Route) {
		page = "my/error"
	}
	if rerr := s.render(c, e.Status, page, v); rerr != nil {
		s.log.Error("console error page", "err", rerr)
	}
}

// formError re-renders a form page with the refusal next to its field
// (or on top when it concerns no field).
func (s *Server) formError(c *Ctx, page string, v *view, err error) error {
	e := app.AsError(err)
	if e == nil || e.Status >= 500 || e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || e.Status == http.StatusNotFound {
		return err
	}
	msg := message(v.Lang, e.Reason, e.Code)
	if e.Field != "" {
		v.Errors[e.Field] = msg
	} else {
		v.Flash, v.FlashBad = msg, true
	}
	return s.render(c, e.Status, page, v)
}

// serveStatic answers the console's embedded files: immutable, hashed URLs,
// gzipped for a browser that accepts it.
func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	f, ok := s.console.static[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Vary", "Accept-Encoding")
	body := f.body
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// pageHeaders are set on every console response.
func pageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
}

// wrapPage is the pipeline of a page row: the cookie session, cross-origin
// protection for forms, the security headers, then the shared serve().
func (s *Server) wrapPage(rt *Route) http.Handler {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		pageHeaders(w.Header())
		c, sw := s.newCtx(w, r, rt)
		s.setDeadlines(w, r, rt, sw)
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic", "request_id", c.ReqID, "panic", p)
				if sw.status == 0 {
					s.pageError(c, app.ErrInternal(fmt.Errorf("panic: %v", p)))
				}
			}
			s.accessLog(c, sw, time.Since(start))
		}()
		if err := s.serve(c); err != nil {
			if sw.status == 0 {
				s.pageError(c, err)
			}
		}
	})
	cop := http.NewCrossOriginProtection()
	if isMy(rt) {
		return s.mySM.LoadAndSave(cop.Handler(inner))
	}
	return s.console.sm.LoadAndSave(cop.Handler(inner))
}
