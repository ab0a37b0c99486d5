package identity

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"strings"
	"testing"

	"xr/app"
)

// The kernel's foundation test helpers (app/foundation_helpers_test.go),
// for the identity tests that came from there.

const fndPassword = "Owner-pass-1"

// fndOpen opens an instance on dir with a silent logger and a short idle
// close (the pool's reaper must never close a file a test still uses: it
// only closes released files).
func fndOpen(t testing.TB, dir string) *app.App {
	t.Helper()
	a, err := app.Open(app.Config{DataDir: dir, Domain: "xr.test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fndApp opens an instance in a temp dir, closed when the test ends.
func fndApp(t testing.TB) *app.App {
	t.Helper()
	a := fndOpen(t, t.TempDir())
	t.Cleanup(a.Close)
	return a
}

// fndCreate creates a tenant whose owner is "owner" / fndPassword.
func fndCreate(t testing.TB, a *app.App, slug string) *app.TenantInfo {
	t.Helper()
	ti, _, err := a.CreateTenant(context.Background(), app.NewTenant{Slug: slug, Name: strings.ToUpper(slug),
		AdminUsername: "owner", AdminEmail: "owner@" + slug + ".test", AdminPassword: fndPassword})
	if err != nil {
		t.Fatal(err)
	}
	return ti
}

// fndAcquire opens a tenant for the rest of the test.
func fndAcquire(t testing.TB, a *app.App, slug string) *app.Tenant {
	t.Helper()
	tt, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return tt
}

// fndTenant creates and acquires a tenant.
func fndTenant(t testing.TB, a *app.App, slug string) *app.Tenant {
	t.Helper()
	fndCreate(t, a, slug)
	return fndAcquire(t, a, slug)
}

// fndExec runs statements in one write transaction of t.
func fndExec(t testing.TB, tt *app.Tenant, stmts ...string) {
	t.Helper()
	err := tt.Write(context.Background(), func(tx *sql.Tx) error {
		for _, s := range stmts {
			if _, err := tx.Exec(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fndErr asserts err is an *app.Error with status, code and reason.
func fndErr(t testing.TB, err error, status int, code, reason string) *app.Error {
	t.Helper()
	e := app.AsError(err)
	if e == nil {
		t.Fatalf("want %d %s/%s, got %v", status, code, reason, err)
	}
	if e.Status != status || e.Code != code || e.Reason != reason {
		t.Fatalf("want %d %s/%s, got %d %s/%s", status, code, reason, e.Status, e.Code, e.Reason)
	}
	return e
}
