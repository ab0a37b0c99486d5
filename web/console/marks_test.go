package console_test

import (
	"testing"

	"xr/internal/webtest"
)

// ownMarks are the console pages that state their permissions by hand:
// they call no single API row.
var ownMarks = map[string]string{
	"GET /login":                         "form of POST /auth/login",
	"GET /{$}":                           "the dashboard: several reads, each shown by its own permission",
	"GET /reports":                       "the reports' index: for a caller who may read any report",
	"GET /card-templates/new":            "form of POST /card-templates",
	"GET /cards/new":                     "form of POST /card-batches",
	"GET /managers/new":                  "form of POST /managers",
	"GET /nas/new":                       "form of POST /admin/nas",
	"GET /plans/new":                     "form of POST /admin/profiles",
	"GET /roles/new":                     "form of POST /roles",
	"GET /tickets/new":                   "form of POST /tickets",
	"GET /tools/bandwidth/apply":         "form of POST /admin/tools/bandwidth/apply",
	"GET /tools/bandwidth/schedules/new": "form of POST /admin/tools/bandwidth/schedules",
	"GET /users/new":                     "form of POST /users",
	"GET /users/{id}/edit":               "form of PATCH /users/{id}",
	"GET /messages":                      "the outbox has no API rows",
	"GET /messages/settings":             "the outbox has no API rows",
	"POST /messages/settings":            "the outbox has no API rows",
	"POST /messages/sms-gateway":         "the outbox has no API rows",
	"POST /messages/sms-gateway/delete":  "the outbox has no API rows",
	"POST /messages/test":                "the outbox has no API rows",
	"POST /messages/{id}/retry":          "the outbox has no API rows",
	"POST /studio/store/{id}/{action}":   "one of several /studio/store/{id}/* rows, by action",
	"POST /tickets/bulk":                 "one of several /tickets/bulk-* rows, by action",
	"POST /users/{id}/disconnect":        "disconnects through the RADIUS service: the API has no single-subscriber row",
}

// TestPageRowsTakeTheirMarksFromAPIRows: every console page takes its
// permissions and buckets from the API row it names, except the listed.
func TestPageRowsTakeTheirMarksFromAPIRows(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.PageMarks(t, k.Srv, k.Srv.Site("console").Routes(), ownMarks)
}
