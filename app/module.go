package app

import (
	"context"
	"fmt"
	"maps"
)

// Module is what an area contributes to an instance. Areas declare one
// value each (subs.Module, cards.Module, ...); the program lists them once
// (package xr/app/modules) and installs them with App.Use, which collects
// their declarations into the App's Registry (registry.go). Nothing is
// registered from init functions or package variables, so two Apps in one
// process (tests) never share area state, and adding an area touches its
// own package, its migration, its routes and one line of the module list.
type Module struct {
	Name string
	// Jobs are the background job kinds the area runs.
	Jobs map[string]JobHandler
	// ManagerRefs are counts (one ? for the manager id) that keep a manager
	// from being deleted while non-zero.
	ManagerRefs []string
	// Init runs once when the module is installed, to attach the area's
	// per-App state (SetValue).
	Init func(a *App)
	// OnEvents runs after a transaction that emitted events commits.
	OnEvents func(t *Tenant)
	// Services run beside xr serve until its context ends: process-wide
	// work only (a dispatcher woken in memory, an instance-wide cache).
	// Work done tenant by tenant is a TenantTask.
	Services []func(ctx context.Context, a *App)
	// TenantTasks are the area's per-tenant periodic work, run by the
	// kernel's one runner (RunTenantTasks).
	TenantTasks []TenantTask

	// Permissions are the area's catalogue codes (PermGroup); RoleGrants
	// the codes each system role template ("reseller", "support",
	// "cashier") gets when a tenant is provisioned.
	Permissions []Permission
	RoleGrants  map[string][]Perm
	// Settings are the tenant settings the area reads (IntSetting, ...).
	Settings []Setting
	// Events are the event keys the area emits, with their category.
	Events []EventType
	// WantedEvents says which event keys the area's consumers in a tenant
	// want now (Registry.WantedEvents): writers of high-volume events
	// write only those.
	WantedEvents EventWanter
	// Buckets are the rate buckets the area's routes name.
	Buckets map[string]BucketDef
	// SealedColumns are the area's columns sealed with Keys.Seal in the
	// tenant file, InstanceSealedColumns those in instance.db: xr keys
	// rotate re-seals them.
	SealedColumns, InstanceSealedColumns []SealedColumn
	// Extensions are what the area gives another area's extension points
	// (a payment provider, a payment purpose).
	Extensions []Extension
}

// Use installs modules. A job kind, or any registry name (permission,
// setting, event, bucket, sealed column, tenant task, extension), declared
// by two modules is a programming error: Use panics.
func (a *App) Use(ms ...Module) {
	for _, m := range ms {
		a.mu.Lock()
		if a.jobs == nil {
			a.jobs = map[string]JobHandler{}
		}
		for kind := range m.Jobs {
			if _, dup := a.jobs[kind]; dup {
				a.mu.Unlock()
				panic(fmt.Sprintf("module %s: job kind %q declared twice", m.Name, kind))
			}
		}
		reg, err := a.Registry().with(m)
		if err != nil {
			a.mu.Unlock()
			panic(err.Error())
		}
		maps.Copy(a.jobs, m.Jobs)
		a.reg.Store(reg)
		a.managerRefs = append(a.managerRefs, m.ManagerRefs...)
		a.services = append(a.services, m.Services...)
		if m.OnEvents != nil {
			a.onEvents = append(a.onEvents, m.OnEvents)
		}
		a.modules = append(a.modules, m.Name)
		a.mu.Unlock()
		if m.Init != nil {
			m.Init(a)
		}
	}
}

// ManagerReferences are the installed modules' queries counting a
// manager's references (a manager still referenced cannot be deleted).
func (a *App) ManagerReferences() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return append([]string{}, a.managerRefs...)
}

// Services are the installed modules' background services.
func (a *App) Services() []func(ctx context.Context, a *App) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return append([]func(context.Context, *App){}, a.services...)
}

// jobHandler is the handler of a job kind, nil when no module declares it.
func (a *App) jobHandler(kind string) JobHandler {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.jobs[kind]
}

// SetValue attaches an area's per-App state under a key of the area's own
// unexported type; Value reads it back (nil when unset).
func (a *App) SetValue(key, v any) { a.values.Store(key, v) }

// ValueOrStore is the state attached under key, attaching v first when
// there is none (lazily created per-App state, safe under concurrency).
func (a *App) ValueOrStore(key, v any) any {
	got, _ := a.values.LoadOrStore(key, v)
	return got
}

// Value is the state SetValue attached under key.
func (a *App) Value(key any) any {
	v, _ := a.values.Load(key)
	return v
}

// UserDisconnector ends every open session of a subscriber through the
// RADIUS service (RFC 5176) and says how many the NASes answered.
type UserDisconnector func(ctx context.Context, t *Tenant, userID int64) (int, error)

// SetUserDisconnector is called by the RADIUS service of this App.
func (a *App) SetUserDisconnector(fn UserDisconnector) { a.values.Store(disconnectorKey{}, fn) }

type disconnectorKey struct{}

// CanDisconnectUsers tells whether a RADIUS service is attached.
func (a *App) CanDisconnectUsers() bool {
	fn, _ := a.Value(disconnectorKey{}).(UserDisconnector)
	return fn != nil
}

// DisconnectUser asks the RADIUS service to end a subscriber's sessions;
// without one (a command-line process) it is 503 disconnect_unavailable.
func (a *App) DisconnectUser(ctx context.Context, t *Tenant, userID int64) (int, error) {
	fn, _ := a.Value(disconnectorKey{}).(UserDisconnector)
	if fn == nil {
		return 0, ErrUnavailable("disconnect_unavailable")
	}
	return fn(ctx, t, userID)
}
