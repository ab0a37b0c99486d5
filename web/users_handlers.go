package web

import (
	"mime"
	"net/http"
	"os"
	"strconv"

	"xr/app"
	"xr/app/subs"
)

// Subscribers: the handlers that do more than an adapter (web/adapters.go).

// resolveUser is GET /users/resolve?code=TOKEN.
func (s *Server) resolveUser(c *Ctx) error {
	out, err := subs.Resolve(c.R.Context(), c.Actor, c.Query().Get("code"))
	if err != nil {
		return err
	}
	return c.OK(out)
}

// purchasableAddons is GET /addons[?user_id=N]: the enabled add-ons, those
// allowed on that subscriber's plan when user_id is given.
func (s *Server) purchasableAddons(c *Ctx) error {
	var uid int64
	if v := c.Query().Get("user_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return app.ErrValidation("invalid_value", "user_id")
		}
		uid = n
	}
	out, err := subs.PurchasableAddons(c.R.Context(), c.Actor, uid)
	if err != nil {
		return err
	}
	return oneList(c, out)
}

// createExport is POST /exports: 202 with the queued job, 200 with
// replay true when the request_id was seen.
func (s *Server) createExport(c *Ctx) error {
	var in subs.ExportInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := subs.CreateExport(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	if out.Replay {
		return c.OK(out)
	}
	return c.Accepted(out)
}

// downloadExport is GET /exports/{id}/download: the file itself.
func (s *Server) downloadExport(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	f, err := subs.OpenExport(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return err
	}
	defer fh.Close()
	h := c.W.Header()
	h.Set("Content-Type", f.ContentType)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(c.W, c.R, f.Name, f.ModTime, fh)
	return nil
}

// listForms is GET /admin/forms[?filter[form_name]=user]: every custom
// field definition, in form order (one page).
func (s *Server) listForms(c *Ctx) error {
	form := c.Query().Get("filter[form_name]")
	if form == "" {
		form = c.Query().Get("form_name")
	}
	out, err := subs.ListFormFields(c.R.Context(), c.Actor, form)
	if err != nil {
		return err
	}
	return oneList(c, out)
}

// formSchema is GET /admin/forms/{form_name}/schema.
func (s *Server) formSchema(c *Ctx) error {
	out, err := subs.GetFormSchema(c.R.Context(), c.Actor, c.R.PathValue("form_name"))
	if err != nil {
		return err
	}
	return c.OK(out)
}
