package tickets

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"sort"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/subs"
	"xr/db"
)

// ---- Categories ----

// Category groups tickets; its custom fields are asked on new tickets.
type Category struct {
	ID          int64            `json:"id"`
	Name        string           `json:"name"`
	Description string           `json:"description"`
	TeamID      *int64           `json:"team_id"`
	Portal      bool             `json:"portal"`
	Position    int              `json:"position"`
	Enabled     bool             `json:"enabled"`
	Fields      []subs.FormField `json:"fields"`
	CreatedAt   app.Time         `json:"created_at"`
	UpdatedAt   app.Time         `json:"updated_at"`
}

// CategoryInput creates or patches a category.
type CategoryInput struct {
	Name        app.Opt[string] `json:"name"`
	Description app.Opt[string] `json:"description"`
	TeamID      app.Opt[int64]  `json:"team_id"`
	Portal      app.Opt[bool]   `json:"portal"`
	Position    app.Opt[int]    `json:"position"`
	Enabled     app.Opt[bool]   `json:"enabled"`
}

const categoryCols = `id, name, description, team_id, portal, position, enabled, created_at, updated_at`

func scanCategory(row interface{ Scan(...any) error }) (*Category, error) {
	c := &Category{Fields: []subs.FormField{}}
	err := row.Scan(&c.ID, &c.Name, &c.Description, &c.TeamID, &c.Portal, &c.Position, &c.Enabled, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return c, err
}

func loadCategories(ctx context.Context, q app.Querier, where string, args ...any) ([]Category, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+categoryCols+` FROM ticket_categories WHERE `+where+` ORDER BY position, name, id`, args...)
	if err != nil {
		return nil, err
	}
	var out []Category
	for rows.Next() {
		c, err := scanCategory(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, *c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		fs, err := loadFields(ctx, q, out[i].ID)
		if err != nil {
			return nil, err
		}
		out[i].Fields = fs
	}
	if out == nil {
		out = []Category{}
	}
	return out, nil
}

func getCategory(ctx context.Context, q app.Querier, id int64) (*Category, error) {
	c, err := scanCategory(q.QueryRowContext(ctx, `SELECT `+categoryCols+` FROM ticket_categories WHERE id = ?`, id))
	if err != nil {
		return nil, err
	}
	c.Fields, err = loadFields(ctx, q, id)
	return c, err
}

// ListCategories lists every category with its fields.
func ListCategories(ctx context.Context, act *app.Actor) ([]Category, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return loadCategories(ctx, act.Tenant.DB.R, "1=1")
}

func (in *CategoryInput) validate(create bool) error {
	if create && (!in.Name.Set || strings.TrimSpace(in.Name.V) == "") || in.Name.Set && strings.TrimSpace(in.Name.V) == "" {
		return app.ErrValidation("name_required", "name")
	}
	if len(in.Name.V) > 128 {
		return app.ErrValidation("too_long", "name")
	}
	if len(in.Description.V) > 2000 {
		return app.ErrValidation("too_long", "description")
	}
	return nil
}

func checkTeam(ctx context.Context, q app.Querier, o app.Opt[int64], field string) error {
	if !o.Set || o.Null {
		return nil
	}
	var one int
	if err := q.QueryRowContext(ctx, `SELECT 1 FROM manager_groups WHERE id = ?`, o.V).Scan(&one); errors.Is(err, sql.ErrNoRows) {
		return app.ErrValidation("invalid_team", field)
	} else if err != nil {
		return err
	}
	return nil
}

func optNull[T any](o app.Opt[T]) any {
	if !o.Set || o.Null {
		return nil
	}
	return o.V
}

// CreateCategory adds a category.
func CreateCategory(ctx context.Context, act *app.Actor, in CategoryInput) (*Category, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	if err := in.validate(true); err != nil {
		return nil, err
	}
	var out *Category
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if err := checkTeam(ctx, tx, in.TeamID, "team_id"); err != nil {
			return err
		}
		now := act.Tenant.NowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO ticket_categories(name, description, team_id, portal, position, enabled, created_at, updated_at)
			VALUES (?,?,?,?,?,?,?,?)`, strings.TrimSpace(in.Name.V), in.Description.V, optNull(in.TeamID), !in.Portal.Set || in.Portal.V,
			in.Position.V, !in.Enabled.Set || in.Enabled.V, now, now)
		if db.IsUnique(err) {
			return app.ErrConflict("name_taken").With("field", "name")
		}
		if err != nil {
			return err
		}
		id, _ := r.LastInsertId()
		out, err = getCategory(ctx, tx, id)
		return err
	})
	return out, err
}

// UpdateCategory patches a category.
func UpdateCategory(ctx context.Context, act *app.Actor, id int64, in CategoryInput) (*Category, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	if err := in.validate(false); err != nil {
		return nil, err
	}
	var out *Category
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := getCategory(ctx, tx, id); err != nil {
			return err
		}
		if err := checkTeam(ctx, tx, in.TeamID, "team_id"); err != nil {
			return err
		}
		set := map[string]any{}
		if in.Name.Set {
			set["name"] = strings.TrimSpace(in.Name.V)
		}
		if in.Description.Set {
			set["description"] = in.Description.V
		}
		if in.TeamID.Set {
			set["team_id"] = optNull(in.TeamID)
		}
		if in.Portal.Set {
			set["portal"] = in.Portal.V
		}
		if in.Position.Set {
			set["position"] = in.Position.V
		}
		if in.Enabled.Set {
			set["enabled"] = in.Enabled.V
		}
		if err := update(ctx, tx, "ticket_categories", id, set); err != nil {
			if db.IsUnique(err) {
				return app.ErrConflict("name_taken").With("field", "name")
			}
			return err
		}
		var err error
		out, err = getCategory(ctx, tx, id)
		return err
	})
	return out, err
}

// update sets columns of one row (and updated_at) through app.Patch.
func update(ctx context.Context, tx *sql.Tx, table string, id int64, set map[string]any) error {
	cols := make([]string, 0, len(set))
	for k := range set {
		cols = append(cols, k)
	}
	sort.Strings(cols)
	var p app.Patch
	for _, k := range cols {
		p.Set(k, set[k])
	}
	_, err := p.Exec(ctx, tx, table, id, app.StampNow())
	return err
}

// DeleteCategory removes a category; its tickets keep no category (409
// category_in_use while an SLA policy names it is avoided: policies go
// with it).
func DeleteCategory(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermTicketsConfig); err != nil {
		return err
	}
	return deleteRow(ctx, act, "ticket_categories", id)
}

func deleteRow(ctx context.Context, act *app.Actor, table string, id int64) error {
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id = ?`, id)
		if db.IsForeignKey(err) {
			return app.ErrConflict("in_use")
		}
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return app.ErrNotFound()
		}
		return nil
	})
}

