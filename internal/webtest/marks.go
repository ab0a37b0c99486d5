package webtest

import (
	"slices"
	"strings"
	"testing"

	"xr/web"
)

// PageMarks checks the rule of a site's page rows: a page takes its
// permissions, buckets and access rules from the API row whose app
// function it calls (Route.API). A row that names none and states them by
// hand must be listed in own, with why: the form of an API row ("form of
// POST /users", shown with that row's permission and, if any, its
// buckets) or another reason (a dashboard, a menu, no API row). A listed
// row that is not a row, or no longer states its own, fails too.
func PageMarks(t *testing.T, srv *web.Server, rows []*web.Route, own map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rows {
		key := r.M + " " + r.P
		seen[key] = true
		why, listed := own[key]
		handMade := r.API == "" && r.StatesMarks()
		switch {
		case handMade && !listed:
			t.Errorf("page %s states its permissions or buckets by hand: name the API row whose app function it calls (API: \"METHOD /path\"), or list it with why", key)
		case !handMade && listed:
			t.Errorf("page %s is listed as stating its own marks but does not", key)
		case listed && strings.HasPrefix(why, "form of "):
			name := strings.TrimPrefix(why, "form of ")
			api := srv.APIRoute(name)
			if api == nil {
				t.Errorf("page %s is the form of %q, which is not an API row", key, name)
				continue
			}
			if !sameSet(r.Perms, api.Perms) || r.AnyStaff != api.AnyStaff || (len(r.Buckets) > 0 && !sameSet(r.Buckets, api.Buckets)) {
				t.Errorf("page %s (perms %v, any staff %v, buckets %v) differs from %s (perms %v, any staff %v, buckets %v), whose form it is",
					key, r.Perms, r.AnyStaff, r.Buckets, name, api.Perms, api.AnyStaff, api.Buckets)
			}
		}
	}
	for key := range own {
		if !seen[key] {
			t.Errorf("listed page %s is not a row of the site", key)
		}
	}
}

// sameSet tells whether a and b hold the same values, in any order.
func sameSet[T ~string](a, b []T) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
