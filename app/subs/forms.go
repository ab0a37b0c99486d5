package subs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"xr/app"
	"xr/db"
)

// Forms are the custom field schemas of the subscriber form ("user") and
// the manager form ("manager"). Each row of /admin/forms is one field of
// one form; a record's values live in its custom_fields JSON object.

// FieldTypes are the kinds of custom field.
var FieldTypes = []string{"text", "number", "date", "select", "checkbox"}

// FormNames are the forms that carry custom fields.
var FormNames = []string{"user", "manager"}

// FieldType is a JSON enum of FieldTypes.
type FieldType string

func (f *FieldType) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, FieldTypes...)
	*f = FieldType(s)
	return err
}

// FormName is a JSON enum of FormNames (plural and "subscriber" accepted).
type FormName string

func (f *FormName) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		if n, ok := CanonicalForm(s); ok {
			*f = FormName(n)
			return nil
		}
	}
	return &app.EnumError{Allowed: FormNames}
}

// CanonicalForm maps a form name as written in paths and bodies to its
// stored name.
func CanonicalForm(s string) (string, bool) {
	switch strings.ToLower(s) {
	case "user", "users", "subscriber", "subscribers":
		return "user", true
	case "manager", "managers":
		return "manager", true
	}
	return "", false
}

// FormField is one custom field definition.
type FormField struct {
	ID          int64    `json:"id"`
	FormName    string   `json:"form_name"`
	Name        string   `json:"name"` // key in custom_fields
	Label       string   `json:"label"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Regex       string   `json:"regex"` // text only; the whole value must match
	Options     []string `json:"options"`
	Placeholder string   `json:"placeholder"`
	Help        string   `json:"help"`
	MaxLength   int      `json:"max_length"` // text; 0 = 255
	Position    int      `json:"position"`
	Enabled     bool     `json:"enabled"`
	CreatedAt   app.Time `json:"created_at"`
	UpdatedAt   app.Time `json:"updated_at"`

	re *regexp.Regexp
}

// FormFieldInput creates or patches a field; form_name, name and type are
// fixed once created (stored values depend on them).
type FormFieldInput struct {
	FormName    app.Opt[FormName]  `json:"form_name"`
	Name        app.Opt[string]    `json:"name"`
	Label       app.Opt[string]    `json:"label"`
	Type        app.Opt[FieldType] `json:"type"`
	Required    app.Opt[bool]      `json:"required"`
	Regex       app.Opt[string]    `json:"regex"`
	Options     app.Opt[[]string]  `json:"options"`
	Placeholder app.Opt[string]    `json:"placeholder"`
	Help        app.Opt[string]    `json:"help"`
	MaxLength   app.Opt[int]       `json:"max_length"`
	Enabled     app.Opt[bool]      `json:"enabled"`
}

var fieldNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

const formFieldCols = `id, form_name, name, label, type, required, regex, options, placeholder, help, max_length, position, enabled, created_at, updated_at`

func scanFormField(row interface{ Scan(...any) error }) (*FormField, error) {
	f := &FormField{}
	var opts string
	err := row.Scan(&f.ID, &f.FormName, &f.Name, &f.Label, &f.Type, &f.Required, &f.Regex, &opts, &f.Placeholder, &f.Help,
		&f.MaxLength, &f.Position, &f.Enabled, &f.CreatedAt, &f.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(opts), &f.Options); err != nil {
		return nil, fmt.Errorf("form field %d options: %w", f.ID, err)
	}
	if f.Options == nil {
		f.Options = []string{}
	}
	if f.Regex != "" {
		f.re, _ = regexp.Compile(`^(?:` + f.Regex + `)$`)
	}
	return f, nil
}

// loadFormFields reads the fields of a form in order (disabled included).
func loadFormFields(ctx context.Context, q app.Querier, form string) ([]FormField, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+formFieldCols+` FROM form_fields WHERE form_name = ? ORDER BY position, id`, form)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FormField
	for rows.Next() {
		f, err := scanFormField(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *f)
	}
	return out, rows.Err()
}

func (in *FormFieldInput) validate(create bool, typ string) error {
	if create {
		if !in.FormName.Set || in.FormName.Null {
			return app.ErrValidation("form_name_required", "form_name")
		}
		if !in.Name.Set || in.Name.V == "" {
			return app.ErrValidation("name_required", "name")
		}
		if !in.Type.Set || in.Type.Null {
			return app.ErrValidation("type_required", "type")
		}
		if !fieldNameRe.MatchString(in.Name.V) {
			return app.ErrValidation("invalid_name", "name")
		}
		typ = string(in.Type.V)
	} else {
		if in.FormName.Set {
			return app.ErrValidation("immutable_field", "form_name")
		}
		if in.Name.Set {
			return app.ErrValidation("immutable_field", "name")
		}
		if in.Type.Set {
			return app.ErrValidation("immutable_field", "type")
		}
	}
	if in.Label.Set && len(in.Label.V) > 128 {
		return app.ErrValidation("too_long", "label")
	}
	if in.Regex.Set && in.Regex.V != "" {
		if typ != "text" {
			return app.ErrValidation("regex_text_only", "regex")
		}
		if len(in.Regex.V) > 512 {
			return app.ErrValidation("too_long", "regex")
		}
		if _, err := regexp.Compile(in.Regex.V); err != nil {
			return app.ErrValidation("invalid_regex", "regex")
		}
	}
	if in.MaxLength.Set && (in.MaxLength.V < 0 || in.MaxLength.V > 4000) {
		return app.ErrValidation("out_of_range", "max_length")
	}
	if in.Options.Set {
		if typ != "select" && len(in.Options.V) > 0 {
			return app.ErrValidation("options_select_only", "options")
		}
		seen := map[string]bool{}
		for _, o := range in.Options.V {
			if o == "" || len(o) > 128 || seen[o] {
				return app.ErrValidation("invalid_options", "options")
			}
			seen[o] = true
		}
	}
	if create && typ == "select" && len(in.Options.V) == 0 {
		return app.ErrValidation("options_required", "options")
	}
	if !create && typ == "select" && in.Options.Set && len(in.Options.V) == 0 {
		return app.ErrValidation("options_required", "options")
	}
	return nil
}

// ListFormFields lists every field (filter[form_name]) in form order: one page.
func ListFormFields(ctx context.Context, act *app.Actor, form string) ([]FormField, error) {
	if err := act.Require(PermFormsManage); err != nil {
		return nil, err
	}
	where, args := "1=1", []any{}
	if form != "" {
		n, ok := CanonicalForm(form)
		if !ok {
			return nil, app.ErrValidation("invalid_filter", "filter[form_name]")
		}
		where, args = "form_name = ?", []any{n}
	}
	rows, err := act.Tenant.DB.R.QueryContext(ctx, `SELECT `+formFieldCols+` FROM form_fields WHERE `+where+` ORDER BY form_name DESC, position, id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []FormField{}
	for rows.Next() {
		f, err := scanFormField(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *f)
	}
	return out, rows.Err()
}

