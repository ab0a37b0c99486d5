package web

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"

	"xr/app"
	"xr/app/dataimport"
)

// dataimportRoutes are the data import (/admin/import/*) and the
// legacy-system import and export (/admin/legacy/*).
func (s *Server) dataimportRoutes() []Route {
	imp := []app.Perm{dataimport.PermToolsImport}
	leg := []app.Perm{dataimport.PermToolsLegacyImport}
	fileReasons := []string{"400 file_required", "400 filename_required", "400 malformed_multipart", "400 file_too_large", "400 file_empty",
		"400 file_type_not_allowed", "400 file_extension_mismatch", "400 header_required", "400 malformed_csv", "400 malformed_xlsx",
		"400 unknown_column", "400 unknown_field", "400 mapping_required", "400 invalid_enum", "400 invalid_parent_id",
		"400 profile_not_assignable", "400 invalid_mapping", "400 invalid_series", "409 card_batch_not_ready", "409 card_batch_suspended",
		"400 archive_too_large", "400 too_many_rows", "400 too_many_cells", "400 line_too_long", "400 cell_too_large", "400 invalid_encoding", "400 unsupported_encoding"}
	return []Route{
		{M: "GET", P: "/admin/import/fields", Access: Staff, Perms: imp, H: allCall(dataimport.Fields), Resp: dataimport.Kind{}, List: true,
			Summary: "per kind (subscribers, nas, managers, cards into an existing series, device coordinates) the importable fields: type, required, format, example and the column names recognised (English and Arabic)"},
		{M: "POST", P: "/admin/import/validate", Access: Staff, File: true, Perms: imp, Buckets: []string{"t_heavy"}, H: s.validateImport,
			Req: dataimport.Spec{}, Resp: dataimport.Report{}, Reasons: fileReasons,
			Summary: "dry run of a CSV or XLSX upload (multipart: the spec's fields, then the file): row count, a preview of the first rows as stored, every error with line, column and reason; nothing written"},
		{M: "GET", P: "/admin/import/jobs", Access: Staff, Perms: imp, H: listCall(dataimport.ListSpec(), dataimport.ListJobs), Resp: dataimport.Job{}, List: true,
			Summary: "the data imports of the caller's subtree"},
		{M: "POST", P: "/admin/import/jobs", Access: Staff, File: true, Perms: imp, Buckets: []string{"t_heavy"}, H: s.createImportJob,
			Req: dataimport.Spec{}, Resp: dataimport.Job{}, Status: 202, Reasons: fileReasons,
			Summary: "import a CSV or XLSX as a job: every row validated first (nothing written when one is refused, unless partial), then written in chunks of 500 rows, one transaction each; resumable after a crash"},
		{M: "GET", P: "/admin/import/jobs/{id}", Access: Staff, Perms: imp, H: idCall(dataimport.GetJob), Resp: dataimport.Job{},
			Reasons: []string{"404 not_found"}, Summary: "an import with its counts and the result of every line not simply created (the first 1,000)"},
		{M: "GET", P: "/admin/import/jobs/{id}/errors.csv", Access: Staff, Perms: imp, H: s.importErrorsCSV, Content: "text/csv",
			Reasons: []string{"404 not_found"}, Summary: "the downloadable report: every line result of an import as CSV (line, outcome, field, column, reason, username)"},
		{M: "POST", P: "/admin/import/jobs/{id}/cancel", Access: Staff, Perms: imp, H: idCall(dataimport.CancelJob), Resp: dataimport.Job{},
			Reasons: []string{"404 not_found", "409 job_not_cancellable"},
			Summary: "cancel an import: a queued one at once, a running one after its current chunk (what was committed stays and is reported)"},

		{M: "GET", P: "/admin/legacy/export", Access: Staff, File: true, Perms: []app.Perm{dataimport.PermToolsLegacyExport}, H: s.legacyExport,
			Content: "application/*", Reasons: []string{"400 invalid_enum"}, // application/sql, or application/zip for format=csv
			Summary: "the caller's subscribers and their plans in the FreeRADIUS SQL schema (?format=mysql|postgresql), streamed; ?format=csv: the reseller-panel CSV set (a zip of managers, profiles, users, series and cards CSV files) that imports back"},
		{M: "GET", P: "/admin/legacy/import/jobs", Access: Staff, Perms: leg, H: listCall(dataimport.ListSpec(), dataimport.ListLegacyJobs),
			Resp: dataimport.Job{}, List: true, Summary: "the legacy imports of the caller's subtree"},
		{M: "POST", P: "/admin/legacy/import/jobs", Access: Staff, File: true, Perms: leg, Buckets: []string{"t_heavy"}, H: s.createLegacyJob,
			Req: dataimport.LegacyInput{}, Resp: dataimport.Job{}, Status: 202,
			Reasons: []string{"400 file_required", "400 filename_required", "400 malformed_multipart", "400 file_too_large", "400 file_empty",
				"400 file_type_not_allowed", "400 file_extension_mismatch", "400 invalid_enum", "400 upload_not_csv", "400 duplicate_file_name",
				"400 too_many_files", "400 archive_too_large"},
			Summary: "upload a FreeRADIUS SQL dump or its tables as CSV files, a MikroTik /ppp secret or User Manager export, or the reseller-panel CSV set (multipart: source, then the file, or several CSV files, stored as one zip; or a zip of them): a job analyses it; start it after review"},
		{M: "POST", P: "/admin/legacy/import/jobs/bulk-delete", Access: Staff, Perms: leg, H: bodyCall(dataimport.BulkDeleteLegacyJobs),
			Req: app.BulkIDs{}, Resp: app.BulkResult{}, Reasons: []string{"400 ids_required", "400 too_many_ids", "400 invalid_id"},
			Summary: "delete finished legacy imports and their files"},
		{M: "DELETE", P: "/admin/legacy/import/jobs/{id}", Access: Staff, Perms: leg, H: idAction(dataimport.DeleteLegacyJob),
			Reasons: []string{"404 not_found", "409 job_running"}, Summary: "delete a legacy import and its file (what it imported stays)"},
		{M: "GET", P: "/admin/legacy/import/jobs/{id}", Access: Staff, Perms: leg, H: idCall(dataimport.GetLegacyJob), Resp: dataimport.Job{},
			Reasons: []string{"404 not_found"}, Summary: "a legacy import: its analysis (counts, plans, passwords, what cannot be mapped and why) and its outcome"},
		{M: "POST", P: "/admin/legacy/import/jobs/{id}/cancel", Access: Staff, Perms: leg, H: idCall(dataimport.CancelLegacyJob), Resp: dataimport.Job{},
			Reasons: []string{"404 not_found", "409 job_not_cancellable"}, Summary: "cancel a legacy import (a running one after its current chunk)"},
		{M: "POST", P: "/admin/legacy/import/jobs/{id}/start", Access: Staff, Perms: leg, Buckets: []string{"t_heavy"}, H: idBodyCall(dataimport.StartLegacyJob),
			Req: dataimport.StartInput{}, Resp: dataimport.Job{}, Reasons: []string{"404 not_found", "409 job_not_analysed", "400 invalid_enum", "400 invalid_parent_id"},
			Summary: "start an analysed legacy import: plans, NAS, then the subscribers in chunks"},
	}
}

