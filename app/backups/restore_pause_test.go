package backups

import (
	"context"
	"database/sql"
	"testing"

	"xr/app"
	"xr/app/subs"
	"xr/internal/xrtest"
)

// A request that began before a restore (its context bound to the data it
// read) cannot write into the restored data: 503 ERR_MAINTENANCE
// tenant_restored with a retry hint, nothing written; the same request
// sent again writes.
func TestWriteBoundBeforeARestoreIsRefused(t *testing.T) {
	t.Parallel()
	_, ten, act := newEnv(t)
	ctx := context.Background()
	var uid int64
	if err := ten.Write(ctx, func(tx *sql.Tx) error {
		u, err := subs.CreateUser(ctx, tx, ten, subs.NewUser{Username: "dep", Password: "pw-dep-12345", ParentID: act.ManagerID})
		uid = u.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	b, err := Take(ctx, ten, TakeOptions{Kind: KindManual})
	if err != nil {
		t.Fatal(err)
	}
	stale := ten.DB.Bind(ctx) // what the web middleware does as a request starts
	if _, err := Restore(ctx, act, b.ID, RestoreInput{}); err != nil {
		t.Fatal(err)
	}
	amount := xrtest.Money("5")
	_, err = subs.Deposit(stale, act, uid, subs.DepositInput{Amount: &amount, RequestID: "late"})
	e := app.Classify(err)
	if e == nil || e.Status != 503 || e.Code != app.CodeMaintenance || e.Reason != "tenant_restored" || e.Details["retry_after"] != 1 {
		t.Fatalf("%v", err)
	}
	if n := xrtest.Scalar(t, ten, `SELECT count(*) FROM idempotency WHERE key = 'late'`); n != 0 {
		t.Fatal("written")
	}
	if _, err := subs.Deposit(ten.DB.Bind(ctx), act, uid, subs.DepositInput{Amount: &amount, RequestID: "late"}); err != nil {
		t.Fatal(err)
	}
}
