package app

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Registry is what the modules installed on one App declared: the
// permission catalogue, the tenant settings, the event catalogue and the
// event consumers' wants (WantedEvents), the rate buckets, the sealed
// columns, the per-tenant tasks and the extensions of extension points.
// App.Use builds a new Registry from the previous one and the new modules,
// refusing a name two modules declare, and swaps it in whole; readers get
// an immutable snapshot (App.Registry), so lookups take no lock and two
// Apps never share one.
type Registry struct {
	owner map[string]string // "kind name" → the module that declared it

	perms      []Permission // sorted by code
	permSet    map[Perm]bool
	roleGrants map[string][]Perm // system role template → codes

	settings   []SettingDef // install order
	settingKey map[string]int

	events   []EventType // install order
	eventSet map[string]bool
	wanters  []EventWanter // the modules' WantedEvents, install order

	buckets map[string]BucketDef

	sealed, instanceSealed []SealedColumn

	tasks []TenantTask

	ext map[string][]Extension // point → extensions, install order
}

// Registry is the App's current registry (read-only).
func (a *App) Registry() *Registry {
	if r := a.reg.Load(); r != nil {
		return r
	}
	return &Registry{}
}

// with is r plus m's declarations; a name already declared is an error.
func (r *Registry) with(m Module) (*Registry, error) {
	n := &Registry{
		owner:          maps.Clone(r.owner),
		perms:          slices.Clone(r.perms),
		permSet:        maps.Clone(r.permSet),
		roleGrants:     map[string][]Perm{},
		settings:       slices.Clone(r.settings),
		settingKey:     maps.Clone(r.settingKey),
		events:         slices.Clone(r.events),
		eventSet:       maps.Clone(r.eventSet),
		wanters:        slices.Clone(r.wanters),
		buckets:        maps.Clone(r.buckets),
		sealed:         slices.Clone(r.sealed),
		instanceSealed: slices.Clone(r.instanceSealed),
		tasks:          slices.Clone(r.tasks),
		ext:            map[string][]Extension{},
	}
	if n.owner == nil {
		n.owner, n.permSet, n.settingKey, n.eventSet, n.buckets = map[string]string{}, map[Perm]bool{}, map[string]int{}, map[string]bool{}, map[string]BucketDef{}
	}
	for k, v := range r.roleGrants {
		n.roleGrants[k] = slices.Clone(v)
	}
	for k, v := range r.ext {
		n.ext[k] = slices.Clone(v)
	}
	var errs []error
	claim := func(kind, name string) {
		key := kind + " " + name
		if prev, dup := n.owner[key]; dup {
			errs = append(errs, fmt.Errorf("module %s: %s %q already declared by module %s", m.Name, kind, name, prev))
		}
		n.owner[key] = m.Name
	}
	for _, p := range m.Permissions {
		claim("permission", string(p.Code))
		if !strings.HasPrefix(string(p.Code), "prm_") || p.Area == "" {
			errs = append(errs, fmt.Errorf("module %s: permission %q (area %q) misnamed", m.Name, p.Code, p.Area))
		}
		n.perms = append(n.perms, p)
		n.permSet[p.Code] = true
	}
	slices.SortFunc(n.perms, func(a, b Permission) int { return strings.Compare(string(a.Code), string(b.Code)) })
	for role, codes := range m.RoleGrants {
		for _, c := range codes {
			claim("grant of role "+role, string(c))
		}
		n.roleGrants[role] = append(n.roleGrants[role], codes...)
	}
	for _, s := range m.Settings {
		d := s.Def()
		claim("setting", d.Key)
		n.settingKey[d.Key] = len(n.settings)
		n.settings = append(n.settings, d)
	}
	for _, e := range m.Events {
		claim("event", e.Key)
		n.events = append(n.events, e)
		n.eventSet[e.Key] = true
	}
	if m.WantedEvents != nil {
		n.wanters = append(n.wanters, m.WantedEvents)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Buckets)) {
		claim("bucket", name)
		n.buckets[name] = m.Buckets[name]
	}
	for _, c := range m.SealedColumns {
		claim("sealed column", c.Table+"."+c.Column)
		n.sealed = append(n.sealed, c)
	}
	for _, c := range m.InstanceSealedColumns {
		claim("instance sealed column", c.Table+"."+c.Column)
		n.instanceSealed = append(n.instanceSealed, c)
	}
	for _, tk := range m.TenantTasks {
		claim("tenant task", tk.Name)
		if tk.Run == nil || tk.Every < 0 || tk.After < 0 {
			errs = append(errs, fmt.Errorf("module %s: tenant task %q needs a Run and durations >= 0", m.Name, tk.Name))
		}
		n.tasks = append(n.tasks, tk)
	}
	for _, e := range m.Extensions {
		claim("extension of "+e.Point, e.Name)
		n.ext[e.Point] = append(n.ext[e.Point], e)
	}
	return n, errors.Join(errs...)
}

