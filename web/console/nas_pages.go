package console

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/aaa"
	"xr/web"
)

// NAS pages: the list, the add form, and the record (edit form, setup
// snippet, health panel, delete), over the app functions of the
// /admin/nas rows with their permissions. The secret is write-only: no
// page shows it or refills it.
func (s *site) nasPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/nas", Access: web.Staff, API: "GET /admin/nas", H: s.pageNASList, Menu: "nas"},
		{M: "GET", P: "/nas/new", Access: web.Staff, Perms: []app.Perm{aaa.PermNasManage}, H: s.pageNASNew},
		{M: "POST", P: "/nas", Access: web.Staff, API: "POST /admin/nas", H: s.pageNASCreate},
		{M: "GET", P: "/nas/{id}", Access: web.Staff, API: "GET /admin/nas/{id}", H: s.pageNAS},
		{M: "POST", P: "/nas/{id}", Access: web.Staff, API: "PATCH /admin/nas/{id}", H: s.pageNASUpdate},
		{M: "POST", P: "/nas/{id}/delete", Access: web.Staff, API: "DELETE /admin/nas/{id}", H: s.pageNASDelete},
	}
}

type nasListView struct {
	Rows      []*aaa.NASRecord
	CanManage bool
}

func (s *site) pageNASList(c *web.Ctx) error {
	rows, err := aaa.ListNAS(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	v := s.NewView(c, "nas", "menu.nas")
	v.Data = nasListView{Rows: rows, CanManage: c.Actor.Can(aaa.PermNasManage)}
	return s.Render(c, http.StatusOK, "nas_list", v)
}

// nasView is the add form's and the record's data.
type nasView struct {
	NAS     *aaa.NASRecord // nil on the add form
	Types   []string
	Vendors []string
	Vendor  string // the setup's vendor as asked ("" = the NAS's type)
	Server  string // the setup's server address as asked
	Setup   *aaa.NASSetup
	Health  *aaa.NASHealth
	// SendsMA is the text key of whether the NAS sends
	// Message-Authenticator (unknown before its first Access-Request).
	SendsMA   string
	CanManage bool
}

// nasInput maps the form onto the API's input. An empty secret on the
// edit form keeps the stored one.
func nasInput(f url.Values, create bool) (aaa.NASInput, error) {
	in := aaa.NASInput{
		Name:                        app.Opt[string]{Set: true, V: f.Get("name")},
		IP:                          app.Opt[string]{Set: true, V: strings.TrimSpace(f.Get("ip"))},
		Description:                 app.Opt[string]{Set: true, V: f.Get("description")},
		RequireMessageAuthenticator: app.Opt[bool]{Set: true, V: f.Get("require_message_authenticator") != ""},
	}
	if sec := f.Get("secret"); sec != "" || create {
		in.Secret = app.Opt[string]{Set: true, V: sec}
	}
	if t := f.Get("type"); t != "" {
		if !slices.Contains(aaa.NASTypes, t) {
			return in, app.ErrValidation("invalid_enum", "type").With("allowed", aaa.NASTypes)
		}
		in.Type = app.Opt[aaa.NASType]{Set: true, V: aaa.NASType(t)}
	}
	if p := strings.TrimSpace(f.Get("coa_port")); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return in, app.ErrValidation("invalid_port", "coa_port")
		}
		in.CoAPort = app.Opt[int]{Set: true, V: n}
	}
	return in, nil
}

// nasValues fills the edit form from a NAS (never the secret).
func nasValues(n *aaa.NASRecord) url.Values {
	f := url.Values{"name": {n.Name}, "ip": {n.IP}, "type": {n.Type}, "coa_port": {strconv.Itoa(n.CoAPort)}, "description": {n.Description}}
	if n.RequireMessageAuthenticator {
		f.Set("require_message_authenticator", "1")
	}
	return f
}

// withoutSecret drops the secret from a submitted form before it is shown
// again.
func withoutSecret(f url.Values) url.Values {
	out := url.Values{}
	for k, v := range f {
		if k != "secret" {
			out[k] = v
		}
	}
	return out
}

// nasWarnings is the flash text of the API's warnings on a saved NAS.
func nasWarnings(v *web.View, ws []string) string {
	var out []string
	for _, w := range ws {
		out = append(out, v.T("nas.warn_"+w))
	}
	return strings.Join(out, " ")
}

