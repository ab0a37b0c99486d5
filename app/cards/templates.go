package cards

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/studio"
	"xr/app/studio/render"
)

// Card templates: a design (a studio design of kind card_sheet; none means
// the default design) plus a generation spec with the fields and rules of
// POST /card-batches. POST /card-templates/{id}/generate makes a series
// from one through the generation job. A template belongs to the manager
// who created it; a caller sees the templates of its subtree (tenant-wide
// callers every one), another's answer like a missing one.

// MaxExpirationDays bounds a template's relative expiry.
const MaxExpirationDays = 3650

// TemplateSpec is a template's generation spec: POST /card-batches' fields
// without request_id and name (the series is named after the template),
// with a relative expiry as an alternative to the absolute one.
type TemplateSpec struct {
	Type           CardType   `json:"type"`
	Quantity       int64      `json:"quantity"`        // the default quantity of a generation; 0: given at each generation
	FaceValue      *app.Money `json:"face_value"`      // required
	Expiration     string     `json:"expiration"`      // absolute (yyyy-MM-dd or yyyy-MM-dd HH:mm:ss), or
	ExpirationDays int        `json:"expiration_days"` // relative: the end of the day this many days after each generation
	PlanProfileID  int64      `json:"plan_profile_id"` // required for prepaid and for an auto-activating refill
	CodeLength     int        `json:"code_length"`
	CodeCharset    Charset    `json:"code_charset"` // default numeric
	OwnerManagerID int64      `json:"owner_manager_id"`
	Note           string     `json:"note"`
	AutoActivate   bool       `json:"auto_activate"`
	SellOnline     bool       `json:"sell_online"`
	UnitPrice      *app.Money `json:"unit_price"`
}

// TemplateInput is POST /card-templates.
type TemplateInput struct {
	Name     string `json:"name"`
	DesignID *int64 `json:"design_id"` // a card_sheet design of the studio; null: the default design
	TemplateSpec
}

// Template is a card template as the API shows it.
type Template struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	DesignID *int64 `json:"design_id"`
	TemplateSpec
	PlanName  string   `json:"plan_name"`  // the plan of plan_profile_id, for display
	ManagerID int64    `json:"manager_id"` // the owner: the manager who created it
	CreatedAt app.Time `json:"created_at"`
	UpdatedAt app.Time `json:"updated_at"`
	Series    int      `json:"series"` // series generated from it
}

// isCardSheetDesign reports whether id is a card_sheet design of the tenant.
func isCardSheetDesign(ctx context.Context, q app.Querier, id int64) (bool, error) {
	return studio.IsDesignOfKind(ctx, q, id, render.KindCardSheet)
}

// CardSheetDesigns lists the tenant's card_sheet designs by name (the
// template form's design chooser).
func CardSheetDesigns(ctx context.Context, act *app.Actor) ([]studio.DesignName, error) {
	return studio.DesignNames(ctx, act.Tenant.DB.R, render.KindCardSheet)
}

// input is the CreateInput a generation at now makes of the spec: the
// series is named after the template and keeps its id.
func (s TemplateSpec) input(name string, templateID int64, now time.Time) CreateInput {
	in := CreateInput{Type: s.Type, Quantity: s.Quantity, FaceValue: s.FaceValue, Expiration: s.Expiration, PlanProfileID: s.PlanProfileID,
		CodeLength: s.CodeLength, CodeCharset: s.CodeCharset, OwnerManagerID: s.OwnerManagerID, Name: name, Note: s.Note,
		AutoActivate: s.AutoActivate, SellOnline: s.SellOnline, UnitPrice: s.UnitPrice}
	if s.ExpirationDays > 0 {
		in.Expiration = now.AddDate(0, 0, s.ExpirationDays).Format("2006-01-02")
	}
	if templateID != 0 {
		in.TemplateID = &templateID
	}
	return in
}

