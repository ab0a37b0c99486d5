package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/bandwidth"
	"xr/web"
)

// Bandwidth pages: the rates in force (per plan, and every override or
// window open now), the last CoA results, the apply form (a target set, a
// rate, a duration), revert, and the weekly windows with their form and
// delete. Each calls the app/bandwidth function of its API row in
// web/bandwidth_routes.go, with that row's permission and buckets.
func (s *site) bandwidthPages() []web.Route {
	p := []app.Perm{bandwidth.PermToolsBandwidthControl}
	return []web.Route{
		{M: "GET", P: "/tools/bandwidth", Access: web.Staff, API: "GET /admin/tools/bandwidth", H: s.pageBandwidth, Menu: "bandwidth"},
		{M: "GET", P: "/tools/bandwidth/apply", Access: web.Staff, Perms: p, H: s.pageBandwidthApplyForm},
		{M: "POST", P: "/tools/bandwidth/apply", Access: web.Staff, API: "POST /admin/tools/bandwidth/apply", H: s.pageBandwidthApply},
		{M: "POST", P: "/tools/bandwidth/{id}/revert", Access: web.Staff, API: "POST /admin/tools/bandwidth/apply", H: s.pageBandwidthRevert},
		{M: "GET", P: "/tools/bandwidth/schedules/new", Access: web.Staff, Perms: p, H: s.pageBandwidthWindowForm},
		{M: "POST", P: "/tools/bandwidth/schedules", Access: web.Staff, API: "POST /admin/tools/bandwidth/schedules", H: s.pageBandwidthWindowCreate},
		{M: "POST", P: "/tools/bandwidth/schedules/{id}/delete", Access: web.Staff, API: "DELETE /admin/tools/bandwidth/schedules/{id}", H: s.pageBandwidthWindowDelete},
	}
}

type bandwidthView struct {
	Overview  *bandwidth.Overview
	Windows   []*bandwidth.Rule
	History   []bandwidth.CoARecord
	Kinds     []string
	Weekdays  []string
	Checked   map[string]bool
	RequestAt string
}

func (s *site) pageBandwidth(c *web.Ctx) error {
	ctx := c.R.Context()
	v := s.NewView(c, "bandwidth", "menu.bandwidth")
	at := c.Query().Get("at")
	o, err := bandwidth.GetOverview(ctx, c.Actor, at)
	if err != nil {
		return err
	}
	w, err := bandwidth.ListSchedules(ctx, c.Actor)
	if err != nil {
		return err
	}
	lq, err := app.ParseList(url.Values{"page_size": {"20"}}, bandwidth.HistorySpec)
	if err != nil {
		return err
	}
	h, err := bandwidth.History(ctx, c.Actor, lq)
	if err != nil {
		return err
	}
	v.Data = &bandwidthView{Overview: o, Windows: w, History: h.Rows, RequestAt: at}
	return s.Render(c, http.StatusOK, "bandwidth", v)
}

// bwFormIDs reads a list of ids typed as "1, 2 3" (an unreadable one is the
// API's invalid_id).
func bwFormIDs(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' }) {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, app.ErrValidation("invalid_id", "target.ids")
		}
		out = append(out, id)
	}
	return out, nil
}

// bwFormSpeed reads a rate field (20M, 512k; web.ParseSpeed): 0 when empty.
func bwFormSpeed(f url.Values, key string) (int64, error) {
	o, err := web.FormSpeed(f, key)
	return o.V, err
}

func bwFormInt(f url.Values, key string) (int64, error) {
	s := strings.TrimSpace(f.Get(key))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, app.ErrValidation("out_of_range", key)
	}
	return n, nil
}

func bandwidthFormView(f url.Values) *bandwidthView {
	d := &bandwidthView{Kinds: []string{"plan", "group", "nas", "users"}, Weekdays: app.Weekdays, Checked: map[string]bool{}}
	for _, w := range f["weekdays"] {
		d.Checked[w] = true
	}
	return d
}

func (s *site) pageBandwidthApplyForm(c *web.Ctx) error {
	v := s.NewView(c, "bandwidth", "bw.apply")
	v.Form = url.Values{"target.kind": {"plan"}}
	v.Data = bandwidthFormView(v.Form)
	return s.Render(c, http.StatusOK, "bandwidth_apply", v)
}

func (s *site) pageBandwidthApply(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "bandwidth", "bw.apply")
	v.Form = f
	v.Data = bandwidthFormView(f)
	in := bandwidth.ApplyInput{Name: f.Get("name"), Target: bandwidth.Target{Kind: f.Get("target.kind")}}
	var err error
	if in.Target.IDs, err = bwFormIDs(f.Get("target.ids")); err == nil {
		if in.RateDownKbps, err = bwFormSpeed(f, "rate_down_kbps"); err == nil {
			if in.RateUpKbps, err = bwFormSpeed(f, "rate_up_kbps"); err == nil {
				var d int64
				d, err = bwFormInt(f, "duration_minutes")
				in.DurationMinutes = int(d)
			}
		}
	}
	if err == nil {
		var out *bandwidth.ApplyResult
		if out, err = bandwidth.Apply(c.R.Context(), c.Actor, in); err == nil {
			s.SetFlash(c, fmt.Sprintf(v.T("bw.applied"), out.CoA.Sessions, out.CoA.ACK), false)
			return web.Redirect(c, "/tools/bandwidth")
		}
	}
	return s.FormError(c, "bandwidth_apply", v, err)
}

func (s *site) pageBandwidthRevert(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "bandwidth", "menu.bandwidth")
	out, err := bandwidth.Apply(c.R.Context(), c.Actor, bandwidth.ApplyInput{RevertID: id})
	if e := app.AsError(err); e != nil && e.Status == http.StatusConflict {
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, "/tools/bandwidth")
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, fmt.Sprintf(v.T("bw.reverted"), out.CoA.Sessions, out.CoA.ACK), false)
	return web.Redirect(c, "/tools/bandwidth")
}

func (s *site) pageBandwidthWindowForm(c *web.Ctx) error {
	v := s.NewView(c, "bandwidth", "bw.new_window")
	v.Form = url.Values{"target.kind": {"plan"}, "start": {"22:00"}, "end": {"06:00"}}
	v.Data = bandwidthFormView(v.Form)
	return s.Render(c, http.StatusOK, "bandwidth_window", v)
}

func (s *site) pageBandwidthWindowCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "bandwidth", "bw.new_window")
	v.Form = f
	v.Data = bandwidthFormView(f)
	in := bandwidth.WindowInput{Name: f.Get("name"), Target: bandwidth.Target{Kind: f.Get("target.kind")}, Weekdays: f["weekdays"],
		Start: f.Get("start"), End: f.Get("end")}
	var err error
	if in.Target.IDs, err = bwFormIDs(f.Get("target.ids")); err == nil {
		if in.RateDownKbps, err = bwFormSpeed(f, "rate_down_kbps"); err == nil {
			in.RateUpKbps, err = bwFormSpeed(f, "rate_up_kbps")
		}
	}
	if err == nil {
		if _, err = bandwidth.CreateSchedule(c.R.Context(), c.Actor, in); err == nil {
			s.SetFlash(c, v.T("bw.window_saved"), false)
			return web.Redirect(c, "/tools/bandwidth")
		}
	}
	return s.FormError(c, "bandwidth_window", v, err)
}

func (s *site) pageBandwidthWindowDelete(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := bandwidth.DeleteSchedule(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	v := s.NewView(c, "bandwidth", "menu.bandwidth")
	s.SetFlash(c, v.T("bw.window_deleted"), false)
	return web.Redirect(c, "/tools/bandwidth")
}
