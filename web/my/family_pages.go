package my

import (
	"net/http"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/parental"
	"xr/web"
)

// The family page under /my/family: parental control (blocked windows,
// pause now, PIN) and guest access, each through the parental area's
// portal function of its API row. A feature the tenant switched off is
// simply not shown.
func (s *site) myFamilyPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/my/family", Access: web.Subscriber, API: "GET /portal/parental", H: s.pageMyFamily},
		{M: "POST", P: "/my/family/rules", Access: web.Subscriber, API: "PUT /portal/parental/rules", H: s.pageMyFamilyRules},
		{M: "POST", P: "/my/family/pause", Access: web.Subscriber, API: "POST /portal/parental/pause", H: s.pageMyFamilyPause},
		{M: "POST", P: "/my/family/pin", Access: web.Subscriber, API: "POST /portal/parental/pin", H: s.pageMyFamilyPIN},
		{M: "POST", P: "/my/guests", Access: web.Subscriber, API: "POST /portal/guest/register", H: s.pageMyGuestCreate},
	}
}

type myFamily struct {
	Parental *parental.State
	Guests   *parental.GuestContext
	NewGuest *parental.Guest
	Weekdays []string
}

// switchedOff reports a feature_disabled refusal (the section is hidden).
func switchedOff(err error) bool {
	e := app.AsError(err)
	return e != nil && e.Reason == "feature_disabled"
}

func (s *site) familyPage(c *web.Ctx, v *web.View, status int, newGuest *parental.Guest, err error) error {
	ctx := c.R.Context()
	d := &myFamily{NewGuest: newGuest, Weekdays: app.Weekdays}
	var gerr error
	if d.Parental, gerr = parental.Get(ctx, c.Actor); gerr != nil && !switchedOff(gerr) {
		return gerr
	}
	if d.Guests, gerr = parental.GetGuestContext(ctx, c.Actor); gerr != nil && !switchedOff(gerr) {
		return gerr
	}
	v.Data = d
	if err != nil {
		return s.FormError(c, "family", v, err)
	}
	return s.Render(c, status, "family", v)
}

func (s *site) pageMyFamily(c *web.Ctx) error {
	return s.familyPage(c, s.NewView(c, "family", "my.family_title"), http.StatusOK, nil, nil)
}

// done redirects back to the family page with a message.
func (s *site) familyDone(c *web.Ctx, v *web.View, msg string) error {
	s.SetFlash(c, v.T(msg), false)
	return web.Redirect(c, myPrefix+"family")
}

func (s *site) pageMyFamilyRules(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "family", "my.family_title")
	v.Form = f
	in := parental.RulesInput{Windows: []parental.Window{}}
	for i := 0; i < 100; i++ {
		p := "w" + strconv.Itoa(i) + "_"
		if !f.Has(p + "start") {
			break
		}
		if f.Get(p+"remove") != "" {
			continue
		}
		w := parental.Window{Weekdays: []string{}, Start: f.Get(p + "start"), End: f.Get(p + "end")}
		if days := f.Get(p + "days"); days != "" {
			w.Weekdays = strings.Split(days, ",")
		}
		in.Windows = append(in.Windows, w)
	}
	if start, end := f.Get("new_start"), f.Get("new_end"); start != "" || end != "" {
		w := parental.Window{Weekdays: f["new_days"], Start: start, End: end}
		if w.Weekdays == nil {
			w.Weekdays = []string{}
		}
		in.Windows = append(in.Windows, w)
	}
	if _, err := parental.PutRules(c.R.Context(), c.Actor, in); err != nil {
		if e := app.AsError(err); e != nil && strings.HasPrefix(e.Field, "windows") {
			e2 := *e
			e2.Field = "windows" // one message under the editor
			err = &e2
		}
		return s.familyPage(c, v, http.StatusBadRequest, nil, err)
	}
	return s.familyDone(c, v, "my.pc_saved")
}

func (s *site) pageMyFamilyPause(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "family", "my.family_title")
	n, err := strconv.Atoi(c.R.PostFormValue("minutes"))
	if err != nil {
		return s.familyPage(c, v, http.StatusBadRequest, nil, app.ErrValidation("invalid_type", "minutes"))
	}
	if _, err := parental.Pause(c.R.Context(), c.Actor, parental.PauseInput{Minutes: &n}); err != nil {
		return s.familyPage(c, v, http.StatusBadRequest, nil, err)
	}
	return s.familyDone(c, v, "my.pc_paused")
}

func (s *site) pageMyFamilyPIN(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "family", "my.family_title")
	in := parental.PINInput{PIN: c.R.PostFormValue("pin"), CurrentPIN: c.R.PostFormValue("current_pin")}
	if _, err := parental.SetPIN(c.R.Context(), c.Actor, in); err != nil {
		return s.familyPage(c, v, http.StatusBadRequest, nil, err)
	}
	return s.familyDone(c, v, "my.pc_pin_saved")
}

func (s *site) pageMyGuestCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "family", "my.family_title")
	v.Form = f
	in := parental.GuestInput{Name: strings.TrimSpace(f.Get("name"))}
	if raw := strings.TrimSpace(f.Get("minutes")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			return s.familyPage(c, v, http.StatusBadRequest, nil, app.ErrValidation("invalid_type", "minutes"))
		}
		in.Minutes = &n
	}
	g, err := parental.RegisterGuest(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.familyPage(c, v, http.StatusBadRequest, nil, err)
	}
	// The password shows once, on this answer: no redirect.
	v.Form = nil
	return s.familyPage(c, v, http.StatusOK, g, nil)
}
