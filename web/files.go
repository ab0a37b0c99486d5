package web

import (
	"net/http"

	"xr/app/files"
)

// serveFile writes a stored file as a download (inline only for images
// and PDF; never HTML; nosniff).
func serveFile(c *Ctx, f *files.File) error {
	fh, err := files.Open(c.Tenant, f)
	if err != nil {
		return err
	}
	defer fh.Close()
	files.Headers(c.W.Header(), f)
	http.ServeContent(c.W, c.R, "", f.CreatedAt.Time, fh)
	return nil
}