// validate checks a template with the rules of a new series (400 naming
// the field), then, in tx, its owner, plan and design as the generation
// will.
func (in *TemplateInput) validate(ctx context.Context, tx *sql.Tx, act *app.Actor, now time.Time) error {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		return app.ErrValidation("name_required", "name")
	}
	if err := checkText("name", in.Name, 120); err != nil {
		return err
	}
	if in.ExpirationDays < 0 || in.ExpirationDays > MaxExpirationDays {
		return app.ErrValidation("invalid_expiration_days", "expiration_days").With("min", 1).With("max", MaxExpirationDays)
	}
	if in.ExpirationDays > 0 && strings.TrimSpace(in.Expiration) != "" {
		return app.ErrValidation("expiration_rule_conflict", "expiration_days")
	}
	ci := in.input(in.Name, 0, now)
	if ci.Quantity == 0 {
		ci.Quantity = 1 // no default quantity: given at each generation
	}
	if err := ci.validateSpec(now); err != nil {
		return err
	}
	in.CodeCharset, in.Note = ci.CodeCharset, ci.Note
	if in.OwnerManagerID != 0 {
		if err := requireManagerInScope(ctx, tx, act, in.OwnerManagerID, "owner_manager_id"); err != nil {
			return err
		}
	}
	if in.PlanProfileID != 0 {
		if err := requirePlanAssignable(ctx, tx, act, in.PlanProfileID); err != nil {
			return err
		}
	}
	if in.DesignID != nil {
		ok, err := isCardSheetDesign(ctx, tx, *in.DesignID)
		if err != nil {
			return err
		}
		if !ok {
			return app.ErrValidation("invalid_design_id", "design_id")
		}
	}
	return nil
}

const templateCols = `ct.id, ct.name, ct.design_id, ct.spec, ct.manager_id, ct.created_at, ct.updated_at,
	(SELECT COUNT(*) FROM card_batches b WHERE b.template_id = ct.id)`

func scanTemplate(row interface{ Scan(...any) error }) (*Template, error) {
	t := &Template{}
	var design sql.NullInt64
	var spec string
	err := row.Scan(&t.ID, &t.Name, &design, &spec, &t.ManagerID, &t.CreatedAt, &t.UpdatedAt, &t.Series)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(spec), &t.TemplateSpec); err != nil {
		return nil, fmt.Errorf("card template %d spec: %w", t.ID, err)
	}
	t.DesignID = ptr(design)
	return t, nil
}

// templateScope is the condition (on alias ct) for the templates a caller
// sees: every one tenant-wide, else those owned within its subtree.
func templateScope(act *app.Actor) (string, []any) {
	if act.TenantWide {
		return "1=1", nil
	}
	return act.ScopeSQL("ct.manager_id")
}

// loadTemplate reads a template the actor sees; missing and out of scope
// answer the same 404.
func loadTemplate(ctx context.Context, q app.Querier, act *app.Actor, id int64) (*Template, error) {
	cond, args := templateScope(act)
	t, err := scanTemplate(q.QueryRowContext(ctx, `SELECT `+templateCols+` FROM card_templates ct WHERE ct.id = ? AND `+cond, append([]any{id}, args...)...))
	if err != nil {
		return nil, err
	}
	if t.PlanProfileID != 0 {
		if p, err := readPlan(ctx, q, t.PlanProfileID); err == nil {
			t.PlanName = p.Name
		} else if app.AsError(err) == nil {
			return nil, err
		}
	}
	return t, nil
}

func specText(s TemplateSpec) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