// CreateFormField adds a field at the end of its form.
func CreateFormField(ctx context.Context, act *app.Actor, in FormFieldInput) (*FormField, error) {
	if err := act.Require(PermFormsManage); err != nil {
		return nil, err
	}
	if err := in.validate(true, ""); err != nil {
		return nil, err
	}
	var f *FormField
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		now := nowText()
		opts := in.Options.V
		if opts == nil {
			opts = []string{}
		}
		enabled := !in.Enabled.Set || in.Enabled.V
		r, err := tx.ExecContext(ctx, `INSERT INTO form_fields(form_name, name, label, type, required, regex, options, placeholder, help, max_length, position, enabled, created_at, updated_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,(SELECT COALESCE(MAX(position),0)+1 FROM form_fields WHERE form_name = ?),?,?,?)`,
			string(in.FormName.V), in.Name.V, in.Label.V, string(in.Type.V), in.Required.V, in.Regex.V, jsonText(opts), in.Placeholder.V,
			in.Help.V, in.MaxLength.V, string(in.FormName.V), enabled, now, now)
		if db.IsUnique(err) {
			return app.ErrConflict("name_taken").With("field", "name")
		}
		if err != nil {
			return err
		}
		id, _ := r.LastInsertId()
		f, err = scanFormField(tx.QueryRowContext(ctx, `SELECT `+formFieldCols+` FROM form_fields WHERE id = ?`, id))
		return err
	})
	return f, err
}

