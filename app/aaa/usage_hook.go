package aaa

import (
	"context"
	"database/sql"

	"xr/app"
)

// UsageHook is told, inside accounting's transaction, of every growth of a
// subscriber's data usage (bytes > 0) whose data quota is limited
// (bytesLimit > 0). The self-service area sets one (app/selfservice: the
// quota buckets consumed in the subscriber's chosen order); an error rolls
// the accounting batch back like any other.
type UsageHook func(ctx context.Context, t *app.Tenant, tx *sql.Tx, userID, bytes, bytesLimit int64) error

type usageHookKey struct{}

// SetUsageHook attaches h to a (from a Module's Init).
func SetUsageHook(a *app.App, h UsageHook) { a.SetValue(usageHookKey{}, h) }

// usageHook runs the App's UsageHook, if any, for a charge of the batch.
func (b *batch) usageHook(ctx context.Context, uid, bytes, limit int64) error {
	if bytes <= 0 || limit <= 0 {
		return nil
	}
	h, _ := b.ti.t.App.Value(usageHookKey{}).(UsageHook)
	if h == nil {
		return nil
	}
	return h(ctx, b.ti.t, b.tx, uid, bytes, limit)
}
