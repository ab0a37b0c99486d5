package app

import (
	"context"
	"database/sql"
	"net/url"
	"strconv"
	"strings"
)

// Pagination constants of the spec.
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
	OffsetCap       = 1_000_000
)

// FilterKind says how a filter[key] value is parsed; a value that does not
// parse is a 400 naming the filter.
type FilterKind int

const (
	FilterString FilterKind = iota
	FilterInt
	FilterBool
	FilterTime // yyyy-MM-dd HH:mm:ss (date-only accepted)
)

// ListSpec is what one list endpoint allows: sort keys (API name → SQL
// expression), its default sort, and its filters. Bare names in Aliases are
// accepted as filters too (e.g. parent_id for filter[parent_id]).
type ListSpec struct {
	Sorts       map[string]string
	DefaultSort string
	Filters     map[string]FilterKind
	Aliases     []string
	// DefaultAsc flips the default order for lists that read oldest first.
	DefaultAsc bool
}

// ListQuery is a list request after the spec's seven rules were applied.
type ListQuery struct {
	Page, PageSize int
	Sort           string // API name
	SortExpr       string // SQL expression
	Desc           bool
	Q              string
	Filters        map[string]any // string, int64, bool or Time by kind
}

// Offset is the row offset of the page.
func (l ListQuery) Offset() int { return (l.Page - 1) * l.PageSize }

// OrderLimit renders ORDER BY with a unique tie-breaker, LIMIT and OFFSET.
func (l ListQuery) OrderLimit(idExpr string) string {
	dir := "ASC"
	if l.Desc {
		dir = "DESC"
	}
	order := l.SortExpr + " " + dir
	if l.SortExpr != idExpr {
		order += ", " + idExpr + " " + dir
	}
	return " ORDER BY " + order + " LIMIT " + strconv.Itoa(l.PageSize) + " OFFSET " + strconv.Itoa(l.Offset())
}

// Has reports whether filter key was given (and parsed).
func (l ListQuery) Has(key string) bool { _, ok := l.Filters[key]; return ok }

// Int returns an int filter.
func (l ListQuery) Int(key string) (int64, bool) { v, ok := l.Filters[key].(int64); return v, ok }

// Bool returns a bool filter.
func (l ListQuery) Bool(key string) (bool, bool) { v, ok := l.Filters[key].(bool); return v, ok }

// Str returns a string filter.
func (l ListQuery) Str(key string) (string, bool) { v, ok := l.Filters[key].(string); return v, ok }

// TimeF returns a time filter.
func (l ListQuery) TimeF(key string) (Time, bool) { v, ok := l.Filters[key].(Time); return v, ok }

// ParseList applies the pagination rules: out-of-range values clamp, unknown
// sort falls back, unknown order is ignored, unknown filters are dropped,
// a known filter with an unparseable value is a 400.
func ParseList(v url.Values, spec ListSpec) (ListQuery, error) {
	l := ListQuery{Page: 1, PageSize: DefaultPageSize, Desc: !spec.DefaultAsc, Filters: map[string]any{}}
	if p, err := strconv.Atoi(v.Get("page")); err == nil && p >= 1 {
		l.Page = p
	}
	if ps, err := strconv.Atoi(v.Get("page_size")); err == nil {
		l.PageSize = min(max(ps, 1), MaxPageSize)
	}
	if maxPage := OffsetCap / l.PageSize; l.Page > maxPage {
		l.Page = maxPage
	}
	l.Sort = spec.DefaultSort
	if s := v.Get("sort"); s != "" {
		if _, ok := spec.Sorts[s]; ok {
			l.Sort = s
		}
	}
	l.SortExpr = spec.Sorts[l.Sort]
	switch strings.ToLower(v.Get("order")) {
	case "asc":
		l.Desc = false
	case "desc":
		l.Desc = true
	}
	l.Q = strings.TrimSpace(v.Get("q"))
	for key, kind := range spec.Filters {
		raw, ok := v["filter["+key+"]"]
		if !ok {
			for _, a := range spec.Aliases {
				if a == key {
					raw, ok = v[key]
				}
			}
		}
		if !ok || len(raw) == 0 || raw[0] == "" {
			continue
		}
		val, err := parseFilter(kind, raw[0])
		if err != nil {
			return l, ErrValidation("invalid_filter", "filter["+key+"]")
		}
		l.Filters[key] = val
	}
	return l, nil
}

