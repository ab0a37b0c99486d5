package web

import (
	"xr/app/subs"
)

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
