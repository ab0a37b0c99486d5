package app

import "context"

// Kernel tests that check a tenant is usable after a kernel operation
// (provisioning, restore, key rotation) call area functions, and the areas
// import app: an internal test cannot import them back, so
// areas_ext_test.go (package app_test, same test binary) plugs them in.
var (
	// ModulesForTest lists every area's module (modules.All): fndOpen
	// installs them, so kernel tests see the whole registry.
	ModulesForTest   func() []Module
	LoginForTest     func(ctx context.Context, a *App, t *Tenant, login, password string) (userID int64, slug string, err error)
	GetMeForTest     func(ctx context.Context, a *App, act *Actor) error
	CreateNASForTest func(ctx context.Context, a *App, t *Tenant, name, ip, secret string) (int64, error)
	DeleteNASForTest func(ctx context.Context, a *App, t *Tenant, id int64) error
	NASSecretForTest func(ctx context.Context, a *App, t *Tenant, id int64) ([]byte, error)
)
