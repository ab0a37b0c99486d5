package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/subs"
	"xr/app/tickets"
	"xr/web"
)

// Support ticket pages: the queue (filters, search, counts, bulk resolve
// and close), a new ticket, one ticket (its conversation with internal
// notes marked, reply or note with a canned reply, state actions, macros,
// assignment), and the helpdesk settings (categories, canned replies).
// Each calls the app/tickets function of its API row with that row's
// permission.
func (s *site) ticketPages() []web.Route {
	reply := []app.Perm{tickets.PermTicketsReply}
	return []web.Route{
		{M: "GET", P: "/tickets", Access: web.Staff, API: "GET /tickets", H: s.pageTickets, Menu: "tickets"},
		{M: "POST", P: "/tickets/bulk", Access: web.Staff, Perms: reply, H: s.pageTicketsBulk},
		{M: "GET", P: "/tickets/new", Access: web.Staff, Perms: reply, H: s.pageTicketNew},
		{M: "POST", P: "/tickets/new", Access: web.Staff, API: "POST /tickets", H: s.pageTicketCreate},
		{M: "GET", P: "/tickets/settings", Access: web.Staff, API: "GET /tickets/canned-replies", H: s.pageTicketSettings},
		{M: "POST", P: "/tickets/settings/categories", Access: web.Staff, API: "POST /tickets/categories", H: s.pageTicketCategoryCreate},
		{M: "POST", P: "/tickets/settings/canned", Access: web.Staff, API: "POST /tickets/canned-replies", H: s.pageTicketCannedCreate},
		{M: "GET", P: "/tickets/{id}", Access: web.Staff, API: "GET /tickets/{id}", H: s.pageTicket},
		{M: "GET", P: "/tickets/{id}/attachments/{attId}", Access: web.Staff, File: true, API: "GET /tickets/{id}/attachments/{attId}/download"},
		{M: "POST", P: "/tickets/{id}/reply", Access: web.Staff, API: "POST /tickets/{id}/messages", H: s.pageTicketReply},
		{M: "POST", P: "/tickets/{id}/state", Access: web.Staff, API: "POST /tickets/{id}/state", H: s.pageTicketState},
		{M: "POST", P: "/tickets/{id}/macro", Access: web.Staff, API: "POST /tickets/{id}/macros/{macroId}/apply", H: s.pageTicketMacro},
		{M: "POST", P: "/tickets/{id}/assign", Access: web.Staff, API: "POST /tickets/{id}/assign", H: s.pageTicketAssign},
	}
}

// ticketsView is the queue page's data.
type ticketsView struct {
	Q, State, Priority, Queue string
	Query                     string
	Counts                    *tickets.Counts
	States, Priorities        []string
	Page                      app.Page[tickets.Ticket]
	Prev, Next                string
	CanNew, CanBulk, CanCfg   bool
}

var ticketListParams = []string{"q", "state", "priority", "queue"}