func parseFilter(kind FilterKind, s string) (any, error) {
	switch kind {
	case FilterInt:
		return strconv.ParseInt(s, 10, 64)
	case FilterBool:
		switch strings.ToLower(s) {
		case "1", "true", "yes":
			return true, nil
		case "0", "false", "no":
			return false, nil
		}
		return nil, strconv.ErrSyntax
	case FilterTime:
		t, err := ParseTime(s, true)
		return T(t), err
	}
	return s, nil
}

// Meta is the spec's list meta.
type Meta struct {
	Page     int  `json:"page"`
	PageSize int  `json:"page_size"`
	Total    int  `json:"total"`
	HasNext  bool `json:"has_next"`
	// Aggregates are rollups over the whole filtered set (reports): a
	// map[string]any. Typed any so Meta stays comparable.
	Aggregates any `json:"aggregates,omitempty"`
	// NextCursor (keyset lists only) is the opaque cursor of the next page,
	// passed back as ?cursor=; empty on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
	// Cached and CachedAt (the design store's list only, as the spec says)
	// tell a list served from a cache whether this request found it ready
	// and when it was built.
	Cached   *bool `json:"cached,omitempty"`
	CachedAt *Time `json:"cached_at,omitempty"`
}

// MetaFor builds meta for a page of a filtered set of total rows. has_next
// is false on the deepest page the offset cap lets a client reach: a next
// page would be clamped back to this one.
func (l ListQuery) MetaFor(total int) Meta {
	hasNext := l.Offset()+l.PageSize < total && l.PageSize > 0 && l.Page < OffsetCap/l.PageSize
	return Meta{Page: l.Page, PageSize: l.PageSize, Total: total, HasNext: hasNext}
}

// OnePage is the meta of an un-paginated list.
func OnePage(n int) Meta { return Meta{Page: 1, PageSize: n, Total: n, HasNext: false} }

// Page is a list result: rows plus meta.
type Page[T any] struct {
	Rows []T
	Meta Meta
}

// LikeEscape escapes a LIKE pattern for use with ESCAPE '\'.
func LikeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// Rollup is one entry of meta.aggregates: a SQL expression over the whole
// filtered set (not the page), reported under Key as a count or as money.
type Rollup struct {
	Key, Expr string
	Money     bool
}

// QueryPage runs a list: the count of the filtered set (and its rollups,
// in the same statement), then one page of it, both from `from` (tables,
// joins and WHERE, with args) in one read snapshot, each row read by scan.
// cols is the projection and idExpr the unique tie-breaker of the sort.
func QueryPage[T any](ctx context.Context, t *Tenant, lq ListQuery, cols, from string, args []any, idExpr string,
	scan func(rows *sql.Rows) (T, error), rollups ...Rollup) (Page[T], error) {
	var page Page[T]
	err := t.Read(ctx, func(tx *sql.Tx) error {
		sel := "COUNT(*)"
		var total int64
		vals := make([]int64, len(rollups))
		dest := []any{&total}
		for i, r := range rollups {
			sel += ", COALESCE(" + r.Expr + ", 0)"
			dest = append(dest, &vals[i])
		}
		if err := tx.QueryRowContext(ctx, `SELECT `+sel+` `+from, args...).Scan(dest...); err != nil {
			return err
		}
		page.Meta = lq.MetaFor(int(total))
		if len(rollups) > 0 {
			m := make(map[string]any, len(rollups))
			for i, r := range rollups {
				if r.Money {
					m[r.Key] = Money(vals[i])
				} else {
					m[r.Key] = vals[i]
				}
			}
			page.Meta.Aggregates = m
		}
		if lq.Offset() >= int(total) {
			return nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+cols+` `+from+lq.OrderLimit(idExpr), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return err
			}
			page.Rows = append(page.Rows, v)
		}
		return rows.Err()
	})
	return page, err
}

// QueryIDs reads a one-column list of ids.
func QueryIDs(ctx context.Context, q Querier, query string, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// QueryAll runs query and scans every row with scan into a list (an empty
// list, never nil): the un-paginated reads (pickers, settings lists).
func QueryAll[T any](ctx context.Context, q Querier, scan func(interface{ Scan(...any) error }) (*T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}
