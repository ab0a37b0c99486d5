package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"xr/app"
	"xr/app/aaa"
	"xr/app/subs"
	"xr/web"
)

// Live session pages: the list (search, NAS and kind filters, refreshed
// by htmx every 5 s), a session's record, and the actions of the API's
// rows: disconnect (the NAS's answer shown as the API reports it) and MAC
// lock.
func (s *site) sessionPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/sessions", Access: web.Staff, API: "GET /admin/sessions", H: s.pageSessions, Menu: "sessions"},
		{M: "GET", P: "/sessions/{id}", Access: web.Staff, API: "GET /admin/sessions/{id}", H: s.pageSession},
		{M: "POST", P: "/sessions/{id}/disconnect", Access: web.Staff, API: "POST /admin/sessions/{id}/disconnect", H: s.pageSessionDisconnect},
		{M: "POST", P: "/sessions/{id}/lock-mac", Access: web.Staff, API: "POST /admin/sessions/{id}/lock-mac", H: s.pageSessionLockMAC},
	}
}

// sessionKindChoices are the kind filter's choices (aaa's session kinds).
var sessionKindChoices = []string{"subscriber", "guest", "voucher", "unknown"}

// sessionsView is the list page's data.
type sessionsView struct {
	Page   app.Page[aaa.Session]
	Q      string
	NAS    string
	Kind   string
	Kinds  []string
	NASes  []*aaa.NASRecord
	Query  string // the list's query string: polling and "back" links
	Prev   string
	Next   string
	CanDis bool
	CanMAC bool
}

func (s *site) pageSessions(c *web.Ctx) error {
	v := s.NewView(c, "sessions", "menu.sessions")
	q := c.Query()
	sv := &sessionsView{Q: q.Get("q"), NAS: q.Get("nas"), Kind: q.Get("kind"), Kinds: sessionKindChoices,
		CanDis: c.Actor.Can(subs.PermUsersLiveTraffic), CanMAC: c.Actor.Can(subs.PermUsersMacLock)}
	v.Data = sv
	keep := url.Values{}
	for _, k := range []string{"q", "nas", "kind"} {
		if q.Get(k) != "" {
			keep.Set(k, q.Get(k))
		}
	}
	sv.Query = keep.Encode()
	if c.R.Header.Get("HX-Target") != "results" && c.Actor.Can(aaa.PermNasIndex) {
		nases, err := aaa.ListNAS(c.R.Context(), c.Actor)
		if err != nil {
			return err
		}
		sv.NASes = nases
	}
	lv := url.Values{"page_size": {"50"}}
	if v := strings.TrimSpace(q.Get("q")); v != "" {
		lv.Set("q", v)
	}
	if v := q.Get("nas"); v != "" {
		lv.Set("filter[nas_id]", v)
	}
	if v := q.Get("kind"); v != "" {
		lv.Set("filter[kind]", v)
	}
	if v := q.Get("page"); v != "" {
		lv.Set("page", v)
	}
	lq, err := app.ParseList(lv, aaa.SessionListSpec)
	if err == nil {
		sv.Page, err = aaa.ListSessions(c.R.Context(), c.Actor, lq)
	}
	if e := app.AsError(err); e != nil && e.Status == http.StatusBadRequest {
		field := "q"
		switch e.Field {
		case "filter[nas_id]":
			field = "nas"
		case "filter[kind]":
			field = "kind"
		}
		v.Errors[field] = web.Message(v.Lang, e.Reason, e.Code)
		return s.Render(c, refusedStatus(c), "sessions", v)
	}
	if err != nil {
		return err
	}
	sv.Prev, sv.Next = web.Pager("", keep, sv.Page.Meta)
	return s.Render(c, http.StatusOK, "sessions", v)
}

// sessionView is the record page's data.
type sessionView struct {
	S      *aaa.Session
	CanDis bool
	CanMAC bool
	CanSub bool // may open the subscriber's record
}

func (s *site) pageSession(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	sess, err := aaa.GetSession(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "sessions", "session.title")
	v.Title = v.T("session.title") + " " + sess.Username
	v.Data = &sessionView{S: sess, CanDis: c.Actor.Can(subs.PermUsersLiveTraffic), CanMAC: c.Actor.Can(subs.PermUsersMacLock),
		CanSub: c.Actor.Can(subs.PermUsersIndex)}
	return s.Render(c, http.StatusOK, "session", v)
}

// sessionBack is where a session action returns: the form's "back" (this
// host only), else the session's record.
func sessionBack(c *web.Ctx, id int64) string {
	return backTo(c.R.PostFormValue("back"), fmt.Sprintf("/sessions/%d", id))
}

// pageSessionDisconnect is POST /admin/sessions/{id}/disconnect's function:
// the NAS's answer is the flash — accepted (ok), no such session (nak, a
// success: it is gone), or no answer (unreachable, the API's 502).
func (s *site) pageSessionDisconnect(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	back := sessionBack(c, id)
	v := s.NewView(c, "", "")
	if s.Server().Radius == nil {
		s.SetFlash(c, web.Message(v.Lang, "disconnect_unavailable", app.CodeUnavailable), true)
		return web.Redirect(c, back)
	}
	out, err := s.Server().Radius.DisconnectSession(c.R.Context(), c.Actor, id)
	if e := app.AsError(err); e != nil && (e.Status == http.StatusConflict || e.Status == http.StatusBadGateway || e.Status == http.StatusServiceUnavailable) {
		// Not live any more, the NAS unknown or silent, no RADIUS: said on the page.
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, back)
	}
	if err != nil {
		return err
	}
	if out.OK {
		s.SetFlash(c, v.T("session.disconnect_ok"), false)
	} else {
		s.SetFlash(c, v.T("session.disconnect_nak"), false)
	}
	return web.Redirect(c, back)
}

// pageSessionLockMAC is POST /admin/sessions/{id}/lock-mac's function.
func (s *site) pageSessionLockMAC(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	back := sessionBack(c, id)
	v := s.NewView(c, "", "")
	out, err := aaa.LockSessionMAC(c.R.Context(), c.Actor, id)
	if e := app.AsError(err); e != nil && e.Status == http.StatusConflict {
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, back)
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, v.T("session.mac_locked")+" "+out.MAC, false)
	return web.Redirect(c, back)
}