func (s *site) pageTickets(c *web.Ctx) error {
	v := s.NewView(c, "tickets", "menu.tickets")
	q := c.Query()
	tv := &ticketsView{Q: q.Get("q"), State: q.Get("state"), Priority: q.Get("priority"), Queue: q.Get("queue"),
		States: tickets.States, Priorities: tickets.Priorities, CanNew: c.Actor.Can(tickets.PermTicketsReply),
		CanBulk: c.Actor.Can(tickets.PermTicketsReply), CanCfg: c.Actor.Can(tickets.PermTicketsConfig)}
	keep := url.Values{}
	for _, k := range ticketListParams {
		if q.Get(k) != "" {
			keep.Set(k, q.Get(k))
		}
	}
	tv.Query = keep.Encode()
	v.Data = tv
	counts, err := tickets.GetCounts(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	tv.Counts = counts
	api := url.Values{"q": {tv.Q}, "page": {q.Get("page")}, "sort": {"updated_at"}}
	if tv.State != "" {
		api.Set("filter[state]", tv.State)
	} else {
		api.Set("filter[state]", "new,open,pending,snoozed")
	}
	if tv.Priority != "" {
		api.Set("filter[priority]", tv.Priority)
	}
	switch tv.Queue {
	case "mine":
		api.Set("filter[assignee]", "me")
	case "unassigned":
		api.Set("filter[unassigned]", "true")
	case "breached":
		api.Set("filter[breached]", "true")
	}
	lq, err := app.ParseList(api, tickets.ListSpec())
	if err == nil {
		tv.Page, err = tickets.List(c.R.Context(), c.Actor, lq)
	}
	if e := app.AsError(err); e != nil && e.Status == http.StatusBadRequest {
		v.Errors[strings.TrimSuffix(strings.TrimPrefix(e.Field, "filter["), "]")] = web.Message(v.Lang, e.Reason, e.Code)
		return s.Render(c, refusedStatus(c), "tickets", v)
	}
	if err != nil {
		return err
	}
	tv.Prev, tv.Next = web.Pager("", keep, tv.Page.Meta)
	return s.Render(c, http.StatusOK, "tickets", v)
}

func formIDs(f url.Values) ([]int64, error) {
	var ids []int64
	for _, raw := range f["ids"] {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			return nil, app.ErrValidation("invalid_id", "ids")
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (s *site) pageTicketsBulk(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	back := backTo(f.Get("back"), "/tickets")
	v := s.NewView(c, "tickets", "menu.tickets")
	ids, err := formIDs(f)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		s.SetFlash(c, web.Message(v.Lang, "ids_required", app.CodeValidation), true)
		return web.Redirect(c, back)
	}
	var res app.BulkResult
	switch f.Get("action") {
	case "resolve":
		res, err = tickets.BulkResolve(c.R.Context(), c.Actor, app.BulkIDs{IDs: ids})
	case "close":
		res, err = tickets.BulkClose(c.R.Context(), c.Actor, app.BulkIDs{IDs: ids})
	default:
		return app.ErrValidation("invalid_enum", "action")
	}
	if err != nil {
		return err
	}
	msg := fmt.Sprintf(v.T("ticket.bulk_done"), len(res.Updated))
	if len(res.Failed) > 0 {
		msg += " " + fmt.Sprintf(v.T("ticket.bulk_failed"), len(res.Failed))
	}
	s.SetFlash(c, msg, len(res.Failed) > 0)
	return web.Redirect(c, back)
}

// ticketNewView is the new-ticket form's data.
type ticketNewView struct {
	Form *tickets.Form
}

func (s *site) ticketNewForm(c *web.Ctx, status int, v *web.View, err error) error {
	form, ferr := tickets.GetForm(c.R.Context(), c.Actor)
	if ferr != nil {
		return ferr
	}
	v.Data = &ticketNewView{Form: form}
	if err != nil {
		return s.FormError(c, "ticket_new", v, err)
	}
	return s.Render(c, status, "ticket_new", v)
}

func (s *site) pageTicketNew(c *web.Ctx) error {
	v := s.NewView(c, "tickets", "ticket.new")
	v.Form = url.Values{"priority": {"normal"}}
	return s.ticketNewForm(c, http.StatusOK, v, nil)
}

func (s *site) pageTicketCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "tickets", "ticket.new")
	v.Form = f
	in := tickets.CreateInput{Subject: f.Get("subject"), Body: f.Get("body"), Priority: tickets.Priority(f.Get("priority")),
		RequesterEmail: f.Get("requester_email")}
	if !tkOneOf(string(in.Priority), tickets.Priorities) {
		return s.ticketNewForm(c, http.StatusBadRequest, v, app.ErrValidation("invalid_enum", "priority"))
	}
	if raw := strings.TrimSpace(f.Get("username")); raw != "" {
		uid, err := ticketUserID(c, raw)
		if err != nil {
			return s.ticketNewForm(c, http.StatusBadRequest, v, err)
		}
		in.UserID = &uid
	}
	if raw := f.Get("category_id"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return s.ticketNewForm(c, http.StatusBadRequest, v, app.ErrValidation("invalid_category", "category_id"))
		}
		in.CategoryID = &id
	}
	d, err := tickets.Create(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.ticketNewForm(c, http.StatusBadRequest, v, err)
	}
	s.SetFlash(c, fmt.Sprintf(v.T("ticket.created"), d.Number), false)
	return web.Redirect(c, fmt.Sprintf("/tickets/%d", d.ID))
}

