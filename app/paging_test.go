package app

import (
	"net/url"
	"strings"
	"testing"
)

// fndListSpec is a list endpoint as a handler would declare it.
var fndListSpec = ListSpec{
	Sorts:       map[string]string{"id": "u.id", "created_at": "u.created_at", "username": "u.username"},
	DefaultSort: "created_at",
	Filters: map[string]FilterKind{
		"state": FilterString, "parent_id": FilterInt, "enabled": FilterBool, "created_from": FilterTime,
	},
	Aliases: []string{"parent_id"},
}

func fndParse(t *testing.T, raw string) ListQuery {
	t.Helper()
	v, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseList(v, fndListSpec)
	if err != nil {
		t.Fatalf("ParseList(%q): %v", raw, err)
	}
	return q
}

func TestParseListDefaults(t *testing.T) {
	t.Parallel()
	q := fndParse(t, "")
	if q.Page != 1 || q.PageSize != 50 || q.Sort != "created_at" || q.SortExpr != "u.created_at" || !q.Desc || q.Q != "" || len(q.Filters) != 0 {
		t.Fatalf("defaults: %+v", q)
	}
	if q.Offset() != 0 {
		t.Fatalf("offset %d", q.Offset())
	}
}

// Rule: page is one-indexed; values below 1 (and garbage) are ignored.
func TestParseListPage(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int{
		"page=3": 3, "page=1": 1, "page=0": 1, "page=-7": 1, "page=abc": 1, "page=": 1, "page=2.5": 1,
	} {
		if q := fndParse(t, raw); q.Page != want {
			t.Errorf("%s: page %d, want %d", raw, q.Page, want)
		}
	}
	q := fndParse(t, "page=3&page_size=20")
	if q.Offset() != 40 {
		t.Fatalf("offset of page 3 size 20: %d", q.Offset())
	}
}

// Rule 1: out-of-range values are clamped, not rejected.
func TestParseListPageSizeClamp(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int{
		"page_size=10": 10, "page_size=200": 200, "page_size=201": 200, "page_size=100000": 200,
		"page_size=1": 1, "page_size=0": 1, "page_size=-5": 1, "page_size=x": 50, "page_size=": 50,
	} {
		if q := fndParse(t, raw); q.PageSize != want {
			t.Errorf("%s: page_size %d, want %d", raw, q.PageSize, want)
		}
	}
}

// Rule 5: the offset is capped at 1,000,000 rows and meta.page echoes the
// clamped page.
func TestParseListOffsetCap(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw      string
		page     int
		pageSize int
	}{
		{"page=20000&page_size=50", 20000, 50},
		{"page=20001&page_size=50", 20000, 50},
		{"page=999999999&page_size=50", 20000, 50},
		{"page=999999999", 20000, 50}, // default page_size 50
		{"page=5000&page_size=200", 5000, 200},
		{"page=5001&page_size=200", 5000, 200},
		{"page=999999999&page_size=500", 5000, 200}, // size clamps first
		{"page=1000000&page_size=1", 1000000, 1},
		{"page=1000001&page_size=1", 1000000, 1},
		{"page=99999999&page_size=30", 33333, 30},
	}
	for _, c := range cases {
		q := fndParse(t, c.raw)
		if q.Page != c.page || q.PageSize != c.pageSize {
			t.Errorf("%s: page %d size %d, want %d/%d", c.raw, q.Page, q.PageSize, c.page, c.pageSize)
		}
		if q.Offset() > OffsetCap {
			t.Errorf("%s: offset %d beyond the cap", c.raw, q.Offset())
		}
		m := q.MetaFor(5)
		if m.Page != c.page || m.PageSize != c.pageSize {
			t.Errorf("%s: meta %+v does not echo the clamped page", c.raw, m)
		}
	}
}