// importSpec reads an import's spec from the multipart fields sent before
// the file (or the query string of a raw body): kind, mapping (a JSON
// object field → column), on_duplicate, parent, plan, password_policy,
// partial.
func importSpec(c *Ctx, fields map[string]string) (dataimport.Spec, error) {
	get := func(k string) string {
		if v, ok := fields[k]; ok {
			return v
		}
		return c.Query().Get(k)
	}
	sp := dataimport.Spec{Kind: get("kind"), OnDuplicate: get("on_duplicate"), Parent: get("parent"), Plan: get("plan"),
		PasswordPolicy: get("password_policy"), Partial: truthy(get("partial")), Series: get("series"), Encoding: get("encoding")}
	if m := get("mapping"); m != "" {
		if err := json.Unmarshal([]byte(m), &sp.Mapping); err != nil {
			return sp, app.ErrValidation("invalid_mapping", "mapping")
		}
	}
	return sp, nil
}

// importUpload reads a data-import upload, its form fields and the spec
// they give (the API rows and the console page).
func ImportUpload(c *Ctx) (name string, src io.Reader, fields map[string]string, sp dataimport.Spec, err error) {
	if name, src, fields, err = UploadPart(c, dataimport.MaxUpload); err != nil {
		return
	}
	sp, err = importSpec(c, fields)
	return
}

func (s *Server) validateImport(c *Ctx) error {
	name, src, _, sp, err := ImportUpload(c)
	if err != nil {
		return err
	}
	rep, err := dataimport.ValidateUpload(c.R.Context(), c.Actor, name, src, sp)
	if err != nil {
		return err
	}
	return c.OK(rep)
}

func (s *Server) createImportJob(c *Ctx) error {
	name, src, _, sp, err := ImportUpload(c)
	if err != nil {
		return err
	}
	j, err := dataimport.CreateJob(c.R.Context(), c.Actor, name, src, sp)
	if err != nil {
		return err
	}
	return c.Accepted(j)
}

// legacyUpload reads a legacy upload: its first file, the source (a form
// field before the files, or ?source=) and the further files, if any.
func LegacyUpload(c *Ctx) (name string, src io.Reader, in dataimport.LegacyInput, err error) {
	u, name, src, err := uploadFirst(c, dataimport.MaxLegacyUpload)
	if err != nil {
		return "", nil, in, err
	}
	in = dataimport.LegacyInput{Source: u.fields["source"], More: u.next}
	if in.Source == "" {
		in.Source = c.Query().Get("source")
	}
	return name, src, in, nil
}

func (s *Server) createLegacyJob(c *Ctx) error {
	name, src, in, err := LegacyUpload(c)
	if err != nil {
		return err
	}
	j, err := dataimport.CreateLegacyJob(c.R.Context(), c.Actor, name, src, in)
	if err != nil {
		return err
	}
	return c.Accepted(j)
}

func (s *Server) importErrorsCSV(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if _, err := dataimport.GetJob(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	h := c.W.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": fmt.Sprintf("import-%d-lines.csv", id)}))
	h.Set("X-Content-Type-Options", "nosniff")
	return dataimport.WriteLinesCSV(c.R.Context(), c.Actor, id, c.W)
}

func (s *Server) legacyExport(c *Ctx) error {
	in := dataimport.ExportInput{Format: c.Query().Get("format")}
	if err := dataimport.CheckExport(c.Actor, &in); err != nil {
		return err
	}
	h := c.W.Header()
	if in.Format == dataimport.DialectCSV {
		h.Set("Content-Type", "application/zip")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": c.Tenant.Slug + "-legacy-csv.zip"}))
	} else {
		h.Set("Content-Type", "application/sql; charset=utf-8")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": c.Tenant.Slug + "-freeradius-" + in.Format + ".sql"}))
	}
	h.Set("X-Content-Type-Options", "nosniff")
	return dataimport.Export(c.R.Context(), c.Actor, in, c.W)
}