// ticketUserID finds a subscriber by username within the caller's scope
// (the app function checks the scope again).
func ticketUserID(c *web.Ctx, username string) (int64, error) {
	u, err := subs.ReadName(c.R.Context(), c.Tenant.DB.R, username)
	if err != nil {
		return 0, app.ErrValidation("invalid_subscriber", "username")
	}
	return u.ID, nil
}

// ticketView is one ticket page's data.
type ticketView struct {
	T         *tickets.Detail
	Canned    []tickets.CannedReply
	Macros    []tickets.Macro
	Assignees []tickets.Assignee
	Actions   []string
	CanReply  bool
	CanAssign bool
	SnoozeMin string
}

func (s *site) ticketPage(c *web.Ctx, id int64, status int, v *web.View, err error) error {
	d, gerr := tickets.Get(c.R.Context(), c.Actor, id)
	if gerr != nil {
		return gerr
	}
	tv := &ticketView{T: d, CanReply: c.Actor.Can(tickets.PermTicketsReply), CanAssign: c.Actor.Can(tickets.PermTicketsAssign),
		SnoozeMin: time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04")}
	for _, a := range tickets.StateActions {
		if a == tickets.ActSnooze {
			continue
		}
		if _, terr := tickets.Transition(d.State, a, tickets.Move{}); terr == nil {
			tv.Actions = append(tv.Actions, a)
		}
	}
	// An agent uses canned replies and macros without prm_tickets_config
	// (which edits them).
	if tv.CanReply {
		tools, gerr := tickets.GetReplyTools(c.R.Context(), c.Actor)
		if gerr != nil {
			return gerr
		}
		tv.Canned, tv.Macros = tools.Canned, tools.Macros
	}
	if tv.CanAssign {
		if tv.Assignees, gerr = tickets.ListAssignees(c.R.Context(), c.Actor); gerr != nil {
			return gerr
		}
	}
	v.Title = d.Number + " · " + d.Subject
	v.Data = tv
	if err != nil {
		return s.FormError(c, "ticket", v, err)
	}
	return s.Render(c, status, "ticket", v)
}

func (s *site) pageTicket(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v := s.NewView(c, "tickets", "menu.tickets")
	v.Form = url.Values{}
	return s.ticketPage(c, id, http.StatusOK, v, nil)
}

func (s *site) pageTicketReply(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "tickets", "menu.tickets")
	v.Form = f
	in := tickets.ReplyInput{Body: f.Get("body"), Internal: f.Get("internal") == "1", State: f.Get("then")}
	if raw := f.Get("canned_reply_id"); raw != "" {
		cid, perr := strconv.ParseInt(raw, 10, 64)
		if perr != nil {
			return s.ticketPage(c, id, http.StatusBadRequest, v, app.ErrValidation("invalid_canned_reply", "canned_reply_id"))
		}
		in.CannedReplyID = &cid
	}
	if _, err := tickets.Reply(c.R.Context(), c.Actor, id, in); err != nil {
		return s.ticketPage(c, id, http.StatusBadRequest, v, err)
	}
	key := "ticket.replied"
	if in.Internal {
		key = "ticket.noted"
	}
	s.SetFlash(c, v.T(key), false)
	return web.Redirect(c, fmt.Sprintf("/tickets/%d", id))
}

func (s *site) pageTicketState(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "tickets", "menu.tickets")
	in := tickets.StateInput{Action: f.Get("action")}
	if raw := f.Get("until"); raw != "" {
		t, perr := time.ParseInLocation("2006-01-02T15:04", raw, v.Loc)
		if perr != nil {
			return s.ticketPage(c, id, http.StatusBadRequest, v, app.ErrValidation("until_required", "until"))
		}
		in.Until = app.DateOrTime{Time: app.T(t)}
	}
	if _, err := tickets.ChangeState(c.R.Context(), c.Actor, id, in); err != nil {
		return s.ticketPage(c, id, http.StatusConflict, v, err)
	}
	s.SetFlash(c, v.T("ticket.moved"), false)
	return web.Redirect(c, fmt.Sprintf("/tickets/%d", id))
}

