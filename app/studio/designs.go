package studio

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"xr/app"
	"xr/app/studio/render"
)

// Kinds are the design kinds, in the order the console lists them.
var Kinds = []string{render.KindCardSheet, render.KindReceipt, render.KindInvoice, render.KindHotspotPage}

// Limits of what a person types.
const (
	MaxNameLen    = 120 // design and store item names, runes
	MaxDocBytes   = 256 << 10
	MaxDisplayLen = 60   // publisher and author display names
	MaxDescLen    = 1000 // store item description
)

// Kind is a design kind in a request: one of Kinds (400 invalid_enum).
type Kind string

func (k *Kind) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, Kinds...)
	*k = Kind(s)
	return err
}

// Design is one design of the tenant. Designs are tenant-wide: anyone with
// the studio permissions sees and edits every design of the tenant.
type Design struct {
	ID        int64          `json:"id"`
	Name      string         `json:"name"`
	Kind      string         `json:"kind"`
	Doc       *render.Design `json:"doc,omitempty"` // omitted in lists
	Version   int64          `json:"version"`
	IsDefault bool           `json:"is_default"`
	CreatedBy *int64         `json:"created_by"`
	CreatedAt app.Time       `json:"created_at"`
	UpdatedAt app.Time       `json:"updated_at"`
}

// CreateInput is the body of POST /studio/designs. Without doc the design
// starts from the built-in design of its kind.
type CreateInput struct {
	Name      string         `json:"name"`
	Kind      Kind           `json:"kind"`
	Doc       *render.Design `json:"doc,omitempty"`
	IsDefault bool           `json:"is_default,omitempty"`
}

// PatchInput is the body of PATCH /studio/designs/{id}: version is the
// version the client read (required; a stale one is 409
// design_version_stale and nothing is written).
type PatchInput struct {
	Version   int64                  `json:"version"`
	Name      app.Opt[string]        `json:"name"`
	Doc       app.Opt[render.Design] `json:"doc"`
	IsDefault app.Opt[bool]          `json:"is_default"`
}

const designCols = `id, name, kind, doc, version, is_default, created_by, created_at, updated_at`

func scanDesign(r interface{ Scan(...any) error }, withDoc bool) (*Design, error) {
	d := &Design{}
	var doc string
	var by sql.NullInt64
	if err := r.Scan(&d.ID, &d.Name, &d.Kind, &doc, &d.Version, &d.IsDefault, &by, &d.CreatedAt, &d.UpdatedAt); err != nil {
		return nil, err
	}
	if by.Valid {
		d.CreatedBy = &by.Int64
	}
	if withDoc {
		d.Doc = &render.Design{}
		if err := json.Unmarshal([]byte(doc), d.Doc); err != nil {
			return nil, fmt.Errorf("design %d: stored doc: %w", d.ID, err)
		}
	}
	return d, nil
}

// getDesign reads one design of the tenant (404 when missing).
func getDesign(ctx context.Context, q app.Querier, id int64) (*Design, error) {
	d, err := scanDesign(q.QueryRowContext(ctx, `SELECT `+designCols+` FROM designs WHERE id = ?`, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return d, err
}

// cleanName checks a name a person typed: trimmed, 1..max runes, no
// control characters.
func cleanName(s, field string, max int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		if required {
			return "", app.ErrValidation("required", field)
		}
		return "", nil
	}
	if err := checkText(s, field, max, false); err != nil {
		return "", err
	}
	return s, nil
}

// checkText refuses control characters (newlines only where multiline)
// and more than max runes. Text is stored as typed and never interpreted
// as HTML: clients escape it.
func checkText(s, field string, max int, multiline bool) error {
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t')) {
			return app.ErrValidation("text_control_characters", field)
		}
	}
	if n := utf8.RuneCountInString(s); n > max {
		return app.ErrValidation("text_too_long", field).With("max", max)
	}
	return nil
}

// checkDoc validates a design document for kind: the renderer's rules
// (sizes, elements, variables of the kind's catalogue: 400 naming the
// element), then every image element's image_id against the tenant's
// design images (400 design_image_unknown naming the element).
func checkDoc(ctx context.Context, q app.Querier, kind string, d *render.Design) ([]byte, error) {
	if d.Kind == "" {
		d.Kind = kind
	}
	if d.Kind != kind {
		return nil, app.ErrValidation("design_kind_mismatch", "doc.kind")
	}
	if d.Elements == nil {
		d.Elements = []render.Element{}
	}
	if err := render.Validate(d); err != nil {
		return nil, err
	}
	for i, e := range d.Elements {
		if e.Type != "image" {
			continue
		}
		id, err := strconv.ParseInt(e.ImageID, 10, 64)
		ok := false
		if err == nil && id > 0 {
			var n int
			if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM design_images WHERE id = ?`, id).Scan(&n); err != nil {
				return nil, err
			}
			ok = n > 0
		}
		if !ok {
			return nil, app.ErrValidation("design_image_unknown", fmt.Sprintf("elements[%d].image_id", i)).With("element", i)
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxDocBytes {
		return nil, app.ErrValidation("design_too_large", "doc").With("max_bytes", MaxDocBytes)
	}
	return b, nil
}

func nullManager(act *app.Actor) any {
	if act.ManagerID > 0 {
		return act.ManagerID
	}
	return nil
}

// Create stores a new design at version 1.
func Create(ctx context.Context, act *app.Actor, in CreateInput) (*Design, error) {
	if err := act.Require(PermStudioEdit); err != nil {
		return nil, err
	}
	name, err := cleanName(in.Name, "name", MaxNameLen, true)
	if err != nil {
		return nil, err
	}
	if in.Kind == "" {
		return nil, app.ErrValidation("required", "kind")
	}
	kind := string(in.Kind)
	doc := in.Doc
	if doc == nil {
		doc = render.DefaultDesign(kind)
	}
	t := act.Tenant
	var out *Design
	err = t.Write(ctx, func(tx *sql.Tx) error {
		b, err := checkDoc(ctx, tx, kind, doc)
		if err != nil {
			return err
		}
		now := t.NowText()
		if in.IsDefault {
			if _, err := tx.ExecContext(ctx, `UPDATE designs SET is_default = 0 WHERE kind = ? AND is_default = 1`, kind); err != nil {
				return err
			}
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO designs(name, kind, doc, version, is_default, created_by, created_at, updated_at) VALUES (?,?,?,1,?,?,?,?)`,
			name, kind, string(b), in.IsDefault, nullManager(act), now, now)
		if err != nil {
			return err
		}
		id, err := r.LastInsertId()
		if err != nil {
			return err
		}
		out, err = getDesign(ctx, tx, id)
		return err
	})
	return out, err
}

