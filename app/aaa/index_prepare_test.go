package aaa

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"xr/internal/xrtest"
)

// A preparation waiting for the tenant's writer connection must not hold
// the statements' lock: the transaction holding that connection (an
// accounting batch) takes it to find its statements. The auth log
// preparing its insert beside an accounting batch once deadlocked both.
func TestPrepareWaitsWithoutHoldingStatements(t *testing.T) {
	t.Parallel()
	a := xrtest.App(t)
	xrtest.Tenant(t, a, "acme")
	ti := &tenantIndex{slug: "acme", t: xrtest.Acquire(t, a, "acme")}
	ctx := context.Background()
	if err := ti.prepare(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	prepared := make(chan error, 1)
	err := ti.t.Write(ctx, func(tx *sql.Tx) error {
		// Another preparation starts while this transaction holds the
		// writer connection: it waits for the connection.
		go func() { prepared <- ti.prepare(ctx, "SELECT 2") }()
		// Give it the time to take the lock if it held it while waiting
		// (it would never let go): the lock is seen taken, or a second
		// passes.
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if !ti.stmtMu.TryLock() {
				break
			}
			ti.stmtMu.Unlock()
		}
		found := make(chan bool, 1)
		go func() { found <- ti.stmt("SELECT 1") != nil }()
		select {
		case ok := <-found:
			if !ok {
				t.Error("the statement prepared before is gone")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the transaction's statement lookup waits on a preparation that waits on the transaction")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-prepared; err != nil || ti.stmt("SELECT 2") == nil {
		t.Fatalf("the preparation after the transaction: %v", err)
	}
}
