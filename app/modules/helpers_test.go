package modules_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/app/identity"
)

// The kernel's tests that need every area installed (the whole registry,
// or an area's function after a kernel operation) live here rather than
// in package app: an internal test of app that imported the areas would
// make go test compile every area a second time against the test build of
// app. These helpers mirror the kernel tests' fnd helpers.

const fndPassword = "Owner-pass-1"

// wrapPrefix marks a wrapped key row (app/keys.go).
const wrapPrefix = "xrwk1:"

// fndApp opens an instance with every area's module in a temp dir,
// closed when the test ends.
func fndApp(t testing.TB) *app.App {
	t.Helper()
	a := mustKeysOpen(t, t.TempDir(), nil)
	t.Cleanup(a.Close)
	return a
}

// fndOpen opens an instance with every area's module on dir.
func fndOpen(t testing.TB, dir string) *app.App {
	t.Helper()
	return mustKeysOpen(t, dir, nil)
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

// fndTenant creates slug and opens it for the rest of the test.
func fndTenant(t testing.TB, a *app.App, slug string) *app.Tenant {
	t.Helper()
	fndCreate(t, a, slug)
	return fndAcquire(t, a, slug)
}

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

func fndCount(t testing.TB, tt *app.Tenant, q string, args ...any) int {
	t.Helper()
	var n int
	if err := tt.DB.R.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// systemActor is the tenant's owner acting as the system.
func systemActor(t testing.TB, tt *app.Tenant) *app.Actor {
	t.Helper()
	act, err := app.SystemActor(context.Background(), tt)
	if err != nil {
		t.Fatal(err)
	}
	return act
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

// fndEventually polls cond until it holds or the deadline passes.
func fndEventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rawSetting reads a stored setting's JSON text, bypassing the registry.
func rawSetting(ctx context.Context, tt *app.Tenant, key string) (string, error) {
	var v string
	err := tt.DB.R.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	return v, err
}

// loginOwner signs login in through the staff sign-in.
func loginOwner(ctx context.Context, a *app.App, t *app.Tenant, login, password string) (int64, string, error) {
	res, err := identity.Login(ctx, a, t, identity.LoginRequest{Email: login, Password: password})
	if err != nil {
		return 0, "", err
	}
	return res.UserID, res.TenantSlug, nil
}

func getMe(ctx context.Context, act *app.Actor) error {
	_, err := identity.GetMe(ctx, act)
	return err
}
