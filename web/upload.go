package web

// Uploads: a file (and the form fields before it) read from a multipart
// body, or a raw body named by ?filename=, within a size limit. The API's
// upload rows and the pages' upload forms read them the same way.

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"xr/app"
)

// UploadPart reads an upload's first file (and the form fields before
// it): a multipart part with a file name, or the raw body named by
// ?filename=.
func UploadPart(c *Ctx, max int64) (name string, src io.Reader, fields map[string]string, err error) {
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

// ReadSmallPart reads a text field of a multipart upload (the passphrase,
// sent before the file): at most 1 KiB.
func ReadSmallPart(p io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(p, 1025))
	if err != nil {
		return "", UploadReadError(err)
	}
	if len(b) > 1024 {
		return "", app.ErrValidation("too_long", "passphrase")
	}
	return string(b), nil
}

// UploadReadError is the answer to an upload whose body could not be
// read: 400 upload_too_large past its limit, else as any body.
func UploadReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return app.ErrValidation("upload_too_large", "file")
	}
	return bodyReadError(err)
}

// truthy reads a yes/no form field of an upload.
func truthy(s string) bool {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
