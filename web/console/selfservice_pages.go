package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/selfservice"
	"xr/app/subs"
	"xr/web"
)

// Self-service pages: what the portal offers on a plan (plans to change
// to, the extension policy, speed boosts), over
// GET/PUT /admin/profiles/{id}/self-service with the same permissions.
func (s *site) selfservicePages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/plans/{id}/self-service", Access: web.Staff, API: "GET /admin/profiles/{id}/self-service", H: s.pageSelfService},
		{M: "POST", P: "/plans/{id}/self-service", Access: web.Staff, API: "PUT /admin/profiles/{id}/self-service", H: s.pageSelfServiceSave},
	}
}

// ssBoostRows is how many boost rows the form shows beyond the stored
// ones (empty rows are ignored on save).
const ssBoostRows = 2

type ssPlan struct {
	ID   int64
	Name string
}

type selfServiceView struct {
	Plan      *subs.Profile
	Plans     []ssPlan       // the other plans, candidates to change to
	Targets   map[int64]bool // ticked
	Boosts    []ssBoostRow
	CanManage bool
}

// ssBoostRow is a boost row of the form, as text (a refused form keeps
// what was typed).
type ssBoostRow struct {
	Index                          int
	Name, Down, Up, Minutes, Price string
}

func (s *site) selfServiceData(c *web.Ctx, id int64) (*selfServiceView, *selfservice.PlanPolicy, error) {
	ctx := c.R.Context()
	p, err := subs.GetProfile(ctx, c.Actor, id)
	if err != nil {
		return nil, nil, err
	}
	pol, err := selfservice.GetPlanPolicy(ctx, c.Actor, id)
	if err != nil {
		return nil, nil, err
	}
	lq, err := app.ParseList(url.Values{"page_size": {strconv.Itoa(app.MaxPageSize)}, "sort": {"name"}, "order": {"asc"}}, subs.ProfileListSpec())
	if err != nil {
		return nil, nil, err
	}
	all, err := subs.ListProfiles(ctx, c.Actor, lq)
	if err != nil {
		return nil, nil, err
	}
	d := &selfServiceView{Plan: p, Targets: map[int64]bool{}, CanManage: c.Actor.Can(subs.PermProfilesManage)}
	for _, o := range all.Rows {
		if o.ID != id {
			d.Plans = append(d.Plans, ssPlan{ID: o.ID, Name: o.Name})
		}
	}
	return d, pol, nil
}

func ssPadBoosts(rows []ssBoostRow) []ssBoostRow {
	for i := 0; i < ssBoostRows; i++ {
		rows = append(rows, ssBoostRow{})
	}
	for i := range rows {
		rows[i].Index = i
	}
	return rows
}

func (s *site) pageSelfService(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	d, pol, err := s.selfServiceData(c, id)
	if err != nil {
		return err
	}
	for _, t := range pol.ChangeTargets {
		d.Targets[t] = true
	}
	var rows []ssBoostRow
	for _, b := range pol.Boosts {
		rows = append(rows, ssBoostRow{Name: b.Name, Down: strconv.FormatInt(b.RateDownKbps, 10), Up: strconv.FormatInt(b.RateUpKbps, 10),
			Minutes: strconv.FormatInt(b.DurationMinutes, 10), Price: b.Price.String()})
	}
	d.Boosts = ssPadBoosts(rows)
	v := s.NewView(c, "plans", "menu.plans")
	v.Title = d.Plan.Name
	v.Form = url.Values{"ext_days": {strconv.FormatInt(pol.Extension.Days, 10)}, "ext_price": {pol.Extension.Price.String()},
		"ext_max": {strconv.FormatInt(pol.Extension.MaxPerMonth, 10)}}
	v.Data = d
	return s.Render(c, http.StatusOK, "selfservice", v)
}

func (s *site) pageSelfServiceSave(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	d, _, err := s.selfServiceData(c, id)
	if err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "plans", "menu.plans")
	v.Title = d.Plan.Name
	v.Form = f
	v.Data = d
	for _, t := range f["change_targets"] {
		if n, perr := strconv.ParseInt(t, 10, 64); perr == nil {
			d.Targets[n] = true
		}
	}
	var rows []ssBoostRow
	names, downs, ups, mins, prices := f["boost_name"], f["boost_down"], f["boost_up"], f["boost_minutes"], f["boost_price"]
	for i := range downs {
		at := func(l []string) string {
			if i < len(l) {
				return strings.TrimSpace(l[i])
			}
			return ""
		}
		r := ssBoostRow{Name: at(names), Down: at(downs), Up: at(ups), Minutes: at(mins), Price: at(prices)}
		if r.Name+r.Down+r.Up+r.Minutes+r.Price != "" {
			rows = append(rows, r)
		}
	}
	d.Boosts = ssPadBoosts(rows)
	in, err := ssPolicyInput(f, d.Targets, rows)
	if err == nil {
		_, err = selfservice.SetPlanPolicy(c.R.Context(), c.Actor, id, in)
	}
	if err != nil {
		return s.FormError(c, "selfservice", v, err)
	}
	s.SetFlash(c, v.T("ss.saved"), false)
	return web.Redirect(c, fmt.Sprintf("/plans/%d/self-service", id))
}

// ssPolicyInput builds the policy from the form; a boost row's fields are
// named boosts.<field> in errors, as the API names them.
func ssPolicyInput(f url.Values, targets map[int64]bool, rows []ssBoostRow) (selfservice.PlanPolicyInput, error) {
	in := selfservice.PlanPolicyInput{ChangeTargets: []int64{}, Boosts: []selfservice.BoostOption{}}
	for t := range targets {
		in.ChangeTargets = append(in.ChangeTargets, t)
	}
	days, err := catInt(f, "ext_days")
	if err != nil {
		return in, app.ErrValidation("invalid_type", "extension.days")
	}
	price, err := web.FormMoney(f, "ext_price")
	if err != nil {
		return in, err
	}
	maxN, err := catInt(f, "ext_max")
	if err != nil {
		return in, app.ErrValidation("invalid_type", "extension.max_per_month")
	}
	in.Extension = selfservice.ExtensionPolicy{Days: days.V, Price: price.V, MaxPerMonth: maxN.V}
	for _, r := range rows {
		vals := url.Values{"d": {r.Down}, "u": {r.Up}, "m": {r.Minutes}, "p": {r.Price}}
		down, err1 := catInt(vals, "d")
		up, err2 := catInt(vals, "u")
		mins, err3 := catInt(vals, "m")
		if err1 != nil || err2 != nil || err3 != nil {
			return in, app.ErrValidation("invalid_type", "boosts.rate_down_kbps")
		}
		p, err := web.FormMoney(vals, "p")
		if err != nil {
			return in, app.ErrValidation("invalid_price", "boosts.price")
		}
		in.Boosts = append(in.Boosts, selfservice.BoostOption{Name: r.Name, RateDownKbps: down.V, RateUpKbps: up.V, DurationMinutes: mins.V, Price: p.V})
	}
	return in, nil
}
