package app_test

import (
	"context"

	"xr/app"
	"xr/app/aaa"
	"xr/app/identity"
	"xr/app/modules"
)

func init() {
	app.ModulesForTest = modules.All
	app.LoginForTest = func(ctx context.Context, a *app.App, t *app.Tenant, login, password string) (int64, string, error) {
		res, err := identity.Login(ctx, a, t, identity.LoginRequest{Email: login, Password: password})
		if err != nil {
			return 0, "", err
		}
		return res.UserID, res.TenantSlug, nil
	}
	app.GetMeForTest = func(ctx context.Context, a *app.App, act *app.Actor) error {
		_, err := identity.GetMe(ctx, act)
		return err
	}
	app.CreateNASForTest = func(ctx context.Context, a *app.App, t *app.Tenant, name, ip, secret string) (int64, error) {
		n, err := aaa.CreateNAS(ctx, systemActor(ctx, t), aaa.NASInput{Name: app.Opt[string]{Set: true, V: name},
			IP: app.Opt[string]{Set: true, V: ip}, Secret: app.Opt[string]{Set: true, V: secret}})
		if err != nil {
			return 0, err
		}
		return n.ID, nil
	}
	app.DeleteNASForTest = func(ctx context.Context, a *app.App, t *app.Tenant, id int64) error {
		return aaa.DeleteNAS(ctx, systemActor(ctx, t), id)
	}
	app.NASSecretForTest = aaa.NASSecret
}

// systemActor is the tenant's owner acting as the system; a tenant without
// an owner is a broken test setup.
func systemActor(ctx context.Context, t *app.Tenant) *app.Actor {
	act, err := app.SystemActor(ctx, t)
	if err != nil {
		panic(err)
	}
	return act
}
