package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/aaa"
	"xr/app/devgw"
	"xr/app/identity"
	"xr/app/monitoring"
	"xr/web"
)

// Device gateway pages: the remote console of a NAS or a monitored device
// (a terminal on the gateway's WebSocket, with the target's SSH access and
// host key beside it) and the console sessions list (close one, close the
// selected, close all in scope, download a recording), over the app/devgw
// functions of the API rows with their permissions: prm_nas_remote for a
// NAS, prm_nas_devices_remote for a device (app/devgw checks which).
//
// The page mints the WebSocket ticket itself, with the console session's
// actor (the browser never holds the API's bearer token); the terminal's
// script (assets/console/devgw.js) opens the socket with it.
func (s *site) devgwPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/remote/{kind}/{id}", Access: web.Staff, API: "POST /admin/devgw/tickets", H: s.pageRemote},
		{M: "POST", P: "/remote/{kind}/{id}/ticket", Access: web.Staff, API: "POST /admin/devgw/tickets", H: s.pageRemoteTicket},
		{M: "POST", P: "/remote/{kind}/{id}/credentials", Access: web.Staff, API: "PUT /admin/devgw/credentials/{kind}/{id}", H: s.pageRemoteCredentials},
		{M: "POST", P: "/remote/{kind}/{id}/accept-host-key", Access: web.Staff, API: "POST /admin/devgw/credentials/{kind}/{id}/accept-host-key", H: s.pageRemoteAcceptKey},
		{M: "GET", P: "/console-sessions", Access: web.Staff, API: "GET /admin/console-sessions", H: s.pageConsoleSessions, Menu: "console_sessions"},
		{M: "POST", P: "/console-sessions/bulk-close", Access: web.Staff, API: "POST /admin/console-sessions/bulk-close", H: s.pageConsoleBulkClose},
		{M: "POST", P: "/console-sessions/close-all", Access: web.Staff, API: "DELETE /admin/console-sessions", H: s.pageConsoleCloseAll},
		{M: "POST", P: "/console-sessions/{sid}/close", Access: web.Staff, API: "DELETE /admin/console-sessions/{sid}", H: s.pageConsoleClose},
		{M: "GET", P: "/console-sessions/{sid}/recording", Access: web.Staff, File: true, API: "GET /admin/console-sessions/{sid}/recording"},
	}
}

// remoteReasons are the reasons the gateway gives in its error and closed
// messages (and the refusals of a mint); the page hands their texts to the
// script, which shows an unknown one by its code.
var remoteReasons = []string{"", "host_key_changed", "auth_failed", "unreachable", "target_not_allowed", "credentials_missing",
	"handshake_failed", "shell_failed", "console_limit_tenant", "console_limit_manager", "idle_timeout", "max_duration", "closed_by_staff", "client_closed",
	"remote_exit", "server_restart", "server_stopping", "error", "ticket_invalid", "ticket_expired"}

// remoteView is the remote console page's data.
type remoteView struct {
	Kind      string
	ID        int64
	Name      string
	Address   string
	Base      string // /remote/{kind}/{id}
	Back      string // the target's own page
	BackKey   string
	URL       string // the WebSocket path with a fresh ticket; "" when none was minted
	MintError string // why no ticket was minted, in words
	Label     string // the terminal's accessible name
	Reasons   string // JSON: reason → text, for the script
	Creds     *devgw.CredentialsView
}

// remotePath reads {kind} and {id}; an unknown kind is a missing page.
func remotePath(c *web.Ctx) (string, int64, error) {
	kind := c.R.PathValue("kind")
	if kind != devgw.KindNAS && kind != devgw.KindDevice {
		return "", 0, app.ErrNotFound()
	}
	id, err := c.ID("id")
	return kind, id, err
}

