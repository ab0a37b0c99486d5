// Package my is the subscriber pages (/my/ on the tenant's host): the same
// stack as the staff console — page rows through the one pipeline,
// html/template, htmx, strict CSP, cross-origin protection — with their
// own cookie session (xr_my, path /my/) holding the subscriber's portal
// session, their own phone-first layout (layout.tmpl) and their own
// sign-in page. A page handler calls the same app function as the portal
// API row.
//
// /my/ is the one path prefix the staff console never uses, so one host
// serves both without a cookie or a route in common.
package my

import (
	"embed"
	"strings"
	"time"

	"xr/app"
	"xr/app/portal"
	"xr/web"
)

const myPrefix = "/my/"

//go:embed *.tmpl
var templates embed.FS

// Pages are the subscriber pages, mounted by web.New(a, ..., my.Pages).
var Pages = web.Pages{Name: "my", Prefix: myPrefix, Cookie: "xr_my", IdleTimeout: 7 * 24 * time.Hour,
	Templates: templates, Authenticate: authenticate, SignIn: myPrefix + "login",
	Rows: func(ws *web.Site) []web.Route { return (&site{ws}).rows() }}

// site is the subscriber pages as mounted: the page handlers are its
// methods.
type site struct{ *web.Site }

// rows are every subscriber page row.
func (s *site) rows() []web.Route {
	var rows []web.Route
	for _, g := range [][]web.Route{s.loginPages(), s.homePages(), s.myTicketPages(), s.myFamilyPages(), s.myEntryPages(), s.myPlanPages()} {
		rows = append(rows, g...)
	}
	return rows
}

// Session keys of a /my/ cookie session (besides the platform's: language,
// flash, username).
const (
	msTenant  = "tenant"
	msToken   = "token"
	msRefresh = "refresh"
	msExp     = "exp"
)

// authenticate authenticates a subscriber page from its cookie session,
// refreshing the portal session when it has expired; signed out is the
// portal's 401 (the page pipeline sends it to /my/login).
func authenticate(ws *web.Site, c *web.Ctx) error {
	s := &site{ws}
	ctx := c.R.Context()
	sm := s.Session()
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
func (s *site) keepMyLogin(c *web.Ctx, res *portal.Session) {
	ctx := c.R.Context()
	s.Session().Put(ctx, msTenant, c.Tenant.Slug)
	s.Session().Put(ctx, msToken, res.Token)
	if res.RefreshToken != "" {
		s.Session().Put(ctx, msRefresh, res.RefreshToken)
	}
	s.Session().Put(ctx, msExp, res.ExpiresAt)
	s.Session().Put(ctx, web.SessionUsername, res.Username)
}

// myLocalNext keeps a post-sign-in redirect inside /my/.
func myLocalNext(next string) string {
	if !strings.HasPrefix(next, myPrefix) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return myPrefix
	}
	return next
}
