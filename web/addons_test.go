package web_test

import (
	"fmt"
	"testing"

	"xr/internal/webtest"
)

func TestAddonsCatalogueAndPurchase(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	capped := s.Plan(map[string]any{"name": "Capped", "price": 5, "duration_days": 30, "bytes_limit": 1000, "seconds_limit": 3600})
	open := s.Plan(map[string]any{"name": "Open", "price": 5, "duration_days": 30})
	mk := func(body map[string]any) int64 {
		t.Helper()
		r := s.Call("POST", "/admin/addons", s.Tok, body)
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		return int64(r.Data()["id"].(float64))
	}
	data := mk(map[string]any{"name": "+500 B", "kind": "data", "amount": 500, "price": 1.5})
	days := mk(map[string]any{"name": "+2 days", "kind": "days", "amount": 2, "price": 1})
	hour := mk(map[string]any{"name": "+1 hour", "kind": "time", "amount": 3600, "price": 0.5})
	webtest.ExpectErr(t, s.Call("POST", "/admin/addons", s.Tok, map[string]any{"name": "x", "kind": "beer", "amount": 1}), 400, "ERR_VALIDATION", "invalid_enum")
	webtest.ExpectErr(t, s.Call("POST", "/admin/addons", s.Tok, map[string]any{"name": "x", "kind": "data", "amount": 0}), 400, "ERR_VALIDATION", "amount_must_be_positive")
	webtest.ExpectErr(t, s.Call("POST", "/admin/addons", s.Tok, map[string]any{"name": "+500 b", "kind": "data", "amount": 1}), 409, "ERR_CONFLICT", "name_taken")
	// Allowed plans: data only on Capped.
	ap := s.Call("PUT", fmt.Sprintf("/admin/addons/%d/allowed-profiles", data), s.Tok, map[string]any{"profile_ids": []int64{capped}})
	if ap.Status != 200 || ap.Data()["all_profiles"] != false || fmt.Sprint(ap.Data()["profile_ids"]) != fmt.Sprint([]any{float64(capped)}) {
		t.Fatalf("%s", ap.Body)
	}
	if g := s.Call("GET", fmt.Sprintf("/admin/addons/%d/allowed-profiles", data), s.Tok, nil); g.Data()["all_profiles"] != false {
		t.Fatalf("%s", g.Body)
	}
	webtest.ExpectErr(t, s.Call("PUT", fmt.Sprintf("/admin/addons/%d/allowed-profiles", data), s.Tok, map[string]any{"profile_ids": []int64{999}}), 400, "ERR_VALIDATION", "profile_not_found")
	if l := s.Call("GET", "/admin/addons", s.Tok, nil); len(l.List()) != 3 || l.Meta()["has_next"] != false {
		t.Fatalf("%s", l.Body)
	}
	u := s.User("", map[string]any{"username": "buyer", "profile_id": capped})
	w := s.User("", map[string]any{"username": "wide", "profile_id": open})
	s.Call("POST", fmt.Sprintf("/users/%d/deposit", u), s.Tok, map[string]any{"amount": 20, "request_id": "dep"})
	s.Call("POST", fmt.Sprintf("/users/%d/activation", u), s.Tok, map[string]any{"request_id": "act"})
	s.Call("POST", fmt.Sprintf("/users/%d/activation", w), s.Tok, map[string]any{"request_id": "act-w"})
	names := func(q string) int { return len(s.Call("GET", "/addons"+q, s.Tok, nil).List()) }
	if names("") != 3 || names(fmt.Sprintf("?user_id=%d", u)) != 3 || names(fmt.Sprintf("?user_id=%d", w)) != 2 {
		t.Fatal("purchasable add-ons")
	}
	buy := func(id, addon int64, key string) webtest.Resp {
		return s.Call("POST", fmt.Sprintf("/users/%d/addons", id), s.Tok, map[string]any{"addon_id": addon, "request_id": key})
	}
	b := buy(u, data, "b1")
	if b.Status != 200 || b.Data()["bytes_limit"].(float64) != 1500 || b.Data()["balance"].(float64) != 13.5 || b.Data()["replay"] != false {
		t.Fatalf("%d %s", b.Status, b.Body)
	}
	if b2 := buy(u, data, "b1"); b2.Data()["replay"] != true || b2.Data()["bytes_limit"].(float64) != 1500 {
		t.Fatalf("%s", b2.Body)
	}
	if r := buy(u, hour, "b2"); r.Data()["seconds_limit"].(float64) != 7200 {
		t.Fatalf("%s", r.Body)
	}
	before := s.Call("GET", fmt.Sprintf("/users/%d", u), s.Tok, nil).Data()["expiration"].(string)
	r := buy(u, days, "b3")
	if r.Data()["expiration"].(string) <= before {
		t.Fatalf("days: %s -> %s", before, r.Body)
	}
	webtest.ExpectErr(t, buy(w, data, "b4"), 409, "ERR_CONFLICT", "addon_not_allowed")
	webtest.ExpectErr(t, buy(w, hour, "b5"), 409, "ERR_CONFLICT", "quota_unlimited")
	webtest.ExpectErr(t, buy(u, 999, "b6"), 400, "ERR_VALIDATION", "addon_not_found")
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/users/%d/addons", u), s.Tok, map[string]any{"addon_id": data}), 400, "ERR_VALIDATION", "request_id_required")
	if s.Scalar(`SELECT COUNT(*) FROM user_addons WHERE user_id = ?`, w) != 0 || s.Scalar(`SELECT COUNT(*) FROM user_ledger WHERE user_id = ? AND kind = 'addon'`, w) != 0 {
		t.Fatal("a refused purchase left rows")
	}
	// Disabled: no longer purchasable; bought: cannot be deleted; unbought: can.
	s.Call("PATCH", fmt.Sprintf("/admin/addons/%d", hour), s.Tok, map[string]any{"enabled": false})
	webtest.ExpectErr(t, buy(u, hour, "b7"), 409, "ERR_CONFLICT", "addon_not_allowed")
	webtest.ExpectErr(t, s.Call("DELETE", fmt.Sprintf("/admin/addons/%d", data), s.Tok, nil), 409, "ERR_CONFLICT", "addon_in_use")
	spare := mk(map[string]any{"name": "spare", "kind": "days", "amount": 1})
	bd := s.Call("POST", "/admin/addons/bulk-delete", s.Tok, map[string]any{"ids": []int64{spare, data, 999}})
	if fmt.Sprint(bd.Data()["updated"]) != fmt.Sprint([]any{float64(spare)}) || len(bd.Data()["failed"].([]any)) != 2 {
		t.Fatalf("%s", bd.Body)
	}
}
