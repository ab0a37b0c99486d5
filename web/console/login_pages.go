package console

import (
	"net/http"
	"strings"
	"time"

	"xr/app"
	"xr/app/identity"
	"xr/web"
)

func (s *site) authPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/login", Access: web.Public, Buckets: []string{"login"}, H: s.pageLogin},
		{M: "POST", P: "/login", Access: web.Public, API: "POST /auth/login", H: s.pageLoginPost},
		{M: "POST", P: "/login/totp", Access: web.Public, API: "POST /auth/login", H: s.pageLoginTOTP},
		{M: "POST", P: "/logout", Access: web.Staff, API: "POST /auth/logout", H: s.pageLogout},
		{M: "POST", P: "/language", Access: web.Public, H: s.pageLanguage},
		{M: "GET", P: "/{$}", Access: web.Staff, AnyStaff: true, LicenseExempt: true, H: s.pageDashboard, Menu: "dashboard"},
	}
}

func (s *site) accountPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/account", Access: web.Staff, API: "GET /auth/account", H: s.pageAccount, Menu: "account"},
		{M: "POST", P: "/account/password", Access: web.Staff, API: "POST /auth/account/password", H: s.pageAccountPassword},
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

func (s *site) pageLogin(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	v := s.NewView(c, "", "login.title")
	v.Form.Set("next", localNext(c.Query().Get("next")))
	return s.Render(c, http.StatusOK, "login", v)
}

func (s *site) pageLoginPost(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "", "login.title")
	email := strings.TrimSpace(c.R.PostFormValue("email"))
	password := c.R.PostFormValue("password")
	v.Form.Set("email", email)
	v.Form.Set("next", localNext(c.R.PostFormValue("next")))
	res, err := identity.Login(c.R.Context(), s.App(), c.Tenant, identity.LoginRequest{Email: email, Password: password, Refresh: true, IP: c.IP, UserAgent: c.R.UserAgent()})
	if e := app.AsError(err); e != nil && e.Reason == "mfa_required" {
		ctx := c.R.Context()
		s.Session().Put(ctx, csPendID, email)
		s.Session().Put(ctx, csPending, s.App().Keys.Seal([]byte(password)))
		s.Session().Put(ctx, csPendExp, time.Now().Add(pendingLoginTTL).Unix())
		v.Title = v.T("totp.title")
		return s.Render(c, http.StatusOK, "totp", v)
	}
	if err != nil {
		if e := app.AsError(err); e != nil && e.Field != "" {
			return s.FormError(c, "login", v, err)
		}
		return s.LoginRefused(c, "login", v, err)
	}
	return s.signedIn(c, email, res, v.Form.Get("next"))
}

func (s *site) pageLoginTOTP(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	ctx := c.R.Context()
	v := s.NewView(c, "", "totp.title")
	v.Form.Set("next", localNext(c.R.PostFormValue("next")))
	email := s.Session().GetString(ctx, csPendID)
	sealed := s.Session().GetBytes(ctx, csPending)
	if email == "" || time.Now().Unix() > s.Session().GetInt64(ctx, csPendExp) {
		s.clearPending(c)
		v.Title = v.T("login.title")
		v.Flash, v.FlashBad = v.T("totp.expired"), true
		return s.Render(c, http.StatusUnauthorized, "login", v)
	}
	password, err := s.App().Keys.Open(sealed)
	if err != nil {
		return err
	}
	res, err := identity.Login(ctx, s.App(), c.Tenant, identity.LoginRequest{Email: email, Password: string(password),
		TOTPCode: c.R.PostFormValue("code"), Refresh: true, IP: c.IP, UserAgent: c.R.UserAgent()})
	if err != nil {
		if e := app.AsError(err); e != nil && (e.Reason == "invalid_totp_code" || e.Reason == "mfa_required") {
			v.Errors["code"] = web.Message(v.Lang, "invalid_totp_code", e.Code)
			return s.Render(c, http.StatusUnauthorized, "totp", v)
		}
		s.clearPending(c)
		return s.LoginRefused(c, "login", v, err)
	}
	s.clearPending(c)
	return s.signedIn(c, email, res, v.Form.Get("next"))
}

func (s *site) clearPending(c *web.Ctx) {
	ctx := c.R.Context()
	s.Session().Remove(ctx, csPending)
	s.Session().Remove(ctx, csPendID)
	s.Session().Remove(ctx, csPendExp)
}

// signedIn starts the cookie session (a new token: no fixation) and goes on.
func (s *site) signedIn(c *web.Ctx, username string, res *identity.LoginResult, next string) error {
	ctx := c.R.Context()
	if err := s.Session().RenewToken(ctx); err != nil {
		return err
	}
	keepLogin(s.Site, c, res)
	s.Session().Put(ctx, web.SessionUsername, username)
	return web.Redirect(c, localNext(next))
}

func (s *site) pageLogout(c *web.Ctx) error {
	if err := identity.Logout(c.R.Context(), c.Actor); err != nil {
		return err
	}
	if err := s.Session().Destroy(c.R.Context()); err != nil {
		return err
	}
	return web.Redirect(c, "/login")
}

func (s *site) pageLanguage(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	if !s.SetLanguage(c, c.R.PostFormValue("lang")) {
		return app.ErrValidation("invalid_enum", "lang")
	}
	return web.Redirect(c, localNext(web.RefererPath(c.R)))
}

func (s *site) pageDashboard(c *web.Ctx) error {
	v := s.NewView(c, "dashboard", "menu.dashboard")
	d, err := s.dashboardData(c, v) // reports_pages.go
	if err != nil {
		return err
	}
	v.Data = &homeView{dashView: d, Mine: s.myTiles(c)} // dashboards_pages.go
	return s.Render(c, http.StatusOK, "dashboard", v)
}

func (s *site) pageAccount(c *web.Ctx) error {
	return s.accountPage(c, http.StatusOK, nil, nil) // identity_pages.go: two-factor, sessions
}

func (s *site) pageAccountPassword(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "account", "menu.account")
	if _, err := identity.ChangePassword(c.R.Context(), c.Actor, identity.PasswordChange{CurrentPassword: c.R.PostFormValue("current_password"), NewPassword: c.R.PostFormValue("new_password")}); err != nil {
		d, derr := s.accountData(c)
		if derr != nil {
			return derr
		}
		v.Data = d
		return s.FormError(c, "account", v, err)
	}
	s.SetFlash(c, v.T("account.password_changed"), false)
	return web.Redirect(c, "/account")
}
