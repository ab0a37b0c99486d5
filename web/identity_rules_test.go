package web_test

// Identity rules: the identity, authority and webhook surfaces checked
// against the spec (../shared/spec/01-core.md, through its copy in
// testdata) and the issue texts.

import (
	"bufio"
	"encoding/json"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"

	"xr/internal/webtest"
	"xr/web"
)

// rvSpecRow is one row of a group table of 01-core.md.
type rvSpecRow struct {
	Group, Method, Path string
	Perms               []string
	Buckets             []string
	SessionOnly, Public bool
}

// rvCoreSpecRows reads the Auth, Managers, Roles and Webhooks group tables
// (the committed copy of them, web/spec_tables_test.go).
func rvCoreSpecRows(t testing.TB) []rvSpecRow {
	t.Helper()
	f := openSpecTables(t)
	var rows []rvSpecRow
	group := ""
	var header []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			group = ""
			continue
		}
		if strings.HasPrefix(line, "### ") {
			group = strings.TrimPrefix(line, "### ")
			header = nil
			continue
		}
		switch group {
		case "Auth group", "Managers group", "Roles group", "Webhooks group":
		default:
			continue
		}
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if header == nil {
			header = cells
			continue
		}
		if strings.HasPrefix(cells[0], "---") || !strings.HasPrefix(cells[1], "/") {
			continue
		}
		row := rvSpecRow{Group: group}
		for i, h := range header {
			if i >= len(cells) {
				break
			}
			v := cells[i]
			switch h {
			case "Method":
				row.Method = v
			case "Path":
				row.Path = v
			case "Access":
				row.Public = v == "Public"
				row.SessionOnly = v == "Session-only"
			case "Permission":
				for _, p := range strings.Split(v, ",") {
					p = strings.TrimSpace(p)
					switch {
					case p == "Session-only":
						row.SessionOnly = true
					case strings.HasPrefix(p, "prm_"):
						row.Perms = append(row.Perms, p)
					}
				}
			case "Bucket":
				if v != "" {
					row.Buckets = append(row.Buckets, v)
				}
			}
		}
		if group == "Webhooks group" {
			row.Perms = []string{"prm_notifications_manage"}
		}
		rows = append(rows, row)
	}
	return rows
}

func rvSorted[T ~string](l []T) string {
	c := make([]string, 0, len(l))
	for _, v := range l {
		c = append(c, string(v))
	}
	sort.Strings(c)
	return strings.Join(c, ",")
}

// Every row of the four group tables: access, Session-only, the permission
// codes exactly, and the buckets (t_mutate implied on authenticated non-GETs).
func TestSpecTablesMatchRouteTable(t *testing.T) {
	t.Parallel()
	rows := rvCoreSpecRows(t)
	if len(rows) < 60 {
		t.Fatalf("parsed only %d spec rows", len(rows))
	}
	k := webtest.New(t)
	table := map[string]*web.Route{}
	for _, r := range k.Srv.Routes() {
		table[r.M+" "+r.P] = r
	}
	for _, row := range rows {
		rt := table[row.Method+" "+row.Path]
		if rt == nil {
			t.Errorf("%s %s (%s): not in the route table", row.Method, row.Path, row.Group)
			continue
		}
		if row.Public != (rt.Access == web.Public) {
			t.Errorf("%s %s: access %v, spec public=%v", row.Method, row.Path, rt.Access, row.Public)
		}
		if row.SessionOnly != rt.SessionOnly {
			t.Errorf("%s %s: SessionOnly %v, spec %v", row.Method, row.Path, rt.SessionOnly, row.SessionOnly)
		}
		if rvSorted(row.Perms) != rvSorted(rt.Perms) {
			t.Errorf("%s %s: perms %v, spec %v", row.Method, row.Path, rt.Perms, row.Perms)
		}
		want := []string{}
		for _, b := range row.Buckets {
			if b != "t_mutate" || rt.Access == web.Public {
				want = append(want, b)
			}
		}
		if rvSorted(want) != rvSorted(rt.Buckets) {
			t.Errorf("%s %s: buckets %v, spec %v", row.Method, row.Path, rt.Buckets, row.Buckets)
		}
		if rt.Access != web.Public && rt.IsMutation() != (row.Method != "GET") {
			t.Errorf("%s %s: t_mutate implication wrong", row.Method, row.Path)
		}
	}
	t.Logf("%d spec rows checked", len(rows))
}

