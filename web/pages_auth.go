package web

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"xr/app"
	"xr/app/dashboards"
	"xr/app/identity"
)

// consolePages is the staff console: server-rendered pages on the
// tenant's host over the same app functions as the API. Its credential is
// the API session the console signed in with, kept in a cookie session
// (scs), so a console session is listed and revoked with the API's
// sessions.
var consolePages = Pages{Name: "console", Prefix: "/", Cookie: "xr_console", IdleTimeout: 12 * time.Hour,
	Templates: consoleTemplates(), Funcs: template.FuncMap{
		// tileOf pairs a dashboard tile with the view (its texts) for the
		// "tile" partial.
		"tileOf": func(v *View, t dashboards.TileValue) tileData { return tileData{View: v, V: t} },
	},
	Authenticate: consoleAuthenticate, SignIn: "/login",
	Rows: func(site *Site) []Route { return site.srv.pageTable() }}

//go:embed console/*.tmpl
var consoleFS embed.FS

func consoleTemplates() fs.FS {
	sub, err := fs.Sub(consoleFS, "console")
	if err != nil {
		panic(err)
	}
	return sub
}

// tileData is what the "tile" partial renders.
type tileData struct {
	View *View
	V    dashboards.TileValue
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
func consoleAuthenticate(site *Site, c *Ctx) error {
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
func consoleCredential(site *Site, c *Ctx) (string, error) {
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
func keepLogin(site *Site, c *Ctx, res *identity.LoginResult) {
	ctx := c.R.Context()
	sm := site.Session()
	sm.Put(ctx, csTenant, res.TenantSlug)
	sm.Put(ctx, csToken, res.Token)
	sm.Put(ctx, csRefresh, res.RefreshToken)
	sm.Put(ctx, csExp, res.ExpiresAt)
}

// pageTable is every console page row; each group adds its own.
func (s *Server) pageTable() []Route {
	var rows []Route
	// The order of the groups is the order of the menu.
	for _, g := range [][]Route{s.authPages(), s.userPages(), s.sessionPages(), s.identityPages(), s.accountPages(), s.planPages(), s.selfservicePages(), s.nasPages(), s.monitoringPages(), s.devgwPages(), s.cardPages(), s.webhookPages(), s.ticketPages(), s.backupDestinationPages(), s.outboxPages(), s.toolsPages(), s.reportPages(), s.backupPages(), s.jobPages(), s.bandwidthPages(), s.dashboardPages(), s.paymentPages(), s.portalEntryPages(), s.shopPages(), s.posPages(), s.parentalPages(), s.dataimportPages(), s.legacyPages(), s.hotspotPages(), s.studioPages()} {
		rows = append(rows, g...)
	}
	return rows
}

func (s *Server) authPages() []Route {
	return []Route{
		{M: "GET", P: "/login", Access: Public, Buckets: []string{"login"}, H: s.pageLogin},
		{M: "POST", P: "/login", Access: Public, Buckets: []string{"login"}, H: s.pageLoginPost},
		{M: "POST", P: "/login/totp", Access: Public, Buckets: []string{"login"}, H: s.pageLoginTOTP},
		{M: "POST", P: "/logout", Access: Staff, AnyStaff: true, LicenseExempt: true, H: s.pageLogout},
		{M: "POST", P: "/language", Access: Public, H: s.pageLanguage},
		{M: "GET", P: "/{$}", Access: Staff, AnyStaff: true, LicenseExempt: true, H: s.pageDashboard, Menu: "dashboard"},
	}
}

func (s *Server) accountPages() []Route {
	return []Route{
		{M: "GET", P: "/account", Access: Staff, AnyStaff: true, LicenseExempt: true, H: s.pageAccount, Menu: "account"},
		{M: "POST", P: "/account/password", Access: Staff, AnyStaff: true, LicenseExempt: true, SessionOnly: true, H: s.pageAccountPassword},
	}
}

// pendingLoginTTL bounds how long a password waits for its TOTP code.
const pendingLoginTTL = 5 * time.Minute

// localNext keeps a post-login redirect on this host.
func localNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

func (s *Server) pageLogin(c *Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	v := s.newView(c, "", "login.title")
	v.Form.Set("next", localNext(c.Query().Get("next")))
	return s.render(c, http.StatusOK, "login", v)
}

func (s *Server) pageLoginPost(c *Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := parseForm(c); err != nil {
		return err
	}
	v := s.newView(c, "", "login.title")
	email := strings.TrimSpace(c.R.PostFormValue("email"))
	password := c.R.PostFormValue("password")
	v.Form.Set("email", email)
	v.Form.Set("next", localNext(c.R.PostFormValue("next")))
	res, err := identity.Login(c.R.Context(), s.app, c.Tenant, identity.LoginRequest{Email: email, Password: password, Refresh: true, IP: c.IP, UserAgent: c.R.UserAgent()})
	if e := app.AsError(err); e != nil && e.Reason == "mfa_required" {
		ctx := c.R.Context()
		s.console.sm.Put(ctx, csPendID, email)
		s.console.sm.Put(ctx, csPending, s.app.Keys.Seal([]byte(password)))
		s.console.sm.Put(ctx, csPendExp, time.Now().Add(pendingLoginTTL).Unix())
		v.Title = v.T("totp.title")
		return s.render(c, http.StatusOK, "totp", v)
	}
	if err != nil {
		if e := app.AsError(err); e != nil && e.Field != "" {
			return s.formError(c, "login", v, err)
		}
		return s.loginRefused(c, "login", v, err)
	}
	return s.signedIn(c, email, res, v.Form.Get("next"))
}

func (s *Server) pageLoginTOTP(c *Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := parseForm(c); err != nil {
		return err
	}
	ctx := c.R.Context()
	v := s.newView(c, "", "totp.title")
	v.Form.Set("next", localNext(c.R.PostFormValue("next")))
	email := s.console.sm.GetString(ctx, csPendID)
	sealed := s.console.sm.GetBytes(ctx, csPending)
	if email == "" || time.Now().Unix() > s.console.sm.GetInt64(ctx, csPendExp) {
		s.clearPending(c)
		v.Title = v.T("login.title")
		v.Flash, v.FlashBad = v.T("totp.expired"), true
		return s.render(c, http.StatusUnauthorized, "login", v)
	}
	password, err := s.app.Keys.Open(sealed)
	if err != nil {
		return err
	}
	res, err := identity.Login(ctx, s.app, c.Tenant, identity.LoginRequest{Email: email, Password: string(password),
		TOTPCode: c.R.PostFormValue("code"), Refresh: true, IP: c.IP, UserAgent: c.R.UserAgent()})
	if err != nil {
		if e := app.AsError(err); e != nil && (e.Reason == "invalid_totp_code" || e.Reason == "mfa_required") {
			v.Errors["code"] = Message(v.Lang, "invalid_totp_code", e.Code)
			return s.render(c, http.StatusUnauthorized, "totp", v)
		}
		s.clearPending(c)
		return s.loginRefused(c, "login", v, err)
	}
	s.clearPending(c)
	return s.signedIn(c, email, res, v.Form.Get("next"))
}

func (s *Server) clearPending(c *Ctx) {
	ctx := c.R.Context()
	s.console.sm.Remove(ctx, csPending)
	s.console.sm.Remove(ctx, csPendID)
	s.console.sm.Remove(ctx, csPendExp)
}

// signedIn starts the cookie session (a new token: no fixation) and goes on.
func (s *Server) signedIn(c *Ctx, username string, res *identity.LoginResult, next string) error {
	ctx := c.R.Context()
	if err := s.console.sm.RenewToken(ctx); err != nil {
		return err
	}
	keepLogin(s.console, c, res)
	s.console.sm.Put(ctx, SessionUsername, username)
	return redirect(c, localNext(next))
}

func (s *Server) pageLogout(c *Ctx) error {
	if err := identity.Logout(c.R.Context(), c.Actor); err != nil {
		return err
	}
	if err := s.console.sm.Destroy(c.R.Context()); err != nil {
		return err
	}
	return redirect(c, "/login")
}

func (s *Server) pageLanguage(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	if !s.console.SetLanguage(c, c.R.PostFormValue("lang")) {
		return app.ErrValidation("invalid_enum", "lang")
	}
	return redirect(c, localNext(RefererPath(c.R)))
}

func (s *Server) pageDashboard(c *Ctx) error {
	v := s.newView(c, "dashboard", "menu.dashboard")
	d, err := s.dashboardData(c, v) // web/pages_reports.go
	if err != nil {
		return err
	}
	v.Data = &homeView{dashView: d, Mine: s.myTiles(c)} // web/pages_dashboards.go
	return s.render(c, http.StatusOK, "dashboard", v)
}

func (s *Server) pageAccount(c *Ctx) error {
	return s.accountPage(c, http.StatusOK, nil, nil) // web/pages_identity.go: two-factor, sessions
}

func (s *Server) pageAccountPassword(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	v := s.newView(c, "account", "menu.account")
	if _, err := identity.ChangePassword(c.R.Context(), c.Actor, identity.PasswordChange{CurrentPassword: c.R.PostFormValue("current_password"), NewPassword: c.R.PostFormValue("new_password")}); err != nil {
		d, derr := s.accountData(c)
		if derr != nil {
			return derr
		}
		v.Data = d
		return s.formError(c, "account", v, err)
	}
	s.setFlash(c, v.T("account.password_changed"), false)
	return redirect(c, "/account")
}
