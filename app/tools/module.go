// Package tools holds the operator tools that act on many subscribers at
// once: announcements (a message to a selection of subscribers through the
// outbox) and bulk changes (operations applied to a selection, as a
// resumable job with a per-row log).
//
// Both select subscribers with subs.Selection (the filters of GET /users
// within the caller's subtree) and fix the selected ids when the work is
// created, so what runs is what was counted. Their jobs walk those ids in
// chunks, one transaction per chunk, and record a cursor (announcements)
// or a per-row outcome (bulk changes) in the same transaction: a crash
// loses at most the chunk in flight, which runs again on restart.
package tools

import (
	"context"
	"database/sql"
	"sync"

	"xr/app"
)

// Job kinds.
const (
	JobAnnounce  = "tools.announce"
	JobBulkApply = "tools.bulk_apply"
)

// Module is the tools area's contribution to an App.
var Module = app.Module{
	Name:        "tools",
	Jobs:        map[string]app.JobHandler{JobAnnounce: runAnnounce, JobBulkApply: runBulkApply},
	Permissions: permCatalogue,
}

// hooks are per-App test hooks: chunk sizes, and a call inside each
// chunk's transaction after its work (an error rolls the chunk back, as a
// crash would).
type hooks struct {
	mu         sync.Mutex
	chunk      int
	afterChunk func(ctx context.Context, tx *sql.Tx, kind string, id int64) error
}

type hooksKey struct{}

func hooksOf(a *app.App) *hooks { return a.ValueOrStore(hooksKey{}, &hooks{chunk: 200}).(*hooks) }

func (h *hooks) get() (int, func(context.Context, *sql.Tx, string, int64) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.chunk, h.afterChunk
}

// setHooks sets a's chunk size and chunk hook (tests).
func setHooks(a *app.App, chunk int, after func(ctx context.Context, tx *sql.Tx, kind string, id int64) error) {
	h := hooksOf(a)
	h.mu.Lock()
	h.chunk, h.afterChunk = chunk, after
	h.mu.Unlock()
}

// owns reports whether the caller may see a record created by createdBy:
// its creator, or a tenant-wide caller.
func owns(act *app.Actor, createdBy sql.NullInt64) bool {
	return act.TenantWide || (createdBy.Valid && createdBy.Int64 == act.ManagerID)
}

// ownerSQL restricts a created_by column to what the caller may see.
func ownerSQL(act *app.Actor, col string) (string, []any) {
	if act.TenantWide {
		return "1=1", nil
	}
	return col + " = ?", []any{act.ManagerID}
}
