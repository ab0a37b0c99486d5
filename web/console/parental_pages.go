package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/parental"
	"xr/app/subs"
	"xr/web"
)

// Parental-control pages: a subscriber's parental control and guest
// accesses (linked from the subscriber's page), clearing a forgotten PIN,
// and a plan's guest limits (linked from the plan's page), over the same
// functions and permissions as GET /users/{id}/parental, DELETE
// /users/{id}/parental/pin and GET/PUT /admin/profiles/{id}/guest-limits.
func (s *site) parentalPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/users/{id}/parental", Access: web.Staff, API: "GET /users/{id}/parental", H: s.pageParental},
		{M: "POST", P: "/users/{id}/parental/clear-pin", Access: web.Staff, API: "DELETE /users/{id}/parental/pin", H: s.pageParentalClearPIN},
		{M: "GET", P: "/plans/{id}/guest-limits", Access: web.Staff, API: "GET /admin/profiles/{id}/guest-limits", H: s.pageGuestLimits},
		{M: "POST", P: "/plans/{id}/guest-limits", Access: web.Staff, API: "PUT /admin/profiles/{id}/guest-limits", H: s.pageGuestLimitsSave},
	}
}

type parentalView struct {
	User      *subs.UserDetail
	P         *parental.UserParental
	CanUpdate bool
}

func (s *site) pageParental(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	u, err := subs.GetUser(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	p, err := parental.GetUserParental(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "subscribers", "menu.subscribers")
	v.Title = u.Username
	v.Data = &parentalView{User: u, P: p, CanUpdate: c.Actor.Can(subs.PermUsersUpdate)}
	return s.Render(c, http.StatusOK, "parental", v)
}

func (s *site) pageParentalClearPIN(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "subscribers", "menu.subscribers")
	if _, err := parental.ClearPIN(c.R.Context(), c.Actor, id); err != nil {
		e := app.AsError(err)
		if e == nil || e.Status != http.StatusConflict {
			return err
		}
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, fmt.Sprintf("/users/%d/parental", id))
	}
	s.SetFlash(c, v.T("parental.pin_cleared"), false)
	return web.Redirect(c, fmt.Sprintf("/users/%d/parental", id))
}

type guestLimitsView struct {
	Plan      *subs.Profile
	CanManage bool
}

func (s *site) pageGuestLimits(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	p, err := subs.GetProfile(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	l, err := parental.GetGuestLimits(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "plans", "menu.plans")
	v.Title = p.Name
	v.Form = url.Values{"max_active": {strconv.Itoa(l.MaxActive)}, "max_minutes": {strconv.Itoa(l.MaxMinutes)}}
	v.Data = &guestLimitsView{Plan: p, CanManage: c.Actor.Can(subs.PermProfilesManage)}
	return s.Render(c, http.StatusOK, "parental_guest_limits", v)
}

func (s *site) pageGuestLimitsSave(c *web.Ctx) error {
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
	v.Data = &guestLimitsView{Plan: p, CanManage: true}
	var in parental.GuestLimitsInput
	for _, f := range []struct {
		name string
		dst  **int
	}{{"max_active", &in.MaxActive}, {"max_minutes", &in.MaxMinutes}} {
		raw := strings.TrimSpace(c.R.PostForm.Get(f.name))
		if raw == "" {
			continue
		}
		n, perr := strconv.Atoi(raw)
		if perr != nil {
			return s.FormError(c, "parental_guest_limits", v, app.ErrValidation("invalid_type", f.name))
		}
		*f.dst = &n
	}
	if _, err := parental.PutGuestLimits(c.R.Context(), c.Actor, id, in); err != nil {
		return s.FormError(c, "parental_guest_limits", v, err)
	}
	s.SetFlash(c, v.T("parental.limits_saved"), false)
	return web.Redirect(c, fmt.Sprintf("/plans/%d/guest-limits", id))
}