// Role assignment is gated by prm_roles_manage (PUT /managers/{id}/roles)
// and refused for an impersonated caller (Authentication rule 8). Creating
// a manager with role_ids is role assignment too: it may not bypass either.
func TestCreateManagerRoleIDsIsRoleAssignment(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := idSession(k, "acme", "owner")
	creator := webtest.CreateRole(k, "acme", "creator", "prm_managers_create", "prm_managers_index")
	plain := webtest.CreateRole(k, "acme", "plain", "prm_managers_index")
	cid := webtest.CreateManager(k, "acme", 0, "cr", "creator")
	crTok := idSession(k, "acme", "cr")

	// Without prm_roles_manage: refused, and nothing created.
	r := k.Do("POST", "acme", "/api/v1/managers", crTok, map[string]any{"username": "n1", "password": webtest.Password, "role_ids": []int64{plain}})
	webtest.ExpectErr(t, r, 403, "ERR_FORBIDDEN", "insufficient_permissions")
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM managers WHERE username = 'n1'`); n != 0 {
		t.Fatalf("refused create left a manager")
	}
	// Without role_ids the same caller creates.
	if r := k.Do("POST", "acme", "/api/v1/managers", crTok, map[string]any{"username": "n2", "password": webtest.Password}); r.Status != 201 {
		t.Fatalf("plain create: %d %s", r.Status, r.Body)
	}
	_ = creator

	// Impersonated (owner acting as a manager holding prm_roles_manage): refused.
	idExec(k, "acme", `INSERT INTO role_permissions(role_id, code) VALUES (?, 'prm_roles_manage')`, creator)
	k.App.DropGrants("acme")
	r = k.Do("POST", "acme", idP("/managers/%d/login-as", cid), owner, nil)
	if r.Status != 200 {
		t.Fatalf("login-as: %d %s", r.Status, r.Body)
	}
	imp := r.Data()["token"].(string)
	r = k.Do("POST", "acme", "/api/v1/managers", imp, map[string]any{"username": "n3", "password": webtest.Password, "role_ids": []int64{plain}})
	webtest.ExpectErr(t, r, 403, "ERR_FORBIDDEN", "impersonation_forbidden")
	// The same manager signed in as itself may.
	if r := k.Do("POST", "acme", "/api/v1/managers", crTok, map[string]any{"username": "n4", "password": webtest.Password, "role_ids": []int64{plain}}); r.Status != 201 {
		t.Fatalf("create with roles: %d %s", r.Status, r.Body)
	}
}

// A password set through PATCH /managers/{id} is a password reset: refused
// for an impersonated caller like POST /managers/{id}/reset-password, and
// not a way around the re-authenticated account password change for the
// caller's own record.
func TestPatchManagerPasswordIsAReset(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	x := newIDTree(k)
	r := k.Do("POST", "acme", idP("/managers/%d/login-as", x.res), x.ownerTok, nil)
	if r.Status != 200 {
		t.Fatalf("login-as: %d %s", r.Status, r.Body)
	}
	imp := r.Data()["token"].(string)
	r = k.Do("PATCH", "acme", idP("/managers/%d", x.resA), imp, map[string]any{"password": "Reset-pass-4"})
	webtest.ExpectErr(t, r, 403, "ERR_FORBIDDEN", "impersonation_forbidden")
	idLogin(k, "acme", "res_a", webtest.Password) // unchanged

	// Other fields still patch under impersonation.
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), imp, map[string]any{"firstname": "Ann"}); r.Status != 200 {
		t.Fatalf("patch firstname: %d %s", r.Status, r.Body)
	}
	// One's own password goes through /auth/account/password (current password re-entered).
	r = k.Do("PATCH", "acme", idP("/managers/%d", x.res), x.resTok, map[string]any{"password": "Reset-pass-4"})
	webtest.ExpectErr(t, r, 403, "ERR_FORBIDDEN", "use_account_password")
	idLogin(k, "acme", "res", webtest.Password)
	// The owner resets a descendant's password through PATCH.
	if r := k.Do("PATCH", "acme", idP("/managers/%d", x.resA), x.ownerTok, map[string]any{"password": "Reset-pass-4"}); r.Status != 200 {
		t.Fatalf("owner patch password: %d %s", r.Status, r.Body)
	}
	idLogin(k, "acme", "res_a", "Reset-pass-4")
}

// Every non-2xx answer is the JSON error object: an unclean path (double
// slash, dot segment) is not a route, and must not get ServeMux's HTML
// redirect.
func TestUncleanPathIsJSONError(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	for _, p := range []string{"/api/v1//auth/me", "/api/v1/auth/./me", "/api/v1/users/../auth/me", "//api/v1/auth/me"} {
		req := httptest.NewRequest("GET", "http://acme.xr.test/", nil)
		req.URL.Path = p
		req.Host = "acme.xr.test"
		req.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		k.Srv.ServeHTTP(w, req)
		r := webtest.Resp{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
		json.Unmarshal(r.Body, &r.JSON)
		webtest.ExpectErr(t, r, 404, "ERR_NOT_FOUND", "route_not_found")
		if r.Header.Get("X-Request-Id") == "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: headers %v", p, r.Header)
		}
	}
}

// Limits: public endpoints each count on their own named bucket (login,
// registration, host resolution, slug availability...): checking slugs
// must not spend the budget of POST /auth/register/start, nor the reverse.
func TestSlugAvailabilityHasItsOwnBucket(t *testing.T) {
	t.Parallel()
	k := newIDKit(t, true, newIDStickyLimiter())
	for i := 0; i < 20; i++ {
		if r := k.Do("GET", "", "/api/v1/auth/register/slug-available?slug=isp"+strconv.Itoa(i), "", nil); r.Status != 200 {
			t.Fatalf("slug check %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := k.Do("POST", "", "/api/v1/auth/register/start", "", map[string]any{"email": "new@isp.test"})
	if r.Status == 429 {
		t.Fatalf("slug checks spent register_start: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "", "/api/v1/auth/register/slug-available?slug=late", "", nil), 429, "ERR_RATE_LIMITED", "rate_limited")
}
