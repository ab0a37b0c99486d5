package web_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"xr/app"
	"xr/app/identity"
	"xr/internal/webtest"
)

// newIDTree builds, under acme's owner:
//
//	owner ── res (reseller) ── res_a ── res_a1
//	      │                  └─ res_b
//	      └─ other
type idTree struct {
	owner, res, resA, resA1, resB, other int64
	ownerTok, resTok                     string
}

func newIDTree(k *webtest.Kit) idTree {
	k.T.Helper()
	var x idTree
	x.owner = webtest.OwnerID(k, "acme")
	x.ownerTok = idSession(k, "acme", "owner")
	// The reseller is made one through PUT /managers/{id}/roles.
	x.res = webtest.CreateManager(k, "acme", 0, "res")
	r := k.Do("PUT", "acme", idP("/managers/%d/roles", x.res), x.ownerTok, map[string]any{"role_ids": []int64{webtest.RoleID(k, "acme", "reseller")}})
	if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["name"] != "reseller" {
		k.T.Fatalf("put roles: %d %s", r.Status, r.Body)
	}
	x.resA = webtest.CreateManager(k, "acme", x.res, "res_a")
	x.resA1 = webtest.CreateManager(k, "acme", x.resA, "res_a1")
	x.resB = webtest.CreateManager(k, "acme", x.res, "res_b")
	x.other = webtest.CreateManager(k, "acme", 0, "other")
	x.resTok = idSession(k, "acme", "res")
	return x
}

func TestIdentityManagersExactlyOneRoot(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM managers WHERE parent_id IS NULL`); n != 1 {
		t.Fatalf("%d roots", n)
	}
	// A new manager cannot be parent-less.
	r := k.Do("POST", "acme", "/api/v1/managers", x.ownerTok, map[string]any{"username": "n1", "password": webtest.Password, "parent_manager_id": nil})
	if r.Status != 400 || r.Field() != "parent_manager_id" {
		t.Fatalf("null parent: %d %s", r.Status, r.Body)
	}
	r = k.Do("PATCH", "acme", idP("/managers/%d", x.res), x.ownerTok, map[string]any{"parent_manager_id": nil})
	if r.Status != 400 || r.Field() != "parent_manager_id" {
		t.Fatalf("patch to null parent: %d %s", r.Status, r.Body)
	}
	// The root cannot move, be suspended or be deleted.
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.owner), x.ownerTok, map[string]any{"parent_manager_id": x.other}); r.Status < 400 {
		t.Fatalf("root moved: %d %s", r.Status, r.Body)
	}
	if r := k.Do("POST", "acme", idP("/managers/%d/suspend", x.owner), x.ownerTok, nil); r.Status < 400 {
		t.Fatalf("root suspended: %d %s", r.Status, r.Body)
	}
	if r := k.Do("DELETE", "acme", idP("/managers/%d", x.owner), x.ownerTok, nil); r.Status < 400 {
		t.Fatalf("root deleted: %d %s", r.Status, r.Body)
	}
	// The root keeps the administrator role.
	if r := k.Do("PUT", "acme", idP("/managers/%d/roles", x.owner), x.ownerTok, map[string]any{"role_ids": []int64{webtest.RoleID(k, "acme", "support")}}); r.Status != 409 {
		t.Fatalf("root lost administrator: %d %s", r.Status, r.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM managers WHERE parent_id IS NULL`); n != 1 {
		t.Fatalf("%d roots", n)
	}
	if m := idMe(k, "acme", x.ownerTok); m["is_admin"] != true {
		t.Fatal("owner lost admin")
	}
}

