package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"xr/app"
	"xr/app/hotspot"
	"xr/web"
)

// Hotspot pages: the page sets (new from a shipped template, duplicate,
// delete, download the RouterOS zip), the edit form (branding, blocks,
// CSS, logo) beside a sandboxed preview, over the functions of
// web/hotspot_routes.go with their permission.
func (s *site) hotspotPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/hotspot", Access: web.Staff, API: "GET /hotspot/pages", H: s.pageHotspotList, Menu: "hotspot"},
		{M: "POST", P: "/hotspot/new", Access: web.Staff, API: "POST /hotspot/pages", H: s.pageHotspotCreate},
		{M: "GET", P: "/hotspot/{id}", Access: web.Staff, API: "GET /hotspot/pages/{id}", H: s.pageHotspotEdit},
		{M: "POST", P: "/hotspot/{id}", Access: web.Staff, API: "PATCH /hotspot/pages/{id}", H: s.pageHotspotSave},
		{M: "POST", P: "/hotspot/{id}/logo", Access: web.Staff, API: "POST /hotspot/pages/{id}/logo", File: true, H: s.pageHotspotLogo},
		{M: "POST", P: "/hotspot/{id}/duplicate", Access: web.Staff, API: "POST /hotspot/pages/{id}/duplicate", H: s.pageHotspotDuplicate},
		{M: "POST", P: "/hotspot/{id}/delete", Access: web.Staff, API: "DELETE /hotspot/pages/{id}", H: s.pageHotspotDelete},
		{M: "GET", P: "/hotspot/{id}/download", Access: web.Staff, File: true, API: "GET /hotspot/pages/{id}/download"},
		{M: "GET", P: "/hotspot/{id}/preview", Access: web.Staff, API: "POST /hotspot/preview", H: s.pageHotspotPreview},
	}
}

type hotspotListView struct {
	Sets      []hotspot.PageSet
	Templates []hotspot.Template
}

func (s *site) hotspotListView(c *web.Ctx) (*hotspotListView, error) {
	lq, err := app.ParseList(url.Values{"page_size": {"100"}}, hotspot.ListSpec)
	if err != nil {
		return nil, err
	}
	page, err := hotspot.ListPages(c.R.Context(), c.Actor, lq)
	if err != nil {
		return nil, err
	}
	tpls, err := hotspot.ListTemplates(c.R.Context(), c.Actor)
	if err != nil {
		return nil, err
	}
	return &hotspotListView{Sets: page.Rows, Templates: tpls}, nil
}

func (s *site) pageHotspotList(c *web.Ctx) error {
	d, err := s.hotspotListView(c)
	if err != nil {
		return err
	}
	v := s.NewView(c, "hotspot", "menu.hotspot")
	v.Form = url.Values{"template": {"clean"}, "lang": {v.Lang}}
	v.Data = d
	return s.Render(c, http.StatusOK, "hotspot_list", v)
}

func (s *site) pageHotspotCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	in := hotspot.PageInput{Name: f.Get("name"), Template: f.Get("template"), Lang: f.Get("lang")}
	p, err := hotspot.CreatePage(c.R.Context(), c.Actor, in)
	if err != nil {
		d, lerr := s.hotspotListView(c)
		if lerr != nil {
			return lerr
		}
		v := s.NewView(c, "hotspot", "menu.hotspot")
		v.Form = f
		v.Data = d
		return s.FormError(c, "hotspot_list", v, err)
	}
	v := s.NewView(c, "hotspot", "menu.hotspot")
	s.SetFlash(c, v.T("hotspot.created"), false)
	return web.Redirect(c, fmt.Sprintf("/hotspot/%d", p.ID))
}

type hotspotEditView struct {
	Set       *hotspot.PageSet
	Templates []hotspot.Template
	Pages     []string
	Preview   string // page shown in the preview frame
}

// hotspotFrameCSP is the console's CSP with frames of this origin allowed:
// the edit page shows the preview (itself sandboxed) in an iframe.
var hotspotFrameCSP = strings.Replace(web.PageCSP, "default-src 'none';", "default-src 'none'; frame-src 'self';", 1)

