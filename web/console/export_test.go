package console

// Internals the external tests of package console (package console_test)
// reach.

import (
	"context"
	"reflect"

	"xr/app"
)

var (
	Templates     = templates
	ReportDefs    = reportDefs
	ReportParams  = reportParams
	JSONFields    = jsonFields
	ChartAxis     = chartAxis
	UserListQuery = userListQuery
)

// ReportRow is the Go type of a report's rows.
func ReportRow(d *reportDef) reflect.Type { return d.Src.row }

// ReportRun runs a report.
func ReportRun(d *reportDef, ctx context.Context, act *app.Actor, q app.ListQuery) ([]reflect.Value, app.Meta, error) {
	return d.Src.run(ctx, act, q)
}