func TestIdentityManagersCreate(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)

	r := k.Do("POST", "acme", "/api/v1/managers", x.ownerTok, map[string]any{"username": "n1", "email": "n1@x.test", "password": webtest.Password, "firstname": "Nora"})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	d := r.Data()
	if int64(d["parent_manager_id"].(float64)) != x.owner || d["status"] != "active" || d["username"] != "n1" || d["firstname"] != "Nora" {
		t.Fatalf("created %s", r.Body)
	}
	if bytes.Contains(r.Body, []byte("password")) {
		t.Fatalf("create answer mentions the password: %s", r.Body)
	}
	idLogin(k, "acme", "n1", webtest.Password)
	idLogin(k, "acme", "n1@x.test", webtest.Password)

	// The reseller creates under itself by default, or under a parent in its subtree.
	r = k.Do("POST", "acme", "/api/v1/managers", x.resTok, map[string]any{"username": "n2", "password": webtest.Password})
	if r.Status != 201 || int64(r.Data()["parent_manager_id"].(float64)) != x.res {
		t.Fatalf("reseller create: %d %s", r.Status, r.Body)
	}
	r = k.Do("POST", "acme", "/api/v1/managers", x.resTok, map[string]any{"username": "n3", "password": webtest.Password, "parent_manager_id": x.resA1})
	if r.Status != 201 || int64(r.Data()["parent_manager_id"].(float64)) != x.resA1 {
		t.Fatalf("reseller create under res_a1: %d %s", r.Status, r.Body)
	}
	n3 := int64(r.Data()["id"].(float64))
	if r := k.Do("GET", "acme", idP("/managers/%d", n3), x.resTok, nil); r.Status != 200 {
		t.Fatalf("reseller reads its grandchild's child: %d %s", r.Status, r.Body)
	}
	// A parent outside the subtree, or missing: 400 parent_not_found, identically.
	out := k.Do("POST", "acme", "/api/v1/managers", x.resTok, map[string]any{"username": "n4", "password": webtest.Password, "parent_manager_id": x.other})
	if out.Status != 400 || out.Reason() != "parent_not_found" || out.Field() != "parent_manager_id" {
		t.Fatalf("parent outside scope: %d %s", out.Status, out.Body)
	}
	missing := k.Do("POST", "acme", "/api/v1/managers", x.resTok, map[string]any{"username": "n4", "password": webtest.Password, "parent_manager_id": 999999})
	idSameError(t, out, missing)
	if r := k.Do("POST", "acme", "/api/v1/managers", x.resTok, map[string]any{"username": "n4", "password": webtest.Password, "parent_manager_id": x.owner}); r.Reason() != "parent_not_found" {
		t.Fatalf("parent above the caller: %d %s", r.Status, r.Body)
	}

	// Validation and uniqueness.
	for _, c := range []struct {
		body   map[string]any
		status int
		reason string
	}{
		{map[string]any{"password": webtest.Password}, 400, "identity_required"},
		{map[string]any{"username": "n5"}, 400, "password_required"},
		{map[string]any{"username": "n5", "password": "short"}, 400, "password_too_short"},
		{map[string]any{"username": "n5", "email": "not-an-email", "password": webtest.Password}, 400, "invalid_email"},
		{map[string]any{"username": "N1", "password": webtest.Password}, 409, "username_taken"},
		{map[string]any{"email": "N1@x.test", "password": webtest.Password}, 409, "email_taken"},
	} {
		r := k.Do("POST", "acme", "/api/v1/managers", x.ownerTok, c.body)
		if r.Status != c.status || r.Reason() != c.reason {
			t.Fatalf("create %v: %d %s", c.body, r.Status, r.Body)
		}
	}
	// Only an email is enough.
	if r := k.Do("POST", "acme", "/api/v1/managers", x.ownerTok, map[string]any{"email": "only@x.test", "password": webtest.Password}); r.Status != 201 || r.Data()["username"] != nil {
		t.Fatalf("email-only create: %d %s", r.Status, r.Body)
	}
	// Without prm_managers_create.
	webtest.CreateManager(k, "acme", 0, "cash1", "cashier")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/managers", idSession(k, "acme", "cash1"), map[string]any{"username": "n6", "password": webtest.Password}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
}