// remoteData builds the page: the credentials first (they authorise the
// caller for the target and answer 404 for one it cannot see), then, when
// mint is set, a ticket; a refused mint (no credentials, a cap reached, an
// address the gateway may not reach) is said on the page.
func (s *site) remoteData(c *web.Ctx, v *web.View, mint bool) (*remoteView, error) {
	kind, id, err := remotePath(c)
	if err != nil {
		return nil, err
	}
	ctx := c.R.Context()
	cr, err := devgw.GetCredentials(ctx, c.Actor, kind, id)
	if err != nil {
		return nil, err
	}
	d := &remoteView{Kind: kind, ID: id, Creds: cr, Base: fmt.Sprintf("/remote/%s/%d", kind, id)}
	if kind == devgw.KindNAS {
		d.Back, d.BackKey, v.Active = fmt.Sprintf("/nas/%d", id), "devgw.back_nas", "nas"
	} else {
		d.Back, d.BackKey, v.Active = fmt.Sprintf("/monitoring/devices/device/%d", id), "devgw.back_device", "monitoring"
	}
	if mint {
		tk, err := devgw.MintTicket(ctx, c.Actor, devgw.TicketInput{Kind: kind, ID: id})
		switch e := app.AsError(err); {
		case err == nil:
			d.URL, d.Name, d.Address = tk.URL, tk.Target.Name, tk.Target.Address
		case e != nil && (e.Status == http.StatusConflict || e.Status == http.StatusTooManyRequests || e.Status == http.StatusBadRequest):
			d.MintError = fmt.Sprintf(v.T("devgw.cannot_start"), remoteReasonText(v, e))
		default:
			return nil, err
		}
	}
	if d.Name == "" {
		d.Name, d.Address = s.remoteTargetName(c, v, kind, id)
	}
	d.Label = fmt.Sprintf(v.T("devgw.terminal_label"), d.Name)
	texts := make(map[string]string, len(remoteReasons))
	for _, r := range remoteReasons {
		if t := v.T("devgw.reason." + r); t != "devgw.reason."+r {
			texts[r] = t
		} else {
			texts[r] = web.Message(v.Lang, r, "")
		}
	}
	b, err := json.Marshal(texts)
	if err != nil {
		return nil, err
	}
	d.Reasons = string(b)
	v.Title = fmt.Sprintf(v.T("devgw.title"), d.Name)
	return d, nil
}

// remoteReasonText is a refusal in words: the page's own text for the
// gateway's reasons, else the API catalogue's message.
func remoteReasonText(v *web.View, e *app.Error) string {
	if t := v.T("devgw.reason." + e.Reason); t != "devgw.reason."+e.Reason {
		return t
	}
	return web.Message(v.Lang, e.Reason, e.Code)
}

// remoteTargetName names a target when no ticket told it: the NAS or the
// device through the pages the caller may read, else kind and number.
func (s *site) remoteTargetName(c *web.Ctx, v *web.View, kind string, id int64) (name, address string) {
	ctx := c.R.Context()
	switch {
	case kind == devgw.KindNAS && c.Actor.Can(aaa.PermNasIndex):
		if n, err := aaa.GetNAS(ctx, c.Actor, id); err == nil {
			return n.Name, n.IP
		}
	case kind == devgw.KindDevice && c.Actor.Can(monitoring.PermMonitoringView, monitoring.PermMapView):
		if d, err := monitoring.GetDevice(ctx, c.Actor, monitoring.KindDevice, id); err == nil {
			return d.Name, d.Address
		}
	}
	return fmt.Sprintf("%s %d", v.T("devgw.kind_"+kind), id), ""
}

func (s *site) pageRemote(c *web.Ctx) error {
	v := s.NewView(c, "console_sessions", "devgw.terminal")
	d, err := s.remoteData(c, v, true)
	if err != nil {
		return err
	}
	v.Data = d
	v.Form = remoteCredValues(d.Creds)
	return s.Render(c, http.StatusOK, "devgw_console", v)
}

// pageRemoteTicket mints a fresh ticket for the terminal's "Connect"
// button: JSON {url, expires_at}, or the refusal {reason, message} with
// its status.
func (s *site) pageRemoteTicket(c *web.Ctx) error {
	kind, id, err := remotePath(c)
	if err != nil {
		return err
	}
	h := c.W.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	tk, err := devgw.MintTicket(c.R.Context(), c.Actor, devgw.TicketInput{Kind: kind, ID: id})
	if err != nil {
		e := app.AsError(err)
		if e == nil || e.Status == http.StatusUnauthorized || e.Status >= 500 {
			h.Del("Content-Type")
			return err
		}
		v := s.NewView(c, "", "")
		c.W.WriteHeader(e.Status)
		return json.NewEncoder(c.W).Encode(map[string]string{"reason": e.Reason, "message": remoteReasonText(v, e)})
	}
	return json.NewEncoder(c.W).Encode(map[string]any{"url": tk.URL, "expires_at": tk.ExpiresAt})
}

