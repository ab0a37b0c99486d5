package app

import (
	"context"
	"path/filepath"
	"testing"

	"xr/db"
)

// The licence check fails closed: a subscriber count that cannot be read
// is an error, never a count of zero that lets the request through.
func TestCurrentLicenseFailsClosed(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "lic")
	ctx := context.Background()

	// No users_count row yet (no subscriber ever): zero, not an error.
	if n, err := tt.CountUsers(ctx); err != nil || n != 0 {
		t.Fatalf("fresh tenant: %d %v", n, err)
	}
	if l, err := tt.CurrentLicense(ctx); err != nil || l.Status != "active" || l.Locked() {
		t.Fatalf("fresh tenant: %+v %v", l, err)
	}

	// A closed handle: every read fails.
	d, err := db.Open(filepath.Join(t.TempDir(), "closed.db"), "tenant", db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	closed := &Tenant{TenantInfo: tt.TenantInfo, DB: d, App: a}
	if n, err := closed.CountUsers(ctx); err == nil {
		t.Fatalf("closed handle counted %d users without an error", n)
	}
	if l, err := closed.CurrentLicense(ctx); err == nil {
		t.Fatalf("closed handle: licence %+v without an error", l)
	}

	// A broken file: the meta table is gone. The error is a server fault
	// (500), not a licence answer.
	fndExec(t, tt, `ALTER TABLE meta RENAME TO meta_gone`)
	_, err = tt.CurrentLicense(ctx)
	if err == nil {
		t.Fatal("missing meta table: no error")
	}
	if e := Classify(err); e != nil && e.Status < 500 {
		t.Fatalf("an unreadable count answers %d %s/%s, want a server fault", e.Status, e.Code, e.Reason)
	}
	owner, err := SystemActor(ctx, tt)
	if err != nil {
		t.Fatal(err)
	}
	if err := GetMeForTest(ctx, a, owner); err == nil {
		t.Fatal("GET /me with an unreadable count: no error")
	}
}
