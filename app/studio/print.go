package studio

import (
	"context"
	"database/sql"
	"errors"

	"xr/app"
	"xr/app/studio/render"
)

// DesignForPrint is the design app/cards prints a series with (and any
// other printed kind): the design of that id when it is the tenant's and
// of the kind; else the tenant's default design of the kind; else
// render.DefaultDesign(kind), read through q (t's pool or a transaction
// of t). The images its image elements refer to are
// loaded from the tenant file store (an image missing since is left out:
// the renderer draws nothing for it).
func DesignForPrint(ctx context.Context, t *app.Tenant, q app.Querier, id *int64, kind string) (*render.Design, render.Images, error) {
	var d *Design
	if id != nil {
		got, err := scanDesign(q.QueryRowContext(ctx, `SELECT `+designCols+` FROM designs WHERE id = ? AND kind = ?`, *id, kind), true)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, nil, err
		}
		d = got
		if errors.Is(err, sql.ErrNoRows) {
			d = nil
		}
	}
	if d == nil {
		got, err := scanDesign(q.QueryRowContext(ctx, `SELECT `+designCols+` FROM designs WHERE kind = ? AND is_default = 1`, kind), true)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, nil, err
		}
		if err == nil {
			d = got
		}
	}
	if d == nil {
		return render.DefaultDesign(kind), render.Images{}, nil
	}
	refs := imageRefs(d.Doc)
	if len(refs) == 0 {
		return d.Doc, render.Images{}, nil
	}
	imgs, err := loadImages(ctx, q, t, d.Doc)
	if err != nil {
		return nil, nil, err
	}
	return d.Doc, imgs, nil
}

// notFoundOr maps a missing row to 404.
func notFoundOr(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrNotFound()
	}
	return err
}

// PrintKey names the design and version DesignForPrint picks for id and
// kind ("id:version"; "" for the built-in design), so a printed file can be
// kept while the key is unchanged and rendered again once the design (or
// the default of the kind) changes.
func PrintKey(ctx context.Context, q app.Querier, id *int64, kind string) (string, error) {
	var key string
	err := q.QueryRowContext(ctx, `SELECT COALESCE((SELECT id || ':' || version FROM designs WHERE id = ? AND kind = ?),
		(SELECT id || ':' || version FROM designs WHERE kind = ? AND is_default = 1), '')`, id, kind, kind).Scan(&key)
	return key, err
}

// IsDesignOfKind reports whether id is one of the tenant's designs of kind.
func IsDesignOfKind(ctx context.Context, q app.Querier, id int64, kind string) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM designs WHERE id = ? AND kind = ?`, id, kind).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// DesignName is a design's id and name (a chooser's option).
type DesignName struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// DesignNames lists the tenant's designs of kind by name (at most 1,000),
// for other areas' choosers.
func DesignNames(ctx context.Context, q app.Querier, kind string) ([]DesignName, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name FROM designs WHERE kind = ? ORDER BY name, id LIMIT 1000`, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []DesignName{}
	for rows.Next() {
		var d DesignName
		if err := rows.Scan(&d.ID, &d.Name); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
