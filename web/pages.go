package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/alexedwards/scs/v2/memstore"

	"xr/app"
)

// Server-rendered pages: a product of pages (the staff console in
// web/console, the subscriber pages in web/my) is a Pages value given to
// New. Its rows are Routes marked Page: they go through the same pipeline
// as an API row (tenant, credential, licence, permission, buckets), with
// the product's cookie session as the credential and errors rendered as
// pages. A page row that calls the app function of an API row names it
// (Route.API) and takes its permissions from it.

// Pages declares a product of server-rendered pages.
type Pages struct {
	// Name names the product in logs ("console", "my").
	Name string
	// Prefix is the path its rows live under and the path of its cookie
	// ("/" for the console, "/my/" for the subscriber pages).
	Prefix string
	// Cookie is the name of its session cookie; IdleTimeout ends a
	// session left unused (every session ends after 30 days).
	Cookie      string
	IdleTimeout time.Duration
	// Templates holds layout.tmpl, optionally partials.tmpl, and one
	// <page>.tmpl per page defining "content"; Funcs are the product's
	// template helpers beside the shared ones (view.go).
	Templates fs.FS
	Funcs     template.FuncMap
	// Authenticate sets c.Actor from the cookie session; its 401 sends
	// the browser to SignIn (the sign-in page) with the page it asked for.
	Authenticate func(s *Site, c *Ctx) error
	SignIn       string
	// Rows are the product's page rows; the rows with a Menu key make the
	// menu.
	Rows func(s *Site) []Route
	// MenuSections order the menu by job: each section lists menu keys in
	// the order shown. Every row's Menu key is in exactly one section
	// (mount refuses a site where one is missing or unknown).
	MenuSections []MenuSection
}

// MenuSection is one heading of the menu ("menu.section.<Key>") and the
// menu keys under it.
type MenuSection struct {
	Key   string
	Items []string
}

// Site is a Pages mounted on a Server: its cookie session, its templates
// and its rows. Page handlers reach the platform through it.
type Site struct {
	Pages
	srv   *Server
	sm    *scs.SessionManager
	pages map[string]*template.Template
	rows  []*Route
}

// Session keys the platform keeps in every cookie session.
const (
	sessionLang  = "lang"  // chosen language, "" = Accept-Language / tenant default
	sessionFlash = "flash" // one-shot message after a redirect
	// SessionUsername is the name shown in the page header.
	SessionUsername = "username"
)

// PageCSP, on every page, allows nothing but this origin: no inline script or style, no
// frames, forms only to this origin.
const PageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// mount builds a product's site and registers its rows.
func (s *Server) mount(p Pages) *Site {
	site := &Site{Pages: p, srv: s, pages: pagesOf(p)}
	sm := scs.New()
	sm.Store = s.app.ConsoleSessions()
	if s.app.IsStandby() {
		// instance.db is a read-only copy there: the cookie sessions of
		// a standby live in memory, as its sign-ins do (docs/ha.md).
		sm.Store = memstore.New()
	}
	sm.Lifetime = 30 * 24 * time.Hour // bounded by the API session's refresh anyway
	sm.IdleTimeout = p.IdleTimeout
	sm.Cookie.Name = p.Cookie
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Path = p.Prefix
	// Secure only when told (--secure-cookies): xr itself serves plain HTTP,
	// where a browser would drop a Secure cookie; behind a TLS proxy it is
	// what keeps the cookie off plain connections.
	sm.Cookie.Secure = s.app.Cfg.SecureCookies
	sm.ErrorFunc = func(w http.ResponseWriter, r *http.Request, err error) {
		s.log.Error(p.Name+" session", "err", err)
		http.Error(w, "session store unavailable", http.StatusServiceUnavailable)
	}
	site.sm = sm
	rows := p.Rows(site)
	for i := range rows {
		r := &rows[i]
		r.Page, r.site = true, site
		if err := s.takeFromAPI(r); err != nil {
			panic(err)
		}
		site.rows = append(site.rows, r)
		s.register(r, s.wrapPage(r))
	}
	if err := site.checkMenu(); err != nil {
		panic(err)
	}
	return site
}

// checkMenu holds the menu sections and the rows' Menu keys to each
// other: a page in no section would be unreachable from the menu, a
// section item naming no page a dead heading.
func (s *Site) checkMenu() error {
	placed := map[string]bool{}
	for _, sec := range s.MenuSections {
		for _, k := range sec.Items {
			if placed[k] {
				return fmt.Errorf("%s: menu key %q in two sections", s.Name, k)
			}
			placed[k] = true
		}
	}
	rows := map[string]bool{}
	for _, r := range s.rows {
		if r.Menu == "" {
			continue
		}
		rows[r.Menu] = true
		if !placed[r.Menu] {
			return fmt.Errorf("%s: menu key %q (%s) is in no menu section", s.Name, r.Menu, r.P)
		}
	}
	for k := range placed {
		if !rows[k] {
			return fmt.Errorf("%s: menu section item %q names no page", s.Name, k)
		}
	}
	return nil
}

// App is the instance the site serves.
func (s *Site) App() *app.App { return s.srv.app }

// Server is the server the site is mounted on.
func (s *Site) Server() *Server { return s.srv }

// Log is the server's logger.
func (s *Site) Log() *slog.Logger { return s.srv.log }

