package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"

	"xr/app"
	"xr/app/portal"
)

// The subscriber pages (/my/ on the tenant's host): the same stack as the
// staff console — page rows through the one pipeline, html/template, htmx,
// strict CSP, cross-origin protection — with their own cookie session
// (xr_my, path /my/) holding the subscriber's portal session, their own
// phone-first layout (web/my/layout.tmpl) and their own sign-in page. A
// page handler calls the same app function as the portal API row.
//
// /my/ is the one path prefix the staff console never uses, so one host
// serves both without a cookie or a route in common.

const myPrefix = "/my/"

// Session keys of a /my/ cookie session (the console's keys for language
// and flash are shared by name).
const (
	msTenant  = "tenant"
	msToken   = "token"
	msRefresh = "refresh"
	msExp     = "exp"
	msUser    = "username"
)

func (s *Server) newMySessions() *scs.SessionManager {
	sm := scs.New()
	sm.Store = s.app.ConsoleSessions()
	sm.Lifetime = 30 * 24 * time.Hour
	sm.IdleTimeout = 7 * 24 * time.Hour
	sm.Cookie.Name = "xr_my"
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Path = myPrefix
	sm.Cookie.Secure = s.app.Cfg.SecureCookies
	sm.ErrorFunc = func(w http.ResponseWriter, r *http.Request, err error) {
		s.log.Error("my session", "err", err)
		http.Error(w, "session store unavailable", http.StatusServiceUnavailable)
	}
	return sm
}

// isMy reports whether a route is a subscriber page.
func isMy(rt *Route) bool { return rt != nil && rt.Page && strings.HasPrefix(rt.P, myPrefix) }

// cookieSessions is the cookie session of the request's page kind.
func (s *Server) cookieSessions(c *Ctx) *scs.SessionManager {
	if isMy(c.Route) {
		return s.mySM
	}
	return s.console.sm
}

// myAuth authenticates a subscriber page from its cookie session,
// refreshing the portal session when it has expired; signed out is the
// portal's 401 (the page pipeline sends it to /my/login).
func (s *Server) myAuth(c *Ctx) error {
	ctx := c.R.Context()
	sm := s.mySM
	if c.Tenant == nil || sm.GetString(ctx, msTenant) != c.Tenant.Slug {
		return app.ErrUnauthorized("missing_bearer_token")
	}
	tok := sm.GetString(ctx, msToken)
	if time.Now().Unix() >= sm.GetInt64(ctx, msExp)-30 {
		res, err := portal.Refresh(ctx, c.Tenant, portal.RefreshInput{RefreshToken: sm.GetString(ctx, msRefresh), IP: c.IP, UserAgent: c.R.UserAgent()})
		if err != nil {
			if derr := sm.Destroy(ctx); derr != nil {
				return derr
			}
			return app.ErrUnauthorized("session_expired")
		}
		s.keepMyLogin(c, res)
		tok = res.Token
	}
	uid, jti, err := portal.Authenticate(ctx, c.Tenant, tok)
	if err != nil {
		if derr := sm.Destroy(ctx); derr != nil {
			return derr
		}
		return err
	}
	c.Actor = app.SubscriberActor(c.Tenant, uid, jti)
	return nil
}

// keepMyLogin stores a portal session in the /my/ cookie session, under a
// fresh session id (no fixation across sign-in).
func (s *Server) keepMyLogin(c *Ctx, res *portal.Session) {
	ctx := c.R.Context()
	s.mySM.Put(ctx, msTenant, c.Tenant.Slug)
	s.mySM.Put(ctx, msToken, res.Token)
	if res.RefreshToken != "" {
		s.mySM.Put(ctx, msRefresh, res.RefreshToken)
	}
	s.mySM.Put(ctx, msExp, res.ExpiresAt)
	s.mySM.Put(ctx, msUser, res.Username)
}

// myLoginRedirect sends a signed-out subscriber to the sign-in page.
func myLoginRedirect(c *Ctx) {
	next := c.R.URL.RequestURI()
	if c.R.Method != "GET" {
		next = myPrefix
	}
	to := myPrefix + "login?next=" + url.QueryEscape(next)
	if c.R.Header.Get("HX-Request") == "true" {
		c.W.Header().Set("HX-Redirect", to)
		c.W.WriteHeader(http.StatusUnauthorized)
		return
	}
	http.Redirect(c.W, c.R, to, http.StatusSeeOther)
}

// myLocalNext keeps a post-sign-in redirect inside /my/.
func myLocalNext(next string) string {
	if !strings.HasPrefix(next, myPrefix) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return myPrefix
	}
	return next
}
