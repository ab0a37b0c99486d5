package app

import (
	"context"
	"database/sql"
	"reflect"
	"testing"
)

// Actor tests (moved from the identity tests when identity left the
// kernel: scope narrowing and RequireScope are kernel).

var idtCtx = context.Background()

func TestIdentityActorScopeIntersection(t *testing.T) {
	t.Parallel()
	g := &grant{roles: []string{"administrator", "support"}, perms: map[Perm]bool{"prm_a": true, "prm_b": true, "prm_c": true}, isAdmin: true, status: "active"}
	full := actorFor(nil, 1, g, nil)
	if !full.IsAdmin || !reflect.DeepEqual(full.Roles, []string{"administrator", "support"}) || len(full.Perms) != 3 {
		t.Fatalf("unscoped %+v", full)
	}
	scoped := actorFor(nil, 1, g, []string{"prm_b", "prm_z"})
	if scoped.IsAdmin || !reflect.DeepEqual(scoped.Roles, []string{"support"}) || !reflect.DeepEqual(scoped.PermList(), []string{"prm_b"}) {
		t.Fatalf("scoped %+v", scoped)
	}
	empty := actorFor(nil, 1, g, []string{})
	if empty.IsAdmin || len(empty.Perms) != 0 || empty.Can("prm_a") || empty.Require("prm_a") == nil {
		t.Fatalf("empty scope %+v", empty)
	}
	if empty.Require() != nil {
		t.Fatal("no codes required refused")
	}
	// The cached grant is not touched by narrowing.
	if len(g.perms) != 3 || len(g.roles) != 2 {
		t.Fatalf("grant mutated: %+v", g)
	}
}

// TestIdentityRequireScopeTellsMissingFromOutside: both write the same 404;
// bulk calls see not_found vs not_authorized.
func TestIdentityRequireScopeTellsMissingFromOutside(t *testing.T) {
	t.Parallel()
	tt := fndTenant(t, fndApp(t), "acme")
	sys, err := SystemActor(idtCtx, tt)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string, parent int64) int64 {
		if parent == 0 {
			parent = sys.ManagerID
		}
		var id int64
		err := tt.Write(idtCtx, func(tx *sql.Tx) error {
			var err error
			id, err = InsertManager(idtCtx, tx, ManagerRecord{ParentID: parent, Username: name, PasswordHash: "x"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a := mk("a", 0)
	a1 := mk("a1", a)
	b := mk("b", 0)
	act := &Actor{Tenant: tt, ManagerID: a, Perms: map[Perm]bool{}}
	if err := act.RequireScope(idtCtx, tt.DB.R, a1); err != nil {
		t.Fatal(err)
	}
	out := act.RequireScope(idtCtx, tt.DB.R, b)
	missing := act.RequireScope(idtCtx, tt.DB.R, 999999)
	fndErr(t, out, 404, CodeNotFound, "not_found")
	fndErr(t, missing, 404, CodeNotFound, "not_found")
	if bulkFailure(b, out).Reason != "not_authorized" || bulkFailure(999999, missing).Reason != "not_found" {
		t.Fatalf("bulk reasons %v / %v", bulkFailure(b, out), bulkFailure(999999, missing))
	}
	// Tenant-wide: a missing record is not_found too.
	if r := bulkFailure(999999, sys.RequireScope(idtCtx, tt.DB.R, 999999)); r.Reason != "not_found" {
		t.Fatalf("tenant-wide missing: %v", r)
	}
}
