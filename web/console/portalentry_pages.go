package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/portalentry"
	"xr/web"
)

// Portal entry pages: the settings of the ways into the portal (feature
// switches, sign-up plan, owning manager, required fields, verification
// channel, tunnel ranges), the messenger secret (shown once when rotated),
// and the portal invite issued from a subscriber's page. Each calls the
// app/portalentry function of the matching API row.
func (s *site) portalEntryPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/portal-entry", Access: web.Staff, API: "GET /admin/portal-entry/settings", H: s.pagePortalEntry, Menu: "portal_entry"},
		{M: "POST", P: "/portal-entry", Access: web.Staff, API: "PUT /admin/portal-entry/settings", H: s.pagePortalEntrySave},
		{M: "POST", P: "/portal-entry/messenger-secret", Access: web.Staff, API: "POST /admin/portal-entry/messenger-secret", H: s.pagePortalEntrySecret},
		{M: "POST", P: "/users/{id}/portal-invite", Access: web.Staff, API: "POST /users/{id}/portal-invite", H: s.pagePortalInvite},
	}
}

// portalEntryView is the settings page's data.
type portalEntryView struct {
	Settings       *portalentry.Settings
	StandardFields []string
	Features       []string
	// Secret is a messenger secret just made (shown once).
	Secret string
	// On says which checkboxes are ticked (features, required fields).
	On map[string]bool
}

func (s *site) portalEntryPage(c *web.Ctx, v *web.View, status int, secret string, err error) error {
	st, gerr := portalentry.GetSettings(c.R.Context(), c.Actor)
	if gerr != nil {
		return gerr
	}
	d := &portalEntryView{Settings: st, StandardFields: portalentry.StandardFields,
		Features: []string{"signup", "join", "exchange", "tunnel", "messenger"}, Secret: secret}
	f := portalEntryForm(st)
	for k, vals := range v.Form {
		f[k] = vals
	}
	v.Form = f
	d.On = map[string]bool{}
	for _, name := range d.Features {
		d.On[name] = f.Get(name) != ""
	}
	for _, name := range f["signup_required"] {
		d.On["req_"+name] = true
	}
	v.Data = d
	if err != nil {
		return s.FormError(c, "portalentry", v, err)
	}
	return s.Render(c, status, "portalentry", v)
}

// portalEntryForm is the stored settings as form values.
func portalEntryForm(st *portalentry.Settings) url.Values {
	f := url.Values{"signup_profile_id": {strconv.FormatInt(st.SignupProfileID, 10)},
		"signup_manager_id":   {strconv.FormatInt(st.SignupManagerID, 10)},
		"signup_verification": {st.SignupVerification}, "tunnel_ranges": {strings.Join(st.TunnelRanges, ", ")},
		"signup_required": st.SignupRequired}
	for name, on := range map[string]bool{"signup": st.Signup, "join": st.Join, "exchange": st.Exchange, "tunnel": st.Tunnel, "messenger": st.Messenger} {
		if on {
			f.Set(name, "on")
		}
	}
	return f
}

func (s *site) pagePortalEntry(c *web.Ctx) error {
	return s.portalEntryPage(c, s.NewView(c, "portal_entry", "menu.portal_entry"), http.StatusOK, "", nil)
}

func (s *site) pagePortalEntrySave(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "portal_entry", "menu.portal_entry")
	f := c.R.PostForm
	in := portalentry.SettingsInput{Signup: f.Get("signup") != "", Join: f.Get("join") != "", Exchange: f.Get("exchange") != "",
		Tunnel: f.Get("tunnel") != "", Messenger: f.Get("messenger") != "", SignupVerification: f.Get("signup_verification"),
		SignupRequired: f["signup_required"], TunnelRanges: splitRanges(f.Get("tunnel_ranges"))}
	var err error
	if in.SignupProfileID, err = formInt(f, "signup_profile_id"); err == nil {
		in.SignupManagerID, err = formInt(f, "signup_manager_id")
	}
	if err == nil {
		_, err = portalentry.UpdateSettings(c.R.Context(), c.Actor, in)
	}
	if err != nil {
		v.Form = f
		for _, name := range []string{"signup", "join", "exchange", "tunnel", "messenger"} {
			if f.Get(name) == "" {
				v.Form.Set(name, "")
			}
		}
		return s.portalEntryPage(c, v, http.StatusBadRequest, "", err)
	}
	s.SetFlash(c, v.T("portalentry.saved"), false)
	return web.Redirect(c, "/portal-entry")
}

// splitRanges reads a comma- or space-separated list.
func splitRanges(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
}

// formInt is an integer field (empty = 0); anything else is 400
// invalid_type naming it.
func formInt(f url.Values, name string) (int64, error) {
	raw := strings.TrimSpace(f.Get(name))
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return 0, app.ErrValidation("invalid_type", name)
	}
	return n, nil
}

func (s *site) pagePortalEntrySecret(c *web.Ctx) error {
	out, err := portalentry.RotateMessengerSecret(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	return s.portalEntryPage(c, s.NewView(c, "portal_entry", "menu.portal_entry"), http.StatusOK, out.Secret, nil)
}

// portalInviteView is the invite page's data.
type portalInviteView struct {
	Invite *portalentry.Invite
	// URL is the join link on the tenant's host.
	URL string
}

func (s *site) pagePortalInvite(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	inv, err := portalentry.IssueInvite(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "subscribers", "portalentry.invite_title")
	v.Data = &portalInviteView{Invite: inv, URL: "//" + c.R.Host + inv.Link}
	return s.Render(c, http.StatusOK, "portalentry_invite", v)
}
