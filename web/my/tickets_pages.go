package my

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/tickets"
	"xr/web"
)

// Subscriber ticket pages under /my/tickets: the list, a new ticket with
// its category's form, the thread with a reply and an attachment. Each
// calls the tickets area's portal function of its API row.
func (s *site) myTicketPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/my/tickets", Access: web.Subscriber, API: "GET /portal/tickets", H: s.pageMyTickets},
		{M: "GET", P: "/my/tickets/new", Access: web.Subscriber, API: "GET /portal/tickets/form", H: s.pageMyTicketNew},
		{M: "POST", P: "/my/tickets", Access: web.Subscriber, API: "POST /portal/tickets", H: s.pageMyTicketCreate},
		{M: "GET", P: "/my/tickets/{id}", Access: web.Subscriber, API: "GET /portal/tickets/{id}", H: s.pageMyTicket},
		{M: "POST", P: "/my/tickets/{id}/reply", Access: web.Subscriber, API: "POST /portal/tickets/{id}/messages", File: true, H: s.pageMyTicketReply},
		{M: "GET", P: "/my/tickets/{id}/attachments/{attId}", Access: web.Subscriber, File: true, API: "GET /portal/tickets/{id}/attachments/{attId}"},
	}
}

func (s *site) pageMyTickets(c *web.Ctx) error {
	lq, err := app.ParseList(url.Values{"page_size": {"50"}}, tickets.PortalSpec())
	if err != nil {
		return err
	}
	page, err := tickets.PortalList(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	v := s.NewView(c, "tickets", "my.tickets_title")
	v.Data = page.Rows
	return s.Render(c, http.StatusOK, "tickets", v)
}

type myTicketForm struct {
	Categories []tickets.Category
	FieldsFor  string // "Details for %s"
}

func (s *site) myTicketNewPage(c *web.Ctx, v *web.View, status int, err error) error {
	form, ferr := tickets.PortalForm(c.R.Context(), c.Actor)
	if ferr != nil {
		return ferr
	}
	v.Data = &myTicketForm{Categories: form.Categories, FieldsFor: v.T("my.tk_fields_for")}
	if err != nil {
		return s.FormError(c, "ticket_new", v, err)
	}
	return s.Render(c, status, "ticket_new", v)
}

func (s *site) pageMyTicketNew(c *web.Ctx) error {
	return s.myTicketNewPage(c, s.NewView(c, "tickets", "my.ticket_new"), http.StatusOK, nil)
}

func (s *site) pageMyTicketCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "tickets", "my.ticket_new")
	v.Form = f
	in := tickets.PortalCreateInput{Subject: strings.TrimSpace(f.Get("subject")), Body: f.Get("body"), CustomFields: map[string]json.RawMessage{}}
	if raw := f.Get("category_id"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return s.myTicketNewPage(c, v, http.StatusBadRequest, app.ErrValidation("invalid_type", "category_id"))
		}
		in.CategoryID = &id
		// Only the chosen category's fields are sent: cf_<category>_<name>.
		prefix := "cf_" + raw + "_"
		for k, vals := range f {
			if name, ok := strings.CutPrefix(k, prefix); ok && len(vals) > 0 {
				b, err := json.Marshal(vals[0])
				if err != nil {
					return err
				}
				in.CustomFields[name] = b
			}
		}
	}
	out, err := tickets.PortalCreate(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.myTicketNewPage(c, v, http.StatusBadRequest, err)
	}
	s.SetFlash(c, v.T("my.tk_sent"), false)
	return web.Redirect(c, myPrefix+"tickets/"+strconv.FormatInt(out.ID, 10))
}

func (s *site) myTicketPage(c *web.Ctx, v *web.View, status int, err error) error {
	id, ierr := c.ID("id")
	if ierr != nil {
		return ierr
	}
	k, gerr := tickets.PortalGet(c.R.Context(), c.Actor, id)
	if gerr != nil {
		return gerr
	}
	v.Data = k
	v.Title = k.Subject
	if err != nil {
		return s.FormError(c, "ticket", v, err)
	}
	return s.Render(c, status, "ticket", v)
}

func (s *site) pageMyTicket(c *web.Ctx) error {
	return s.myTicketPage(c, s.NewView(c, "tickets", "my.tickets_title"), http.StatusOK, nil)
}

// pageMyTicketReply reads the multipart form in order (the text field
// comes before the file input) and attaches the file, if any, to the reply.
func (s *site) pageMyTicketReply(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	ctx := c.R.Context()
	v := s.NewView(c, "tickets", "my.tickets_title")
	fail := func(err error) error { return s.myTicketPage(c, v, http.StatusBadRequest, err) }
	max, err := tickets.SettingTicketsAttachmentMax.Get(ctx, c.Tenant.DB.R)
	if err != nil {
		return err
	}
	c.R.Body = http.MaxBytesReader(c.W, c.R.Body, max+64<<10)
	ct, _, _ := mime.ParseMediaType(c.R.Header.Get("Content-Type"))
	if !strings.HasPrefix(ct, "multipart/") {
		return fail(app.ErrValidation("malformed_multipart", "file"))
	}
	mr, err := c.R.MultipartReader()
	if err != nil {
		return fail(app.ErrValidation("malformed_multipart", "file"))
	}
	in := tickets.PortalReplyInput{}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(web.UploadReadError(err))
		}
		switch {
		case p.FormName() == "body":
			b, err := io.ReadAll(io.LimitReader(p, 64<<10))
			if err != nil {
				return fail(web.UploadReadError(err))
			}
			in.Body = string(b)
			v.Form.Set("body", in.Body)
		case p.FormName() == "file" && p.FileName() != "":
			if strings.TrimSpace(in.Body) == "" {
				return fail(app.ErrValidation("body_required", "body"))
			}
			att, err := tickets.PortalAttach(ctx, c.Actor, id, p.FileName(), p)
			if err != nil {
				return fail(err)
			}
			in.AttachmentIDs = append(in.AttachmentIDs, att.ID)
		}
	}
	if _, err := tickets.PortalReply(ctx, c.Actor, id, in); err != nil {
		return fail(err)
	}
	s.SetFlash(c, v.T("my.tk_sent"), false)
	return web.Redirect(c, myPrefix+"tickets/"+strconv.FormatInt(id, 10))
}
