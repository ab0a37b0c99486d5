package studio

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"strconv"

	"xr/app"
	"xr/app/files"
	"xr/app/studio/render"
)

// Image limits: bytes of an upload and pixels on either side.
const (
	MaxImageBytes = 2 << 20
	MaxImageSide  = 4096
)

// imageAllow is what an image upload may be (sniffed from the bytes).
var imageAllow = []string{"image/png", "image/jpeg"}

// Image is an uploaded design image; image elements refer to it by its id
// (as text: "image_id": "12").
type Image struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	ContentType string   `json:"content_type"`
	Width       int      `json:"width"`
	Height      int      `json:"height"`
	Size        int64    `json:"size"`
	CreatedAt   app.Time `json:"created_at"`
	fileID      int64
}

const imageCols = `id, name, content_type, width, height, size, created_at, file_id`

func scanImage(r interface{ Scan(...any) error }) (*Image, error) {
	im := &Image{}
	err := r.Scan(&im.ID, &im.Name, &im.ContentType, &im.Width, &im.Height, &im.Size, &im.CreatedAt, &im.fileID)
	return im, err
}

// checkSides reads an image's header and bounds its sides (400
// image_unreadable, image_dimensions_too_large) before it is decoded.
func checkSides(r io.Reader) error {
	cfg, _, err := image.DecodeConfig(r)
	if err != nil {
		return app.ErrValidation("image_unreadable", "file")
	}
	if cfg.Width > MaxImageSide || cfg.Height > MaxImageSide || cfg.Width < 1 || cfg.Height < 1 {
		return app.ErrValidation("image_dimensions_too_large", "file").With("max_side", MaxImageSide)
	}
	return nil
}

// checkImageFile checks a staged file is a whole PNG or JPEG within the
// side limit and answers its size in pixels.
func checkImageFile(path string) (int, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	if err := checkSides(f); err != nil {
		return 0, 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, err
	}
	img, _, err := image.Decode(f)
	if err != nil {
		return 0, 0, app.ErrValidation("image_unreadable", "file")
	}
	b := img.Bounds()
	return b.Dx(), b.Dy(), nil
}

// UploadImage stores an image (PNG or JPEG by content, at most
// MaxImageBytes and MaxImageSide pixels a side) in the tenant file store.
func UploadImage(ctx context.Context, act *app.Actor, name string, body io.Reader) (*Image, error) {
	if err := act.Require(PermStudioEdit); err != nil {
		return nil, err
	}
	return storeImage(ctx, act, name, body)
}

func storeImage(ctx context.Context, act *app.Actor, name string, body io.Reader) (*Image, error) {
	t := act.Tenant
	st, err := files.Stage(t, name, body, files.Policy{MaxBytes: MaxImageBytes, Allow: imageAllow})
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	w, h, err := checkImageFile(st.Path())
	if err != nil {
		return nil, err
	}
	var out *Image
	err = t.Write(ctx, func(tx *sql.Tx) error {
		f, err := st.Insert(ctx, tx, "studio")
		if err != nil {
			return err
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO design_images(file_id, name, content_type, width, height, size, created_by, created_at) VALUES (?,?,?,?,?,?,?,?)`,
			f.ID, f.Name, f.ContentType, w, h, f.Size, nullManager(act), t.NowText())
		if err != nil {
			return err
		}
		id, err := r.LastInsertId()
		if err != nil {
			return err
		}
		out, err = getImage(ctx, tx, id)
		return err
	})
	if err == nil {
		st.Keep()
	}
	return out, err
}

func getImage(ctx context.Context, q app.Querier, id int64) (*Image, error) {
	im, err := scanImage(q.QueryRowContext(ctx, `SELECT `+imageCols+` FROM design_images WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return im, err
}

// Images lists the tenant's design images, newest first.
func Images(ctx context.Context, act *app.Actor) ([]Image, error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return nil, err
	}
	return app.QueryAll(ctx, act.Tenant.DB.R, scanImage, `SELECT `+imageCols+` FROM design_images ORDER BY id DESC`)
}

// ImageFile is one image's stored file, to serve.
func ImageFile(ctx context.Context, act *app.Actor, id int64) (*files.File, error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return nil, err
	}
	im, err := getImage(ctx, act.Tenant.DB.R, id)
	if err != nil {
		return nil, err
	}
	return files.Get(ctx, act.Tenant.DB.R, im.fileID)
}

// DeleteImage removes an image and its file; an image a design still
// uses is 409 design_image_in_use.
func DeleteImage(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermStudioDelete); err != nil {
		return err
	}
	t := act.Tenant
	var rel string
	err := t.Write(ctx, func(tx *sql.Tx) error {
		im, err := getImage(ctx, tx, id)
		if err != nil {
			return err
		}
		var used int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM designs d, json_each(d.doc, '$.elements') e
			WHERE json_extract(e.value, '$.type') = 'image' AND json_extract(e.value, '$.image_id') = ?`, strconv.FormatInt(id, 10)).Scan(&used); err != nil {
			return err
		}
		if used > 0 {
			return app.ErrConflict("design_image_in_use").With("designs", used)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM design_images WHERE id = ?`, id); err != nil {
			return err
		}
		rel, err = files.DeleteRow(ctx, tx, im.fileID)
		return err
	})
	if err == nil {
		files.Remove(t, rel)
	}
	return err
}

// imageRefs are the image ids a document's image elements name, once each.
func imageRefs(d *render.Design) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range d.Elements {
		if e.Type == "image" && e.ImageID != "" && !seen[e.ImageID] {
			seen[e.ImageID] = true
			out = append(out, e.ImageID)
		}
	}
	return out
}

// loadImages reads the bytes of the images d refers to from the tenant's
// file store under dir (the tenant's files/<slug>/store directory).
func loadImages(ctx context.Context, q app.Querier, t *app.Tenant, d *render.Design) (render.Images, error) {
	imgs := render.Images{}
	for _, ref := range imageRefs(d) {
		id, err := strconv.ParseInt(ref, 10, 64)
		if err != nil {
			continue
		}
		im, err := getImage(ctx, q, id)
		if app.AsError(err) != nil && app.AsError(err).Status == 404 {
			continue
		}
		if err != nil {
			return nil, err
		}
		f, err := files.Get(ctx, q, im.fileID)
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(files.Path(t, f))
		if err != nil {
			return nil, fmt.Errorf("design image %d: %w", id, err)
		}
		imgs[ref] = b
	}
	return imgs, nil
}

// reencode decodes an image and encodes it again in its own format: what
// comes out holds pixels only (no text chunks, EXIF, comments or ICC
// profiles of the original).
func reencode(b []byte) ([]byte, string, error) {
	img, format, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, "", err
	}
	var out bytes.Buffer
	switch format {
	case "jpeg":
		err = jpeg.Encode(&out, img, &jpeg.Options{Quality: 92})
		return out.Bytes(), "image/jpeg", err
	default:
		err = png.Encode(&out, img)
		return out.Bytes(), "image/png", err
	}
}