func (s *site) pageNASNew(c *web.Ctx) error {
	v := s.NewView(c, "nas", "nas.new")
	v.Form = url.Values{"type": {"mikrotik"}, "coa_port": {"3799"}, "require_message_authenticator": {"1"}}
	v.Data = &nasView{Types: aaa.NASTypes, CanManage: true}
	return s.Render(c, http.StatusOK, "nas", v)
}

func (s *site) pageNASCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "nas", "nas.new")
	v.Form = withoutSecret(c.R.PostForm)
	v.Data = &nasView{Types: aaa.NASTypes, CanManage: true}
	in, err := nasInput(c.R.PostForm, true)
	if err != nil {
		return s.FormError(c, "nas", v, err)
	}
	n, err := aaa.CreateNAS(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.FormError(c, "nas", v, err)
	}
	s.SetFlash(c, strings.TrimSpace(v.T("nas.created")+" "+nasWarnings(v, n.Warnings)), false)
	return web.Redirect(c, fmt.Sprintf("/nas/%d", n.ID))
}

// nasRecord builds the record page's data: the NAS, its setup snippet for
// the vendor and server asked in the query, and its health.
func (s *site) nasRecord(c *web.Ctx, v *web.View, id int64) (*nasView, error) {
	ctx := c.R.Context()
	n, err := aaa.GetNAS(ctx, c.Actor, id)
	if err != nil {
		return nil, err
	}
	q := c.Query()
	d := &nasView{NAS: n, Types: aaa.NASTypes, Vendors: aaa.SetupVendors, Vendor: q.Get("vendor"), Server: q.Get("server"),
		CanManage: c.Actor.Can(aaa.PermNasManage)}
	in := aaa.NASSetupInput{Vendor: d.Vendor, Server: d.Server, Host: c.R.Host}
	d.Setup, err = aaa.NASSetupScript(ctx, s.Server().Radius, c.Actor, id, in)
	if e := app.AsError(err); e != nil && e.Status == http.StatusBadRequest {
		// A bad vendor or server: say so beside its field, and show the
		// NAS's default setup.
		v.Errors[e.Field] = web.Message(v.Lang, e.Reason, e.Code)
		d.Setup, err = aaa.NASSetupScript(ctx, s.Server().Radius, c.Actor, id, aaa.NASSetupInput{Host: c.R.Host})
	}
	if err != nil {
		return nil, err
	}
	if d.Vendor == "" {
		d.Vendor = d.Setup.Vendor
	}
	if d.Health, err = aaa.GetNASHealth(ctx, s.Server().Radius, c.Actor, id); err != nil {
		return nil, err
	}
	switch ma := d.Health.SendsMessageAuthenticator; {
	case ma == nil:
		d.SendsMA = "nas.unknown"
	case *ma:
		d.SendsMA = "nas.yes"
	default:
		d.SendsMA = "nas.no"
	}
	return d, nil
}

func (s *site) pageNAS(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "nas", "menu.nas")
	d, err := s.nasRecord(c, v, id)
	if err != nil {
		return err
	}
	v.Title = d.NAS.Name
	v.Form = nasValues(d.NAS)
	v.Data = d
	return s.Render(c, http.StatusOK, "nas", v)
}

func (s *site) pageNASUpdate(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "nas", "menu.nas")
	in, err := nasInput(c.R.PostForm, false)
	var n *aaa.NASRecord
	if err == nil {
		n, err = aaa.UpdateNAS(c.R.Context(), c.Actor, id, in)
	}
	if err != nil {
		d, derr := s.nasRecord(c, v, id)
		if derr != nil {
			return derr
		}
		v.Title, v.Data = d.NAS.Name, d
		v.Form = withoutSecret(c.R.PostForm)
		return s.FormError(c, "nas", v, err)
	}
	s.SetFlash(c, strings.TrimSpace(v.T("nas.saved")+" "+nasWarnings(v, n.Warnings)), false)
	return web.Redirect(c, fmt.Sprintf("/nas/%d", id))
}

func (s *site) pageNASDelete(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := aaa.DeleteNAS(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	s.SetFlash(c, s.NewView(c, "", "").T("nas.deleted"), false)
	return web.Redirect(c, "/nas")
}
