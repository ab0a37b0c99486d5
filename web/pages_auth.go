package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"xr/app"
	"xr/app/identity"
)

// pageTable is every console page row; each group adds its own.
func (s *Server) pageTable() []*Route {
	var rows []Route
	// The order of the groups is the order of the menu.
	for _, g := range [][]Route{s.authPages(), s.userPages(), s.sessionPages(), s.identityPages(), s.accountPages(), s.planPages(), s.selfservicePages(), s.nasPages(), s.radsecPages(), s.monitoringPages(), s.devgwPages(), s.cardPages(), s.webhookPages(), s.ticketPages(), s.backupDestinationPages(), s.outboxPages(), s.toolsPages(), s.reportPages(), s.backupPages(), s.jobPages(), s.bandwidthPages(), s.dashboardPages(), s.paymentPages(), s.myPages(), s.myTicketPages(), s.myFamilyPages(), s.myEntryPages(), s.myPlanPages(), s.portalEntryPages(), s.shopPages(), s.posPages(), s.parentalPages(), s.dataimportPages(), s.legacyPages(), s.hotspotPages(), s.studioPages()} {
		rows = append(rows, g...)
	}
	out := make([]*Route, len(rows))
	for i := range rows {
		rows[i].Page = true
		out[i] = &rows[i]
	}
	return out
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

// loginRefused is the one message for a wrong name or password, so the
// page never tells which accounts exist.
func (s *Server) loginRefused(c *Ctx, page string, v *view, err error) error {
	e := app.AsError(err)
	if e == nil {
		return err
	}
	switch e.Reason {
	case "invalid_credentials":
		v.Flash = v.T("login.refused")
	default:
		v.Flash = message(v.Lang, e.Reason, e.Code)
	}
	v.FlashBad = true
	return s.render(c, http.StatusUnauthorized, page, v)
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
			v.Errors["code"] = message(v.Lang, "invalid_totp_code", e.Code)
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
	s.keepLogin(c, res)
	s.console.sm.Put(ctx, "username", username)
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
	lang := c.R.PostFormValue("lang")
	if _, ok := s.console.text[lang]; !ok {
		return app.ErrValidation("invalid_enum", "lang")
	}
	s.console.sm.Put(c.R.Context(), csLang, lang)
	back := "/"
	if ref, err := url.Parse(c.R.Referer()); err == nil && ref.Host == c.R.Host {
		back = ref.RequestURI()
	}
	return redirect(c, localNext(back))
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

// parseForm reads a urlencoded form within the body limit; a body that is
// not a form is 400.
func parseForm(c *Ctx) error {
	c.R.Body = http.MaxBytesReader(c.W, c.R.Body, MaxBody)
	if err := c.R.ParseForm(); err != nil {
		return app.ErrValidation("malformed_form", "")
	}
	return nil
}
