package web

import (
	"context"

	"xr/app"
	"xr/app/reports"
)

// Reports (/admin/reports/*): read-only lists over the whole tenant file,
// scoped to the caller's subtree, each with meta.aggregates. The rows and
// rollups of each report are documented in app/reports.

// reportCall parses a report's list query (a date-only filter[to] covers
// that whole day) and writes its page.
func reportCall[T any](spec app.ListSpec, fn func(context.Context, *app.Actor, app.ListQuery) (app.Page[T], error)) HandlerFunc {
	return func(c *Ctx) error {
		q, err := reports.Parse(c.Query(), spec)
		if err != nil {
			return err
		}
		p, err := fn(c.R.Context(), c.Actor, q)
		if err != nil {
			return err
		}
		return Page(c, p)
	}
}
