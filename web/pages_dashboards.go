package web

import (
	"net/http"
	"net/url"
	"strings"

	"xr/app"
	"xr/app/dashboards"
)

// Dashboard pages: the caller's own dashboard (its tiles with their
// values, the layout form, reset, the appearance form) and the dashboard
// manager (definitions, the roles that see them, create, delete, restore
// the shipped ones). Each calls the app/dashboards function of its API row
// in web/routes_dashboards.go with that row's permission and buckets. The
// console's home page (pages_auth.go) shows the caller's tiles too.
func (s *Server) dashboardPages() []Route {
	dm := []app.Perm{dashboards.PermToolsDashboardManager}
	return []Route{
		{M: "GET", P: "/dashboards/me", Access: Staff, AnyStaff: true, Buckets: []string{"t_values"}, H: s.pageMyDashboard, Menu: "my_dashboard"},
		{M: "POST", P: "/dashboards/me/customize", Access: Staff, AnyStaff: true, H: s.pageMyDashboardCustomize},
		{M: "POST", P: "/dashboards/me/reset", Access: Staff, AnyStaff: true, H: s.pageMyDashboardReset},
		{M: "POST", P: "/dashboards/me/appearance", Access: Staff, AnyStaff: true, H: s.pageMyDashboardAppearance},
		{M: "GET", P: "/tools/dashboards", Access: Staff, Perms: dm, H: s.pageDashboards, Menu: "dashboards"},
		{M: "POST", P: "/tools/dashboards", Access: Staff, Perms: dm, H: s.pageDashboardCreate},
		{M: "POST", P: "/tools/dashboards/restore-defaults", Access: Staff, Perms: dm, H: s.pageDashboardsRestore},
		{M: "POST", P: "/tools/dashboards/{id}/delete", Access: Staff, Perms: dm, H: s.pageDashboardDelete},
	}
}

// homeView is the home page's data: the summary of pages_reports.go and
// the caller's dashboard tiles.
type homeView struct {
	*dashView
	Mine *dashboards.Values
}

// myTiles is the caller's tiles with their values for the home page (nil
// when they cannot be read: the home page still shows its summary).
func (s *Server) myTiles(c *Ctx) *dashboards.Values {
	v, err := dashboards.GetValues(c.R.Context(), c.Actor)
	if err != nil {
		s.log.Warn("home dashboard tiles", "err", err)
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

func (s *Server) myDashboardView(c *Ctx) (*myDashboardView, error) {
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

func (s *Server) pageMyDashboard(c *Ctx) error {
	v := s.newView(c, "my_dashboard", "menu.my_dashboard")
	d, err := s.myDashboardView(c)
	if err != nil {
		return err
	}
	v.Data = d
	v.Form = url.Values{"theme": {d.Mine.Theme}, "density": {d.Mine.Density}}
	return s.render(c, http.StatusOK, "my_dashboard", v)
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

func (s *Server) pageMyDashboardCustomize(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	v := s.newView(c, "my_dashboard", "menu.my_dashboard")
	if _, err := dashboards.Customize(c.R.Context(), c.Actor, dashboards.Customization{Tiles: dshFormTiles(c.R.PostForm)}); err != nil {
		d, derr := s.myDashboardView(c)
		if derr != nil {
			return derr
		}
		v.Data = d
		return s.formError(c, "my_dashboard", v, err)
	}
	s.setFlash(c, v.T("dsh.layout_saved"), false)
	return redirect(c, "/dashboards/me")
}

func (s *Server) pageMyDashboardReset(c *Ctx) error {
	v := s.newView(c, "my_dashboard", "menu.my_dashboard")
	if _, err := dashboards.ResetCustomization(c.R.Context(), c.Actor); err != nil {
		return err
	}
	s.setFlash(c, v.T("dsh.layout_reset"), false)
	return redirect(c, "/dashboards/me")
}

func (s *Server) pageMyDashboardAppearance(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	v := s.newView(c, "my_dashboard", "menu.my_dashboard")
	v.Form = c.R.PostForm
	if _, err := dashboards.SetAppearance(c.R.Context(), c.Actor, dashboards.Appearance{Theme: c.R.PostForm.Get("theme"), Density: c.R.PostForm.Get("density")}); err != nil {
		d, derr := s.myDashboardView(c)
		if derr != nil {
			return derr
		}
		v.Data = d
		return s.formError(c, "my_dashboard", v, err)
	}
	s.setFlash(c, v.T("dsh.appearance_saved"), false)
	return redirect(c, "/dashboards/me")
}

type dashboardsView struct {
	List    []*dashboards.Dashboard
	Metrics []string
	Checked map[string]bool
}

func (s *Server) dashboardsPage(c *Ctx, v *view, err error) error {
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
		return s.formError(c, "dashboards", v, err)
	}
	return s.render(c, http.StatusOK, "dashboards", v)
}

func (s *Server) pageDashboards(c *Ctx) error {
	return s.dashboardsPage(c, s.newView(c, "dashboards", "menu.dashboards"), nil)
}

func (s *Server) pageDashboardCreate(c *Ctx) error {
	if err := parseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.newView(c, "dashboards", "menu.dashboards")
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
	s.setFlash(c, v.T("dsh.created"), false)
	return redirect(c, "/tools/dashboards")
}

func (s *Server) pageDashboardsRestore(c *Ctx) error {
	v := s.newView(c, "dashboards", "menu.dashboards")
	if _, err := dashboards.RestoreDefaults(c.R.Context(), c.Actor); err != nil {
		return err
	}
	s.setFlash(c, v.T("dsh.restored"), false)
	return redirect(c, "/tools/dashboards")
}

func (s *Server) pageDashboardDelete(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := dashboards.Delete(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	v := s.newView(c, "dashboards", "menu.dashboards")
	s.setFlash(c, v.T("dsh.deleted"), false)
	return redirect(c, "/tools/dashboards")
}
