package web

import (
	"mime"
	"net/http"
	"os"

	"xr/app/subs"
)

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