// UpdateFormField patches a field's label, rules and options.
func UpdateFormField(ctx context.Context, act *app.Actor, id int64, in FormFieldInput) (*FormField, error) {
	if err := act.Require(PermFormsManage); err != nil {
		return nil, err
	}
	var f *FormField
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		old, err := scanFormField(tx.QueryRowContext(ctx, `SELECT `+formFieldCols+` FROM form_fields WHERE id = ?`, id))
		if err != nil {
			return err
		}
		if err := in.validate(false, old.Type); err != nil {
			return err
		}
		var p app.Patch
		if in.Label.Set {
			p.Set("label", in.Label.V)
		}
		if in.Required.Set {
			p.Set("required", in.Required.V)
		}
		if in.Regex.Set {
			p.Set("regex", in.Regex.V)
		}
		if in.Options.Set {
			opts := in.Options.V
			if opts == nil {
				opts = []string{}
			}
			p.Set("options", jsonText(opts))
		}
		if in.Placeholder.Set {
			p.Set("placeholder", in.Placeholder.V)
		}
		if in.Help.Set {
			p.Set("help", in.Help.V)
		}
		if in.MaxLength.Set {
			p.Set("max_length", in.MaxLength.V)
		}
		if in.Enabled.Set {
			p.Set("enabled", in.Enabled.V)
		}
		if _, err := p.Exec(ctx, tx, "form_fields", id, nowText()); err != nil {
			return err
		}
		f, err = scanFormField(tx.QueryRowContext(ctx, `SELECT `+formFieldCols+` FROM form_fields WHERE id = ?`, id))
		return err
	})
	return f, err
}

// DeleteFormField removes a field definition; values already stored in
// records stay in their custom_fields until the record is next saved.
func DeleteFormField(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermFormsManage); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM form_fields WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return app.ErrNotFound()
		}
		return nil
	})
}

// BulkDeleteFormFields deletes each id on its own.
func BulkDeleteFormFields(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermFormsManage); err != nil {
		return app.BulkResult{}, err
	}
	if err := in.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error { return DeleteFormField(ctx, act, id) }), nil
}

// ReorderInput sets the order of a form's fields.
type ReorderInput struct {
	FormName FormName `json:"form_name"`
	IDs      []int64  `json:"ids"`
}

// ReorderFormFields puts ids first, in that order, and keeps the other
// fields of the form after them in their current order.
func ReorderFormFields(ctx context.Context, act *app.Actor, in ReorderInput) ([]FormField, error) {
	if err := act.Require(PermFormsManage); err != nil {
		return nil, err
	}
	if in.FormName == "" {
		return nil, app.ErrValidation("form_name_required", "form_name")
	}
	if len(in.IDs) == 0 {
		return nil, app.ErrValidation("ids_required", "ids")
	}
	var out []FormField
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		fields, err := loadFormFields(ctx, tx, string(in.FormName))
		if err != nil {
			return err
		}
		byID := map[int64]bool{}
		for _, f := range fields {
			byID[f.ID] = true
		}
		order := []int64{}
		seen := map[int64]bool{}
		for _, id := range in.IDs {
			if !byID[id] {
				return app.ErrValidation("invalid_id", "ids").With("id", id)
			}
			if !seen[id] {
				seen[id] = true
				order = append(order, id)
			}
		}
		for _, f := range fields {
			if !seen[f.ID] {
				order = append(order, f.ID)
			}
		}
		for i, id := range order {
			if _, err := tx.ExecContext(ctx, `UPDATE form_fields SET position = ?, updated_at = ? WHERE id = ?`, i+1, nowText(), id); err != nil {
				return err
			}
		}
		out, err = loadFormFields(ctx, tx, string(in.FormName))
		return err
	})
	if out == nil {
		out = []FormField{}
	}
	return out, err
}

