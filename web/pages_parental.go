package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/parental"
	"xr/app/subs"
)

// Parental-control pages: a subscriber's parental control and guest
// accesses (linked from the subscriber's page), clearing a forgotten PIN,
// and a plan's guest limits (linked from the plan's page), over the same
// functions and permissions as GET /users/{id}/parental, DELETE
// /users/{id}/parental/pin and GET/PUT /admin/profiles/{id}/guest-limits.
func (s *Server) parentalPages() []Route {
	return []Route{
		{M: "GET", P: "/users/{id}/parental", Access: Staff, Perms: []app.Perm{app.PermUsersIndex}, H: s.pageParental},
		{M: "POST", P: "/users/{id}/parental/clear-pin", Access: Staff, Perms: []app.Perm{app.PermUsersUpdate}, H: s.pageParentalClearPIN},
		{M: "GET", P: "/plans/{id}/guest-limits", Access: Staff, Perms: []app.Perm{app.PermProfilesIndex}, H: s.pageGuestLimits},
		{M: "POST", P: "/plans/{id}/guest-limits", Access: Staff, Perms: []app.Perm{app.PermProfilesManage}, H: s.pageGuestLimitsSave},
	}
}

type parentalView struct {
	User      *subs.UserDetail
	P         *parental.UserParental
	CanUpdate bool
}

func (s *Server) pageParental(c *Ctx) error {
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
	v := s.newView(c, "subscribers", "menu.subscribers")
	v.Title = u.Username
	v.Data = &parentalView{User: u, P: p, CanUpdate: c.Actor.Can(app.PermUsersUpdate)}
	return s.render(c, http.StatusOK, "parental", v)
}

func (s *Server) pageParentalClearPIN(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.newView(c, "subscribers", "menu.subscribers")
	if _, err := parental.ClearPIN(c.R.Context(), c.Actor, id); err != nil {
		e := app.AsError(err)
		if e == nil || e.Status != http.StatusConflict {
			return err
		}
		s.setFlash(c, Message(v.Lang, e.Reason, e.Code), true)
		return redirect(c, fmt.Sprintf("/users/%d/parental", id))
	}
	s.setFlash(c, v.T("parental.pin_cleared"), false)
	return redirect(c, fmt.Sprintf("/users/%d/parental", id))
}

type guestLimitsView struct {
	Plan      *subs.Profile
	CanManage bool
}

func (s *Server) pageGuestLimits(c *Ctx) error {
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
	v := s.newView(c, "plans", "menu.plans")
	v.Title = p.Name
	v.Form = url.Values{"max_active": {strconv.Itoa(l.MaxActive)}, "max_minutes": {strconv.Itoa(l.MaxMinutes)}}
	v.Data = &guestLimitsView{Plan: p, CanManage: c.Actor.Can(app.PermProfilesManage)}
	return s.render(c, http.StatusOK, "parental_guest_limits", v)
}

func (s *Server) pageGuestLimitsSave(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := parseForm(c); err != nil {
		return err
	}
	p, err := subs.GetProfile(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.newView(c, "plans", "menu.plans")
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
			return s.formError(c, "parental_guest_limits", v, app.ErrValidation("invalid_type", f.name))
		}
		*f.dst = &n
	}
	if _, err := parental.PutGuestLimits(c.R.Context(), c.Actor, id, in); err != nil {
		return s.formError(c, "parental_guest_limits", v, err)
	}
	s.setFlash(c, v.T("parental.limits_saved"), false)
	return redirect(c, fmt.Sprintf("/plans/%d/guest-limits", id))
}
