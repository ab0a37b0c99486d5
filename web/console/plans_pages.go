package console

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/identity"
	"xr/app/subs"
	"xr/web"
)

// Plan pages: the list, the create form and the record (an edit form),
// over app/subs/profiles.go, with the permissions of the /admin/profiles
// rows. Quotas are entered in GiB and hours; the API's units are bytes and
// seconds.
func (s *site) planPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/plans", Access: web.Staff, API: "GET /admin/profiles", H: s.pagePlans, Menu: "plans"},
		{M: "GET", P: "/plans/new", Access: web.Staff, Perms: []app.Perm{subs.PermProfilesManage}, H: s.pagePlanNew},
		{M: "POST", P: "/plans", Access: web.Staff, API: "POST /admin/profiles", H: s.pagePlanCreate},
		{M: "GET", P: "/plans/{id}", Access: web.Staff, API: "GET /admin/profiles/{id}", H: s.pagePlan},
		{M: "POST", P: "/plans/{id}", Access: web.Staff, API: "PATCH /admin/profiles/{id}", H: s.pagePlanUpdate},
	}
}

// plansView is the list page's data.
type plansView struct {
	Page      app.Page[subs.Profile]
	Q         string
	Prev      string
	Next      string
	CanManage bool
}

func (s *site) pagePlans(c *web.Ctx) error {
	v := s.NewView(c, "plans", "menu.plans")
	q := c.Query()
	lv := url.Values{"page_size": {"50"}}
	if x := strings.TrimSpace(q.Get("q")); x != "" {
		lv.Set("q", x)
	}
	if p := q.Get("page"); p != "" {
		lv.Set("page", p)
	}
	lq, err := app.ParseList(lv, subs.ProfileListSpec())
	if err != nil {
		return err
	}
	page, err := subs.ListProfiles(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	pv := plansView{Page: page, Q: q.Get("q"), CanManage: c.Actor.Can(subs.PermProfilesManage)}
	pv.Prev, pv.Next = web.Pager("", web.NonEmpty("q", pv.Q), page.Meta)
	v.Data = pv
	return s.Render(c, http.StatusOK, "plans", v)
}

// planManager is a manager the plan may be granted to.
type planManager struct {
	ID   int64
	Name string
}

// planFormView is the create and record pages' data.
type planFormView struct {
	Plan      *subs.Profile // nil on the create form
	Managers  []planManager
	Checked   map[int64]bool // managers ticked in the form
	CanManage bool
	// ListsManagers: the caller may list managers (prm_managers_index), so
	// the form offers them; otherwise only "every manager" is editable.
	ListsManagers bool
}

func (s *site) planFormData(c *web.Ctx, p *subs.Profile) (*planFormView, error) {
	d := &planFormView{Plan: p, Checked: map[int64]bool{}, CanManage: c.Actor.Can(subs.PermProfilesManage),
		ListsManagers: c.Actor.Can(identity.PermManagersIndex)}
	if d.ListsManagers {
		lq, err := app.ParseList(url.Values{"page_size": {strconv.Itoa(app.MaxPageSize)}}, identity.ManagerListSpec())
		if err != nil {
			return nil, err
		}
		ms, err := identity.ListManagers(c.R.Context(), c.Actor, lq)
		if err != nil {
			return nil, err
		}
		for _, m := range ms.Rows {
			d.Managers = append(d.Managers, planManager{ID: m.ID, Name: managerName(&m.Manager)})
		}
	}
	if p != nil {
		for _, id := range p.ManagerIDs {
			d.Checked[id] = true
		}
	}
	return d, nil
}

// planValues fills a form from a plan.
func planValues(p *subs.Profile) url.Values {
	f := url.Values{}
	f.Set("name", p.Name)
	f.Set("description", p.Description)
	f.Set("price", p.Price.String())
	f.Set("duration_days", strconv.FormatInt(p.DurationDays, 10))
	f.Set("bytes_limit", strconv.FormatFloat(float64(p.BytesLimit)/(1<<30), 'f', -1, 64))
	f.Set("seconds_limit", strconv.FormatFloat(float64(p.SecondsLimit)/3600, 'f', -1, 64))
	f.Set("simultaneous_use", strconv.FormatInt(p.SimultaneousUse, 10))
	for k, n := range map[string]int64{"rate_down_kbps": p.RateDownKbps, "rate_up_kbps": p.RateUpKbps,
		"fup_rate_down_kbps": p.FUPRateDownKbps, "fup_rate_up_kbps": p.FUPRateUpKbps} {
		f.Set(k, web.SpeedInput(n))
	}
	f.Set("expired_pool", p.ExpiredPool)
	if p.Enabled {
		f.Set("enabled", "1")
	}
	if p.AllManagers {
		f.Set("all_managers", "1")
	}
	return f
}

// catInt reads a whole-number field; "" is not set.
func catInt(f url.Values, field string) (app.Opt[int64], error) {
	raw := strings.TrimSpace(f.Get(field))
	if raw == "" {
		return app.Opt[int64]{}, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return app.Opt[int64]{}, app.ErrValidation("invalid_type", field)
	}
	return app.Opt[int64]{Set: true, V: n}, nil
}

// catScaled reads a decimal field in a larger unit (GiB, hours) as a whole
// number of base units; "" is not set.
func catScaled(f url.Values, field string, unit float64) (app.Opt[int64], error) {
	raw := strings.TrimSpace(f.Get(field))
	if raw == "" {
		return app.Opt[int64]{}, nil
	}
	x, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x*unit) > 1<<62 {
		return app.Opt[int64]{}, app.ErrValidation("invalid_type", field)
	}
	return app.Opt[int64]{Set: true, V: int64(math.Round(x * unit))}, nil
}

