// Package dataimport brings records into a tenant and takes them out
// again: the import engine of spreadsheets (CSV and XLSX with a column
// mapping, a dry run, chunked resumable jobs) behind /admin/import/* and
// xr import users, and the legacy-system imports (a FreeRADIUS SQL dump,
// a MikroTik /ppp secret export) and the FreeRADIUS export behind
// /admin/legacy/*.
package dataimport

import (
	"context"
	"encoding/json"
	"io"
	"strconv"

	"xr/app"
	"xr/app/sheet"
)

// Module is the data-import area.
var Module = app.Module{
	Name: "dataimport",
	Jobs: map[string]app.JobHandler{
		kindDataRun:       lastAttempt(runData),
		kindLegacyAnalyse: lastAttempt(runLegacyAnalyse),
		kindLegacyRun:     lastAttempt(runLegacy),
	},
	Permissions: permCatalogue,
}

// lastAttempt marks the run failed (import_failed) when its job fails for
// the last time, so a run never stays "running" after its job gave up;
// earlier failures are retried by the runner and resume from the
// checkpoint.
func lastAttempt(h app.JobHandler) app.JobHandler {
	return func(ctx context.Context, jc *app.JobContext) (any, error) {
		res, err := h(ctx, jc)
		if err == nil || jc.Job.Attempts < jc.Job.MaxAttempts || ctx.Err() != nil {
			return res, err
		}
		var p runPayload
		if json.Unmarshal(jc.Job.Payload, &p) == nil {
			if ferr := finishRun(context.WithoutCancel(ctx), jc.Tenant, p.Run, "failed", "import_failed", nil); ferr != nil {
				jc.Tenant.App.Log.Warn("import: record a failed run", "tenant", jc.Tenant.Slug, "run", p.Run, "err", ferr)
			}
		}
		return res, err
	}
}

func newCSVWriter(w io.Writer) *sheet.Writer { return sheet.NewWriter(w) }

func itoa(n int) string { return strconv.Itoa(n) }
