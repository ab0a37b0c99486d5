package my

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"xr/app"
	"xr/app/portal"
	"xr/app/portalentry"
	"xr/web"
)

// The ways into /my/ besides a password (app/portalentry): a one-time
// code from a link (staff, messenger, tunnel), self sign-up with its
// emailed or texted code, and joining with a staff invite. Each calls the
// portal-entry function of its API row; all are public pages on the
// tenant's host, with the captcha where the API asks for one.
func (s *site) myEntryPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/my/enter", Access: web.Public, Buckets: []string{"portal_exchange"}, H: s.pageMyEnter},
		{M: "POST", P: "/my/enter", Access: web.Public, API: "POST /portal/exchange", H: s.pageMyEnterPost},
		{M: "GET", P: "/my/signup", Access: web.Public, API: "GET /portal/captcha", H: s.pageMySignup},
		{M: "POST", P: "/my/signup", Access: web.Public, API: "POST /portal/signup", H: s.pageMySignupPost},
		{M: "POST", P: "/my/signup/verify", Access: web.Public, API: "POST /portal/signup/verify", H: s.pageMySignupVerify},
		{M: "GET", P: "/my/join", Access: web.Public, API: "GET /portal/join/context", H: s.pageMyJoin},
		{M: "POST", P: "/my/join", Access: web.Public, API: "POST /portal/join", H: s.pageMyJoinPost},
	}
}

// myCaptcha is a captcha as a page shows it (the PNG inline: the CSP
// allows data: images).
type myCaptcha struct {
	ID      string
	DataURL string
}

func (s *site) newMyCaptcha(c *web.Ctx) (*myCaptcha, error) {
	cp, err := portalentry.NewCaptcha(c.R.Context(), c.Tenant, c.IP)
	if err != nil {
		return nil, err
	}
	return &myCaptcha{ID: cp.ID, DataURL: "data:image/png;base64," + base64.StdEncoding.EncodeToString(cp.PNG)}, nil
}

// signedIn keeps a portal session from an entry way and opens the home.
func (s *site) mySignedIn(c *web.Ctx, res *portal.Session) error {
	if err := s.Session().RenewToken(c.R.Context()); err != nil {
		return err
	}
	s.keepMyLogin(c, res)
	return web.Redirect(c, myPrefix)
}

// ---- One-time codes ----

type myEnter struct {
	Code, Username string
}

func (s *site) pageMyEnter(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	// A link only shows a button: a link preview or a prefetch never
	// spends the code; the person's click (a POST) does.
	v := s.NewView(c, "", "my.enter_title")
	v.Data = &myEnter{Code: c.Query().Get("code")}
	return s.Render(c, http.StatusOK, "enter", v)
}

func (s *site) pageMyEnterPost(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	res, err := portalentry.Exchange(c.R.Context(), c.Tenant, portalentry.ExchangeInput{Code: c.R.PostFormValue("code"), Refresh: true,
		IP: c.IP, UserAgent: c.R.UserAgent()})
	if err != nil {
		v := s.NewView(c, "", "my.login_title")
		v.Flash, v.FlashBad = web.Message(v.Lang, "invalid_code", app.CodeValidation), true
		return s.Render(c, http.StatusBadRequest, "login", v)
	}
	return s.mySignedIn(c, res)
}

// myTunnel is the one-click sign-in offered on the sign-in page to a
// browser inside the ISP's network whose address holds a live session.
func (s *site) myTunnel(c *web.Ctx) *myEnter {
	id, err := portalentry.IdentifyTunnel(c.R.Context(), c.Tenant, c.IP)
	if err != nil {
		return nil // off, outside the ranges, or no session: the form only
	}
	return &myEnter{Code: id.Code, Username: id.Username}
}

// ---- Sign-up ----

// mySignupField is one input of the sign-up form.
type mySignupField struct {
	Name, Label, Type, Auto, Error string
	Required                       bool
}

type mySignup struct {
	Schema  *portalentry.SignupSchema
	Fields  []mySignupField
	Captcha *myCaptcha
	Pending *portalentry.SignupPending
}

// signupFields are the form's inputs: username and password, the standard
// fields the tenant requires, then the subscriber form's custom fields
// (cf_<name>).
func signupFields(v *web.View, sc *portalentry.SignupSchema) []mySignupField {
	out := []mySignupField{{Name: "username", Label: v.T("my.username"), Type: "text", Auto: "username", Required: true, Error: "username"},
		{Name: "password", Label: v.T("my.password"), Type: "password", Auto: "new-password", Required: true, Error: "password"}}
	auto := map[string]string{"email": "email", "phone": "tel", "firstname": "given-name", "lastname": "family-name", "address": "street-address"}
	for _, f := range []string{"email", "phone", "firstname", "lastname", "address", "national_id"} {
		req := false
		for _, r := range sc.Required {
			req = req || r == f
		}
		if req || f == sc.Verification || (f == "phone" && sc.Verification == "sms") {
			typ := "text"
			if f == "email" {
				typ = "email"
			} else if f == "phone" {
				typ = "tel"
			}
			out = append(out, mySignupField{Name: f, Label: v.T("my.su_f_" + f), Type: typ, Auto: auto[f], Required: true, Error: f})
		}
	}
	for _, f := range sc.Fields {
		if !f.Enabled {
			continue
		}
		out = append(out, mySignupField{Name: "cf_" + f.Name, Label: f.Label, Type: "text", Auto: "off", Required: f.Required, Error: "custom_fields." + f.Name})
	}
	return out
}