// Get reads one design with its document.
func Get(ctx context.Context, act *app.Actor, id int64) (*Design, error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return nil, err
	}
	return getDesign(ctx, act.Tenant.DB.R, id)
}

// ListSpec is the list of designs: filter[kind], filter[is_default], q on the name.
var ListSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "id", "name": "name", "updated_at": "updated_at", "kind": "kind"},
	DefaultSort: "updated_at",
	Filters:     map[string]app.FilterKind{"kind": app.FilterString, "is_default": app.FilterBool},
	Aliases:     []string{"kind"},
}

// List lists the tenant's designs (without their documents).
func List(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[Design], error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return app.Page[Design]{}, err
	}
	where := []string{"1=1"}
	var args []any
	if k, ok := q.Str("kind"); ok {
		where = append(where, "kind = ?")
		args = append(args, k)
	}
	if b, ok := q.Bool("is_default"); ok {
		where = append(where, "is_default = ?")
		args = append(args, b)
	}
	if q.Q != "" {
		where = append(where, `name LIKE ? ESCAPE '\'`)
		args = append(args, "%"+app.LikeEscape(q.Q)+"%")
	}
	return app.QueryPage(ctx, act.Tenant, q, designCols, "FROM designs WHERE "+strings.Join(where, " AND "), args, "id",
		func(rows *sql.Rows) (Design, error) {
			d, err := scanDesign(rows, false)
			if err != nil {
				return Design{}, err
			}
			return *d, nil
		})
}

// stale is the 409 of a write carrying a version other than the stored one.
func stale(current int64) error {
	return app.ErrConflict("design_version_stale").With("field", "version").With("current_version", current)
}

// Patch changes a design when in.Version is the stored version, and bumps
// it. Setting is_default makes it the tenant's one default of its kind
// (false clears it).
func Patch(ctx context.Context, act *app.Actor, id int64, in PatchInput) (*Design, error) {
	if err := act.Require(PermStudioEdit); err != nil {
		return nil, err
	}
	if in.Version <= 0 {
		return nil, app.ErrValidation("required", "version")
	}
	var name string
	if in.Name.Set {
		if in.Name.Null {
			return nil, app.ErrValidation("required", "name")
		}
		var err error
		if name, err = cleanName(in.Name.V, "name", MaxNameLen, true); err != nil {
			return nil, err
		}
	}
	if in.Doc.Null {
		return nil, app.ErrValidation("required", "doc")
	}
	t := act.Tenant
	var out *Design
	err := t.Write(ctx, func(tx *sql.Tx) error {
		cur, err := getDesign(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur.Version != in.Version {
			return stale(cur.Version)
		}
		var p app.Patch
		if in.Name.Set {
			p.Set("name", name)
		}
		if in.Doc.Set {
			doc := in.Doc.V
			b, err := checkDoc(ctx, tx, cur.Kind, &doc)
			if err != nil {
				return err
			}
			p.Set("doc", string(b))
		}
		if in.IsDefault.Set {
			def := in.IsDefault.V && !in.IsDefault.Null
			if def && !cur.IsDefault {
				if _, err := tx.ExecContext(ctx, `UPDATE designs SET is_default = 0 WHERE kind = ? AND is_default = 1`, cur.Kind); err != nil {
					return err
				}
			}
			p.Set("is_default", def)
		}
		if p.Empty() {
			out = cur
			return nil
		}
		p.Set("version", cur.Version+1)
		if _, err := p.Exec(ctx, tx, "designs", id, t.NowText()); err != nil {
			return err
		}
		out, err = getDesign(ctx, tx, id)
		return err
	})
	return out, err
}

// Delete removes a design when version is the stored one (409
// design_version_stale otherwise).
func Delete(ctx context.Context, act *app.Actor, id int64, versionText string) error {
	if err := act.Require(PermStudioDelete); err != nil {
		return err
	}
	if versionText == "" {
		return app.ErrValidation("required", "version")
	}
	version, err := strconv.ParseInt(versionText, 10, 64)
	if err != nil || version <= 0 {
		return app.ErrValidation("invalid_version", "version")
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		var cur int64
		err := tx.QueryRowContext(ctx, `SELECT version FROM designs WHERE id = ?`, id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return app.ErrNotFound()
		}
		if err != nil {
			return err
		}
		if cur != version {
			return stale(cur)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM designs WHERE id = ?`, id)
		return err
	})
}

// DeleteAny removes a design whatever its version (bulk delete).
func DeleteAny(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermStudioDelete); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM designs WHERE id = ?`, id)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return app.ErrNotFound()
		}
		return nil
	})
}

// Variables is the published variable catalogue by kind.
func Variables(ctx context.Context, act *app.Actor) (map[string][]render.Variable, error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return nil, err
	}
	return render.Catalogue(), nil
}
