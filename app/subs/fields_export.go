package subs

import (
	"encoding/json"
	"regexp"
)

// Other areas' custom fields (ticket categories) follow the rules of the
// subscriber forms: these two functions expose them without a form name.

// CheckFieldInput validates a field definition: on create, name and type are
// required (form_name is not asked for); on update, name and type are
// immutable and typ is the stored type.
func CheckFieldInput(in FormFieldInput, create bool, typ string) error {
	if create {
		in.FormName = fieldFormPlaceholder
	}
	return in.validate(create, typ)
}

var fieldFormPlaceholder = func() (o FormFieldInput) {
	o.FormName.Set, o.FormName.V = true, "user"
	return
}().FormName

// ValidateFieldValues checks values against fields exactly as
// ValidateCustomFields checks a form (same reasons, same details) and
// returns the JSON object to store.
func ValidateFieldValues(fields []FormField, values, existing map[string]json.RawMessage) (string, error) {
	fs := make([]FormField, len(fields))
	copy(fs, fields)
	for i := range fs {
		if fs[i].Regex != "" && fs[i].re == nil {
			fs[i].re, _ = regexp.Compile(`^(?:` + fs[i].Regex + `)$`)
		}
	}
	return validateCustom(fs, values, existing)
}