// remoteCredValues fills the SSH access form (never a secret).
func remoteCredValues(cr *devgw.CredentialsView) url.Values {
	return url.Values{"port": {strconv.Itoa(cr.Port)}, "username": {cr.Username}}
}

// remoteCredInput maps the form onto the API's input: an empty secret
// keeps the stored one, the "remove" boxes clear it.
func remoteCredInput(f url.Values) (devgw.CredentialsInput, error) {
	in := devgw.CredentialsInput{Username: app.Opt[string]{Set: true, V: f.Get("username")}}
	if p := strings.TrimSpace(f.Get("port")); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return in, app.ErrValidation("invalid_port", "port")
		}
		in.Port = app.Opt[int]{Set: true, V: n}
	}
	if pw := f.Get("password"); pw != "" {
		in.Password = app.Opt[string]{Set: true, V: pw}
	} else if f.Get("clear_password") != "" {
		in.Password = app.Opt[string]{Set: true, Null: true}
	}
	if k := strings.TrimSpace(f.Get("private_key")); k != "" {
		in.PrivateKey = app.Opt[string]{Set: true, V: k + "\n"}
	} else if f.Get("clear_key") != "" {
		in.PrivateKey = app.Opt[string]{Set: true, Null: true}
	}
	return in, nil
}

func (s *site) pageRemoteCredentials(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	kind, id, err := remotePath(c)
	if err != nil {
		return err
	}
	in, err := remoteCredInput(c.R.PostForm)
	if err == nil {
		_, err = devgw.PutCredentials(c.R.Context(), c.Actor, kind, id, in)
	}
	if err != nil {
		v := s.NewView(c, "console_sessions", "devgw.terminal")
		d, derr := s.remoteData(c, v, false)
		if derr != nil {
			return derr
		}
		v.Data = d
		v.Form = url.Values{"port": {c.R.PostForm.Get("port")}, "username": {c.R.PostForm.Get("username")}}
		return s.FormError(c, "devgw_console", v, err)
	}
	s.SetFlash(c, s.NewView(c, "", "").T("devgw.saved"), false)
	return web.Redirect(c, fmt.Sprintf("/remote/%s/%d", kind, id))
}

func (s *site) pageRemoteAcceptKey(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	kind, id, err := remotePath(c)
	if err != nil {
		return err
	}
	v := s.NewView(c, "", "")
	_, err = devgw.AcceptHostKey(c.R.Context(), c.Actor, kind, id, devgw.AcceptHostKeyInput{Fingerprint: c.R.PostForm.Get("fingerprint")})
	if e := app.AsError(err); e != nil && (e.Status == http.StatusConflict || e.Status == http.StatusBadRequest) {
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
	} else if err != nil {
		return err
	} else {
		s.SetFlash(c, v.T("devgw.key_accepted"), false)
	}
	return web.Redirect(c, fmt.Sprintf("/remote/%s/%d", kind, id))
}

// consoleSessionsView is the sessions page's data.
type consoleSessionsView struct {
	State, Kind, Target, Manager, Q string
	Query                           string // the filters, to come back to
	Managers                        []managerOption
	Page                            app.Page[devgw.Session]
	Prev, Next                      string
	CanRecording                    bool
	AnyLive                         bool
}

type managerOption struct {
	ID   int64
	Name string
}

var consoleListParams = []string{"state", "kind", "target", "manager", "q"}

