package web_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"xr/web"
)

// testPages is a product of pages with one template and the rows given.
func testPages(rows ...web.Route) web.Pages {
	tmpl := fstest.MapFS{
		"layout.tmpl": {Data: []byte(`{{template "content" .}}`)},
		"page.tmpl":   {Data: []byte(`{{define "content"}}page{{end}}`)},
	}
	return web.Pages{Name: "test", Prefix: "/t/", Cookie: "xr_test", Templates: tmpl,
		Rows: func(*web.Site) []web.Route { return rows }}
}

// TestPageRowTakesItsAPIRowsMarks: a page row that names an API row takes
// its permissions, buckets and access rules, and its handler when it has
// none; naming a row that does not exist or serves another caller, or
// naming one and stating marks by hand as well, stops the server at start.
func TestPageRowTakesItsAPIRowsMarks(t *testing.T) {
	t.Parallel()
	a := pfBareApp(t)
	own := func(c *web.Ctx) error { return nil }
	s := web.New(a, testPages(
		web.Route{M: "GET", P: "/t/search", Access: web.Staff, API: "GET /cards/search", H: own},
		web.Route{M: "GET", P: "/t/file/{id}", Access: web.Staff, API: "GET /exports/{id}/download"},
		web.Route{M: "POST", P: "/t/password", Access: web.Staff, API: "POST /auth/account/password", H: own},
	))
	rows := s.Site("test").Routes()
	for _, c := range []struct {
		row *web.Route
		api string
	}{{rows[0], "GET /cards/search"}, {rows[1], "GET /exports/{id}/download"}, {rows[2], "POST /auth/account/password"}} {
		api := s.APIRoute(c.api)
		if len(api.Perms)+len(api.Buckets) == 0 && !api.AnyStaff {
			t.Fatalf("%s: pick an API row with marks", c.api)
		}
		if !slices.Equal(c.row.Perms, api.Perms) || !slices.Equal(c.row.Buckets, api.Buckets) || c.row.AnyStaff != api.AnyStaff ||
			c.row.SessionOnly != api.SessionOnly || c.row.NoImpersonation != api.NoImpersonation {
			t.Errorf("%s took %v %v any=%v so=%v noimp=%v from %s: %v %v any=%v so=%v noimp=%v", c.row.Pattern(), c.row.Perms, c.row.Buckets,
				c.row.AnyStaff, c.row.SessionOnly, c.row.NoImpersonation, c.api, api.Perms, api.Buckets, api.AnyStaff, api.SessionOnly, api.NoImpersonation)
		}
	}
	if !rows[2].LicenseExempt {
		t.Error("a page naming an /auth/ row is not exempt from the licence lock as the row is")
	}
	if rows[1].H == nil || reflect.ValueOf(rows[1].H).Pointer() != reflect.ValueOf(s.APIRoute("GET /exports/{id}/download").H).Pointer() {
		t.Error("a page without a handler does not serve its API row's")
	}
	if reflect.ValueOf(rows[0].H).Pointer() != reflect.ValueOf(own).Pointer() {
		t.Error("a page's own handler was replaced")
	}

	for _, c := range []struct {
		name string
		row  web.Route
		want string
	}{
		{"unknown row", web.Route{M: "GET", P: "/t/x", Access: web.Staff, API: "GET /no/such/row", H: own}, "does not exist"},
		{"a path outside /api/v1", web.Route{M: "GET", P: "/t/x", Access: web.Public, API: "GET /healthz", H: own}, "does not exist"},
		{"marks by hand too", web.Route{M: "GET", P: "/t/x", Access: web.Staff, AnyStaff: true, API: "GET /jobs/{id}", H: own}, "by hand too"},
		{"buckets by hand too", web.Route{M: "GET", P: "/t/x", Access: web.Staff, Buckets: []string{"t_heavy"}, API: "GET /jobs/{id}", H: own}, "by hand too"},
		{"another caller", web.Route{M: "GET", P: "/t/x", Access: web.Subscriber, API: "GET /jobs/{id}", H: own}, "its API row"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				p := recover()
				if p == nil || !strings.Contains(fmt.Sprint(p), c.want) {
					t.Fatalf("server built: %v, want a refusal saying %q", p, c.want)
				}
			}()
			web.New(a, testPages(c.row))
		})
	}
}

// TestMenuSectionsHoldEveryMenuRow: a page with a Menu key must sit in
// exactly one section and every section item must name a page, or the
// server refuses to start (a page missing from the menu is unreachable).
func TestMenuSectionsHoldEveryMenuRow(t *testing.T) {
	t.Parallel()
	a := pfBareApp(t)
	own := func(c *web.Ctx) error { return nil }
	row := func(menu string) web.Route {
		return web.Route{M: "GET", P: "/t/" + menu, Access: web.Staff, AnyStaff: true, H: own, Menu: menu}
	}
	sec := func(key string, items ...string) web.MenuSection { return web.MenuSection{Key: key, Items: items} }
	for _, c := range []struct {
		name     string
		rows     []web.Route
		sections []web.MenuSection
		want     string // "" = mounts
	}{
		{"every row placed", []web.Route{row("a"), row("b")}, []web.MenuSection{sec("one", "b"), sec("two", "a")}, ""},
		{"row in no section", []web.Route{row("a"), row("b")}, []web.MenuSection{sec("one", "a")}, `"b" (/t/b) is in no menu section`},
		{"item naming no page", []web.Route{row("a")}, []web.MenuSection{sec("one", "a", "ghost")}, `"ghost" names no page`},
		{"item in two sections", []web.Route{row("a")}, []web.MenuSection{sec("one", "a"), sec("two", "a")}, `"a" in two sections`},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				p := recover()
				if (p == nil) != (c.want == "") || (p != nil && !strings.Contains(fmt.Sprint(p), c.want)) {
					t.Fatalf("mount: %v, want %q", p, c.want)
				}
			}()
			p := testPages(c.rows...)
			p.MenuSections = c.sections
			web.New(a, p)
		})
	}
}