// FormInfo is one entry of the forms manifest.
type FormInfo struct {
	FormName       string   `json:"form_name"`
	Label          string   `json:"label"`
	FieldsCount    int      `json:"fields_count"`
	RequiredCount  int      `json:"required_count"`
	SchemaPath     string   `json:"schema_path"`
	LastModifiedAt app.Time `json:"updated_at"`
}

// FormManifest lists the forms that carry custom fields.
func FormManifest(ctx context.Context, act *app.Actor) ([]FormInfo, error) {
	if err := act.Require(PermUsersCreate); err != nil {
		return nil, err
	}
	labels := map[string]string{"user": "Subscriber", "manager": "Manager"}
	out := []FormInfo{}
	for _, n := range FormNames {
		fi := FormInfo{FormName: n, Label: labels[n], SchemaPath: "/api/v1/admin/forms/" + n + "/schema"}
		var last sql.NullString
		err := act.Tenant.DB.R.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(required),0), MAX(updated_at) FROM form_fields WHERE form_name = ? AND enabled = 1`, n).
			Scan(&fi.FieldsCount, &fi.RequiredCount, &last)
		if err != nil {
			return nil, err
		}
		if last.Valid {
			if err := fi.LastModifiedAt.Scan(last.String); err != nil {
				return nil, err
			}
		}
		out = append(out, fi)
	}
	return out, nil
}

// FormSchema is the schema a client renders and validates against: the
// enabled fields of a form in order.
type FormSchema struct {
	FormName string      `json:"form_name"`
	Fields   []FormField `json:"fields"`
}

// GetFormSchema reads the schema of a form (404 for an unknown form).
func GetFormSchema(ctx context.Context, act *app.Actor, form string) (*FormSchema, error) {
	if err := act.Require(PermUsersCreate); err != nil {
		return nil, err
	}
	n, ok := CanonicalForm(form)
	if !ok {
		return nil, app.ErrNotFound()
	}
	fields, err := loadFormFields(ctx, act.Tenant.DB.R, n)
	if err != nil {
		return nil, err
	}
	s := &FormSchema{FormName: n, Fields: []FormField{}}
	for _, f := range fields {
		if f.Enabled {
			s.Fields = append(s.Fields, f)
		}
	}
	return s, nil
}

// FieldError is one custom field refused.
type FieldError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// ValidateCustomFields checks values against a form's schema ("user" or
// "manager") and returns the normalised JSON object to store. existing (may
// be nil) holds the record's current values for a partial update: keys of
// values replace them, a null value removes one. Refusals are 400 naming
// the first failing field as custom_fields.<name> with its reason
// (custom_field_required, _unknown, _invalid_type, _invalid_number,
// _invalid_date, _invalid_option, _pattern_mismatch, _too_long); details
// "errors" lists every failing field.
func ValidateCustomFields(ctx context.Context, q app.Querier, form string, values, existing map[string]json.RawMessage) (string, error) {
	n, ok := CanonicalForm(form)
	if !ok {
		return "", app.ErrValidation("invalid_form", "form_name")
	}
	fields, err := loadFormFields(ctx, q, n)
	if err != nil {
		return "", err
	}
	return validateCustom(fields, values, existing)
}

func validateCustom(fields []FormField, values, existing map[string]json.RawMessage) (string, error) {
	merged := map[string]json.RawMessage{}
	for k, v := range existing {
		merged[k] = v
	}
	for k, v := range values {
		if string(v) == "null" {
			delete(merged, k)
			continue
		}
		merged[k] = v
	}
	byName := map[string]*FormField{}
	for i := range fields {
		byName[fields[i].Name] = &fields[i]
	}
	var errs []FieldError
	out := map[string]any{}
	// Unknown keys: refused when sent now; kept when already stored (a
	// field deleted since) so an unrelated edit does not fail.
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := byName[k]
		if f == nil {
			if _, sent := values[k]; sent {
				errs = append(errs, FieldError{"custom_fields." + k, "custom_field_unknown"})
			} else {
				out[k] = merged[k]
			}
			continue
		}
		v, reason := f.check(merged[k])
		if reason != "" {
			errs = append(errs, FieldError{"custom_fields." + k, reason})
			continue
		}
		if v != nil {
			out[k] = v
		}
	}
	for i := range fields {
		f := &fields[i]
		if !f.Enabled || !f.Required {
			continue
		}
		if _, ok := out[f.Name]; !ok && !hasErr(errs, "custom_fields."+f.Name) {
			errs = append(errs, FieldError{"custom_fields." + f.Name, "custom_field_required"})
		}
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return fieldPos(byName, errs[i].Field) < fieldPos(byName, errs[j].Field) })
		return "", app.ErrValidation(errs[0].Reason, errs[0].Field).With("errors", errs)
	}
	return jsonText(out), nil
}

func hasErr(errs []FieldError, field string) bool {
	for _, e := range errs {
		if e.Field == field {
			return true
		}
	}
	return false
}

func fieldPos(byName map[string]*FormField, field string) int {
	if f := byName[strings.TrimPrefix(field, "custom_fields.")]; f != nil {
		return f.Position
	}
	return 1 << 30
}

// check validates one value; it returns the normalised value (nil for an
// empty value) or a reason.
func (f *FormField) check(raw json.RawMessage) (any, string) {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, "custom_field_invalid_type"
	}
	switch f.Type {
	case "text":
		s, ok := v.(string)
		if !ok {
			if n, isNum := v.(json.Number); isNum {
				s, ok = n.String(), true
			}
		}
		if !ok {
			return nil, "custom_field_invalid_type"
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, ""
		}
		limit := f.MaxLength
		if limit == 0 {
			limit = 255
		}
		if len([]rune(s)) > limit {
			return nil, "custom_field_too_long"
		}
		if f.re != nil && !f.re.MatchString(s) {
			return nil, "custom_field_pattern_mismatch"
		}
		return s, ""
	case "number":
		switch x := v.(type) {
		case json.Number:
			if _, err := strconv.ParseFloat(x.String(), 64); err != nil {
				return nil, "custom_field_invalid_number"
			}
			return x, ""
		case string:
			x = strings.TrimSpace(x)
			if x == "" {
				return nil, ""
			}
			if _, err := strconv.ParseFloat(x, 64); err != nil {
				return nil, "custom_field_invalid_number"
			}
			return json.Number(x), ""
		}
		return nil, "custom_field_invalid_type"
	case "date":
		s, ok := v.(string)
		if !ok {
			return nil, "custom_field_invalid_type"
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, ""
		}
		t, err := app.ParseTime(s, true)
		if err != nil {
			return nil, "custom_field_invalid_date"
		}
		return t.Format(app.DateLayout), ""
	case "select":
		s, ok := v.(string)
		if !ok {
			return nil, "custom_field_invalid_type"
		}
		if s == "" {
			return nil, ""
		}
		for _, o := range f.Options {
			if o == s {
				return s, ""
			}
		}
		return nil, "custom_field_invalid_option"
	case "checkbox":
		switch x := v.(type) {
		case bool:
			return x, ""
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "1", "yes":
				return true, ""
			case "false", "0", "no":
				return false, ""
			case "":
				return nil, ""
			}
		}
		return nil, "custom_field_invalid_type"
	}
	return nil, "custom_field_invalid_type"
}
