package app

import (
	"context"
	"sync"
	"time"
)

// TenantTask is per-tenant work a module declares (Module.TenantTasks) and
// the kernel runs while xr serve runs (RunTenantTasks): a sweep, a poller,
// housekeeping. The declaration is the stable part; how the runner finds
// the tenants and when it opens their files is the kernel's business.
type TenantTask struct {
	Name string
	// Every is the interval between two passes over the tenants; zero runs
	// the task once per tenant when the runner starts, before any periodic
	// task (a start-up recovery).
	Every time.Duration
	// After delays the first pass (zero: at start).
	After time.Duration
	// Run does the work for one tenant; an error is logged with the task
	// and the tenant, and the pass goes on.
	Run func(ctx context.Context, t *Tenant) error
}

// RunTenantTasks runs the installed modules' tenant tasks until ctx ends:
// first the start-up tasks (Every zero) for every tenant, in install
// order, then each periodic task on its own schedule: a pass over every
// tenant After the start and then every Every (a pass longer than Every
// starts the next at once).
func (a *App) RunTenantTasks(ctx context.Context) {
	tasks := a.Registry().TenantTasks()
	for _, tk := range tasks {
		if tk.Every == 0 {
			a.tenantPass(ctx, tk)
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, tk := range tasks {
		if tk.Every > 0 {
			wg.Add(1)
			go func() { defer wg.Done(); a.runTask(ctx, tk) }()
		}
	}
}

// runTask runs one periodic task's passes until ctx ends.
func (a *App) runTask(ctx context.Context, tk TenantTask) {
	first := time.NewTimer(tk.After)
	defer first.Stop()
	select {
	case <-ctx.Done():
		return
	case <-first.C:
	}
	tick := time.NewTicker(tk.Every)
	defer tick.Stop()
	for {
		a.tenantPass(ctx, tk)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// tenantPass runs tk for every tenant of the registry, one after the other.
func (a *App) tenantPass(ctx context.Context, tk TenantTask) {
	for _, slug := range a.TenantSlugs() {
		if ctx.Err() != nil {
			return
		}
		t, release, err := a.Acquire(slug)
		if err != nil {
			continue
		}
		if err := tk.Run(ctx, t); err != nil && ctx.Err() == nil {
			a.Log.Error("tenant task", "task", tk.Name, "tenant", slug, "err", err)
		}
		release()
	}
}
