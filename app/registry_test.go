package app

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// kernelApp is an App with the kernel's module only (none of the areas').
func kernelApp(t *testing.T) *App {
	t.Helper()
	a, err := Open(Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// regModule declares one of everything under names made from tag.
func regModule(tag string) Module {
	return Module{
		Name:                  "reg-" + tag,
		Jobs:                  map[string]JobHandler{"reg." + tag: func(context.Context, *JobContext) (any, error) { return nil, nil }},
		Permissions:           PermGroup("reg", Perm("prm_reg_"+tag)),
		RoleGrants:            map[string][]Perm{"support": {Perm("prm_reg_" + tag)}},
		Settings:              []Setting{IntSetting{Key: "reg_" + tag, Default: 7, Description: "a test setting"}},
		Events:                []EventType{{Key: "reg." + tag, Category: "test"}},
		Buckets:               map[string]BucketDef{"reg_" + tag: {ScopeIP, 3}},
		SealedColumns:         []SealedColumn{{Table: "reg", Column: tag + "_sealed"}},
		InstanceSealedColumns: []SealedColumn{{Table: "reg_inst", Column: tag + "_sealed"}},
		TenantTasks:           []TenantTask{{Name: "reg." + tag, Run: func(context.Context, *Tenant) (time.Time, error) { return time.Time{}, nil }}},
		Extensions:            []Extension{{Point: "reg.point", Name: tag, Value: "value-" + tag}},
	}
}

// Two Apps with different module sets share no registry state: each
// knows its own declarations only, and the kernel's in both.
func TestRegistryIsPerApp(t *testing.T) {
	t.Parallel()
	a, b := kernelApp(t), kernelApp(t)
	a.Use(regModule("a"))
	b.Use(regModule("b"))
	for _, c := range []struct {
		app        *App
		own, other string
	}{{a, "a", "b"}, {b, "b", "a"}} {
		r := c.app.Registry()
		knows := map[string][2]bool{
			"permission":      {r.KnownPermission("prm_reg_" + c.own), r.KnownPermission("prm_reg_" + c.other)},
			"event":           {r.KnownEvent("reg." + c.own), r.KnownEvent("reg." + c.other)},
			"bucket":          {has(r.Buckets(), "reg_"+c.own), has(r.Buckets(), "reg_"+c.other)},
			"setting":         {hasSetting(r, "reg_"+c.own), hasSetting(r, "reg_"+c.other)},
			"sealed column":   {hasColumn(r.SealedColumns(), c.own), hasColumn(r.SealedColumns(), c.other)},
			"instance column": {hasColumn(r.InstanceSealedColumns(), c.own), hasColumn(r.InstanceSealedColumns(), c.other)},
			"tenant task":     {hasTask(r.TenantTasks(), "reg."+c.own), hasTask(r.TenantTasks(), "reg."+c.other)},
			"role grant":      {len(r.RoleGrants("support")) == 1 && r.RoleGrants("support")[0] == Perm("prm_reg_"+c.own), false},
		}
		_, extOwn := ExtensionOf[string](c.app, "reg.point", c.own)
		_, extOther := ExtensionOf[string](c.app, "reg.point", c.other)
		knows["extension"] = [2]bool{extOwn, extOther}
		for kind, k := range knows {
			if !k[0] || k[1] {
				t.Errorf("App %s: %s: knows its own %v, the other App's %v", c.own, kind, k[0], k[1])
			}
		}
		if got := Extensions[string](c.app, "reg.point"); len(got) != 1 || got[0] != "value-"+c.own {
			t.Errorf("App %s: extensions %v", c.own, got)
		}
		// The kernel's own declarations are in both.
		if !r.KnownPermission(string(PermJobsView)) || !hasSetting(r, "currency") || !has(r.Buckets(), BucketMutate) || !hasTask(r.TenantTasks(), "kernel.maintain") {
			t.Errorf("App %s lacks the kernel's declarations", c.own)
		}
	}
	// A snapshot taken before a Use does not change under it.
	before := a.Registry()
	a.Use(regModule("c"))
	if before.KnownPermission("prm_reg_c") || !a.Registry().KnownPermission("prm_reg_c") {
		t.Error("Use changed an earlier snapshot, or did not install")
	}
}

func has(m map[string]BucketDef, k string) bool { _, ok := m[k]; return ok }

func hasSetting(r *Registry, k string) bool { _, ok := r.Setting(k); return ok }

func hasColumn(cols []SealedColumn, tag string) bool {
	for _, c := range cols {
		if c.Column == tag+"_sealed" {
			return true
		}
	}
	return false
}

func hasTask(ts []TenantTask, name string) bool {
	for _, tk := range ts {
		if tk.Name == name {
			return true
		}
	}
	return false
}

// A name two modules declare (or one declares twice) panics at Use,
// naming it, and leaves the App's registry as it was.
func TestRegistryRefusesDuplicates(t *testing.T) {
	t.Parallel()
	dup := func(edit func(m *Module)) Module {
		m := regModule("x")
		m.Name = "second"
		edit(&m)
		return m
	}
	for _, c := range []struct {
		name string
		mod  Module
		want string
	}{
		{"job kind", dup(func(m *Module) { m.Jobs = regModule("a").Jobs }), `job kind "reg.a"`},
		{"permission", dup(func(m *Module) { m.Permissions = PermGroup("reg", "prm_reg_a") }), `permission "prm_reg_a"`},
		{"kernel permission", dup(func(m *Module) { m.Permissions = PermGroup("jobs", PermJobsView) }), `permission "prm_jobs_view" already declared by module kernel`},
		{"setting", dup(func(m *Module) { m.Settings = regModule("a").Settings }), `setting "reg_a"`},
		{"kernel setting", dup(func(m *Module) { m.Settings = []Setting{SettingCurrency} }), `setting "currency"`},
		{"event", dup(func(m *Module) { m.Events = regModule("a").Events }), `event "reg.a"`},
		{"bucket", dup(func(m *Module) { m.Buckets = map[string]BucketDef{"public": {ScopeIP, 1}} }), `bucket "public"`},
		{"sealed column", dup(func(m *Module) { m.SealedColumns = regModule("a").SealedColumns }), `sealed column "reg.a_sealed"`},
		{"instance sealed column", dup(func(m *Module) { m.InstanceSealedColumns = regModule("a").InstanceSealedColumns }), `instance sealed column "reg_inst.a_sealed"`},
		{"tenant task", dup(func(m *Module) { m.TenantTasks = regModule("a").TenantTasks }), `tenant task "reg.a"`},
		{"extension", dup(func(m *Module) { m.Extensions = regModule("a").Extensions }), `extension of reg.point "a"`},
		{"twice in one module", dup(func(m *Module) { m.Events = append(m.Events, m.Events[0]) }), `event "reg.x" already declared by module second`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := kernelApp(t)
			a.Use(regModule("a"))
			before := a.Registry()
			msg := usePanic(a, c.mod)
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, "module second") {
				t.Fatalf("panic %q, want it to name %s", msg, c.want)
			}
			if a.Registry() != before || a.Registry().KnownPermission("prm_reg_x") {
				t.Fatal("a refused module changed the registry")
			}
		})
	}
}

// usePanic installs m and returns what Use panicked with ("" when it did not).
func usePanic(a *App, m Module) (msg string) {
	defer func() {
		if p := recover(); p != nil {
			msg, _ = p.(string)
		}
	}()
	a.Use(m)
	return ""
}