// ---- Category fields (the rules of the subscriber custom forms) ----

// FieldInput creates or patches a custom field of a category.
type FieldInput struct {
	Name        app.Opt[string]         `json:"name"`
	Label       app.Opt[string]         `json:"label"`
	Type        app.Opt[subs.FieldType] `json:"type"`
	Required    app.Opt[bool]           `json:"required"`
	Regex       app.Opt[string]         `json:"regex"`
	Options     app.Opt[[]string]       `json:"options"`
	Placeholder app.Opt[string]         `json:"placeholder"`
	Help        app.Opt[string]         `json:"help"`
	MaxLength   app.Opt[int]            `json:"max_length"`
	Enabled     app.Opt[bool]           `json:"enabled"`
}

func (in FieldInput) form() subs.FormFieldInput {
	return subs.FormFieldInput{Name: in.Name, Label: in.Label, Type: in.Type, Required: in.Required, Regex: in.Regex,
		Options: in.Options, Placeholder: in.Placeholder, Help: in.Help, MaxLength: in.MaxLength, Enabled: in.Enabled}
}

const fieldCols = `id, category_id, name, label, type, required, regex, options, placeholder, help, max_length, position, enabled, created_at, updated_at`

func scanField(row interface{ Scan(...any) error }) (*subs.FormField, error) {
	f := &subs.FormField{}
	var opts string
	var cat int64
	err := row.Scan(&f.ID, &cat, &f.Name, &f.Label, &f.Type, &f.Required, &f.Regex, &opts, &f.Placeholder, &f.Help,
		&f.MaxLength, &f.Position, &f.Enabled, &f.CreatedAt, &f.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	f.FormName = fmt.Sprintf("ticket_category:%d", cat)
	if err := json.Unmarshal([]byte(opts), &f.Options); err != nil {
		return nil, fmt.Errorf("ticket field %d options: %w", f.ID, err)
	}
	if f.Options == nil {
		f.Options = []string{}
	}
	return f, nil
}

func loadFields(ctx context.Context, q app.Querier, categoryID int64) ([]subs.FormField, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+fieldCols+` FROM ticket_fields WHERE category_id = ? ORDER BY position, id`, categoryID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []subs.FormField{}
	for rows.Next() {
		f, err := scanField(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *f)
	}
	return out, rows.Err()
}

// ListFields lists a category's fields in order (404 for an unknown category).
func ListFields(ctx context.Context, act *app.Actor, categoryID int64) ([]subs.FormField, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	if _, err := getCategory(ctx, act.Tenant.DB.R, categoryID); err != nil {
		return nil, err
	}
	return loadFields(ctx, act.Tenant.DB.R, categoryID)
}

// CreateField adds a field at the end of a category's form.
func CreateField(ctx context.Context, act *app.Actor, categoryID int64, in FieldInput) (*subs.FormField, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	if err := subs.CheckFieldInput(in.form(), true, ""); err != nil {
		return nil, err
	}
	var out *subs.FormField
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := getCategory(ctx, tx, categoryID); err != nil {
			return err
		}
		opts := in.Options.V
		if opts == nil {
			opts = []string{}
		}
		now := act.Tenant.NowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO ticket_fields(category_id, name, label, type, required, regex, options, placeholder, help, max_length, position, enabled, created_at, updated_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,(SELECT COALESCE(MAX(position),0)+1 FROM ticket_fields WHERE category_id = ?),?,?,?)`,
			categoryID, in.Name.V, in.Label.V, string(in.Type.V), in.Required.V, in.Regex.V, jsonText(opts), in.Placeholder.V, in.Help.V,
			in.MaxLength.V, categoryID, !in.Enabled.Set || in.Enabled.V, now, now)
		if db.IsUnique(err) {
			return app.ErrConflict("name_taken").With("field", "name")
		}
		if err != nil {
			return err
		}
		id, _ := r.LastInsertId()
		out, err = scanField(tx.QueryRowContext(ctx, `SELECT `+fieldCols+` FROM ticket_fields WHERE id = ?`, id))
		return err
	})
	return out, err
}

// UpdateField patches a field (name and type are fixed).
func UpdateField(ctx context.Context, act *app.Actor, categoryID, id int64, in FieldInput) (*subs.FormField, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	var out *subs.FormField
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		old, err := scanField(tx.QueryRowContext(ctx, `SELECT `+fieldCols+` FROM ticket_fields WHERE id = ? AND category_id = ?`, id, categoryID))
		if err != nil {
			return err
		}
		if err := subs.CheckFieldInput(in.form(), false, old.Type); err != nil {
			return err
		}
		set := map[string]any{}
		if in.Label.Set {
			set["label"] = in.Label.V
		}
		if in.Required.Set {
			set["required"] = in.Required.V
		}
		if in.Regex.Set {
			set["regex"] = in.Regex.V
		}
		if in.Options.Set {
			opts := in.Options.V
			if opts == nil {
				opts = []string{}
			}
			set["options"] = jsonText(opts)
		}
		if in.Placeholder.Set {
			set["placeholder"] = in.Placeholder.V
		}
		if in.Help.Set {
			set["help"] = in.Help.V
		}
		if in.MaxLength.Set {
			set["max_length"] = in.MaxLength.V
		}
		if in.Enabled.Set {
			set["enabled"] = in.Enabled.V
		}
		if err := update(ctx, tx, "ticket_fields", id, set); err != nil {
			return err
		}
		out, err = scanField(tx.QueryRowContext(ctx, `SELECT `+fieldCols+` FROM ticket_fields WHERE id = ?`, id))
		return err
	})
	return out, err
}

// DeleteField removes a field; values stored on tickets stay.
func DeleteField(ctx context.Context, act *app.Actor, categoryID, id int64) error {
	if err := act.Require(PermTicketsConfig); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM ticket_fields WHERE id = ? AND category_id = ?`, id, categoryID)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return app.ErrNotFound()
		}
		return nil
	})
}