func (s *site) hotspotEditPage(c *web.Ctx, set *hotspot.PageSet, status int, v *web.View) error {
	tpls, err := hotspot.ListTemplates(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	prev := c.Query().Get("preview")
	if prev == "" || !strings.Contains(" "+strings.Join(hotspot.PageKeys, " ")+" ", " "+prev+" ") {
		prev = "login"
	}
	v.Title = set.Name
	v.Data = &hotspotEditView{Set: set, Templates: tpls, Pages: hotspot.PageKeys, Preview: prev}
	c.W.Header().Set("Content-Security-Policy", hotspotFrameCSP)
	return s.Render(c, status, "hotspot_edit", v)
}

// hotspotForm is a set's values as the edit form shows them.
func hotspotForm(p *hotspot.PageSet) url.Values {
	f := url.Values{"name": {p.Name}, "template": {p.Template}, "lang": {p.Lang}, "title": {p.Title},
		"color_primary": {p.ColorPrimary}, "color_background": {p.ColorBackground}, "color_text": {p.ColorText},
		"public_url": {p.PublicURL}, "custom_css": {p.CustomCSS}}
	if p.ShowSignup {
		f.Set("show_signup", "on")
	}
	if p.ShowShop {
		f.Set("show_shop", "on")
	}
	for _, k := range hotspot.PageKeys {
		f.Set("block_"+k, p.Blocks[k])
	}
	return f
}

func (s *site) pageHotspotEdit(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	p, err := hotspot.GetPage(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "hotspot", "menu.hotspot")
	v.Form = hotspotForm(p)
	return s.hotspotEditPage(c, p, http.StatusOK, v)
}

func (s *site) pageHotspotSave(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	set := func(k string) app.Opt[string] { return app.Opt[string]{Set: true, V: f.Get(k)} }
	in := hotspot.PagePatch{Name: set("name"), Template: set("template"), Lang: set("lang"), Title: set("title"),
		ColorPrimary: set("color_primary"), ColorBackground: set("color_background"), ColorText: set("color_text"),
		PublicURL: set("public_url"), CustomCSS: set("custom_css"),
		ShowSignup: app.Opt[bool]{Set: true, V: f.Get("show_signup") != ""}, ShowShop: app.Opt[bool]{Set: true, V: f.Get("show_shop") != ""}}
	blocks := map[string]string{}
	for _, k := range hotspot.PageKeys {
		if b := f.Get("block_" + k); strings.TrimSpace(b) != "" {
			blocks[k] = b
		}
	}
	in.Blocks = app.Opt[map[string]string]{Set: true, V: blocks}
	if f.Get("remove_logo") != "" {
		in.LogoFileID = app.Opt[int64]{Set: true, Null: true}
	}
	p, err := hotspot.PatchPage(c.R.Context(), c.Actor, id, in)
	if err != nil {
		cur, gerr := hotspot.GetPage(c.R.Context(), c.Actor, id)
		if gerr != nil {
			return gerr
		}
		v := s.NewView(c, "hotspot", "menu.hotspot")
		v.Form = f
		e := app.AsError(err)
		if e == nil || e.Status >= 500 || e.Status == http.StatusForbidden || e.Status == http.StatusNotFound {
			return err
		}
		field := strings.Replace(e.Field, "blocks.", "block_", 1)
		if field != "" {
			v.Errors[field] = web.Message(v.Lang, e.Reason, e.Code)
		} else {
			v.Flash, v.FlashBad = web.Message(v.Lang, e.Reason, e.Code), true
		}
		return s.hotspotEditPage(c, cur, e.Status, v)
	}
	v := s.NewView(c, "hotspot", "menu.hotspot")
	s.SetFlash(c, v.T("hotspot.saved"), false)
	return web.Redirect(c, fmt.Sprintf("/hotspot/%d", p.ID))
}

func (s *site) pageHotspotLogo(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "hotspot", "menu.hotspot")
	name, src, _, err := web.UploadPart(c, hotspot.MaxLogoBytes)
	if err == nil {
		_, err = hotspot.UploadLogo(c.R.Context(), c.Actor, id, name, src)
	}
	if err != nil {
		e := app.AsError(err)
		if e == nil || e.Status >= 500 || e.Status == http.StatusForbidden || e.Status == http.StatusNotFound {
			return err
		}
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, fmt.Sprintf("/hotspot/%d", id))
	}
	s.SetFlash(c, v.T("hotspot.logo_saved"), false)
	return web.Redirect(c, fmt.Sprintf("/hotspot/%d", id))
}

func (s *site) pageHotspotDuplicate(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	p, err := hotspot.DuplicatePage(c.R.Context(), c.Actor, id, hotspot.DuplicateInput{})
	if err != nil {
		return err
	}
	v := s.NewView(c, "hotspot", "menu.hotspot")
	s.SetFlash(c, v.T("hotspot.duplicated"), false)
	return web.Redirect(c, fmt.Sprintf("/hotspot/%d", p.ID))
}

func (s *site) pageHotspotDelete(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := hotspot.DeletePage(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	v := s.NewView(c, "hotspot", "menu.hotspot")
	s.SetFlash(c, v.T("hotspot.deleted"), false)
	return web.Redirect(c, "/hotspot")
}

// pageHotspotPreview serves the preview the edit page frames, under the
// same sandbox CSP as POST /hotspot/preview (framed by this origin only).
func (s *site) pageHotspotPreview(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	out, err := hotspot.Preview(c.R.Context(), c.Actor, hotspot.PreviewInput{ID: id, Page: c.Query().Get("page"), Error: c.Query().Get("error")})
	if err != nil {
		return err
	}
	web.WriteHotspotPreview(c, out)
	return nil
}
