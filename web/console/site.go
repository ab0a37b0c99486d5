// Package console is the staff console: server-rendered pages on the
// tenant's host over the same app functions as the API (docs/console.md).
// No single-page app: html/template plus htmx, one stylesheet and one
// script, all embedded. Its credential is the API session the console
// signed in with, kept in a cookie session (scs), so a console session is
// listed and revoked with the API's sessions.
package console

import (
	"embed"
	"html/template"
	"time"

	"xr/app/dashboards"
	"xr/app/identity"
	"xr/web"
)

// Pages are the staff console, mounted by web.New(a, console.Pages, ...).
var Pages = web.Pages{Name: "console", Prefix: "/", Cookie: "xr_console", IdleTimeout: 12 * time.Hour,
	Templates: templates, Funcs: template.FuncMap{
		// tileOf pairs a dashboard tile with the view (its texts) for the
		// "tile" partial.
		"tileOf": tileOf,
	},
	Authenticate: consoleAuthenticate, SignIn: "/login", MenuSections: menuSections,
	Rows: func(ws *web.Site) []web.Route { return (&site{ws}).pageTable() }}

//go:embed *.tmpl
var templates embed.FS

// site is the console as mounted: the page handlers are its methods.
type site struct{ *web.Site }

// tileData is what the "tile" partial renders.
type tileData struct {
	View *web.View
	V    dashboards.TileValue
	Link string // the list a KPI tile counts, when it counts subscribers
}

func tileOf(v *web.View, t dashboards.TileValue) tileData {
	d := tileData{View: v, V: t}
	if f, ok := dashboards.Figure(t.Metric); ok && t.Type == "kpi" {
		d.Link = figureTileOf(f, 0).Link
	}
	return d
}

// Session keys of a console cookie session.
const (
	csTenant  = "tenant"  // slug the session belongs to
	csToken   = "token"   // API session token
	csRefresh = "refresh" // its refresh token
	csExp     = "exp"     // token expiry, unix seconds
	csPending = "pending" // sealed password of a sign-in waiting for its TOTP code
	csPendID  = "pending_id"
	csPendExp = "pending_exp"
)

// consoleAuthenticate authenticates a console page with the API session
// of its cookie session.
func consoleAuthenticate(site *web.Site, c *web.Ctx) error {
	cred, err := consoleCredential(site, c)
	if err != nil {
		return err
	}
	act, err := identity.Authenticate(c.R.Context(), site.App(), c.Tenant, cred)
	if err != nil {
		return err
	}
	c.Actor = act
	return nil
}

// consoleCredential is the API session token of the console session on
// this host, refreshed when it has expired; "" when signed out.
func consoleCredential(site *web.Site, c *web.Ctx) (string, error) {
	ctx := c.R.Context()
	sm := site.Session()
	if c.Tenant == nil || sm.GetString(ctx, csTenant) != c.Tenant.Slug {
		return "", nil
	}
	tok := sm.GetString(ctx, csToken)
	if time.Now().Unix() < sm.GetInt64(ctx, csExp)-30 {
		return tok, nil
	}
	res, err := identity.Refresh(ctx, site.App(), c.Tenant, sm.GetString(ctx, csRefresh), c.IP, c.R.UserAgent())
	if err != nil {
		// Revoked, expired or reused: the console session ends with it.
		if derr := sm.Destroy(ctx); derr != nil {
			return "", derr
		}
		return "", nil
	}
	keepLogin(site, c, res)
	return res.Token, nil
}

// keepLogin stores a login result in the cookie session.
func keepLogin(site *web.Site, c *web.Ctx, res *identity.LoginResult) {
	ctx := c.R.Context()
	sm := site.Session()
	sm.Put(ctx, csTenant, res.TenantSlug)
	sm.Put(ctx, csToken, res.Token)
	sm.Put(ctx, csRefresh, res.RefreshToken)
	sm.Put(ctx, csExp, res.ExpiresAt)
}

// pageTable is every console page row; each group adds its own.
func (s *site) pageTable() []web.Route {
	var rows []web.Route
	for _, g := range [][]web.Route{s.authPages(), s.userPages(), s.sessionPages(), s.identityPages(), s.accountPages(), s.planPages(), s.selfservicePages(), s.nasPages(), s.radsecPages(), s.monitoringPages(), s.devgwPages(), s.cardPages(), s.webhookPages(), s.ticketPages(), s.backupDestinationPages(), s.outboxPages(), s.toolsPages(), s.reportPages(), s.backupPages(), s.jobPages(), s.bandwidthPages(), s.dashboardPages(), s.paymentPages(), s.portalEntryPages(), s.shopPages(), s.posPages(), s.parentalPages(), s.dataimportPages(), s.legacyPages(), s.hotspotPages(), s.studioPages()} {
		rows = append(rows, g...)
	}
	return rows
}
