package web

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"

	"xr/app"
	"xr/app/backups"
)

// createBackup is POST /admin/tools/backup: 202 with the queued job, 200
// with replay true when the request_id was seen.
func (s *Server) createBackup(c *Ctx) error {
	var in backups.CreateInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := backups.Create(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	if out.Replay {
		return c.OK(out)
	}
	return c.Accepted(out)
}

// downloadBackup is GET /admin/tools/backup/{id}/download: the stored file.
func (s *Server) downloadBackup(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	f, err := backups.Open(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	return sendBackup(c, f)
}

// downloadBackupTicket is GET /admin/tools/backup/download/{ticket}: the
// file of a download ticket, without an Authorization header (a browser
// following a link); the ticket works once, for a few minutes.
func (s *Server) downloadBackupTicket(c *Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	f, err := backups.RedeemTicket(c.R.Context(), c.Tenant, c.R.PathValue("ticket"))
	if err != nil {
		return err
	}
	return sendBackup(c, f)
}

func sendBackup(c *Ctx, f *backups.File) error {
	fh, err := os.Open(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return app.ErrConflict("backup_file_missing")
	}
	if err != nil {
		return err
	}
	defer fh.Close()
	h := c.W.Header()
	h.Set("Content-Type", "application/zstd")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(c.W, c.R, f.Name, f.ModTime, fh)
	return nil
}

// uploadBackup is POST /admin/tools/backup/upload: the file as a
// multipart part (any field name; the first file part) or as the raw body.
// It is streamed to disk by backups.Upload; the body is limited to
// backups.MaxUpload (plus the multipart framing). A copy encrypted for a
// destination needs its passphrase: a multipart field "passphrase" sent
// before the file, or the X-Backup-Passphrase header with a raw body.
func (s *Server) uploadBackup(c *Ctx) error {
	if err := backups.CanManage(c.Actor); err != nil {
		return err
	}
	body := http.MaxBytesReader(c.W, c.R.Body, backups.MaxUpload+1<<20)
	c.R.Body = body
	var src io.Reader = body
	passphrase := c.R.Header.Get("X-Backup-Passphrase") // a raw body's passphrase
	ct, _, _ := mime.ParseMediaType(c.R.Header.Get("Content-Type"))
	if strings.HasPrefix(ct, "multipart/") {
		mr, err := c.R.MultipartReader()
		if err != nil {
			return app.ErrValidation("malformed_multipart", "file")
		}
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return app.ErrValidation("file_required", "file")
			}
			if err != nil {
				return UploadReadError(err)
			}
			if p.FormName() == "passphrase" && p.FileName() == "" {
				if passphrase, err = ReadSmallPart(p); err != nil {
					return err
				}
				continue
			}
			if p.FileName() != "" || p.FormName() == "file" {
				src = p
				break
			}
		}
	}
	b, err := backups.Upload(c.R.Context(), c.Actor, src, backups.MaxUpload, passphrase)
	if err != nil {
		return err
	}
	return c.Created(b)
}