// Session is the site's cookie session manager.
func (s *Site) Session() *scs.SessionManager { return s.sm }

// Routes are the site's page rows, as mounted.
func (s *Site) Routes() []*Route { return s.rows }

// Site is the mounted site of that name, nil when none.
func (s *Server) Site(name string) *Site {
	for _, site := range s.sites {
		if site.Name == name {
			return site
		}
	}
	return nil
}

// PageRoutes are the page rows of every mounted site.
func (s *Server) PageRoutes() []*Route {
	var out []*Route
	for _, site := range s.sites {
		out = append(out, site.rows...)
	}
	return out
}

// authenticate runs the site's authentication of a page row's caller.
func (s *Site) authenticate(c *Ctx) error {
	if s.Authenticate == nil {
		return app.ErrUnauthorized("missing_bearer_token")
	}
	return s.Authenticate(s, c)
}

// SetFlash leaves a message for the next page; bad ones are shown as errors.
func (s *Site) SetFlash(c *Ctx, msg string, bad bool) {
	if bad {
		msg = "!" + msg
	}
	s.sm.Put(c.R.Context(), sessionFlash, msg)
}

// Redirect answers a form post: 303 to the next page (htmx follows it).
func Redirect(c *Ctx, to string) error {
	http.Redirect(c.W, c.R, to, http.StatusSeeOther)
	return nil
}

// pageError renders an error as a page: signed out → the site's sign-in
// page, other errors as the site's error page with the API's
// status.
func (s *Site) pageError(c *Ctx, err error) {
	e := app.AsError(err)
	if e == nil && errors.Is(err, context.DeadlineExceeded) {
		e = app.ErrTimeout()
	}
	if e == nil {
		e = app.ErrInternal(err)
		s.srv.log.Error(s.Name+" page failed", "request_id", c.ReqID, "path", c.R.URL.Path, "err", err)
	}
	if e.Status == http.StatusUnauthorized && s.SignIn != "" {
		signInRedirect(c, s.SignIn, s.Prefix)
		return
	}
	v := s.NewView(c, "", "error.title")
	v.Data = map[string]any{"Status": e.Status, "Message": Message(v.Lang, e.Reason, e.Code), "RequestID": c.ReqID}
	if rerr := s.Render(c, e.Status, "error", v); rerr != nil {
		s.srv.log.Error(s.Name+" error page", "err", rerr)
	}
}

// signInRedirect sends a signed-out browser to the sign-in page at login
// with ?next= the page it asked for (home after a form post): a 303, or
// for an htmx request a 401 with HX-Redirect.
func signInRedirect(c *Ctx, login, home string) {
	next := c.R.URL.RequestURI()
	if c.R.Method != "GET" {
		next = home
	}
	to := login + "?next=" + url.QueryEscape(next)
	if c.R.Header.Get("HX-Request") == "true" {
		c.W.Header().Set("HX-Redirect", to)
		c.W.WriteHeader(http.StatusUnauthorized)
		return
	}
	http.Redirect(c.W, c.R, to, http.StatusSeeOther)
}

// pageHeaders are set on every page response.
func pageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", PageCSP)
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
					rt.site.pageError(c, app.ErrInternal(fmt.Errorf("panic: %v", p)))
				}
			}
			s.accessLog(c, sw, time.Since(start))
		}()
		if err := s.serve(c); err != nil {
			if sw.status == 0 {
				rt.site.pageError(c, err)
			}
		}
	})
	cop := http.NewCrossOriginProtection()
	return rt.site.sm.LoadAndSave(cop.Handler(inner))
}

// takeFromAPI completes a page row that names its API row (Route.API):
// the row's access rules (Perms or AnyStaff, SessionOnly, NoImpersonation,
// the licence exemption) and the buckets that protect its effect, and its
// handler when the page has none. Naming a row that does not exist or
// serves another kind of caller, or naming one and stating any of these
// by hand as well, stops the server at start.
func (s *Server) takeFromAPI(r *Route) error {
	if r.API == "" {
		return nil
	}
	api := s.APIRoute(r.API)
	if api == nil {
		return fmt.Errorf("page %s names API row %q, which does not exist", r.Pattern(), r.API)
	}
	if api.Access != r.Access {
		return fmt.Errorf("page %s is %s, its API row %q is %s", r.Pattern(), r.Access, r.API, api.Access)
	}
	if r.StatesMarks() {
		return fmt.Errorf("page %s names API row %q and states permissions, buckets or access rules by hand too: it takes them from the row", r.Pattern(), r.API)
	}
	r.Perms, r.AnyStaff, r.Buckets = api.Perms, api.AnyStaff, api.Buckets
	r.SessionOnly, r.NoImpersonation, r.LicenseExempt = api.SessionOnly, api.NoImpersonation, api.licenseExempt()
	if r.H == nil {
		r.H = api.H
	}
	return nil
}

// APIRoute is the API row named "METHOD /path" (the path under /api/v1),
// nil when there is none.
func (s *Server) APIRoute(name string) *Route {
	for _, a := range s.routes {
		if !a.Root && a.M+" "+a.P == name {
			return a
		}
	}
	return nil
}

// StatesMarks tells whether a row states access rules or buckets itself.
func (r *Route) StatesMarks() bool {
	return len(r.Perms) > 0 || r.AnyStaff || len(r.Buckets) > 0 || r.SessionOnly || r.NoImpersonation || r.LicenseExempt
}