// CreateTemplate is POST /card-templates.
func CreateTemplate(ctx context.Context, act *app.Actor, in TemplateInput) (*Template, error) {
	if err := act.Require(PermCardsDesigner); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *Template
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := in.validate(ctx, tx, act, t.Now()); err != nil {
			return err
		}
		spec, err := specText(in.TemplateSpec)
		if err != nil {
			return err
		}
		now := t.NowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO card_templates(name, design_id, spec, manager_id, created_at, updated_at) VALUES (?,?,?,?,?,?)`,
			in.Name, in.DesignID, spec, act.ManagerID, now, now)
		if err != nil {
			return err
		}
		id, err := r.LastInsertId()
		if err != nil {
			return err
		}
		out, err = loadTemplate(ctx, tx, act, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetTemplate is GET /card-templates/{id}.
func GetTemplate(ctx context.Context, act *app.Actor, id int64) (*Template, error) {
	if err := act.Require(PermCardsDesigner, PermCardsGenerateUser); err != nil {
		return nil, err
	}
	return loadTemplate(ctx, act.Tenant.DB.R, act, id)
}

var templateListSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "ct.id", "name": "ct.name", "created_at": "ct.created_at", "updated_at": "ct.updated_at"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"design_id": app.FilterInt, "manager_id": app.FilterInt},
}

// TemplateListSpec is the list spec of GET /card-templates.
func TemplateListSpec() app.ListSpec { return templateListSpec }

// ListTemplates is GET /card-templates: filter[design_id],
// filter[manager_id]; q searches the name (a number: the id).
func ListTemplates(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Template], error) {
	if err := act.Require(PermCardsDesigner, PermCardsGenerateUser); err != nil {
		return app.Page[Template]{}, err
	}
	var page app.Page[Template]
	cond, args := templateScope(act)
	where := []string{cond}
	if v, ok := lq.Int("design_id"); ok {
		where, args = append(where, "ct.design_id = ?"), append(args, v)
	}
	if v, ok := lq.Int("manager_id"); ok {
		where, args = append(where, "ct.manager_id = ?"), append(args, v)
	}
	if lq.Q != "" {
		c, qa := `(ct.name LIKE ? ESCAPE '\'`, []any{"%" + app.LikeEscape(lq.Q) + "%"}
		if n, err := strconv.ParseInt(lq.Q, 10, 64); err == nil {
			c, qa = c+" OR ct.id = ?", append(qa, n)
		}
		where, args = append(where, c+")"), append(args, qa...)
	}
	w := " FROM card_templates ct WHERE " + strings.Join(where, " AND ")
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var total int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*)`+w, args...).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+templateCols+w+lq.OrderLimit("ct.id"), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		page.Rows = []Template{}
		for rows.Next() {
			t, err := scanTemplate(rows)
			if err != nil {
				return err
			}
			page.Rows = append(page.Rows, *t)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		plans := map[int64]string{}
		for i := range page.Rows {
			id := page.Rows[i].PlanProfileID
			if id == 0 {
				continue
			}
			if _, ok := plans[id]; !ok {
				p, err := readPlan(ctx, tx, id)
				if err != nil && app.AsError(err) == nil {
					return err
				}
				if p != nil {
					plans[id] = p.Name
				}
			}
			page.Rows[i].PlanName = plans[id]
		}
		page.Meta = lq.MetaFor(total)
		return nil
	})
	return page, err
}

// TemplatePatch is PATCH /card-templates/{id} (present fields only; the
// result is checked as a whole with the rules of POST /card-templates).
type TemplatePatch struct {
	Name           app.Opt[string]    `json:"name"`
	DesignID       app.Opt[int64]     `json:"design_id"` // null: the default design
	Type           app.Opt[CardType]  `json:"type"`
	Quantity       app.Opt[int64]     `json:"quantity"`
	FaceValue      app.Opt[app.Money] `json:"face_value"`
	Expiration     app.Opt[string]    `json:"expiration"`
	ExpirationDays app.Opt[int]       `json:"expiration_days"`
	PlanProfileID  app.Opt[int64]     `json:"plan_profile_id"`
	CodeLength     app.Opt[int]       `json:"code_length"`
	CodeCharset    app.Opt[Charset]   `json:"code_charset"`
	OwnerManagerID app.Opt[int64]     `json:"owner_manager_id"`
	Note           app.Opt[string]    `json:"note"`
	AutoActivate   app.Opt[bool]      `json:"auto_activate"`
	SellOnline     app.Opt[bool]      `json:"sell_online"`
	UnitPrice      app.Opt[app.Money] `json:"unit_price"`
}

func setOpt[T any](dst *T, o app.Opt[T]) {
	if o.Set {
		var zero T
		*dst = zero
		if !o.Null {
			*dst = o.V
		}
	}
}

func setOptPtr[T any](dst **T, o app.Opt[T]) {
	if o.Set {
		*dst = nil
		if !o.Null {
			v := o.V
			*dst = &v
		}
	}
}

// apply merges the patch onto a template's input.
func (p TemplatePatch) apply(in *TemplateInput) {
	setOpt(&in.Name, p.Name)
	setOptPtr(&in.DesignID, p.DesignID)
	s := &in.TemplateSpec
	setOpt(&s.Type, p.Type)
	setOpt(&s.Quantity, p.Quantity)
	setOptPtr(&s.FaceValue, p.FaceValue)
	setOpt(&s.Expiration, p.Expiration)
	setOpt(&s.ExpirationDays, p.ExpirationDays)
	setOpt(&s.PlanProfileID, p.PlanProfileID)
	setOpt(&s.CodeLength, p.CodeLength)
	setOpt(&s.CodeCharset, p.CodeCharset)
	setOpt(&s.OwnerManagerID, p.OwnerManagerID)
	setOpt(&s.Note, p.Note)
	setOpt(&s.AutoActivate, p.AutoActivate)
	setOpt(&s.SellOnline, p.SellOnline)
	setOptPtr(&s.UnitPrice, p.UnitPrice)
	// One expiry rule: setting one clears the other.
	if p.Expiration.Set && !p.Expiration.Null && p.Expiration.V != "" && !p.ExpirationDays.Set {
		s.ExpirationDays = 0
	}
	if p.ExpirationDays.Set && p.ExpirationDays.V > 0 && !p.Expiration.Set {
		s.Expiration = ""
	}
}

// PatchTemplate is PATCH /card-templates/{id}.
func PatchTemplate(ctx context.Context, act *app.Actor, id int64, p TemplatePatch) (*Template, error) {
	if err := act.Require(PermCardsDesigner); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *Template
	err := t.Write(ctx, func(tx *sql.Tx) error {
		cur, err := loadTemplate(ctx, tx, act, id)
		if err != nil {
			return err
		}
		in := TemplateInput{Name: cur.Name, DesignID: cur.DesignID, TemplateSpec: cur.TemplateSpec}
		p.apply(&in)
		if err := in.validate(ctx, tx, act, t.Now()); err != nil {
			return err
		}
		spec, err := specText(in.TemplateSpec)
		if err != nil {
			return err
		}
		var pt app.Patch
		pt.Set("name", in.Name)
		pt.Set("design_id", in.DesignID)
		pt.Set("spec", spec)
		if _, err := pt.Exec(ctx, tx, "card_templates", id, t.NowText()); err != nil {
			return err
		}
		out, err = loadTemplate(ctx, tx, act, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteTemplate is DELETE /card-templates/{id}. The series generated from
// it keep their template_id (and their design).
func DeleteTemplate(ctx context.Context, act *app.Actor, id int64) (*Deleted, error) {
	if err := act.Require(PermCardsDesigner); err != nil {
		return nil, err
	}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := loadTemplate(ctx, tx, act, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM card_templates WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Deleted{ID: id, Deleted: true}, nil
}

// BulkDeleteTemplates is POST /card-templates/bulk-delete.
func BulkDeleteTemplates(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermCardsDesigner); err != nil {
		return app.BulkResult{}, err
	}
	return bulk(ctx, in, func(ctx context.Context, id int64) error { _, err := DeleteTemplate(ctx, act, id); return err })
}

// GenerateInput is POST /card-templates/{id}/generate: request_id and what
// may differ from the template for this series.
type GenerateInput struct {
	RequestID      string  `json:"request_id"`
	Quantity       int64   `json:"quantity"`         // default: the template's
	Expiration     string  `json:"expiration"`       // default: the template's rule
	OwnerManagerID int64   `json:"owner_manager_id"` // default: the template's, else the caller
	Name           *string `json:"name"`             // default: the template's name
	Note           *string `json:"note"`             // default: the template's note
}

// GenerateFromTemplate is POST /card-templates/{id}/generate: a series made
// from the template's spec (with the request's overrides) through the
// generation job of POST /card-batches, and answering like it (202 fresh;
// a replay of request_id answers the original result with replay true,
// the template as it was then). The series keeps template_id and the
// template's design_id.
func GenerateFromTemplate(ctx context.Context, act *app.Actor, id int64, in GenerateInput) (*CreateResult, error) {
	if err := act.Require(PermCardsGenerateUser); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	t := act.Tenant
	now := t.Now()
	var out CreateResult
	var replay bool
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: in.RequestID, Subject: fmt.Sprintf("card-templates/%d/generate/by/%d", id, act.ManagerID), Input: in},
			func() (CreateResult, error) {
				tpl, err := loadTemplate(ctx, tx, act, id)
				if err != nil {
					return CreateResult{}, err
				}
				ci := tpl.input(tpl.Name, tpl.ID, now)
				ci.RequestID = in.RequestID
				if in.Quantity != 0 {
					ci.Quantity = in.Quantity
				}
				if in.Expiration != "" {
					ci.Expiration = in.Expiration
				}
				if in.OwnerManagerID != 0 {
					ci.OwnerManagerID = in.OwnerManagerID
				}
				if in.Name != nil {
					ci.Name = *in.Name
				}
				if in.Note != nil {
					ci.Note = *in.Note
				}
				if err := ci.validateSpec(now); err != nil {
					return CreateResult{}, err
				}
				return createBatchTx(ctx, tx, act, ci, tpl.DesignID, now)
			})
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	out.Status = "generating"
	return &out, nil
}
