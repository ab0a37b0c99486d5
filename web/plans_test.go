package web_test

import (
	"fmt"
	"testing"

	"xr/internal/webtest"
)

func TestProfilesCRUDAndAssignment(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	r := s.Call("POST", "/admin/profiles", s.Tok, map[string]any{"name": "Fibre 100", "price": 29.99, "duration_days": 30,
		"bytes_limit": 107374182400, "seconds_limit": 0, "rate_down_kbps": 102400, "rate_up_kbps": 20480, "fup_rate_down_kbps": 2048,
		"fup_rate_up_kbps": 1024, "expired_pool": "expired", "simultaneous_use": 2})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	p := r.Data()
	want := "all_managers,bytes_limit,created_at,description,duration_days,enabled,expired_pool,fup_rate_down_kbps,fup_rate_up_kbps,id,manager_ids," +
		"name,price,rate_down_kbps,rate_up_kbps,seconds_limit,simultaneous_use,updated_at,users_count"
	if got := suKeys(p); got != want {
		t.Fatalf("fields %s", got)
	}
	if p["price"].(float64) != 29.99 || p["enabled"] != true || p["all_managers"] != true || p["simultaneous_use"].(float64) != 2 {
		t.Fatalf("%v", p)
	}
	id := int64(p["id"].(float64))
	// defaults
	d := s.Call("POST", "/admin/profiles", s.Tok, map[string]any{"name": "Basic"}).Data()
	if d["simultaneous_use"].(float64) != 1 || d["duration_days"].(float64) != 30 || d["bytes_limit"].(float64) != 0 {
		t.Fatalf("defaults %v", d)
	}
	webtest.ExpectErr(t, s.Call("POST", "/admin/profiles", s.Tok, map[string]any{"name": "basic"}), 409, "ERR_CONFLICT", "name_taken")
	webtest.ExpectErr(t, s.Call("POST", "/admin/profiles", s.Tok, map[string]any{}), 400, "ERR_VALIDATION", "name_required")
	webtest.ExpectErr(t, s.Call("POST", "/admin/profiles", s.Tok, map[string]any{"name": "x", "price": -1}), 400, "ERR_VALIDATION", "invalid_price")
	webtest.ExpectErr(t, s.Call("POST", "/admin/profiles", s.Tok, map[string]any{"name": "x", "bytes_limit": -1}), 400, "ERR_VALIDATION", "must_not_be_negative")
	webtest.ExpectErr(t, s.Call("POST", "/admin/profiles", s.Tok, map[string]any{"name": "x", "manager_ids": []int64{999}}), 400, "ERR_VALIDATION", "invalid_manager_id")

	// patch and read
	pr := s.Call("PATCH", fmt.Sprintf("/admin/profiles/%d", id), s.Tok, map[string]any{"price": 25, "enabled": false})
	if pr.Data()["price"].(float64) != 25 || pr.Data()["enabled"] != false || pr.Data()["name"] != "Fibre 100" {
		t.Fatalf("%s", pr.Body)
	}
	if g := s.Call("GET", fmt.Sprintf("/admin/profiles/%d", id), s.Tok, nil); g.Data()["price"].(float64) != 25 {
		t.Fatalf("%s", g.Body)
	}
	l := s.Call("GET", "/admin/profiles?filter[enabled]=true", s.Tok, nil)
	if len(l.List()) != 1 || l.Meta()["total"].(float64) != 1 {
		t.Fatalf("%s", l.Body)
	}
	if l := s.Call("GET", "/admin/profiles?q=fibre", s.Tok, nil); len(l.List()) != 1 {
		t.Fatalf("%s", l.Body)
	}

	// Who may assign which plan: restricted plans are invisible and
	// unassignable outside their grantees' subtrees.
	res, rtok := s.Manager(s.OwnerID, "pres", webtest.ResellerCodes...)
	_, otok := s.Manager(s.OwnerID, "pother", webtest.ResellerCodes...)
	restricted := s.Plan(map[string]any{"name": "Reseller only", "manager_ids": []int64{res}})
	if rp := s.Call("GET", fmt.Sprintf("/admin/profiles/%d", restricted), s.Tok, nil).Data(); rp["all_managers"] != false || fmt.Sprint(rp["manager_ids"]) != fmt.Sprint([]any{float64(res)}) {
		t.Fatalf("%v", rp)
	}
	names := func(tok string) []string {
		var out []string
		for _, row := range s.Call("GET", "/admin/profiles", tok, nil).List() {
			out = append(out, row.(map[string]any)["name"].(string))
		}
		return out
	}
	if got := fmt.Sprint(names(rtok)); got != "[Basic Reseller only]" {
		t.Fatalf("reseller sees %s", got)
	}
	if got := fmt.Sprint(names(otok)); got != "[Basic]" {
		t.Fatalf("other sees %s", got)
	}
	webtest.ExpectErr(t, s.Call("GET", fmt.Sprintf("/admin/profiles/%d", restricted), otok, nil), 404, "ERR_NOT_FOUND", "not_found")
	if r := s.Call("POST", "/users", rtok, map[string]any{"username": "ru", "password": "x", "profile_id": restricted}); r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", "/users", otok, map[string]any{"username": "ou", "password": "x", "profile_id": restricted}), 400, "ERR_VALIDATION", "profile_not_assignable")
	// A disabled plan is not assignable, not even by the owner.
	webtest.ExpectErr(t, s.Call("POST", "/users", s.Tok, map[string]any{"username": "du", "password": "x", "profile_id": id}), 400, "ERR_VALIDATION", "profile_not_assignable")
	// The reseller role cannot manage plans.
	webtest.ExpectErr(t, s.Call("POST", "/admin/profiles", rtok, map[string]any{"name": "Mine"}), 403, "ERR_FORBIDDEN", "insufficient_permissions")

	// Delete: refused while in use.
	webtest.ExpectErr(t, s.Call("DELETE", fmt.Sprintf("/admin/profiles/%d", restricted), s.Tok, nil), 409, "ERR_CONFLICT", "profile_in_use")
	if r := s.Call("DELETE", fmt.Sprintf("/admin/profiles/%d", id), s.Tok, nil); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, s.Call("GET", fmt.Sprintf("/admin/profiles/%d", id), s.Tok, nil), 404, "ERR_NOT_FOUND", "not_found")
}