// Sort: per-endpoint allow-list, unknown falls back to the default.
func TestParseListSort(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"sort=username": "username", "sort=id": "id", "sort=password_hash": "created_at",
		"sort=" + url.QueryEscape("u.id;DROP TABLE users"): "created_at", "sort=": "created_at", "sort=USERNAME": "created_at",
	} {
		q := fndParse(t, raw)
		if q.Sort != want || q.SortExpr != fndListSpec.Sorts[want] {
			t.Errorf("%s: sort %q expr %q, want %q", raw, q.Sort, q.SortExpr, want)
		}
	}
	// Only allow-listed SQL ever reaches ORDER BY.
	q := fndParse(t, "sort="+url.QueryEscape("1; DELETE FROM users")+"&order=asc&page=2&page_size=10")
	if got := q.OrderLimit("u.id"); got != " ORDER BY u.created_at ASC, u.id ASC LIMIT 10 OFFSET 10" {
		t.Fatalf("OrderLimit: %q", got)
	}
	q = fndParse(t, "sort=id")
	if got := q.OrderLimit("u.id"); got != " ORDER BY u.id DESC LIMIT 50 OFFSET 0" {
		t.Fatalf("OrderLimit on the id itself: %q", got)
	}
}

// Order: asc or desc, anything else ignored (default desc, or asc where
// the endpoint reads oldest first).
func TestParseListOrder(t *testing.T) {
	t.Parallel()
	for raw, desc := range map[string]bool{
		"order=asc": false, "order=desc": true, "order=sideways": true, "order=": true, "order=1": true,
	} {
		if q := fndParse(t, raw); q.Desc != desc {
			t.Errorf("%s: desc %v, want %v", raw, q.Desc, desc)
		}
	}
	asc := fndListSpec
	asc.DefaultAsc = true
	for raw, desc := range map[string]bool{"": false, "order=bogus": false, "order=desc": true, "order=asc": false} {
		v, _ := url.ParseQuery(raw)
		q, err := ParseList(v, asc)
		if err != nil || q.Desc != desc {
			t.Errorf("DefaultAsc %s: desc %v err %v, want %v", raw, q.Desc, err, desc)
		}
	}
}

func TestParseListQ(t *testing.T) {
	t.Parallel()
	if q := fndParse(t, "q="+url.QueryEscape("  ali ba  ")); q.Q != "ali ba" {
		t.Fatalf("q %q", q.Q)
	}
	if q := fndParse(t, "q=%20%20"); q.Q != "" {
		t.Fatalf("blank q %q", q.Q)
	}
	if LikeEscape(`50%_a\b`) != `50\%\_a\\b` {
		t.Fatalf("LikeEscape: %q", LikeEscape(`50%_a\b`))
	}
}

// Rules 2 and 3: unknown filter keys are ignored; a known key with an
// unparseable value is 400 ERR_VALIDATION naming the filter.
func TestParseListFilters(t *testing.T) {
	t.Parallel()
	q := fndParse(t, "filter[state]=active&filter[parent_id]=12&filter[enabled]=false&filter[created_from]=2024-03-01&filter[nope]=x&filter[parent_id]=99")
	if s, _ := q.Str("state"); s != "active" {
		t.Errorf("state %q", s)
	}
	if v, ok := q.Int("parent_id"); !ok || v != 12 {
		t.Errorf("parent_id %v %v (first value wins)", v, ok)
	}
	if v, ok := q.Bool("enabled"); !ok || v {
		t.Errorf("enabled %v %v", v, ok)
	}
	if v, ok := q.TimeF("created_from"); !ok || FormatTime(v.Time) != "2024-03-01 00:00:00" {
		t.Errorf("created_from %v %v", v, ok)
	}
	if q.Has("nope") || len(q.Filters) != 4 {
		t.Errorf("unknown filter kept: %v", q.Filters)
	}
	// Timestamps in the spec's full form too.
	q = fndParse(t, "filter[created_from]="+url.QueryEscape("2024-03-01 10:11:12"))
	if v, _ := q.TimeF("created_from"); FormatTime(v.Time) != "2024-03-01 10:11:12" {
		t.Errorf("created_from full: %v", v)
	}
	// Booleans accept the usual spellings.
	for _, s := range []string{"1", "true", "TRUE", "yes"} {
		if v, ok := fndParse(t, "filter[enabled]="+s).Bool("enabled"); !ok || !v {
			t.Errorf("enabled=%s: %v %v", s, v, ok)
		}
	}
	// An empty value is no filter.
	if q := fndParse(t, "filter[parent_id]=&filter[state]="); len(q.Filters) != 0 {
		t.Errorf("empty values became filters: %v", q.Filters)
	}

	for raw, field := range map[string]string{
		"filter[parent_id]=twelve":                  "filter[parent_id]",
		"filter[parent_id]=1.5":                     "filter[parent_id]",
		"filter[enabled]=maybe":                     "filter[enabled]",
		"filter[created_from]=yesterday":            "filter[created_from]",
		"filter[created_from]=2024-13-01":           "filter[created_from]",
		"filter[created_from]=2024-03-01T10:11:12Z": "filter[created_from]",
		"parent_id=abc":                             "filter[parent_id]", // the bare alias is parsed like the filter
	} {
		v, _ := url.ParseQuery(raw)
		_, err := ParseList(v, fndListSpec)
		e := fndErr(t, err, 400, CodeValidation, "invalid_filter")
		if e.Field != field {
			t.Errorf("%s: field %q, want %q", raw, e.Field, field)
		}
	}
}