// PermGroup is the catalogue rows of one area's codes (Module.Permissions).
func PermGroup(area string, codes ...Perm) []Permission {
	out := make([]Permission, len(codes))
	for i, c := range codes {
		out[i] = Permission{Code: c, Area: area}
	}
	return out
}

// Permissions is the permission catalogue, sorted by code.
func (r *Registry) Permissions() []Permission { return slices.Clone(r.perms) }

// KnownPermission reports whether code is in the catalogue. It is the
// boundary check for codes that arrive as strings (role storage, request
// bodies, token scopes) before they are used as a Perm.
func (r *Registry) KnownPermission(code string) bool { return r.permSet[Perm(code)] }

// AllPerms lists every code of the catalogue, sorted.
func (r *Registry) AllPerms() []Perm {
	out := make([]Perm, len(r.perms))
	for i, p := range r.perms {
		out[i] = p.Code
	}
	return out
}

// AllPermissionCodes lists every code as a string, sorted (for responses
// and role storage).
func (r *Registry) AllPermissionCodes() []string {
	out := make([]string, len(r.perms))
	for i, p := range r.perms {
		out[i] = string(p.Code)
	}
	return out
}

// RoleGrants are the codes the modules give a system role template
// ("reseller", "support", "cashier") when a tenant is provisioned.
func (r *Registry) RoleGrants(role string) []Perm { return slices.Clone(r.roleGrants[role]) }

// Settings lists every tenant setting, in install order.
func (r *Registry) Settings() []SettingDef { return slices.Clone(r.settings) }

// Setting is the registry entry of key.
func (r *Registry) Setting(key string) (SettingDef, bool) {
	i, ok := r.settingKey[key]
	if !ok {
		return SettingDef{}, false
	}
	return r.settings[i], true
}

// DefaultSettings are a new tenant's settings (JSON values): the seeded
// entries with their defaults.
func (r *Registry) DefaultSettings() map[string]string {
	m := map[string]string{}
	for _, d := range r.settings {
		if d.Seeded {
			m[d.Key] = d.Default
		}
	}
	return m
}

// Events is the event catalogue (the keys a webhook endpoint may
// subscribe to), in install order.
func (r *Registry) Events() []EventType { return slices.Clone(r.events) }

// KnownEvent reports whether key is in the catalogue.
func (r *Registry) KnownEvent(key string) bool { return r.eventSet[key] }

// Buckets is every rate bucket a route may name. The map is the
// registry's own: read it, never write it.
func (r *Registry) Buckets() map[string]BucketDef { return r.buckets }

// SealedColumns lists every sealed column of a tenant file: xr keys
// rotate re-seals them all.
func (r *Registry) SealedColumns() []SealedColumn { return slices.Clone(r.sealed) }

// InstanceSealedColumns lists the sealed columns of instance.db.
func (r *Registry) InstanceSealedColumns() []SealedColumn { return slices.Clone(r.instanceSealed) }

// TenantTasks lists the per-tenant tasks, in install order.
func (r *Registry) TenantTasks() []TenantTask { return slices.Clone(r.tasks) }

// Extension is one contribution to an extension point another area reads:
// Point names the point (its owner's constant, "payments.provider"), Name
// the contribution within it (two modules may not give the same), Value
// what the owner reads back with Extensions or ExtensionOf.
type Extension struct {
	Point string
	Name  string
	Value any
}

// Extensions are the values given to point whose type is T, in install
// order.
func Extensions[T any](a *App, point string) []T {
	var out []T
	for _, e := range a.Registry().ext[point] {
		if v, ok := e.Value.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// ExtensionOf is the value named name at point, when it is a T.
func ExtensionOf[T any](a *App, point, name string) (T, bool) {
	for _, e := range a.Registry().ext[point] {
		if e.Name == name {
			v, ok := e.Value.(T)
			return v, ok
		}
	}
	var zero T
	return zero, false
}

// The registry's lookups on the App, for the callers that hold one.

// Permissions is the App's permission catalogue, sorted by code.
func (a *App) Permissions() []Permission { return a.Registry().Permissions() }

// KnownPermission reports whether code is in the App's catalogue.
func (a *App) KnownPermission(code string) bool { return a.Registry().KnownPermission(code) }

// AllPerms lists every code of the App's catalogue, sorted.
func (a *App) AllPerms() []Perm { return a.Registry().AllPerms() }

// AllPermissionCodes lists every code of the App's catalogue as a string,
// sorted.
func (a *App) AllPermissionCodes() []string { return a.Registry().AllPermissionCodes() }

// Events is the App's event catalogue.
func (a *App) Events() []EventType { return a.Registry().Events() }

// Buckets is every rate bucket of the App (read-only).
func (a *App) Buckets() map[string]BucketDef { return a.Registry().Buckets() }