// catIDs reads repeated id fields (ticked boxes); a non-number is refused.
func catIDs(f url.Values, field string) ([]int64, error) {
	out := []int64{}
	for _, s := range f[field] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return nil, app.ErrValidation("invalid_type", field)
		}
		out = append(out, n)
	}
	return out, nil
}

// planInput maps the form onto the API's input. The numbers left empty are
// not sent (the API's defaults on create, unchanged on edit); the
// checkboxes are always sent. old is the plan's managers: those the form
// did not show (managers_shown) are kept.
func planInput(f url.Values, d *planFormView) (subs.ProfileInput, error) {
	in := subs.ProfileInput{
		Name:        app.Opt[string]{Set: true, V: f.Get("name")},
		Description: app.Opt[string]{Set: true, V: f.Get("description")},
		ExpiredPool: app.Opt[string]{Set: true, V: strings.TrimSpace(f.Get("expired_pool"))},
		Enabled:     app.Opt[bool]{Set: true, V: f.Get("enabled") != ""},
		AllManagers: app.Opt[bool]{Set: true, V: f.Get("all_managers") != ""},
	}
	var err error
	if in.Price, err = web.FormMoney(f, "price"); err != nil {
		return in, err
	}
	ints := []struct {
		dst   *app.Opt[int64]
		field string
	}{
		{&in.DurationDays, "duration_days"}, {&in.SimultaneousUse, "simultaneous_use"},
	}
	for _, x := range ints {
		if *x.dst, err = catInt(f, x.field); err != nil {
			return in, err
		}
	}
	for _, x := range []struct {
		dst   *app.Opt[int64]
		field string
	}{{&in.RateDownKbps, "rate_down_kbps"}, {&in.RateUpKbps, "rate_up_kbps"}, {&in.FUPRateDownKbps, "fup_rate_down_kbps"}, {&in.FUPRateUpKbps, "fup_rate_up_kbps"}} {
		if *x.dst, err = web.FormSpeed(f, x.field); err != nil {
			return in, err
		}
	}
	if in.BytesLimit, err = catScaled(f, "bytes_limit", 1<<30); err != nil {
		return in, err
	}
	if in.SecondsLimit, err = catScaled(f, "seconds_limit", 3600); err != nil {
		return in, err
	}
	if d.ListsManagers {
		ticked, err := catIDs(f, "manager_ids")
		if err != nil {
			return in, err
		}
		shown, err := catIDs(f, "managers_shown")
		if err != nil {
			return in, err
		}
		ids := ticked
		if d.Plan != nil {
			for _, id := range d.Plan.ManagerIDs {
				if !slices.Contains(shown, id) && !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
		in.ManagerIDs = app.Opt[[]int64]{Set: true, V: ids}
	}
	return in, nil
}

func (s *site) pagePlanNew(c *web.Ctx) error {
	v := s.NewView(c, "plans", "plan.new")
	d, err := s.planFormData(c, nil)
	if err != nil {
		return err
	}
	v.Form = url.Values{"enabled": {"1"}, "all_managers": {"1"}, "duration_days": {"30"}, "simultaneous_use": {"1"}}
	v.Data = d
	return s.Render(c, http.StatusOK, "plan_form", v)
}

func (s *site) pagePlanCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "plans", "plan.new")
	v.Form = c.R.PostForm
	d, err := s.planFormData(c, nil)
	if err != nil {
		return err
	}
	for _, id := range c.R.PostForm["manager_ids"] {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			d.Checked[n] = true
		}
	}
	v.Data = d
	in, err := planInput(c.R.PostForm, d)
	if err != nil {
		return s.FormError(c, "plan_form", v, err)
	}
	p, err := subs.CreateProfile(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.FormError(c, "plan_form", v, err)
	}
	s.SetFlash(c, v.T("plan.created"), false)
	return web.Redirect(c, fmt.Sprintf("/plans/%d", p.ID))
}

func (s *site) pagePlan(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	p, err := subs.GetProfile(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "plans", "menu.plans")
	v.Title = p.Name
	d, err := s.planFormData(c, p)
	if err != nil {
		return err
	}
	v.Form = planValues(p)
	v.Data = d
	return s.Render(c, http.StatusOK, "plan_form", v)
}

func (s *site) pagePlanUpdate(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	p, err := subs.GetProfile(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "plans", "menu.plans")
	v.Title = p.Name
	v.Form = c.R.PostForm
	d, err := s.planFormData(c, p)
	if err != nil {
		return err
	}
	v.Data = d
	in, err := planInput(c.R.PostForm, d)
	if err == nil {
		_, err = subs.UpdateProfile(c.R.Context(), c.Actor, id, in)
	}
	if err != nil {
		d.Checked = map[int64]bool{}
		for _, m := range c.R.PostForm["manager_ids"] {
			if n, perr := strconv.ParseInt(m, 10, 64); perr == nil {
				d.Checked[n] = true
			}
		}
		return s.FormError(c, "plan_form", v, err)
	}
	s.SetFlash(c, v.T("plan.saved"), false)
	return web.Redirect(c, fmt.Sprintf("/plans/%d", id))
}