func (s *site) pageConsoleSessions(c *web.Ctx) error {
	v := s.NewView(c, "console_sessions", "menu.console_sessions")
	q := c.Query()
	d := &consoleSessionsView{State: q.Get("state"), Kind: q.Get("kind"), Target: q.Get("target"), Manager: q.Get("manager"), Q: q.Get("q"),
		CanRecording: c.Actor.Can(devgw.PermNasRemote)}
	v.Data = d
	keep := url.Values{}
	for _, k := range consoleListParams {
		if q.Get(k) != "" {
			keep.Set(k, q.Get(k))
		}
	}
	d.Query = keep.Encode()
	ctx := c.R.Context()
	// The manager filter offers the caller and, to a caller who may list
	// managers, the managers under it.
	d.Managers = []managerOption{{ID: c.Actor.ManagerID, Name: v.Username}}
	if ml, err := app.ParseList(url.Values{}, identity.ManagerListSpec()); err == nil && c.Actor.Can(identity.PermManagersIndex) {
		ml.PageSize = app.MaxPageSize
		mp, err := identity.ListManagers(ctx, c.Actor, ml)
		if err != nil {
			return err
		}
		for _, m := range mp.Rows {
			name := strings.TrimSpace(m.Firstname + " " + m.Lastname)
			switch {
			case m.Username != nil:
				name = *m.Username
			case m.Email != nil && name == "":
				name = *m.Email
			}
			d.Managers = append(d.Managers, managerOption{ID: m.ID, Name: name})
		}
	}
	api := url.Values{"q": {d.Q}, "page": {q.Get("page")}}
	for key, val := range map[string]string{"state": d.State, "kind": d.Kind, "target_id": d.Target, "manager_id": d.Manager} {
		if val != "" {
			api.Set("filter["+key+"]", val)
		}
	}
	lq, err := app.ParseList(api, devgw.SessionListSpec)
	if err == nil {
		d.Page, err = devgw.ListSessions(ctx, c.Actor, lq)
	}
	if e := app.AsError(err); e != nil && e.Status == http.StatusBadRequest {
		field := strings.TrimSuffix(strings.TrimPrefix(e.Field, "filter["), "]")
		switch field {
		case "target_id":
			field = "target"
		case "manager_id":
			field = "manager"
		}
		v.Errors[field] = web.Message(v.Lang, e.Reason, e.Code)
		return s.Render(c, refusedStatus(c), "devgw_sessions", v)
	}
	if err != nil {
		return err
	}
	for _, r := range d.Page.Rows {
		if r.State == devgw.StateLive {
			d.AnyLive = true
		}
	}
	d.Prev, d.Next = web.Pager("", keep, d.Page.Meta)
	return s.Render(c, http.StatusOK, "devgw_sessions", v)
}

// consoleBack is where a close goes back to: the list as it was filtered.
func consoleBack(f url.Values) string {
	back := backTo(f.Get("back"), "/console-sessions")
	if !strings.HasPrefix(back, "/console-sessions") {
		return "/console-sessions"
	}
	return back
}

func (s *site) pageConsoleClose(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	sid, err := c.ID("sid")
	if err != nil {
		return err
	}
	v := s.NewView(c, "", "")
	_, err = devgw.CloseSession(c.R.Context(), c.Actor, sid)
	if e := app.AsError(err); e != nil && e.Status == http.StatusConflict {
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
	} else if err != nil {
		return err
	} else {
		s.SetFlash(c, v.T("devgw.closed"), false)
	}
	return web.Redirect(c, consoleBack(c.R.PostForm))
}

func (s *site) pageConsoleBulkClose(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "", "")
	ids, err := formIDs(f)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		s.SetFlash(c, web.Message(v.Lang, "ids_required", app.CodeValidation), true)
		return web.Redirect(c, consoleBack(f))
	}
	res, err := devgw.BulkClose(c.R.Context(), c.Actor, app.BulkIDs{IDs: ids})
	if err != nil {
		return err
	}
	msg := fmt.Sprintf(v.T("devgw.closed_n"), len(res.Updated))
	if len(res.Failed) > 0 {
		msg += " " + fmt.Sprintf(v.T("devgw.failed_n"), len(res.Failed))
	}
	s.SetFlash(c, msg, len(res.Failed) > 0)
	return web.Redirect(c, consoleBack(f))
}

func (s *site) pageConsoleCloseAll(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	res, err := devgw.CloseAll(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	s.SetFlash(c, fmt.Sprintf(s.NewView(c, "", "").T("devgw.closed_n"), res.Closed), false)
	return web.Redirect(c, consoleBack(c.R.PostForm))
}