func (s *site) signupPage(c *web.Ctx, v *web.View, status int, pending *portalentry.SignupPending, err error) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	sc, serr := portalentry.GetSignupSchema(c.R.Context(), c.Tenant)
	if serr != nil {
		return serr
	}
	d := &mySignup{Schema: sc, Fields: signupFields(v, sc), Pending: pending}
	if pending == nil {
		var cerr error
		if d.Captcha, cerr = s.newMyCaptcha(c); cerr != nil {
			return cerr
		}
	}
	v.Data = d
	if err != nil {
		if e := app.AsError(err); e != nil && e.Field == "" && strings.HasPrefix(e.Reason, "captcha") {
			e2 := *e
			e2.Field = "captcha_answer"
			err = &e2
		}
		return s.FormError(c, "signup", v, err)
	}
	return s.Render(c, status, "signup", v)
}

func (s *site) pageMySignup(c *web.Ctx) error {
	return s.signupPage(c, s.NewView(c, "", "my.su_title"), http.StatusOK, nil, nil)
}

func (s *site) pageMySignupPost(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "", "my.su_title")
	v.Form = f
	in := portalentry.SignupInput{Username: strings.TrimSpace(f.Get("username")), Password: f.Get("password"), Email: strings.TrimSpace(f.Get("email")),
		Phone: strings.TrimSpace(f.Get("phone")), Firstname: strings.TrimSpace(f.Get("firstname")), Lastname: strings.TrimSpace(f.Get("lastname")),
		Address: strings.TrimSpace(f.Get("address")), NationalID: strings.TrimSpace(f.Get("national_id")),
		CaptchaID: f.Get("captcha_id"), CaptchaAnswer: strings.TrimSpace(f.Get("captcha_answer")), IP: c.IP, CustomFields: map[string]json.RawMessage{}}
	for k, vals := range f {
		if name, ok := strings.CutPrefix(k, "cf_"); ok && len(vals) > 0 && vals[0] != "" {
			b, err := json.Marshal(vals[0])
			if err != nil {
				return err
			}
			in.CustomFields[name] = b
		}
	}
	pending, err := portalentry.Signup(c.R.Context(), c.Tenant, in)
	if err != nil {
		return s.signupPage(c, v, http.StatusBadRequest, nil, err)
	}
	return s.signupPage(c, v, http.StatusOK, pending, nil)
}

func (s *site) pageMySignupVerify(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	res, err := portalentry.VerifySignup(c.R.Context(), c.Tenant, portalentry.SignupVerifyInput{SignupID: f.Get("signup_id"),
		Code: strings.TrimSpace(f.Get("code")), Refresh: true, IP: c.IP, UserAgent: c.R.UserAgent()})
	if err != nil {
		v := s.NewView(c, "", "my.su_title")
		pending := &portalentry.SignupPending{SignupID: f.Get("signup_id")}
		if e := app.AsError(err); e != nil && e.Field == "" {
			e2 := *e
			e2.Field = "code"
			err = &e2
		}
		return s.signupPage(c, v, http.StatusBadRequest, pending, err)
	}
	return s.mySignedIn(c, res.Session)
}

// ---- Join with an invite ----

type myJoin struct {
	Code    string
	Context *portalentry.JoinContext
	Captcha *myCaptcha
}

func (s *site) joinPage(c *web.Ctx, v *web.View, code string, err error) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	jc, jerr := portalentry.GetJoinContext(c.R.Context(), c.Tenant, code)
	if jerr != nil {
		v.Flash, v.FlashBad = web.Message(v.Lang, "invalid_code", app.CodeValidation), true
		return s.Render(c, http.StatusBadRequest, "login", v)
	}
	cp, cerr := s.newMyCaptcha(c)
	if cerr != nil {
		return cerr
	}
	v.Data = &myJoin{Code: code, Context: jc, Captcha: cp}
	if err != nil {
		if e := app.AsError(err); e != nil && e.Field == "" && strings.HasPrefix(e.Reason, "captcha") {
			e2 := *e
			e2.Field = "captcha_answer"
			err = &e2
		}
		return s.FormError(c, "join", v, err)
	}
	return s.Render(c, http.StatusOK, "join", v)
}

func (s *site) pageMyJoin(c *web.Ctx) error {
	return s.joinPage(c, s.NewView(c, "", "my.join_title"), c.Query().Get("code"), nil)
}

func (s *site) pageMyJoinPost(c *web.Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	res, err := portalentry.Join(c.R.Context(), c.Tenant, portalentry.JoinInput{Code: f.Get("code"), Password: f.Get("password"),
		CaptchaID: f.Get("captcha_id"), CaptchaAnswer: strings.TrimSpace(f.Get("captcha_answer")), Refresh: true, IP: c.IP, UserAgent: c.R.UserAgent()})
	if err != nil {
		return s.joinPage(c, s.NewView(c, "", "my.join_title"), f.Get("code"), err)
	}
	return s.mySignedIn(c, res)
}
