package web_test

import (
	"fmt"
	"testing"

	"xr/internal/webtest"
)

func TestFormsAdmin(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	mk := func(body map[string]any) int64 {
		t.Helper()
		r := s.Call("POST", "/admin/forms", s.Tok, body)
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		return int64(r.Data()["id"].(float64))
	}
	a := mk(map[string]any{"form_name": "user", "name": "building", "type": "text", "required": true})
	b := mk(map[string]any{"form_name": "user", "name": "floor", "type": "number"})
	c := mk(map[string]any{"form_name": "user", "name": "tier", "type": "select", "options": []string{"gold", "silver"}})
	m := mk(map[string]any{"form_name": "managers", "name": "region", "type": "text"})
	for body, reason := range map[string]string{
		`{"name":"x","type":"text"}`:                                          "form_name_required",
		`{"form_name":"user","type":"text"}`:                                  "name_required",
		`{"form_name":"user","name":"x"}`:                                     "type_required",
		`{"form_name":"nope","name":"x","type":"text"}`:                       "invalid_enum",
		`{"form_name":"user","name":"Bad Name","type":"text"}`:                "invalid_name",
		`{"form_name":"user","name":"x","type":"radio"}`:                      "invalid_enum",
		`{"form_name":"user","name":"x","type":"select"}`:                     "options_required",
		`{"form_name":"user","name":"x","type":"text","regex":"("}`:           "invalid_regex",
		`{"form_name":"user","name":"x","type":"number","regex":"a"}`:         "regex_text_only",
		`{"form_name":"user","name":"x","type":"text","options":["a"]}`:       "options_select_only",
		`{"form_name":"user","name":"x","type":"select","options":["a","a"]}`: "invalid_options",
	} {
		if r := s.Call("POST", "/admin/forms", s.Tok, body); r.Status != 400 || r.Reason() != reason {
			t.Errorf("%s: %d %s", body, r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, s.Call("POST", "/admin/forms", s.Tok, map[string]any{"form_name": "user", "name": "floor", "type": "text"}), 409, "ERR_CONFLICT", "name_taken")
	// Same name on another form is fine.
	mk(map[string]any{"form_name": "manager", "name": "floor", "type": "text"})

	l := s.Call("GET", "/admin/forms?filter[form_name]=user", s.Tok, nil)
	if suIDs(l) == nil || fmt.Sprint(suIDs(l)) != fmt.Sprint([]int64{a, b, c}) || l.Meta()["has_next"] != false {
		t.Fatalf("%s", l.Body)
	}
	if all := s.Call("GET", "/admin/forms", s.Tok, nil); len(all.List()) != 5 {
		t.Fatalf("%s", all.Body)
	}
	// Reorder: the named ids first, the others after in their order.
	ro := s.Call("POST", "/admin/forms/reorder", s.Tok, map[string]any{"form_name": "user", "ids": []int64{c, a}})
	if ro.Status != 200 || fmt.Sprint(suIDs(webtest.Resp{JSON: map[string]any{"data": ro.JSON["data"]}})) != fmt.Sprint([]int64{c, a, b}) {
		t.Fatalf("%s", ro.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", "/admin/forms/reorder", s.Tok, map[string]any{"form_name": "user", "ids": []int64{m}}), 400, "ERR_VALIDATION", "invalid_id")
	// Patch: rules change; name/type/form fixed.
	if p := s.Call("PATCH", fmt.Sprintf("/admin/forms/%d", a), s.Tok, map[string]any{"label": "Building", "regex": "[A-Z]+"}); p.Status != 200 || p.Data()["label"] != "Building" {
		t.Fatalf("%s", p.Body)
	}
	webtest.ExpectErr(t, s.Call("PATCH", fmt.Sprintf("/admin/forms/%d", a), s.Tok, map[string]any{"type": "number"}), 400, "ERR_VALIDATION", "immutable_field")
	webtest.ExpectErr(t, s.Call("PATCH", "/admin/forms/999", s.Tok, map[string]any{"label": "x"}), 404, "ERR_NOT_FOUND", "not_found")
	// Schema: enabled fields in order; manifest: both forms.
	s.Call("PATCH", fmt.Sprintf("/admin/forms/%d", b), s.Tok, map[string]any{"enabled": false})
	sc := s.Call("GET", "/admin/forms/users/schema", s.Tok, nil).Data()
	var names []string
	for _, f := range sc["fields"].([]any) {
		names = append(names, f.(map[string]any)["name"].(string))
	}
	if sc["form_name"] != "user" || fmt.Sprint(names) != "[tier building]" {
		t.Fatalf("%v", sc)
	}
	webtest.ExpectErr(t, s.Call("GET", "/admin/forms/tickets/schema", s.Tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	mf := s.Call("GET", "/admin/forms/manifest", s.Tok, nil).List()
	if len(mf) != 2 || mf[0].(map[string]any)["fields_count"].(float64) != 2 || mf[0].(map[string]any)["required_count"].(float64) != 1 {
		t.Fatalf("%v", mf)
	}
	// The disabled field is no longer required nor offered; delete + bulk delete.
	if r := s.Call("DELETE", fmt.Sprintf("/admin/forms/%d", c), s.Tok, nil); r.Status != 200 {
		t.Fatalf("%s", r.Body)
	}
	bd := s.Call("POST", "/admin/forms/bulk-delete", s.Tok, map[string]any{"ids": []int64{m, c}})
	if len(bd.Data()["updated"].([]any)) != 1 || bd.Data()["failed"].([]any)[0].(map[string]any)["reason"] != "not_found" {
		t.Fatalf("%s", bd.Body)
	}
	// A manager without prm_forms_manage but with users_create reads schema and manifest only.
	_, rtok := s.Manager(s.OwnerID, "fres", webtest.ResellerCodes...)
	if r := s.Call("GET", "/admin/forms/user/schema", rtok, nil); r.Status != 200 {
		t.Fatalf("%s", r.Body)
	}
	webtest.ExpectErr(t, s.Call("GET", "/admin/forms", rtok, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
}
