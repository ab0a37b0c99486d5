package console

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"xr/app"
	"xr/app/dataimport"
	"xr/web"
)

// Data import pages: upload a CSV or XLSX of subscribers, check it (the
// dry run: preview and every error with its line and column) or import it
// as a job, and follow a job (progress, counts, line results, cancel).
// The same app/dataimport functions as /admin/import/*.
func (s *site) dataimportPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/imports", Access: web.Staff, API: "GET /admin/import/jobs", H: s.pageImports, Menu: "imports"},
		{M: "POST", P: "/imports/validate", Access: web.Staff, API: "POST /admin/import/validate", File: true, H: s.pageImportValidate},
		{M: "POST", P: "/imports", Access: web.Staff, API: "POST /admin/import/jobs", File: true, H: s.pageImportCreate},
		{M: "GET", P: "/imports/{id}", Access: web.Staff, API: "GET /admin/import/jobs/{id}", H: s.pageImport},
		{M: "POST", P: "/imports/{id}/cancel", Access: web.Staff, API: "POST /admin/import/jobs/{id}/cancel", H: s.pageImportCancel},
	}
}

// importsView is the upload page: the form, the recent imports and, after
// a check, its report.
type importsView struct {
	Jobs []dataimport.Job
	// Kinds are the kinds the chooser offers; Fields those of Kind (the
	// chosen one, ?kind= or the form's).
	Kinds  []dataimport.Kind
	Kind   string
	Fields []dataimport.Field
	Report *dataimport.Report
	// Msg is a reason in the page's language.
	Msg func(reason string) string
}

func (s *site) importsPage(c *web.Ctx, status int, v *web.View, rep *dataimport.Report, ferr error) error {
	d := &importsView{Report: rep, Msg: func(r string) string { return web.Message(v.Lang, r, "") }}
	v.Data = d
	lq, err := app.ParseList(url.Values{"page_size": {"20"}}, dataimport.ListSpec())
	if err != nil {
		return err
	}
	page, err := dataimport.ListJobs(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	d.Jobs = page.Rows
	kinds, err := dataimport.Fields(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	d.Kinds, d.Kind, d.Fields = kinds, kinds[0].Kind, kinds[0].Fields
	want := v.Form.Get("kind")
	if want == "" {
		want = c.Query().Get("kind")
	}
	for _, k := range kinds {
		if k.Kind == want {
			d.Kind, d.Fields = k.Kind, k.Fields
		}
	}
	if ferr != nil {
		return s.FormError(c, "dataimport", v, ferr)
	}
	return s.Render(c, status, "dataimport", v)
}

func (s *site) pageImports(c *web.Ctx) error {
	return s.importsPage(c, http.StatusOK, s.NewView(c, "imports", "menu.imports"), nil, nil)
}

// pageUpload reads the page's multipart form (the options, then the file),
// keeps the options on the view for a refused form, and calls do.
func pageUpload(c *web.Ctx, v *web.View, do func(name string, src io.Reader, sp dataimport.Spec) error) error {
	name, src, fields, sp, err := web.ImportUpload(c)
	for k, val := range fields {
		v.Form.Set(k, val)
	}
	if err != nil {
		return err
	}
	return do(name, src, sp)
}

func (s *site) pageImportValidate(c *web.Ctx) error {
	v := s.NewView(c, "imports", "menu.imports")
	var rep *dataimport.Report
	err := pageUpload(c, v, func(name string, src io.Reader, sp dataimport.Spec) error {
		var err error
		rep, err = dataimport.ValidateUpload(c.R.Context(), c.Actor, name, src, sp)
		return err
	})
	return s.importsPage(c, http.StatusOK, v, rep, err)
}

func (s *site) pageImportCreate(c *web.Ctx) error {
	v := s.NewView(c, "imports", "menu.imports")
	var j *dataimport.Job
	err := pageUpload(c, v, func(name string, src io.Reader, sp dataimport.Spec) error {
		var err error
		j, err = dataimport.CreateJob(c.R.Context(), c.Actor, name, src, sp)
		return err
	})
	if err != nil {
		return s.importsPage(c, http.StatusOK, v, nil, err)
	}
	return web.Redirect(c, fmt.Sprintf("/imports/%d", j.ID))
}

// importView is one import's page.
type importView struct {
	J           *dataimport.Job
	ProgressURL string
	Running     bool
	Msg         func(reason string) string
}

func (s *site) pageImport(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	j, err := dataimport.GetJob(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "imports", "menu.imports")
	d := &importView{J: j, Running: j.State == "queued" || j.State == "running", Msg: func(r string) string { return web.Message(v.Lang, r, "") }}
	if d.Running && j.JobID != nil {
		d.ProgressURL = jobProgressURL(*j.JobID, fmt.Sprintf("/imports/%d", j.ID), "import.show_result")
	}
	v.Data = d
	return s.Render(c, http.StatusOK, "dataimport_job", v)
}

func (s *site) pageImportCancel(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if _, err := dataimport.CancelJob(c.R.Context(), c.Actor, id); err != nil {
		e := app.AsError(err)
		if e == nil || e.Status >= 500 || e.Status == http.StatusNotFound || e.Status == http.StatusForbidden {
			return err
		}
		v := s.NewView(c, "imports", "menu.imports")
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, fmt.Sprintf("/imports/%d", id))
	}
	v := s.NewView(c, "imports", "menu.imports")
	s.SetFlash(c, v.T("import.cancel_asked"), false)
	return web.Redirect(c, fmt.Sprintf("/imports/%d", id))
}

// legacyPages are the legacy-system imports: upload a FreeRADIUS dump or a
// MikroTik export, review its analysis, start it, follow it.
func (s *site) legacyPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/legacy-imports", Access: web.Staff, API: "GET /admin/legacy/import/jobs", H: s.pageLegacyImports, Menu: "legacy_imports"},
		{M: "POST", P: "/legacy-imports", Access: web.Staff, API: "POST /admin/legacy/import/jobs", File: true, H: s.pageLegacyCreate},
		{M: "GET", P: "/legacy-imports/{id}", Access: web.Staff, API: "GET /admin/legacy/import/jobs/{id}", H: s.pageLegacyImport},
		{M: "POST", P: "/legacy-imports/{id}/start", Access: web.Staff, API: "POST /admin/legacy/import/jobs/{id}/start", H: s.pageLegacyStart},
	}
}

