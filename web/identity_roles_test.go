package web_test

import (
	"reflect"
	"testing"

	"xr/internal/webtest"
)

func idRoleByName(rows []any, name string) map[string]any {
	for _, r := range rows {
		if m := r.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

func TestIdentityRolesList(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	webtest.CreateRole(k, "acme", "aaa-desk", "prm_users_index")
	webtest.CreateRole(k, "acme", "zzz-desk")

	r := k.Do("GET", "acme", "/api/v1/roles", tok, nil)
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	rows := r.List()
	if m := r.Meta(); m["has_next"] != false || int(m["total"].(float64)) != len(rows) || int(m["page_size"].(float64)) != len(rows) {
		t.Fatalf("not one page: %v", m)
	}
	if len(rows) != 6 {
		t.Fatalf("%d roles", len(rows))
	}
	// System roles first, hand-made after.
	seenHand := false
	for _, row := range rows {
		m := row.(map[string]any)
		idWantKeys(t, "role", m, "id", "tenant_id", "name", "description", "is_system", "template_key", "immutable", "tenant_wide", "permission_count",
			"permissions", "portal_permissions", "created_at", "updated_at")
		if m["is_system"] == false {
			seenHand = true
			if m["template_key"] != nil {
				t.Fatalf("hand-made role with template_key: %v", m)
			}
		} else {
			if seenHand {
				t.Fatalf("system role after a hand-made one: %v", webtest.Strings(nil))
			}
			if m["template_key"] == nil || m["template_key"] == "" {
				t.Fatalf("system role without template_key in the list: %v", m)
			}
		}
		if int(m["permission_count"].(float64)) != len(m["permissions"].([]any)) {
			t.Fatalf("permission_count: %v", m)
		}
	}
	admin := idRoleByName(rows, "administrator")
	if admin["immutable"] != true || admin["is_system"] != true || admin["template_key"] != "administrator" ||
		!reflect.DeepEqual(webtest.Strings(admin["permissions"]), k.App.AllPermissionCodes()) {
		t.Fatalf("administrator %v", admin)
	}
	for _, name := range []string{"reseller", "support", "cashier"} {
		m := idRoleByName(rows, name)
		if m == nil || m["template_key"] != name || m["immutable"] != false {
			t.Fatalf("template %s: %v", name, m)
		}
	}
	if rows[0].(map[string]any)["name"] != "administrator" {
		t.Fatalf("first role %v", rows[0])
	}
	// GET /roles/{id}: template_key null there.
	r = k.Do("GET", "acme", idP("/roles/%d", int64(idRoleByName(rows, "reseller")["id"].(float64))), tok, nil)
	if r.Status != 200 || r.Data()["template_key"] != nil || r.Data()["name"] != "reseller" {
		t.Fatalf("get role: %d %s", r.Status, r.Body)
	}
	if _, ok := r.Data()["template_key"]; !ok {
		t.Fatalf("template_key absent (want null): %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", idP("/roles/%d", 999999), tok, nil), 404, "ERR_NOT_FOUND", "not_found")

	// The catalogue is served to clients.
	r = k.Do("GET", "acme", "/api/v1/auth/me", tok, nil)
	if len(webtest.Strings(r.Data()["permissions"])) != len(k.App.Permissions()) {
		t.Fatal("admin does not hold the whole catalogue")
	}
}

func TestIdentityRolesCreate(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	r := k.Do("POST", "acme", "/api/v1/roles", tok, map[string]any{"name": "desk", "description": "front desk", "permissions": []string{"prm_users_index", "prm_users_update"}})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	d := r.Data()
	if d["name"] != "desk" || d["is_system"] != false || d["immutable"] != false || d["template_key"] != nil ||
		!reflect.DeepEqual(webtest.Strings(d["permissions"]), []string{"prm_users_index", "prm_users_update"}) || d["permission_count"] != float64(2) {
		t.Fatalf("created %s", r.Body)
	}
	count := func() int { return len(k.Do("GET", "acme", "/api/v1/roles", tok, nil).List()) }
	n := count()

	// Unknown codes are rejected, not dropped.
	r = k.Do("POST", "acme", "/api/v1/roles", tok, map[string]any{"name": "x1", "permissions": []string{"prm_users_index", "prm_bogus"}})
	if r.Status != 400 || r.Reason() != "unknown_permission" || r.Field() != "permissions" {
		t.Fatalf("unknown code: %d %s", r.Status, r.Body)
	}
	// Reserved and taken names.
	for _, name := range []string{"administrator", "Administrator", "admin", "root", "owner", "superadmin"} {
		r := k.Do("POST", "acme", "/api/v1/roles", tok, map[string]any{"name": name, "permissions": []string{}})
		if r.Status != 400 || r.Reason() != "role_name_reserved" {
			t.Fatalf("reserved %q: %d %s", name, r.Status, r.Body)
		}
	}
	for _, name := range []string{"", "   "} {
		if r := k.Do("POST", "acme", "/api/v1/roles", tok, map[string]any{"name": name}); r.Status != 400 {
			t.Fatalf("name %q: %d %s", name, r.Status, r.Body)
		}
	}
	if r := k.Do("POST", "acme", "/api/v1/roles", tok, map[string]any{"permissions": []string{}}); r.Status != 400 {
		t.Fatalf("no name: %d %s", r.Status, r.Body)
	}
	if r := k.Do("POST", "acme", "/api/v1/roles", tok, map[string]any{"name": "DESK"}); r.Status != 409 {
		t.Fatalf("taken name: %d %s", r.Status, r.Body)
	}
	if r := k.Do("POST", "acme", "/api/v1/roles", tok, map[string]any{"name": "reseller"}); r.Status != 409 {
		t.Fatalf("template name: %d %s", r.Status, r.Body)
	}
	if count() != n {
		t.Fatal("a refused create stored a role")
	}

	// Only codes the caller holds.
	webtest.CreateRole(k, "acme", "rolemgr", "prm_roles_manage", "prm_managers_index", "prm_users_index")
	webtest.CreateManager(k, "acme", 0, "rm1", "rolemgr")
	rm := idSession(k, "acme", "rm1")
	r = k.Do("POST", "acme", "/api/v1/roles", rm, map[string]any{"name": "big", "permissions": []string{"prm_users_index", "prm_users_delete"}})
	if r.Status != 403 || r.Code() != "ERR_FORBIDDEN" {
		t.Fatalf("granting a code it lacks: %d %s", r.Status, r.Body)
	}
	r = k.Do("POST", "acme", "/api/v1/roles", rm, map[string]any{"name": "small", "permissions": []string{"prm_users_index"}})
	if r.Status != 201 {
		t.Fatalf("granting a code it holds: %d %s", r.Status, r.Body)
	}
	// Unknown is a 400 even for such a caller (validation before authority).
	if r := k.Do("POST", "acme", "/api/v1/roles", rm, map[string]any{"name": "y", "permissions": []string{"prm_bogus"}}); r.Status != 400 {
		t.Fatalf("unknown code by rm1: %d %s", r.Status, r.Body)
	}
	// Without prm_roles_manage.
	webtest.CreateManager(k, "acme", 0, "cash1", "cashier")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/roles", idSession(k, "acme", "cash1"), map[string]any{"name": "z"}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
}

func TestIdentityRolesEditAndDelete(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	admin := webtest.RoleID(k, "acme", "administrator")
	reseller := webtest.RoleID(k, "acme", "reseller")
	desk := webtest.CreateRole(k, "acme", "desk", "prm_managers_index")
	spare := webtest.CreateRole(k, "acme", "spare", "prm_users_index")
	webtest.CreateManager(k, "acme", 0, "d1", "desk")
	d1 := idSession(k, "acme", "d1")

	// The administrator role is immutable.
	for _, body := range []map[string]any{{"permissions": []string{"prm_users_index"}}, {"name": "boss"}, {"description": "x"}} {
		if r := k.Do("PATCH", "acme", idP("/roles/%d", admin), tok, body); r.Status != 409 {
			t.Fatalf("patch administrator %v: %d %s", body, r.Status, r.Body)
		}
	}
	if got := webtest.Strings(idMe(k, "acme", tok)["permissions"]); len(got) != len(k.App.Permissions()) {
		t.Fatal("administrator changed")
	}
	// Patching: partial, validated, reserved names refused.
	r := k.Do("PATCH", "acme", idP("/roles/%d", desk), tok, map[string]any{"description": "desk staff"})
	if r.Status != 200 || r.Data()["description"] != "desk staff" || !reflect.DeepEqual(webtest.Strings(r.Data()["permissions"]), []string{"prm_managers_index"}) {
		t.Fatalf("patch description: %d %s", r.Status, r.Body)
	}
	if r := k.Do("PATCH", "acme", idP("/roles/%d", desk), tok, map[string]any{"name": "admin"}); r.Reason() != "role_name_reserved" {
		t.Fatalf("rename to reserved: %d %s", r.Status, r.Body)
	}
	if r := k.Do("PATCH", "acme", idP("/roles/%d", desk), tok, map[string]any{"permissions": []string{"prm_nope"}}); r.Status != 400 {
		t.Fatalf("unknown code: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("PATCH", "acme", idP("/roles/%d", 999999), tok, map[string]any{"name": "x"}), 404, "ERR_NOT_FOUND", "not_found")

	// An edit applies to holders on their next request.
	if r := k.Do("GET", "acme", "/api/v1/managers", d1, nil); r.Status != 200 {
		t.Fatalf("d1 before: %d", r.Status)
	}
	k.Do("PATCH", "acme", idP("/roles/%d", desk), tok, map[string]any{"permissions": []string{"prm_users_index"}})
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/managers", d1, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")

	// Deleting: system, immutable, assigned refused; a free hand-made role goes.
	for _, id := range []int64{admin, reseller} {
		if r := k.Do("DELETE", "acme", idP("/roles/%d", id), tok, nil); r.Status != 409 {
			t.Fatalf("delete system role %d: %d %s", id, r.Status, r.Body)
		}
	}
	if r := k.Do("DELETE", "acme", idP("/roles/%d", desk), tok, nil); r.Status != 409 || r.Reason() != "role_in_use" {
		t.Fatalf("delete assigned: %d %s", r.Status, r.Body)
	}
	if r := k.Do("DELETE", "acme", idP("/roles/%d", spare), tok, nil); r.Status != 200 {
		t.Fatalf("delete free role: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", idP("/roles/%d", spare), tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	// Bulk delete reports each.
	extra := webtest.CreateRole(k, "acme", "extra")
	r = k.Do("POST", "acme", "/api/v1/roles/bulk-delete", tok, map[string]any{"ids": []int64{extra, desk, 999999}})
	if got := idUpdated(r); r.Status != 200 || !reflect.DeepEqual(got, []int64{extra}) {
		t.Fatalf("bulk-delete: %d %s", r.Status, r.Body)
	}
	if f := idFailed(t, r); len(f) != 2 || f[999999] != "not_found" {
		t.Fatalf("bulk-delete failed %v", f)
	}
}

func TestIdentityRolesAssignSubsetOnly(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	webtest.CreateRole(k, "acme", "rolemgr", "prm_roles_manage", "prm_managers_index", "prm_users_index", "prm_users_update")
	small := webtest.CreateRole(k, "acme", "small", "prm_users_index")
	rm1 := webtest.CreateManager(k, "acme", 0, "rm1", "rolemgr")
	child := webtest.CreateManager(k, "acme", rm1, "child1")
	outside := webtest.CreateManager(k, "acme", 0, "outside1")
	rm := idSession(k, "acme", "rm1")

	// A role whose codes it holds: granted; GET shows it.
	r := k.Do("PUT", "acme", idP("/managers/%d/roles", child), rm, map[string]any{"role_ids": []int64{small}})
	if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["name"] != "small" {
		t.Fatalf("grant small: %d %s", r.Status, r.Body)
	}
	r = k.Do("GET", "acme", idP("/managers/%d/roles", child), rm, nil)
	if r.Status != 200 || len(r.List()) != 1 || r.Meta()["has_next"] != false {
		t.Fatalf("get roles: %d %s", r.Status, r.Body)
	}
	if got := webtest.Strings(idMe(k, "acme", idSession(k, "acme", "child1"))["permissions"]); !reflect.DeepEqual(got, []string{"prm_users_index"}) {
		t.Fatalf("child permissions %v", got)
	}
	// Another role carrying a code it lacks (reseller), or the administrator role: refused.
	for _, name := range []string{"reseller", "support", "administrator"} {
		r := k.Do("PUT", "acme", idP("/managers/%d/roles", child), rm, map[string]any{"role_ids": []int64{small, webtest.RoleID(k, "acme", name)}})
		if r.Status != 403 || r.Code() != "ERR_FORBIDDEN" {
			t.Fatalf("grant %s: %d %s", name, r.Status, r.Body)
		}
	}
	// The refused calls changed nothing.
	if r := k.Do("GET", "acme", idP("/managers/%d/roles", child), tok, nil); len(r.List()) != 1 {
		t.Fatalf("roles after refusals: %s", r.Body)
	}
	// Out of scope: the 404; unknown role: 400; missing role_ids: 400.
	webtest.ExpectErr(t, k.Do("PUT", "acme", idP("/managers/%d/roles", outside), rm, map[string]any{"role_ids": []int64{small}}), 404, "ERR_NOT_FOUND", "not_found")
	if r := k.Do("PUT", "acme", idP("/managers/%d/roles", child), rm, map[string]any{"role_ids": []int64{999}}); r.Status != 400 {
		t.Fatalf("unknown role: %d %s", r.Status, r.Body)
	}
	if r := k.Do("PUT", "acme", idP("/managers/%d/roles", child), rm, map[string]any{}); r.Status != 400 || r.Field() != "role_ids" {
		t.Fatalf("missing role_ids: %d %s", r.Status, r.Body)
	}
	// Editing a role cannot add codes the editor lacks (its own role included).
	for _, id := range []int64{small, webtest.RoleID(k, "acme", "rolemgr")} {
		r := k.Do("PATCH", "acme", idP("/roles/%d", id), rm, map[string]any{"permissions": []string{"prm_users_index", "prm_users_delete"}})
		if r.Status != 403 {
			t.Fatalf("escalation through PATCH of role %d: %d %s", id, r.Status, r.Body)
		}
	}
	if got := webtest.Strings(idMe(k, "acme", rm)["permissions"]); idContains(got, "prm_users_delete") {
		t.Fatalf("rm1 escalated: %v", got)
	}
	// An empty list clears.
	if r := k.Do("PUT", "acme", idP("/managers/%d/roles", child), rm, map[string]any{"role_ids": []int64{}}); r.Status != 200 || len(r.List()) != 0 {
		t.Fatalf("clear: %d %s", r.Status, r.Body)
	}
	// A scoped token of the role manager grants only within the narrowed set.
	st, _ := idAPIToken(k, "acme", rm, map[string]any{"scopes": []string{"prm_roles_manage"}})
	if r := k.Do("PUT", "acme", idP("/managers/%d/roles", child), st, map[string]any{"role_ids": []int64{small}}); r.Status != 403 {
		t.Fatalf("scoped token grants a code outside its scope: %d %s", r.Status, r.Body)
	}
	// The owner (administrator) can grant anything, including administrator.
	if r := k.Do("PUT", "acme", idP("/managers/%d/roles", child), tok, map[string]any{"role_ids": []int64{webtest.RoleID(k, "acme", "administrator")}}); r.Status != 200 {
		t.Fatalf("owner grants administrator: %d %s", r.Status, r.Body)
	}
	if me := idMe(k, "acme", idSession(k, "acme", "child1")); me["is_admin"] != true {
		t.Fatalf("child not admin: %v", me["is_admin"])
	}
}

func TestIdentityRolesPortalPermissions(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	desk := webtest.CreateRole(k, "acme", "desk", "prm_users_index")
	r := k.Do("PUT", "acme", idP("/roles/%d/portal-permissions", desk), tok, map[string]any{"permissions": []string{"portal_renew", "portal_view_usage"}})
	if r.Status != 200 || !reflect.DeepEqual(webtest.Strings(r.Data()["portal_permissions"]), []string{"portal_renew", "portal_view_usage"}) {
		t.Fatalf("portal permissions: %d %s", r.Status, r.Body)
	}
	// No effect on the admin codes.
	if !reflect.DeepEqual(webtest.Strings(r.Data()["permissions"]), []string{"prm_users_index"}) {
		t.Fatalf("admin codes changed: %s", r.Body)
	}
	if r := k.Do("GET", "acme", idP("/roles/%d", desk), tok, nil); !reflect.DeepEqual(webtest.Strings(r.Data()["portal_permissions"]), []string{"portal_renew", "portal_view_usage"}) {
		t.Fatalf("not stored: %s", r.Body)
	}
	for _, bad := range [][]string{{"prm_users_index"}, {"portal_nope"}} {
		if r := k.Do("PUT", "acme", idP("/roles/%d/portal-permissions", desk), tok, map[string]any{"permissions": bad}); r.Status != 400 {
			t.Fatalf("portal %v: %d %s", bad, r.Status, r.Body)
		}
	}
	if r := k.Do("PUT", "acme", idP("/roles/%d/portal-permissions", desk), tok, map[string]any{"permissions": []string{}}); r.Status != 200 || len(r.Data()["portal_permissions"].([]any)) != 0 {
		t.Fatalf("clear: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("PUT", "acme", idP("/roles/%d/portal-permissions", 999999), tok, map[string]any{"permissions": []string{}}), 404, "ERR_NOT_FOUND", "not_found")
}