func TestIdentityManagersSubtreeScope(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)

	list := func(tok, query string) []int64 {
		t.Helper()
		r := k.Do("GET", "acme", "/api/v1/managers"+query, tok, nil)
		if r.Status != 200 {
			t.Fatalf("list %s: %d %s", query, r.Status, r.Body)
		}
		if int(r.Meta()["total"].(float64)) != len(r.List()) {
			t.Fatalf("meta %v for %d rows", r.Meta(), len(r.List()))
		}
		return idIDs(r.List())
	}
	ids := func(v ...int64) []int64 { return v }

	// The reseller sees its descendants only (never itself, its parent or siblings).
	if got := list(x.resTok, ""); !reflect.DeepEqual(got, ids(x.resA, x.resA1, x.resB)) {
		t.Fatalf("reseller list %v", got)
	}
	// The owner sees everyone but itself.
	if got := list(x.ownerTok, ""); !reflect.DeepEqual(got, ids(x.res, x.resA, x.resA1, x.resB, x.other)) {
		t.Fatalf("owner list %v", got)
	}
	// filter[parent_id] and bare parent_id narrow, never widen.
	for _, q := range []string{"?filter[parent_id]=%d", "?parent_id=%d"} {
		if got := list(x.resTok, fmt.Sprintf(q, x.res)); !reflect.DeepEqual(got, ids(x.resA, x.resB)) {
			t.Fatalf("%s res: %v", q, got)
		}
		if got := list(x.resTok, fmt.Sprintf(q, x.resA)); !reflect.DeepEqual(got, ids(x.resA1)) {
			t.Fatalf("%s res_a: %v", q, got)
		}
		if got := list(x.resTok, fmt.Sprintf(q, x.owner)); len(got) != 0 {
			t.Fatalf("%s owner widened to %v", q, got)
		}
	}
	if r := k.Do("GET", "acme", "/api/v1/managers?filter[parent_id]=abc", x.resTok, nil); r.Status != 400 {
		t.Fatalf("unparseable filter: %d %s", r.Status, r.Body)
	}
	// q matches username, email and names, inside the subtree only.
	if got := list(x.resTok, "?q=res_a"); !reflect.DeepEqual(got, ids(x.resA, x.resA1)) {
		t.Fatalf("q=res_a %v", got)
	}
	if got := list(x.resTok, "?q=other"); len(got) != 0 {
		t.Fatalf("q=other leaked %v", got)
	}
	if got := list(x.ownerTok, "?q=res_b@mail"); !reflect.DeepEqual(got, ids(x.resB)) {
		t.Fatalf("q by email %v", got)
	}
	// /managers/all: id and name only, un-paginated, same scope.
	r := k.Do("GET", "acme", "/api/v1/managers/all", x.resTok, nil)
	if r.Status != 200 || r.Meta()["has_next"] != false || int(r.Meta()["total"].(float64)) != len(r.List()) {
		t.Fatalf("all: %d %s", r.Status, r.Body)
	}
	for _, row := range r.List() {
		idWantKeys(t, "managers/all row", row, "id", "name")
	}
	got := idIDs(r.List())
	for _, id := range got {
		if id == x.other || id == x.owner {
			t.Fatalf("managers/all leaked %d: %v", id, got)
		}
	}
	if !idHas(got, x.resA1) {
		t.Fatalf("managers/all %v", got)
	}

	// Outside the subtree: byte-identical to a missing record.
	for _, sub := range []string{"", "/debt", "/journal", "/loans", "/overview", "/profile", "/roles"} {
		for _, outside := range []int64{x.other, x.owner} {
			a := k.Do("GET", "acme", idP("/managers/%d%s", outside, sub), x.resTok, nil)
			b := k.Do("GET", "acme", idP("/managers/%d%s", 999999, sub), x.resTok, nil)
			webtest.ExpectErr(t, a, 404, "ERR_NOT_FOUND", "not_found")
			idSameError(t, a, b)
		}
		if r := k.Do("GET", "acme", idP("/managers/%d%s", x.resA1, sub), x.resTok, nil); r.Status != 200 {
			t.Fatalf("inside %s: %d %s", sub, r.Status, r.Body)
		}
	}
	for _, c := range []struct {
		m, sub string
		body   map[string]any
	}{
		{"PATCH", "", map[string]any{"firstname": "x"}},
		{"POST", "/suspend", nil},
		{"POST", "/activate", nil},
		{"POST", "/wallet/deposit", map[string]any{"amount": 1, "request_id": "scope-a"}},
		{"POST", "/reset-password", map[string]any{}},
	} {
		a := k.Do(c.m, "acme", idP("/managers/%d%s", x.other, c.sub), x.resTok, c.body)
		if c.sub == "/wallet/deposit" {
			c.body["request_id"] = "scope-b"
		}
		b := k.Do(c.m, "acme", idP("/managers/%d%s", 999999, c.sub), x.resTok, c.body)
		webtest.ExpectErr(t, a, 404, "ERR_NOT_FOUND", "not_found")
		idSameError(t, a, b)
	}
	// The records are untouched.
	if r := k.Do("GET", "acme", idP("/managers/%d", x.other), x.ownerTok, nil); r.Data()["status"] != "active" || r.Data()["firstname"] != "" {
		t.Fatalf("other changed: %s", r.Body)
	}
	// Non-numeric ids are the same 404.
	idSameError(t, k.Do("GET", "acme", "/api/v1/managers/abc", x.resTok, nil), k.Do("GET", "acme", idP("/managers/%d", 999999), x.resTok, nil))
}

func idHas(l []int64, v int64) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func TestIdentityManagersProjection(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)
	// Some debt for res through a topup on loan.
	if r := k.Do("POST", "acme", idP("/managers/%d/wallet/topup", x.res), x.ownerTok, map[string]any{"amount": 12.5, "request_id": "top-1"}); r.Status != 200 {
		t.Fatalf("topup: %d %s", r.Status, r.Body)
	}
	r := k.Do("GET", "acme", "/api/v1/managers?filter[parent_id]="+webtest.Itoa(x.owner), x.ownerTok, nil)
	var row map[string]any
	for _, v := range r.List() {
		if m := v.(map[string]any); int64(m["id"].(float64)) == x.res {
			row = m
		}
	}
	if row == nil {
		t.Fatalf("res not listed: %s", r.Body)
	}
	for _, key := range []string{"id", "tenant_id", "email", "username", "firstname", "status", "parent_manager_id", "parent_username",
		"balance", "debt_limit", "debt", "discount_rate", "points_balance", "users_count", "created_at"} {
		if _, ok := row[key]; !ok {
			t.Fatalf("list row lacks %s: %v", key, row)
		}
	}
	if row["parent_username"] != "owner" || row["debt"] != 12.5 || row["balance"] != 12.5 || row["users_count"] != float64(0) {
		t.Fatalf("list row %v", row)
	}
	r = k.Do("GET", "acme", idP("/managers/%d", x.res), x.ownerTok, nil)
	d := r.Data()
	if _, ok := d["debt"]; ok {
		t.Fatalf("GET /managers/{id} has debt: %s", r.Body)
	}
	if _, ok := d["parent_username"]; ok {
		t.Fatalf("GET /managers/{id} has parent_username: %s", r.Body)
	}
	if d["users_count"] != float64(0) || d["balance"] != 12.5 || int64(d["parent_manager_id"].(float64)) != x.owner {
		t.Fatalf("GET /managers/{id}: %s", r.Body)
	}
	if _, ok := d["custom_fields"]; !ok {
		t.Fatalf("record lacks custom_fields: %s", r.Body)
	}
	// The root's record has a null parent.
	if r := k.Do("GET", "acme", idP("/managers/%d", x.owner), x.ownerTok, nil); r.Data()["parent_manager_id"] != nil {
		t.Fatalf("root parent: %s", r.Body)
	}
}