// legacyListView is the legacy imports page.
type legacyListView struct {
	Jobs []dataimport.Job
}

func (s *site) legacyListPage(c *web.Ctx, v *web.View, ferr error) error {
	lq, err := app.ParseList(url.Values{"page_size": {"20"}}, dataimport.ListSpec())
	if err != nil {
		return err
	}
	page, err := dataimport.ListLegacyJobs(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	v.Data = &legacyListView{Jobs: page.Rows}
	if ferr != nil {
		return s.FormError(c, "dataimport_legacy", v, ferr)
	}
	return s.Render(c, http.StatusOK, "dataimport_legacy", v)
}

func (s *site) pageLegacyImports(c *web.Ctx) error {
	return s.legacyListPage(c, s.NewView(c, "legacy_imports", "menu.legacy_imports"), nil)
}

func (s *site) pageLegacyCreate(c *web.Ctx) error {
	v := s.NewView(c, "legacy_imports", "menu.legacy_imports")
	name, src, in, err := web.LegacyUpload(c)
	if err != nil {
		return s.legacyListPage(c, v, err)
	}
	v.Form.Set("source", in.Source)
	j, err := dataimport.CreateLegacyJob(c.R.Context(), c.Actor, name, src, in)
	if err != nil {
		return s.legacyListPage(c, v, err)
	}
	return web.Redirect(c, fmt.Sprintf("/legacy-imports/%d", j.ID))
}

// legacyView is one legacy import's page.
type legacyView struct {
	J           *dataimport.Job
	A           *dataimport.Analysis
	ProgressURL string
	Msg         func(reason string) string
}

func (s *site) legacyPage(c *web.Ctx, v *web.View, id int64, ferr error) error {
	j, err := dataimport.GetLegacyJob(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	d := &legacyView{J: j, Msg: func(r string) string { return web.Message(v.Lang, r, "") }}
	if len(j.Analysis) > 2 {
		d.A = &dataimport.Analysis{}
		if err := json.Unmarshal(j.Analysis, d.A); err != nil {
			return err
		}
	}
	if (j.State == "analysing" || j.State == "queued" || j.State == "running") && j.JobID != nil {
		d.ProgressURL = jobProgressURL(*j.JobID, fmt.Sprintf("/legacy-imports/%d", j.ID), "import.show_result")
	}
	v.Data = d
	if ferr != nil {
		return s.FormError(c, "dataimport_legacy_job", v, ferr)
	}
	return s.Render(c, http.StatusOK, "dataimport_legacy_job", v)
}

func (s *site) pageLegacyImport(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	return s.legacyPage(c, s.NewView(c, "legacy_imports", "menu.legacy_imports"), id, nil)
}

func (s *site) pageLegacyStart(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "legacy_imports", "menu.legacy_imports")
	v.Form = f
	in := dataimport.StartInput{OnDuplicate: f.Get("on_duplicate"), Parent: f.Get("parent"), Partial: f.Get("partial") != ""}
	if f.Get("sessions_asked") != "" { // the form offered the session history
		on := f.Get("sessions") != ""
		in.Sessions = &on
	}
	if _, err := dataimport.StartLegacyJob(c.R.Context(), c.Actor, id, in); err != nil {
		return s.legacyPage(c, v, id, err)
	}
	return web.Redirect(c, fmt.Sprintf("/legacy-imports/%d", id))
}