// ---- The new-ticket form ----

// Form is what a new-ticket form needs: priorities and the categories with
// their enabled fields.
type Form struct {
	Priorities      []string   `json:"priorities"`
	DefaultPriority string     `json:"default_priority"`
	Categories      []Category `json:"categories"`
	MaxAttachment   int64      `json:"max_attachment_bytes"`
	AllowedTypes    []string   `json:"allowed_types"`
}

func buildForm(ctx context.Context, t *app.Tenant, portal bool) (*Form, error) {
	where := "enabled = 1"
	if portal {
		where += " AND portal = 1"
	}
	cats, err := loadCategories(ctx, t.DB.R, where)
	if err != nil {
		return nil, err
	}
	for i := range cats {
		enabled := []subs.FormField{}
		for _, f := range cats[i].Fields {
			if f.Enabled {
				enabled = append(enabled, f)
			}
		}
		cats[i].Fields = enabled
	}
	max, err := SettingTicketsAttachmentMax.Get(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	return &Form{Priorities: Priorities, DefaultPriority: "normal", Categories: cats, MaxAttachment: max, AllowedTypes: allowTypes}, nil
}

// GetForm is the staff new-ticket form.
func GetForm(ctx context.Context, act *app.Actor) (*Form, error) {
	if err := act.Require(PermTicketsView); err != nil {
		return nil, err
	}
	return buildForm(ctx, act.Tenant, false)
}

// validateCustom checks custom field values against a category's enabled
// fields (no category: no values allowed).
func validateCustom(ctx context.Context, q app.Querier, categoryID *int64, values, existing map[string]json.RawMessage) (string, error) {
	var fields []subs.FormField
	if categoryID != nil {
		all, err := loadFields(ctx, q, *categoryID)
		if err != nil {
			return "", err
		}
		fields = all
	}
	return subs.ValidateFieldValues(fields, values, existing)
}

// ---- Canned replies ----

// CannedReply is a reusable reply text with variables.
type CannedReply struct {
	ID        int64    `json:"id"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	CreatedAt app.Time `json:"created_at"`
	UpdatedAt app.Time `json:"updated_at"`
}

// CannedInput creates or replaces a canned reply.
type CannedInput struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

func (in *CannedInput) validate() error {
	in.Title = strings.TrimSpace(in.Title)
	if in.Title == "" || len(in.Title) > 128 {
		return app.ErrValidation("title_required", "title")
	}
	if strings.TrimSpace(in.Body) == "" {
		return app.ErrValidation("body_required", "body")
	}
	if len(in.Body) > maxBody {
		return app.ErrValidation("too_long", "body")
	}
	return CheckVariables(in.Body, "body")
}

const cannedCols = `id, title, body, created_at, updated_at`

func scanCanned(row interface{ Scan(...any) error }) (*CannedReply, error) {
	c := &CannedReply{}
	err := row.Scan(&c.ID, &c.Title, &c.Body, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return c, err
}

// ListCanned lists canned replies by title.
func ListCanned(ctx context.Context, act *app.Actor) ([]CannedReply, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return app.QueryAll(ctx, act.Tenant.DB.R, scanCanned, `SELECT `+cannedCols+` FROM ticket_canned_replies ORDER BY title, id`)
}

// CreateCanned adds a canned reply.
func CreateCanned(ctx context.Context, act *app.Actor, in CannedInput) (*CannedReply, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return putCanned(ctx, act, 0, in)
}

// PutCanned replaces a canned reply.
func PutCanned(ctx context.Context, act *app.Actor, id int64, in CannedInput) (*CannedReply, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return putCanned(ctx, act, id, in)
}

func putCanned(ctx context.Context, act *app.Actor, id int64, in CannedInput) (*CannedReply, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	var out *CannedReply
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		now := act.Tenant.NowText()
		var err error
		if id == 0 {
			var r sql.Result
			r, err = tx.ExecContext(ctx, `INSERT INTO ticket_canned_replies(title, body, created_at, updated_at) VALUES (?,?,?,?)`, in.Title, in.Body, now, now)
			if err == nil {
				id, _ = r.LastInsertId()
			}
		} else {
			var r sql.Result
			r, err = tx.ExecContext(ctx, `UPDATE ticket_canned_replies SET title = ?, body = ?, updated_at = ? WHERE id = ?`, in.Title, in.Body, now, id)
			if err == nil {
				if n, _ := r.RowsAffected(); n == 0 {
					return app.ErrNotFound()
				}
			}
		}
		if db.IsUnique(err) {
			return app.ErrConflict("title_taken").With("field", "title")
		}
		if err != nil {
			return err
		}
		out, err = scanCanned(tx.QueryRowContext(ctx, `SELECT `+cannedCols+` FROM ticket_canned_replies WHERE id = ?`, id))
		return err
	})
	return out, err
}

// DeleteCanned removes a canned reply.
func DeleteCanned(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermTicketsConfig); err != nil {
		return err
	}
	return deleteRow(ctx, act, "ticket_canned_replies", id)
}

// ---- Blocklist ----

// BlockKinds and BlockActions are the blocklist enums.
var (
	BlockKinds   = []string{"email", "domain", "subscriber"}
	BlockActions = []string{"refuse", "spam"}
)

// Block is one blocklist entry.
type Block struct {
	ID        int64    `json:"id"`
	Kind      string   `json:"kind"`
	Value     string   `json:"value"`
	Action    string   `json:"action"`
	Note      string   `json:"note"`
	CreatedAt app.Time `json:"created_at"`
}

// BlockInput adds an entry.
type BlockInput struct {
	Kind   string `json:"kind"`
	Value  string `json:"value"`
	Action string `json:"action"`
	Note   string `json:"note"`
}

// ListBlocks lists the blocklist, newest first.
func ListBlocks(ctx context.Context, act *app.Actor) ([]Block, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	rows, err := act.Tenant.DB.R.QueryContext(ctx, `SELECT id, kind, value, action, note, created_at FROM ticket_blocklist ORDER BY id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Block{}
	for rows.Next() {
		var b Block
		if err := rows.Scan(&b.ID, &b.Kind, &b.Value, &b.Action, &b.Note, &b.CreatedAt); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if a == v {
			return true
		}
	}
	return false
}

// AddBlock adds an entry (409 already_blocked for a duplicate).
func AddBlock(ctx context.Context, act *app.Actor, in BlockInput) (*Block, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	in.Value = strings.ToLower(strings.TrimSpace(in.Value))
	if in.Action == "" {
		in.Action = "refuse"
	}
	if !oneOf(in.Kind, BlockKinds) {
		return nil, app.ErrValidation("invalid_enum", "kind").With("allowed", BlockKinds)
	}
	if !oneOf(in.Action, BlockActions) {
		return nil, app.ErrValidation("invalid_enum", "action").With("allowed", BlockActions)
	}
	switch in.Kind {
	case "email":
		if a, err := mail.ParseAddress(in.Value); err != nil || a.Address != in.Value {
			return nil, app.ErrValidation("invalid_email", "value")
		}
	case "domain":
		in.Value = strings.TrimPrefix(in.Value, "@")
		if in.Value == "" || strings.ContainsAny(in.Value, "@ /") || !strings.Contains(in.Value, ".") {
			return nil, app.ErrValidation("invalid_domain", "value")
		}
	case "subscriber":
		var id int64
		if _, err := fmt.Sscan(in.Value, &id); err != nil || id <= 0 || fmt.Sprint(id) != in.Value {
			return nil, app.ErrValidation("invalid_subscriber", "value")
		}
	}
	if len(in.Note) > 500 {
		return nil, app.ErrValidation("too_long", "note")
	}
	var out Block
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if in.Kind == "subscriber" {
			uid, _ := strconv.ParseInt(in.Value, 10, 64) // checked above
			_, err := subs.Read(ctx, tx, uid)
			if e := app.AsError(err); e != nil && e.Code == app.CodeNotFound {
				return app.ErrValidation("invalid_subscriber", "value")
			}
			if err != nil {
				return err
			}
		}
		now := act.Tenant.NowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO ticket_blocklist(kind, value, action, note, created_at) VALUES (?,?,?,?,?)`, in.Kind, in.Value, in.Action, in.Note, now)
		if db.IsUnique(err) {
			return app.ErrConflict("already_blocked")
		}
		if err != nil {
			return err
		}
		id, _ := r.LastInsertId()
		return tx.QueryRowContext(ctx, `SELECT id, kind, value, action, note, created_at FROM ticket_blocklist WHERE id = ?`, id).
			Scan(&out.ID, &out.Kind, &out.Value, &out.Action, &out.Note, &out.CreatedAt)
	})
	return &out, err
}

// DeleteBlock removes an entry.
func DeleteBlock(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermTicketsConfig); err != nil {
		return err
	}
	return deleteRow(ctx, act, "ticket_blocklist", id)
}

// BulkDeleteBlocks removes entries, each on its own.
func BulkDeleteBlocks(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return app.BulkResult{}, err
	}
	if err := in.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error { return DeleteBlock(ctx, act, id) }), nil
}

// blocked returns the action of the first entry matching a requester
// ("" when none).
func blocked(ctx context.Context, tx *sql.Tx, email string, userID *int64) (string, error) {
	email = strings.ToLower(email)
	domain := ""
	if i := strings.LastIndexByte(email, '@'); i >= 0 {
		domain = email[i+1:]
	}
	uid := ""
	if userID != nil {
		uid = fmt.Sprint(*userID)
	}
	var action string
	err := tx.QueryRowContext(ctx, `SELECT action FROM ticket_blocklist WHERE (kind = 'email' AND value = ? AND ? <> '')
		OR (kind = 'domain' AND value = ? AND ? <> '') OR (kind = 'subscriber' AND value = ? AND ? <> '')
		ORDER BY action = 'refuse' DESC LIMIT 1`, email, email, domain, domain, uid, uid).Scan(&action)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return action, err
}
