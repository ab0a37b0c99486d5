package console

import (
	"net/http"
	"net/url"
	"strings"

	"xr/app/dashboards"
	"xr/web"
)

// Dashboard pages: the caller's own dashboard (its tiles with their
// values, the layout form, reset, the appearance form) and the dashboard
// manager (definitions, the roles that see them, create, delete, restore
// the shipped ones). Each calls the app/dashboards function of its API row
// in web/dashboards_routes.go with that row's permission and buckets. The
// console's home page (login_pages.go) shows the caller's tiles too.
func (s *site) dashboardPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/dashboards/me", Access: web.Staff, API: "GET /admin/dashboards/me", H: s.pageMyDashboard, Menu: "my_dashboard"},
		{M: "POST", P: "/dashboards/me/customize", Access: web.Staff, API: "PUT /admin/dashboards/me/customize", H: s.pageMyDashboardCustomize},
		{M: "POST", P: "/dashboards/me/reset", Access: web.Staff, API: "DELETE /admin/dashboards/me/customize", H: s.pageMyDashboardReset},
		{M: "POST", P: "/dashboards/me/appearance", Access: web.Staff, API: "PUT /admin/dashboards/me/appearance", H: s.pageMyDashboardAppearance},
		{M: "GET", P: "/tools/dashboards", Access: web.Staff, API: "GET /admin/tools/dashboards", H: s.pageDashboards, Menu: "dashboards"},
		{M: "POST", P: "/tools/dashboards", Access: web.Staff, API: "POST /admin/tools/dashboards", H: s.pageDashboardCreate},
		{M: "POST", P: "/tools/dashboards/restore-defaults", Access: web.Staff, API: "POST /admin/tools/dashboards/restore-defaults", H: s.pageDashboardsRestore},
		{M: "POST", P: "/tools/dashboards/{id}/delete", Access: web.Staff, API: "DELETE /admin/tools/dashboards/{id}", H: s.pageDashboardDelete},
	}
}

// homeView is the home page's data: the summary of reports_pages.go and
// the caller's dashboard tiles.
type homeView struct {
	*dashView
	Mine *dashboards.Values
}

// myTiles is the caller's tiles with their values for the home page (nil
// when they cannot be read: the home page still shows its summary).
func (s *site) myTiles(c *web.Ctx) *dashboards.Values {
	v, err := dashboards.GetValues(c.R.Context(), c.Actor)
	if err != nil {
		s.Log().Warn("home dashboard tiles", "err", err)
		return nil
	}
	return v
}

type myDashboardView struct {
	Mine    *dashboards.Mine
	Values  *dashboards.Values
	Metrics []string
	Checked map[string]bool
}

func (s *site) myDashboardView(c *web.Ctx) (*myDashboardView, error) {
	m, err := dashboards.GetMine(c.R.Context(), c.Actor)
	if err != nil {
		return nil, err
	}
	vals, err := dashboards.GetValues(c.R.Context(), c.Actor)
	if err != nil {
		return nil, err
	}
	d := &myDashboardView{Mine: m, Values: vals, Metrics: dashboards.Metrics, Checked: map[string]bool{}}
	for _, t := range m.Tiles {
		d.Checked[t.Metric] = true
	}
	return d, nil
}

func (s *site) pageMyDashboard(c *web.Ctx) error {
	v := s.NewView(c, "my_dashboard", "menu.my_dashboard")
	d, err := s.myDashboardView(c)
	if err != nil {
		return err
	}
	v.Data = d
	v.Form = url.Values{"theme": {d.Mine.Theme}, "density": {d.Mine.Density}}
	return s.Render(c, http.StatusOK, "my_dashboard", v)
}

// dshFormTiles is the checked metrics as KPI tiles, in catalogue order.
func dshFormTiles(f url.Values) []dashboards.Tile {
	checked := map[string]bool{}
	for _, m := range f["metrics"] {
		checked[m] = true
	}
	tiles := []dashboards.Tile{}
	for _, m := range dashboards.Metrics {
		if checked[m] {
			tiles = append(tiles, dashboards.Tile{Metric: m, Type: "kpi"})
		}
	}
	for _, m := range f["metrics"] { // an unknown one: the API's unknown_metric
		if !checked[m] || !dshContains(dashboards.Metrics, m) {
			tiles = append(tiles, dashboards.Tile{Metric: m})
		}
	}
	return tiles
}

func dshContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *site) pageMyDashboardCustomize(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "my_dashboard", "menu.my_dashboard")
	if _, err := dashboards.Customize(c.R.Context(), c.Actor, dashboards.Customization{Tiles: dshFormTiles(c.R.PostForm)}); err != nil {
		d, derr := s.myDashboardView(c)
		if derr != nil {
			return derr
		}
		v.Data = d
		return s.FormError(c, "my_dashboard", v, err)
	}
	s.SetFlash(c, v.T("dsh.layout_saved"), false)
	return web.Redirect(c, "/dashboards/me")
}

func (s *site) pageMyDashboardReset(c *web.Ctx) error {
	v := s.NewView(c, "my_dashboard", "menu.my_dashboard")
	if _, err := dashboards.ResetCustomization(c.R.Context(), c.Actor); err != nil {
		return err
	}
	s.SetFlash(c, v.T("dsh.layout_reset"), false)
	return web.Redirect(c, "/dashboards/me")
}

func (s *site) pageMyDashboardAppearance(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "my_dashboard", "menu.my_dashboard")
	v.Form = c.R.PostForm
	if _, err := dashboards.SetAppearance(c.R.Context(), c.Actor, dashboards.Appearance{Theme: c.R.PostForm.Get("theme"), Density: c.R.PostForm.Get("density")}); err != nil {
		d, derr := s.myDashboardView(c)
		if derr != nil {
			return derr
		}
		v.Data = d
		return s.FormError(c, "my_dashboard", v, err)
	}
	s.SetFlash(c, v.T("dsh.appearance_saved"), false)
	return web.Redirect(c, "/dashboards/me")
}

type dashboardsView struct {
	List    []*dashboards.Dashboard
	Metrics []string
	Checked map[string]bool
}

func (s *site) dashboardsPage(c *web.Ctx, v *web.View, err error) error {
	list, lerr := dashboards.List(c.R.Context(), c.Actor)
	if lerr != nil {
		return lerr
	}
	d := &dashboardsView{List: list, Metrics: dashboards.Metrics, Checked: map[string]bool{}}
	for _, m := range v.Form["metrics"] {
		d.Checked[m] = true
	}
	v.Data = d
	if err != nil {
		return s.FormError(c, "dashboards", v, err)
	}
	return s.Render(c, http.StatusOK, "dashboards", v)
}

func (s *site) pageDashboards(c *web.Ctx) error {
	return s.dashboardsPage(c, s.NewView(c, "dashboards", "menu.dashboards"), nil)
}

func (s *site) pageDashboardCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "dashboards", "menu.dashboards")
	v.Form = f
	roles := []string{}
	for _, r := range strings.Split(f.Get("roles"), ",") {
		if r = strings.TrimSpace(r); r != "" {
			roles = append(roles, r)
		}
	}
	if _, err := dashboards.Create(c.R.Context(), c.Actor, dashboards.Input{Name: strings.TrimSpace(f.Get("name")), Roles: roles, Tiles: dshFormTiles(f)}); err != nil {
		return s.dashboardsPage(c, v, err)
	}
	s.SetFlash(c, v.T("dsh.created"), false)
	return web.Redirect(c, "/tools/dashboards")
}

func (s *site) pageDashboardsRestore(c *web.Ctx) error {
	v := s.NewView(c, "dashboards", "menu.dashboards")
	if _, err := dashboards.RestoreDefaults(c.R.Context(), c.Actor); err != nil {
		return err
	}
	s.SetFlash(c, v.T("dsh.restored"), false)
	return web.Redirect(c, "/tools/dashboards")
}

func (s *site) pageDashboardDelete(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := dashboards.Delete(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	v := s.NewView(c, "dashboards", "menu.dashboards")
	s.SetFlash(c, v.T("dsh.deleted"), false)
	return web.Redirect(c, "/tools/dashboards")
}
