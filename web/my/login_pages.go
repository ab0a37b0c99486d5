package my

import (
	"net/http"
	"strings"

	"xr/app"
	"xr/app/portal"
	"xr/web"
)

// loginPages are the sign-in, the language switch and the sign-out.
func (s *site) loginPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/my/login", Access: web.Public, Buckets: []string{"portal_login"}, H: s.pageMyLogin},
		{M: "POST", P: "/my/login", Access: web.Public, API: "POST /portal/login", H: s.pageMyLoginPost},
		{M: "POST", P: "/my/language", Access: web.Public, H: s.pageMyLanguage},
		{M: "POST", P: "/my/logout", Access: web.Subscriber, H: s.pageMyLogout},
	}
}

func (s *site) pageMyLogin(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := portal.RequireEnabled(c.R.Context(), c.Tenant); err != nil {
		return err
	}
	v := s.NewView(c, "", "my.login_title")
	v.Form.Set("next", myLocalNext(c.Query().Get("next")))
	v.Data = s.myLoginData(c)
	return s.Render(c, http.StatusOK, "login", v)
}

// myLogin is what the sign-in page offers besides the form.
type myLogin struct {
	Tunnel *myEnter // one click from inside the ISP's network
	Signup bool
}

func (s *site) myLoginData(c *web.Ctx) *myLogin {
	return &myLogin{Tunnel: s.myTunnel(c), Signup: portal.RequireFeature(c.R.Context(), c.Tenant, portal.FeatureSignup) == nil}
}

func (s *site) pageMyLoginPost(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "", "my.login_title")
	v.Data = s.myLoginData(c)
	username := strings.TrimSpace(c.R.PostFormValue("username"))
	v.Form.Set("username", username)
	v.Form.Set("next", myLocalNext(c.R.PostFormValue("next")))
	res, err := portal.Login(c.R.Context(), c.Tenant, portal.LoginInput{Username: username, Password: c.R.PostFormValue("password"), Refresh: true,
		IP: c.IP, UserAgent: c.R.UserAgent()})
	if err != nil {
		if e := app.AsError(err); e != nil && e.Field != "" {
			return s.FormError(c, "login", v, err)
		}
		return s.LoginRefused(c, "login", v, err)
	}
	// A new cookie session id at sign-in: no session fixation.
	if err := s.Session().RenewToken(c.R.Context()); err != nil {
		return err
	}
	s.keepMyLogin(c, res)
	return web.Redirect(c, v.Form.Get("next"))
}

func (s *site) pageMyLanguage(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	s.SetLanguage(c, c.R.PostFormValue("lang")) // an unknown one is ignored
	return web.Redirect(c, myLocalNext(web.RefererPath(c.R)))
}

func (s *site) pageMyLogout(c *web.Ctx) error {
	if err := s.Session().Destroy(c.R.Context()); err != nil {
		return err
	}
	return web.Redirect(c, myPrefix+"login")
}