// Bare alias keys (parent_id for filter[parent_id]); a key not declared as
// an alias stays unknown and is ignored; filter[key] wins over the alias.
func TestParseListAliases(t *testing.T) {
	t.Parallel()
	if v, ok := fndParse(t, "parent_id=7").Int("parent_id"); !ok || v != 7 {
		t.Fatalf("bare alias: %v %v", v, ok)
	}
	if q := fndParse(t, "state=active&enabled=zzz"); len(q.Filters) != 0 {
		t.Fatalf("bare non-alias keys became filters: %v", q.Filters)
	}
	if v, _ := fndParse(t, "parent_id=7&filter[parent_id]=8").Int("parent_id"); v != 8 {
		t.Fatalf("filter[parent_id] should win over the bare alias, got %d", v)
	}
}

// Rule 6: meta = page, page_size as resolved, total, has_next.
func TestMetaFor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw     string
		total   int
		hasNext bool
	}{
		{"", 0, false},
		{"", 50, false},
		{"", 51, true},
		{"page=2&page_size=25", 50, false},
		{"page=2&page_size=25", 51, true},
		{"page=9&page_size=10", 30, false}, // past the end
		{"page=20000&page_size=50", 2_000_000, false},
		{"page=19999&page_size=50", 2_000_000, true},
		{"page=5000&page_size=200", 2_000_000, false},
		{"page=33333&page_size=30", 2_000_000, false}, // the next page would clamp back here
		{"page=33332&page_size=30", 2_000_000, true},
	}
	for _, c := range cases {
		q := fndParse(t, c.raw)
		m := q.MetaFor(c.total)
		if m.Total != c.total || m.HasNext != c.hasNext || m.Page != q.Page || m.PageSize != q.PageSize {
			t.Errorf("%s total %d: %+v, want has_next %v", c.raw, c.total, m, c.hasNext)
		}
	}
	// Rule 7: an un-paginated list reports page_size = total, has_next false.
	if m := OnePage(7); m != (Meta{Page: 1, PageSize: 7, Total: 7, HasNext: false}) {
		t.Fatalf("OnePage: %+v", m)
	}
}

// The pagination parameters never error, whatever their values; only a
// recognised filter does.
func TestParseListNeverRejectsPagingGarbage(t *testing.T) {
	t.Parallel()
	raw := strings.Join([]string{"page=-1", "page_size=99999", "sort=zzz", "order=up", "q=", "filter[zzz]=1", "foo=bar"}, "&")
	v, _ := url.ParseQuery(raw)
	if _, err := ParseList(v, fndListSpec); err != nil {
		t.Fatal(err)
	}
}
