package web

import (
	"mime"
	"net/http"
	"strconv"

	"xr/app/hotspot"
)

// hotspotDownload is GET /hotspot/pages/{id}/download: the RouterOS zip.
func (s *Server) hotspotDownload(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	a, err := hotspot.Download(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	writeHotspotZip(c, a)
	return nil
}

func writeHotspotZip(c *Ctx, a *hotspot.Archive) {
	h := c.W.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": a.Name}))
	h.Set("Content-Length", strconv.Itoa(len(a.Data)))
	h.Set("X-Content-Type-Options", "nosniff")
	c.W.WriteHeader(http.StatusOK)
	c.W.Write(a.Data)
}

// hotspotPreview is POST /hotspot/preview: HTML under the preview CSP.
func (s *Server) hotspotPreview(c *Ctx) error {
	var in hotspot.PreviewInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := hotspot.Preview(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	WriteHotspotPreview(c, out)
	return nil
}

// writeHotspotPreview serves a rendered page with the sandbox CSP: no
// script, nothing loaded from anywhere, no same origin.
func WriteHotspotPreview(c *Ctx, page []byte) {
	h := c.W.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", hotspot.PreviewCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "SAMEORIGIN")
	c.W.WriteHeader(http.StatusOK)
	c.W.Write(page)
}

// hotspotLogo is POST /hotspot/pages/{id}/logo.
func (s *Server) hotspotLogo(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	name, src, _, err := UploadPart(c, hotspot.MaxLogoBytes)
	if err != nil {
		return err
	}
	out, err := hotspot.UploadLogo(c.R.Context(), c.Actor, id, name, src)
	if err != nil {
		return err
	}
	return c.Created(out)
}
