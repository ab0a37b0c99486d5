package web_test

import (
	"fmt"
	"testing"

	"xr/internal/webtest"
)

// A role's tenant_wide flag: its holders see every record, /auth/me says
// so, only a tenant-wide caller may grant it (on the role or through the
// role), turning it off narrows holders at once, and backups and the
// factory reset still need tenant-wide visibility besides their codes.
func TestRoleTenantWideScope(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := k.Owner("acme")
	root := webtest.OwnerID(k, "acme")
	uid := webtest.CreateUser(t, k, "scope-sub", root)

	r := k.Do("POST", "acme", "/api/v1/roles", owner, map[string]any{"name": "desk-wide", "tenant_wide": true,
		"permissions": []string{"prm_users_index", "prm_tools_backup", "prm_tools_factory_reset"}})
	if r.Status != 201 || r.Data()["tenant_wide"] != true {
		t.Fatalf("create wide role: %d %s", r.Status, r.Body)
	}
	wideRole := int64(r.Data()["id"].(float64))
	webtest.CreateRole(k, "acme", "desk-scoped", "prm_users_index", "prm_tools_backup", "prm_tools_factory_reset", "prm_roles_manage", "prm_managers_index")
	webtest.CreateManager(k, "acme", 0, "wide", "desk-wide")
	scopedID := webtest.CreateManager(k, "acme", 0, "scoped", "desk-scoped")
	childID := webtest.CreateManager(k, "acme", scopedID, "scoped-child")
	wide, scoped := idSession(k, "acme", "wide"), idSession(k, "acme", "scoped")

	for _, c := range []struct {
		name, tok string
		wide      bool
		user      int
	}{{"owner", owner, true, 200}, {"wide", wide, true, 200}, {"scoped", scoped, false, 404}} {
		t.Run(c.name, func(t *testing.T) {
			if me := k.Do("GET", "acme", "/api/v1/auth/me", c.tok, nil); me.Status != 200 || me.Data()["tenant_wide"] != c.wide {
				t.Fatalf("me: %d %s", me.Status, me.Body)
			}
			if g := k.Do("GET", "acme", fmt.Sprintf("/api/v1/users/%d", uid), c.tok, nil); g.Status != c.user {
				t.Fatalf("subscriber outside the subtree: %d %s", g.Status, g.Body)
			}
		})
	}
	// Backups and the factory reset: the codes and tenant-wide visibility.
	for _, p := range []string{"/api/v1/admin/tools/backup", "/api/v1/admin/tools/factory-reset/preview"} {
		webtest.ExpectErr(t, k.Do("GET", "acme", p, scoped, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
		if g := k.Do("GET", "acme", p, wide, nil); g.Status != 200 {
			t.Fatalf("%s for a tenant-wide role: %d %s", p, g.Status, g.Body)
		}
	}

	// A scoped role editor cannot widen a role, make a wide one, or hand
	// one down; nothing is stored.
	scopedRole := webtest.RoleID(k, "acme", "desk-scoped")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/roles", scoped, map[string]any{"name": "sneaky", "tenant_wide": true,
		"permissions": []string{"prm_users_index"}}), 403, "ERR_FORBIDDEN", "cannot_grant_tenant_wide")
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM roles WHERE name = 'sneaky'`); n != 0 {
		t.Fatalf("refused role stored: %d", n)
	}
	webtest.ExpectErr(t, k.Do("PATCH", "acme", fmt.Sprintf("/api/v1/roles/%d", scopedRole), scoped, map[string]any{"tenant_wide": true}),
		403, "ERR_FORBIDDEN", "cannot_grant_tenant_wide")
	if n := webtest.Scalar(k, "acme", `SELECT tenant_wide FROM roles WHERE id = ?`, scopedRole); n != 0 {
		t.Fatalf("refused patch stored: %d", n)
	}
	webtest.ExpectErr(t, k.Do("PUT", "acme", fmt.Sprintf("/api/v1/managers/%d/roles", childID), scoped, map[string]any{"role_ids": []int64{wideRole}}),
		403, "ERR_FORBIDDEN", "cannot_grant_role")
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM manager_roles WHERE manager_id = ?`, childID); n != 0 {
		t.Fatalf("refused grant stored: %d", n)
	}
	// A scoped caller may still edit a role's other fields without the flag.
	if p := k.Do("PATCH", "acme", fmt.Sprintf("/api/v1/roles/%d", scopedRole), scoped, map[string]any{"description": "desk", "tenant_wide": false}); p.Status != 200 {
		t.Fatalf("plain patch: %d %s", p.Status, p.Body)
	}

	// The owner turns the flag off: the holder is narrowed on its next request.
	if p := k.Do("PATCH", "acme", fmt.Sprintf("/api/v1/roles/%d", wideRole), owner, map[string]any{"tenant_wide": false}); p.Status != 200 || p.Data()["tenant_wide"] != false {
		t.Fatalf("turn off: %d %s", p.Status, p.Body)
	}
	if g := k.Do("GET", "acme", fmt.Sprintf("/api/v1/users/%d", uid), wide, nil); g.Status != 404 {
		t.Fatalf("narrowed holder still sees the subscriber: %d", g.Status)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/tools/backup", wide, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	// The administrator role reads as tenant-wide.
	if g := k.Do("GET", "acme", fmt.Sprintf("/api/v1/roles/%d", webtest.RoleID(k, "acme", "administrator")), owner, nil); g.Data()["tenant_wide"] != true {
		t.Fatalf("administrator: %s", g.Body)
	}
}
