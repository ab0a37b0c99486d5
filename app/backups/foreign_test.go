package backups

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"testing"

	"xr/app"
	"xr/app/subs"
	"xr/internal/xrtest"
)

// withSecret gives the tenant a subscriber, whose RADIUS password is
// sealed under the instance's key.
func withSecret(t *testing.T, ten *app.Tenant, act *app.Actor) {
	t.Helper()
	ctx := context.Background()
	if err := ten.Write(ctx, func(tx *sql.Tx) error {
		_, err := subs.CreateUser(ctx, tx, ten, subs.NewUser{Username: "sealed", Password: "pw-sealed-123", ParentID: act.ManagerID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// A backup of the same slug from another instance is refused at the
// upload (400 backup_sealed_with_other_keys, nothing kept), and a stored
// backup whose key a rotation retired is refused at the restore (400 on
// field id, no safety backup, the data unchanged): neither can leave
// secrets this instance cannot open.
func TestBackupSealedByOtherKeysRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, ten, act := newEnv(t)
	// Not a copy of the seeded template (which carries its instance keys):
	// an instance of its own, with keys of its own.
	other := xrtest.Open(t, app.Config{DataDir: t.TempDir()}, subs.Module, Module)
	t.Cleanup(other.Close)
	xrtest.Tenant(t, other, "acme")
	oten := xrtest.Acquire(t, other, "acme")
	oact := xrtest.System(t, oten)
	withSecret(t, oten, oact)
	foreign := t.TempDir() + "/acme.db"
	if err := other.BackupTenant(ctx, oten, foreign); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(foreign)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Upload(ctx, act, bytes.NewReader(raw), 0, "")
	e := xrtest.WantError(t, err, 400, app.CodeValidation, "backup_sealed_with_other_keys")
	if e.Field != "file" || e.Details["sealed_values"] != 1 {
		t.Fatalf("%+v", e)
	}
	if ents, _ := os.ReadDir(Dir(a, "acme")); len(ents) != 0 {
		t.Fatalf("%d files kept", len(ents))
	}

	withSecret(t, ten, act)
	old, err := Take(ctx, ten, TakeOptions{Kind: KindManual})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RotateKeys(ctx, app.RotateOptions{Settle: -1}); err != nil {
		t.Fatal(err)
	}
	_, err = Restore(ctx, act, old.ID, RestoreInput{})
	e = xrtest.WantError(t, err, 400, app.CodeValidation, "backup_sealed_with_other_keys")
	if e.Field != "id" {
		t.Fatalf("%+v", e)
	}
	if list, _ := List(ctx, act); len(list) != 1 {
		t.Fatalf("%d backups: a safety backup was taken", len(list))
	}
	if n, err := a.UnopenedSealed(ctx, ten.DB.Path); err != nil || n != 0 {
		t.Fatalf("the live data has %d unreadable secrets (%v)", n, err)
	}
}
