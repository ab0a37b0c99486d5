package web

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"xr/app"
	"xr/app/files"
	"xr/app/tickets"
)

// Handlers of the support tickets rows (routes_tickets.go); most rows name
// their app function through the adapters.

func (s *Server) applyTicketMacro(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	mid, err := c.ID("macroId")
	if err != nil {
		return err
	}
	out, err := tickets.ApplyMacro(c.R.Context(), c.Actor, id, mid)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) updateTicketField(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	fid, err := c.ID("fid")
	if err != nil {
		return err
	}
	var in tickets.FieldInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := tickets.UpdateField(c.R.Context(), c.Actor, id, fid, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) deleteTicketField(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	fid, err := c.ID("fid")
	if err != nil {
		return err
	}
	if err := tickets.DeleteField(c.R.Context(), c.Actor, id, fid); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "id": fid})
}

// uploadPart reads an upload's first file (and the form fields before
// it): a multipart part with a file name, or the raw body named by
// ?filename=.
func uploadPart(c *Ctx, max int64) (name string, src io.Reader, fields map[string]string, err error) {
	u, name, src, err := uploadFirst(c, max)
	if err != nil {
		return "", nil, nil, err
	}
	return name, src, u.fields, nil
}

// uploadFirst reads an upload up to its first file (400 file_required
// without one); u.next reads the files after it.
func uploadFirst(c *Ctx, max int64) (u *uploadForm, name string, src io.Reader, err error) {
	if u, err = newUploadForm(c, max); err != nil {
		return nil, "", nil, err
	}
	name, src, err = u.next()
	if errors.Is(err, io.EOF) {
		err = app.ErrValidation("file_required", "file")
	}
	return u, name, src, err
}

// uploadForm reads an upload part by part: its files in turn, and the
// form fields met on the way into fields.
type uploadForm struct {
	mr     *multipart.Reader
	raw    io.Reader // a body that is the file itself, named name
	name   string
	fields map[string]string
}

// newUploadForm limits the body to max plus the multipart framing.
func newUploadForm(c *Ctx, max int64) (*uploadForm, error) {
	c.R.Body = http.MaxBytesReader(c.W, c.R.Body, max+64<<10)
	u := &uploadForm{fields: map[string]string{}}
	ct, _, _ := mime.ParseMediaType(c.R.Header.Get("Content-Type"))
	if !strings.HasPrefix(ct, "multipart/") {
		if u.name = c.Query().Get("filename"); u.name == "" {
			return nil, app.ErrValidation("filename_required", "filename")
		}
		u.raw = c.R.Body
		return u, nil
	}
	mr, err := c.R.MultipartReader()
	if err != nil {
		return nil, app.ErrValidation("malformed_multipart", "file")
	}
	u.mr = mr
	return u, nil
}

// next is the upload's next file; io.EOF after the last.
func (u *uploadForm) next() (name string, src io.Reader, err error) {
	if u.mr == nil {
		src, u.raw = u.raw, nil
		if src == nil {
			return "", nil, io.EOF
		}
		return u.name, src, nil
	}
	for {
		p, err := u.mr.NextPart()
		if errors.Is(err, io.EOF) {
			return "", nil, io.EOF
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return "", nil, app.ErrValidation("file_too_large", "file")
			}
			return "", nil, app.ErrValidation("malformed_multipart", "file")
		}
		if p.FileName() != "" {
			return p.FileName(), p, nil
		}
		b, err := io.ReadAll(io.LimitReader(p, 1024))
		if err != nil {
			return "", nil, app.ErrValidation("malformed_multipart", p.FormName())
		}
		u.fields[p.FormName()] = string(b)
	}
}

func truthy(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func (s *Server) attachTicket(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	max, err := tickets.SettingTicketsAttachmentMax.Get(c.R.Context(), c.Tenant.DB.R)
	if err != nil {
		return err
	}
	name, src, fields, err := uploadPart(c, max)
	if err != nil {
		return err
	}
	internal := truthy(fields["internal"]) || truthy(c.Query().Get("internal"))
	out, err := tickets.Attach(c.R.Context(), c.Actor, id, name, src, internal)
	if err != nil {
		return err
	}
	return c.Created(out)
}

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

func ticketAtt(c *Ctx) (int64, int64, error) {
	id, err := c.ID("id")
	if err != nil {
		return 0, 0, err
	}
	att, err := c.ID("attId")
	return id, att, err
}

func (s *Server) downloadTicketAttachment(c *Ctx) error {
	id, att, err := ticketAtt(c)
	if err != nil {
		return err
	}
	f, err := tickets.GetAttachment(c.R.Context(), c.Actor, id, att)
	if err != nil {
		return err
	}
	return serveFile(c, f)
}

func (s *Server) deleteTicketAttachment(c *Ctx) error {
	id, att, err := ticketAtt(c)
	if err != nil {
		return err
	}
	if err := tickets.DeleteAttachment(c.R.Context(), c.Actor, id, att); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "id": att})
}

// ---- Portal ----

func (s *Server) portalAttachTicket(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	max, err := tickets.SettingTicketsAttachmentMax.Get(c.R.Context(), c.Tenant.DB.R)
	if err != nil {
		return err
	}
	name, src, _, err := uploadPart(c, max)
	if err != nil {
		return err
	}
	out, err := tickets.PortalAttach(c.R.Context(), c.Actor, id, name, src)
	if err != nil {
		return err
	}
	return c.Created(out)
}

func (s *Server) portalTicketAttachment(c *Ctx) error {
	id, att, err := ticketAtt(c)
	if err != nil {
		return err
	}
	f, err := tickets.PortalAttachment(c.R.Context(), c.Actor, id, att)
	if err != nil {
		return err
	}
	return serveFile(c, f)
}

func (s *Server) portalDeleteTicketAttachment(c *Ctx) error {
	id, att, err := ticketAtt(c)
	if err != nil {
		return err
	}
	if err := tickets.PortalDeleteAttachment(c.R.Context(), c.Actor, id, att); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "id": att})
}
