package modules_test

import (
	"context"
	"testing"

	"xr/app"
	"xr/app/identity"
	"xr/app/modules"
	"xr/internal/xrtest"
)

// The kernel's tests that need every area installed (the whole registry,
// or an area's function after a kernel operation) live here rather than
// in package app: an internal test of app that imported the areas would
// make go test compile every area a second time against the test build of
// app (docs/platform.md, Tests).

const fndPassword = xrtest.Password

// wrapPrefix marks a wrapped key row (app/keys.go).
const wrapPrefix = "xrwk1:"

// fndApp is an instance with every area's module, closed when the test
// ends.
func fndApp(t testing.TB) *app.App { return xrtest.App(t, modules.All()...) }

// fndOpen opens an instance with every area's module on dir.
func fndOpen(t testing.TB, dir string) *app.App { return mustKeysOpen(t, dir, nil) }

// fndTenant creates slug and opens it for the rest of the test.
func fndTenant(t testing.TB, a *app.App, slug string) *app.Tenant {
	t.Helper()
	xrtest.Tenant(t, a, slug)
	return xrtest.Acquire(t, a, slug)
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