func (s *site) pageTicketMacro(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "tickets", "menu.tickets")
	mid, err := strconv.ParseInt(c.R.PostForm.Get("macro_id"), 10, 64)
	if err != nil {
		return s.ticketPage(c, id, http.StatusBadRequest, v, app.ErrValidation("invalid_enum", "macro_id"))
	}
	if _, err := tickets.ApplyMacro(c.R.Context(), c.Actor, id, mid); err != nil {
		return s.ticketPage(c, id, http.StatusBadRequest, v, err)
	}
	s.SetFlash(c, v.T("ticket.macro_applied"), false)
	return web.Redirect(c, fmt.Sprintf("/tickets/%d", id))
}

func (s *site) pageTicketAssign(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "tickets", "menu.tickets")
	in := tickets.AssignInput{AssigneeID: app.Opt[int64]{Set: true, Null: true}}
	if raw := c.R.PostForm.Get("assignee_id"); raw != "" {
		aid, perr := strconv.ParseInt(raw, 10, 64)
		if perr != nil {
			return s.ticketPage(c, id, http.StatusBadRequest, v, app.ErrValidation("invalid_assignee", "assignee_id"))
		}
		in.AssigneeID = app.Opt[int64]{Set: true, V: aid}
	}
	if _, err := tickets.Assign(c.R.Context(), c.Actor, id, in); err != nil {
		return s.ticketPage(c, id, http.StatusBadRequest, v, err)
	}
	s.SetFlash(c, v.T("ticket.assigned"), false)
	return web.Redirect(c, fmt.Sprintf("/tickets/%d", id))
}

// ticketSettingsView is the settings page's data.
type ticketSettingsView struct {
	Categories []tickets.Category
	Canned     []tickets.CannedReply
	Macros     []tickets.Macro
	Variables  []string
}

func (s *site) ticketSettings(c *web.Ctx, status int, v *web.View, err error) error {
	d := &ticketSettingsView{Variables: tickets.Variables}
	var lerr error
	if d.Categories, lerr = tickets.ListCategories(c.R.Context(), c.Actor); lerr != nil {
		return lerr
	}
	if d.Canned, lerr = tickets.ListCanned(c.R.Context(), c.Actor); lerr != nil {
		return lerr
	}
	if d.Macros, lerr = tickets.ListMacros(c.R.Context(), c.Actor); lerr != nil {
		return lerr
	}
	v.Data = d
	if err != nil {
		return s.FormError(c, "ticket_settings", v, err)
	}
	return s.Render(c, status, "ticket_settings", v)
}

func (s *site) pageTicketSettings(c *web.Ctx) error {
	return s.ticketSettings(c, http.StatusOK, s.NewView(c, "tickets", "ticket.settings"), nil)
}

func (s *site) pageTicketCategoryCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "tickets", "ticket.settings")
	v.Form = f
	in := tickets.CategoryInput{Name: app.Opt[string]{Set: true, V: f.Get("name")}, Description: app.Opt[string]{Set: true, V: f.Get("description")},
		Portal: app.Opt[bool]{Set: true, V: f.Get("portal") == "1"}}
	if _, err := tickets.CreateCategory(c.R.Context(), c.Actor, in); err != nil {
		return s.ticketSettings(c, http.StatusBadRequest, v, err)
	}
	s.SetFlash(c, v.T("ticket.category_created"), false)
	return web.Redirect(c, "/tickets/settings")
}

func (s *site) pageTicketCannedCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "tickets", "ticket.settings")
	v.Form = f
	if _, err := tickets.CreateCanned(c.R.Context(), c.Actor, tickets.CannedInput{Title: f.Get("title"), Body: f.Get("canned_body")}); err != nil {
		if e := app.AsError(err); e != nil && e.Field == "body" {
			e.Field = "canned_body"
		}
		return s.ticketSettings(c, http.StatusBadRequest, v, err)
	}
	s.SetFlash(c, v.T("ticket.canned_created"), false)
	return web.Redirect(c, "/tickets/settings")
}

func tkOneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if a == v {
			return true
		}
	}
	return false
}