func TestIdentityManagersPatchAndMove(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)
	before := k.Do("GET", "acme", idP("/managers/%d", x.resA), x.ownerTok, nil).Data()

	r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.resTok, map[string]any{"firstname": "Alma", "debt_limit": 5})
	if r.Status != 200 || r.Data()["firstname"] != "Alma" || r.Data()["debt_limit"] != float64(5) {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	after := r.Data()
	for _, key := range []string{"email", "username", "lastname", "phone", "parent_manager_id", "status", "balance", "created_at"} {
		if !reflect.DeepEqual(before[key], after[key]) {
			t.Fatalf("omitted %s changed: %v → %v", key, before[key], after[key])
		}
	}
	// An empty patch changes nothing.
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.resTok, map[string]any{}); r.Status != 200 || r.Data()["firstname"] != "Alma" {
		t.Fatalf("empty patch: %d %s", r.Status, r.Body)
	}
	// Clearing the only identity is refused (one at a time, or both at once).
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.ownerTok, map[string]any{"email": "", "username": ""}); r.Status != 400 || r.Reason() != "identity_required" {
		t.Fatalf("both identities cleared: %d %s", r.Status, r.Body)
	}
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.ownerTok, map[string]any{"email": ""}); r.Status != 200 || r.Data()["email"] != nil {
		t.Fatalf("email cleared: %d %s", r.Status, r.Body)
	}
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.ownerTok, map[string]any{"username": ""}); r.Status != 400 || r.Reason() != "identity_required" {
		t.Fatalf("no identity left: %d %s", r.Status, r.Body)
	}
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.ownerTok, map[string]any{"username": "", "email": "res_a@new.test"}); r.Status != 200 || r.Data()["username"] != nil {
		t.Fatalf("swap identity: %d %s", r.Status, r.Body)
	}
	idLogin(k, "acme", "res_a@new.test", webtest.Password)
	k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.ownerTok, map[string]any{"username": "res_a"})
	idLogin(k, "acme", "res_a", webtest.Password)

	// Moving under its own descendant (or itself) is refused.
	for _, p := range []int64{x.resA1, x.resA} {
		r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.ownerTok, map[string]any{"parent_manager_id": p})
		if r.Status != 400 || r.Field() != "parent_manager_id" {
			t.Fatalf("move under %d: %d %s", p, r.Status, r.Body)
		}
	}
	// The reseller cannot move into a parent outside its subtree.
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.resTok, map[string]any{"parent_manager_id": x.other}); r.Reason() != "parent_not_found" {
		t.Fatalf("move outside scope: %d %s", r.Status, r.Body)
	}
	// A legal move re-hangs the whole subtree.
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.ownerTok, map[string]any{"parent_manager_id": x.other}); r.Status != 200 || int64(r.Data()["parent_manager_id"].(float64)) != x.other {
		t.Fatalf("move: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", idP("/managers/%d", x.resA1), x.resTok, nil), 404, "ERR_NOT_FOUND", "not_found")
	if got := idIDs(k.Do("GET", "acme", "/api/v1/managers", x.resTok, nil).List()); !reflect.DeepEqual(got, []int64{x.resB}) {
		t.Fatalf("reseller after move %v", got)
	}
	webtest.CreateManager(k, "acme", 0, "otherboss")
	// other sees its new grandchild through the closure table.
	if _, err := identity.SetManagerRoles(webtest.Background, k.System("acme"), x.other, []int64{webtest.RoleID(k, "acme", "reseller")}); err != nil {
		t.Fatal(err)
	}
	ot := idSession(k, "acme", "other")
	if got := idIDs(k.Do("GET", "acme", "/api/v1/managers", ot, nil).List()); !reflect.DeepEqual(got, []int64{x.resA, x.resA1}) {
		t.Fatalf("other after move %v", got)
	}
	// Moving oneself is refused.
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.res), x.resTok, map[string]any{"parent_manager_id": x.resB}); r.Status < 400 {
		t.Fatalf("self move: %d %s", r.Status, r.Body)
	}
	// A password set by PATCH signs the manager out everywhere.
	s := idSession(k, "acme", "res_b")
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.resB), x.ownerTok, map[string]any{"password": "Patched-pass-3"}); r.Status != 200 {
		t.Fatalf("patch password: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", s, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
	idLogin(k, "acme", "res_b", "Patched-pass-3")
}

func TestIdentityManagersSuspendActivate(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)
	tok, _ := idAPIToken(k, "acme", x.resTok, map[string]any{"full_access": true})
	if r := k.Do("POST", "acme", idP("/managers/%d/suspend", x.res), x.ownerTok, nil); r.Status != 200 {
		t.Fatalf("suspend: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "acme", idP("/managers/%d", x.res), x.ownerTok, nil); r.Data()["status"] != "suspended" {
		t.Fatalf("status: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("res", webtest.Password)), 401, "ERR_UNAUTHORIZED", "account_suspended")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "api_token_owner_inactive")
	if r := k.Do("GET", "acme", "/api/v1/auth/me", x.resTok, nil); r.Status != 401 {
		t.Fatalf("suspended session still works: %d %s", r.Status, r.Body)
	}
	// Children are untouched.
	idLogin(k, "acme", "res_a", webtest.Password)
	// Suspending oneself is refused.
	if r := k.Do("POST", "acme", idP("/managers/%d/suspend", x.resA), idSession(k, "acme", "res_a"), nil); r.Status != 403 {
		t.Fatalf("res_a (no codes) suspended: %d %s", r.Status, r.Body)
	}
	if r := k.Do("POST", "acme", idP("/managers/%d/activate", x.res), x.ownerTok, nil); r.Status != 200 {
		t.Fatalf("activate: %d %s", r.Status, r.Body)
	}
	idLogin(k, "acme", "res", webtest.Password)
	idMe(k, "acme", tok)
	idMe(k, "acme", x.resTok)
	// Both are idempotent.
	if r := k.Do("POST", "acme", idP("/managers/%d/activate", x.res), x.ownerTok, nil); r.Status != 200 {
		t.Fatalf("activate again: %d %s", r.Status, r.Body)
	}
	rt := idSession(k, "acme", "res")
	if r := k.Do("POST", "acme", idP("/managers/%d/suspend", x.res), rt, nil); r.Status != 403 {
		t.Fatalf("self suspend: %d %s", r.Status, r.Body)
	}
}

func TestIdentityManagersDelete(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)
	// Referenced by sub-managers.
	webtest.ExpectErr(t, k.Do("DELETE", "acme", idP("/managers/%d", x.resA), x.ownerTok, nil), 409, "ERR_CONFLICT", "manager_in_use")
	// Referenced by a journal row after a deposit.
	if r := k.Do("POST", "acme", idP("/managers/%d/wallet/deposit", x.resB), x.ownerTok, map[string]any{"amount": 1, "request_id": "d1"}); r.Status != 200 {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("DELETE", "acme", idP("/managers/%d", x.resB), x.ownerTok, nil), 409, "ERR_CONFLICT", "manager_in_use")
	if r := k.Do("GET", "acme", idP("/managers/%d", x.resB), x.ownerTok, nil); r.Status != 200 {
		t.Fatalf("refused delete removed it: %d", r.Status)
	}
	// Referenced by reward points (the append-only points ledger).
	pts := webtest.CreateManager(k, "acme", 0, "pts1")
	if r := k.Do("POST", "acme", idP("/managers/%d/points/add", pts), x.ownerTok, map[string]any{"points": 3}); r.Status != 200 {
		t.Fatalf("points: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("DELETE", "acme", idP("/managers/%d", pts), x.ownerTok, nil), 409, "ERR_CONFLICT", "manager_in_use")
	// Clean: deleted, with its sessions and tokens.
	s := idSession(k, "acme", "res_a1")
	if r := k.Do("DELETE", "acme", idP("/managers/%d", x.resA1), x.ownerTok, nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", idP("/managers/%d", x.resA1), x.ownerTok, nil), 404, "ERR_NOT_FOUND", "not_found")
	if r := k.Do("GET", "acme", "/api/v1/auth/me", s, nil); r.Status != 401 {
		t.Fatalf("deleted manager's session: %d %s", r.Status, r.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM manager_tree WHERE descendant_id = ? OR ancestor_id = ?`, x.resA1, x.resA1); n != 0 {
		t.Fatalf("%d closure rows left", n)
	}
	// res_a is clean now.
	if r := k.Do("DELETE", "acme", idP("/managers/%d", x.resA), x.ownerTok, nil); r.Status != 200 {
		t.Fatalf("delete res_a: %d %s", r.Status, r.Body)
	}
	// The reseller lacks prm_managers_delete.
	webtest.ExpectErr(t, k.Do("DELETE", "acme", idP("/managers/%d", x.resB), x.resTok, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, k.Do("DELETE", "acme", idP("/managers/%d", 999999), x.ownerTok, nil), 404, "ERR_NOT_FOUND", "not_found")
}

func idFailed(t testing.TB, r webtest.Resp) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	l, ok := r.Data()["failed"].([]any)
	if !ok {
		t.Fatalf("no failed array: %s", r.Body)
	}
	for _, f := range l {
		m := f.(map[string]any)
		out[int64(m["id"].(float64))] = m["reason"].(string)
	}
	return out
}

func idUpdated(r webtest.Resp) []int64 {
	out := []int64{}
	for _, v := range r.Data()["updated"].([]any) {
		out = append(out, int64(v.(float64)))
	}
	return out
}

func TestIdentityManagersBulk(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)

	r := k.Do("POST", "acme", "/api/v1/managers/bulk-suspend", x.resTok, map[string]any{"ids": []int64{x.resA1, 999999, x.other, x.resB}})
	if r.Status != 200 {
		t.Fatalf("bulk-suspend: %d %s", r.Status, r.Body)
	}
	if got := idUpdated(r); !reflect.DeepEqual(got, []int64{x.resA1, x.resB}) {
		t.Fatalf("updated %v", got)
	}
	if got := idFailed(t, r); !reflect.DeepEqual(got, map[int64]string{999999: "not_found", x.other: "not_authorized"}) {
		t.Fatalf("failed %v: %s", got, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("res_b", webtest.Password)), 401, "ERR_UNAUTHORIZED", "account_suspended")
	if r := k.Do("GET", "acme", idP("/managers/%d", x.other), x.ownerTok, nil); r.Data()["status"] != "active" {
		t.Fatal("out-of-scope manager suspended")
	}

	r = k.Do("POST", "acme", "/api/v1/managers/bulk-activate", x.resTok, map[string]any{"ids": []int64{x.resA1, x.resB, x.owner}})
	if got := idUpdated(r); r.Status != 200 || !reflect.DeepEqual(got, []int64{x.resA1, x.resB}) {
		t.Fatalf("bulk-activate: %d %s", r.Status, r.Body)
	}
	if got := idFailed(t, r); !reflect.DeepEqual(got, map[int64]string{x.owner: "not_authorized"}) {
		t.Fatalf("failed %v", got)
	}
	idLogin(k, "acme", "res_b", webtest.Password)

	// Owner (tenant-wide): a missing id is not_found, a referenced one an error.
	r = k.Do("POST", "acme", "/api/v1/managers/bulk-delete", x.ownerTok, map[string]any{"ids": []int64{x.resA, 999999, x.resA1}})
	if got := idUpdated(r); r.Status != 200 || !reflect.DeepEqual(got, []int64{x.resA1}) {
		t.Fatalf("bulk-delete: %d %s", r.Status, r.Body)
	}
	if got := idFailed(t, r); !reflect.DeepEqual(got, map[int64]string{999999: "not_found", x.resA: "error"}) {
		t.Fatalf("failed %v: %s", got, r.Body)
	}
	// Body rules.
	for _, body := range []map[string]any{{}, {"ids": []int64{}}, {"ids": []int64{0}}} {
		if r := k.Do("POST", "acme", "/api/v1/managers/bulk-suspend", x.ownerTok, body); r.Status != 400 {
			t.Fatalf("bulk body %v: %d %s", body, r.Status, r.Body)
		}
	}
}

func TestIdentityManagersGroups(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)
	r := k.Do("POST", "acme", idP("/admin/managers/%d/group", x.resA), x.ownerTok, map[string]any{"group_name": "gold"})
	if r.Status != 200 {
		t.Fatalf("group: %d %s", r.Status, r.Body)
	}
	gid := webtest.Scalar(k, "acme", `SELECT id FROM manager_groups WHERE name = 'gold'`)
	if r := k.Do("GET", "acme", idP("/managers/%d/profile", x.resA), x.ownerTok, nil); r.Data()["group_name"] != "gold" {
		t.Fatalf("profile: %s", r.Body)
	}
	r = k.Do("POST", "acme", "/api/v1/admin/managers/bulk-group", x.ownerTok, map[string]any{"ids": []int64{x.resB, x.other, 999999}, "group_id": gid})
	if got := idUpdated(r); r.Status != 200 || !reflect.DeepEqual(got, []int64{x.resB, x.other}) {
		t.Fatalf("bulk-group: %d %s", r.Status, r.Body)
	}
	if got := idFailed(t, r); !reflect.DeepEqual(got, map[int64]string{999999: "not_found"}) {
		t.Fatalf("failed %v", got)
	}
	r = k.Do("GET", "acme", fmt.Sprintf("/api/v1/managers?filter[group_id]=%d", gid), x.ownerTok, nil)
	if got := idIDs(r.List()); !reflect.DeepEqual(got, []int64{x.resA, x.resB, x.other}) {
		t.Fatalf("group filter %v", got)
	}
	// An unknown group id is a 400; no group clears it.
	if r := k.Do("POST", "acme", idP("/admin/managers/%d/group", x.resA), x.ownerTok, map[string]any{"group_id": 999}); r.Status != 400 {
		t.Fatalf("unknown group: %d %s", r.Status, r.Body)
	}
	k.Do("POST", "acme", idP("/admin/managers/%d/group", x.resA), x.ownerTok, map[string]any{})
	if r := k.Do("GET", "acme", idP("/managers/%d", x.resA), x.ownerTok, nil); r.Data()["group_id"] != nil {
		t.Fatalf("group not cleared: %s", r.Body)
	}
	// The reseller lacks prm_groups_assign.
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/admin/managers/%d/group", x.resA), x.resTok, map[string]any{"group_name": "x"}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
}

func TestIdentityManagersResetPassword(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)
	s := idSession(k, "acme", "res_a")
	r := k.Do("POST", "acme", idP("/managers/%d/reset-password", x.resA), x.ownerTok, map[string]any{"password": "Reset-pass-4"})
	if r.Status != 200 {
		t.Fatalf("reset: %d %s", r.Status, r.Body)
	}
	if _, ok := r.Data()["password"]; ok {
		t.Fatalf("a chosen password is echoed: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", s, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
	idLogin(k, "acme", "res_a", "Reset-pass-4")
	// Generated when none is given, shown once.
	r = k.Do("POST", "acme", idP("/managers/%d/reset-password", x.resA), x.resTok, map[string]any{})
	pw, _ := r.Data()["password"].(string)
	if r.Status != 200 || len(pw) < 8 {
		t.Fatalf("generated reset: %d %s", r.Status, r.Body)
	}
	idLogin(k, "acme", "res_a", pw)
	// Outside the subtree: the 404; weak: 400.
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/reset-password", x.other), x.resTok, map[string]any{}), 404, "ERR_NOT_FOUND", "not_found")
	if r := k.Do("POST", "acme", idP("/managers/%d/reset-password", x.resA), x.ownerTok, map[string]any{"password": "weak"}); r.Status != 400 {
		t.Fatalf("weak: %d %s", r.Status, r.Body)
	}
}

func TestIdentityImpersonation(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)
	// Give res the login-as code through a role, so nested login-as reaches
	// the impersonation check rather than the permission check.
	helper := webtest.CreateRole(k, "acme", "helper", "prm_managers_login_as", "prm_managers_index", "prm_managers_update", "prm_roles_manage")
	if r := k.Do("PUT", "acme", idP("/managers/%d/roles", x.res), x.ownerTok, map[string]any{"role_ids": []int64{webtest.RoleID(k, "acme", "reseller"), helper}}); r.Status != 200 {
		t.Fatalf("roles: %d %s", r.Status, r.Body)
	}

	r := k.Do("POST", "acme", idP("/managers/%d/login-as", x.res), x.ownerTok, nil)
	if r.Status != 200 {
		t.Fatalf("login-as: %d %s", r.Status, r.Body)
	}
	imp := r.Data()["token"].(string)
	if int64(r.Data()["user_id"].(float64)) != x.res || r.Data()["tenant_slug"] != "acme" {
		t.Fatalf("login-as answer: %s", r.Body)
	}
	me := idMe(k, "acme", imp)
	if int64(me["manager"].(map[string]any)["id"].(float64)) != x.res || me["is_admin"] != false {
		t.Fatalf("impersonated me: %v", me)
	}
	// Acts with the target's scope.
	if got := idIDs(k.Do("GET", "acme", "/api/v1/managers", imp, nil).List()); !reflect.DeepEqual(got, []int64{x.resA, x.resA1, x.resB}) {
		t.Fatalf("impersonated list %v", got)
	}
	// The impersonator is recorded.
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM auth_sessions WHERE manager_id = ? AND impersonator_id = ? AND revoked_at IS NULL`, x.res, x.owner); n != 1 {
		t.Fatalf("%d impersonated session rows", n)
	}
	r = k.Do("GET", "acme", "/api/v1/auth/account/sessions", imp, nil)
	found := false
	for _, row := range r.List() {
		m := row.(map[string]any)
		if m["current"] == true {
			found = m["impersonator_id"] != nil && int64(m["impersonator_id"].(float64)) == x.owner
		}
	}
	if !found {
		t.Fatalf("sessions do not show the impersonator: %s", r.Body)
	}

	// Refused under impersonation, whatever the codes.
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/reset-password", x.resA), imp, map[string]any{"password": "Reset-pass-4"}), 403, "ERR_FORBIDDEN", "impersonation_forbidden")
	webtest.ExpectErr(t, k.Do("PUT", "acme", idP("/managers/%d/roles", x.resA), imp, map[string]any{"role_ids": []int64{}}), 403, "ERR_FORBIDDEN", "impersonation_forbidden")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/auth/account/password", imp, map[string]any{"current_password": webtest.Password, "new_password": "Brand-new-2"}), 403, "ERR_FORBIDDEN", "impersonation_forbidden")
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/login-as", x.resA), imp, nil), 403, "ERR_FORBIDDEN", "impersonation_forbidden")
	idLogin(k, "acme", "res_a", webtest.Password) // nothing changed
	idLogin(k, "acme", "res", webtest.Password)

	// Exit: a working token of the original manager; the impersonated one dies.
	r = k.Do("POST", "acme", "/api/v1/auth/impersonation/exit", imp, nil)
	if r.Status != 200 {
		t.Fatalf("exit: %d %s", r.Status, r.Body)
	}
	back := r.Data()["token"].(string)
	if int64(r.Data()["user_id"].(float64)) != x.owner {
		t.Fatalf("exit answer: %s", r.Body)
	}
	if me := idMe(k, "acme", back); int64(me["manager"].(map[string]any)["id"].(float64)) != x.owner || me["is_admin"] != true {
		t.Fatalf("after exit: %v", me)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/auth/me", imp, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
	idMe(k, "acme", x.ownerTok)
	// Not impersonating: nothing to exit.
	if r := k.Do("POST", "acme", "/api/v1/auth/impersonation/exit", back, nil); r.Status != 409 {
		t.Fatalf("exit without impersonation: %d %s", r.Status, r.Body)
	}

	// login-as refusals: self, out of scope, suspended target, missing code.
	if r := k.Do("POST", "acme", idP("/managers/%d/login-as", x.owner), x.ownerTok, nil); r.Status != 400 {
		t.Fatalf("login-as self: %d %s", r.Status, r.Body)
	}
	rt := idSession(k, "acme", "res")
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/login-as", x.other), rt, nil), 404, "ERR_NOT_FOUND", "not_found")
	if r := k.Do("POST", "acme", idP("/managers/%d/login-as", x.resA), rt, nil); r.Status != 200 {
		t.Fatalf("reseller login-as its child: %d %s", r.Status, r.Body)
	}
	k.Do("POST", "acme", idP("/managers/%d/suspend", x.resB), x.ownerTok, nil)
	if r := k.Do("POST", "acme", idP("/managers/%d/login-as", x.resB), x.ownerTok, nil); r.Status != 409 {
		t.Fatalf("login-as a suspended manager: %d %s", r.Status, r.Body)
	}
	webtest.CreateManager(k, "acme", 0, "cash1", "cashier")
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/login-as", x.resA), idSession(k, "acme", "cash1"), nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
}

func TestIdentityLicenceLock(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	api, _ := idAPIToken(k, "acme", tok, map[string]any{"full_access": true})
	yesterday := app.T(time.Now().Add(-24 * time.Hour))

	for _, c := range []struct {
		name   string
		update app.TenantUpdate
		status string
	}{
		{"max_users 0", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, V: 0}}, "blocked"},
		{"expired", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, Null: true}, LicenseExpiresAt: app.Opt[app.Time]{Set: true, V: yesterday}}, "expired"},
	} {
		if _, err := k.App.UpdateTenant(webtest.Background, "acme", c.update); err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{tok, api} {
			webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/managers", b, nil), 403, "ERR_LICENSE_BLOCKED", "license_locked")
			webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/managers", b, map[string]any{"username": "z1", "password": webtest.Password}), 403, "ERR_LICENSE_BLOCKED", "license_locked")
			webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/roles", b, nil), 403, "ERR_LICENSE_BLOCKED", "license_locked")
			me := idMe(k, "acme", b)
			if tn := me["tenant"].(map[string]any); tn["license_status"] != c.status {
				t.Fatalf("%s: /auth/me tenant %v", c.name, tn)
			}
			r := k.Do("GET", "acme", "/api/v1/admin/license", b, nil)
			if r.Status != 200 || r.Data()["license_status"] != c.status || r.Data()["locked"] != true {
				t.Fatalf("%s: license page %d %s", c.name, r.Status, r.Body)
			}
		}
		if c.status == "blocked" {
			if tn := idMe(k, "acme", tok)["tenant"].(map[string]any); tn["max_users"] != float64(0) || tn["blocked"] != true {
				t.Fatalf("max_users 0 is blocked, not unlimited: %v", tn)
			}
		} else if tn := idMe(k, "acme", tok)["tenant"].(map[string]any); tn["license_expires_at"] != app.FormatTime(yesterday.Time) {
			t.Fatalf("expiry %v", tn)
		}
		// Signing in still works so the owner can see why.
		if r := k.Do("POST", "acme", "/api/v1/auth/login", "", idLoginBody("owner", webtest.Password)); r.Status != 200 {
			t.Fatalf("%s: login %d %s", c.name, r.Status, r.Body)
		}
	}
	// Lifted: open again.
	if _, err := k.App.UpdateTenant(webtest.Background, "acme", app.TenantUpdate{LicenseExpiresAt: app.Opt[app.Time]{Set: true}}); err != nil {
		t.Fatal(err)
	}
	if r := k.Do("GET", "acme", "/api/v1/managers", tok, nil); r.Status != 200 {
		t.Fatalf("after lifting: %d %s", r.Status, r.Body)
	}
	// The lock is per tenant.
	k.Tenant("beta")
	if _, err := k.App.UpdateTenant(webtest.Background, "acme", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, V: 0}}); err != nil {
		t.Fatal(err)
	}
	if r := k.Do("GET", "beta", "/api/v1/managers", idSession(k, "beta", "owner"), nil); r.Status != 200 {
		t.Fatalf("beta locked by acme: %d %s", r.Status, r.Body)
	}
}
