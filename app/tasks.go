package app

import (
	"context"
	"time"
)

// TenantTask is per-tenant work a module declares (Module.TenantTasks) and
// the instance scheduler runs while xr serve runs (scheduler.go): a sweep,
// a poller, housekeeping, the job claims. The declaration is the stable
// part; when the scheduler opens a tenant for it is the kernel's business:
// only when the task is due.
type TenantTask struct {
	Name string
	// Every is zero for an on-open task: it runs each time a tenant's
	// files open in the serving process, before any other task of the
	// tenant (recovering what a stopped holder of the file left: claims,
	// parked deliveries, live consoles, running jobs). Otherwise the task
	// is periodic and Every is how long it waits after a failed run.
	Every time.Duration
	// After is when a periodic task first runs after a tenant opens, when
	// the scheduler knows no due time for it (zero: at once).
	After time.Duration
	// Run does the work for one tenant and answers when the task is due
	// again for it: the earliest queued item, the next poll, or zero when
	// nothing of the tenant's is waiting (the task then sleeps until a
	// transaction says otherwise with TaskDue, at no cost). A periodic
	// task that must run at an interval whatever happens answers
	// t.Now().Add(interval); one that answers zero must be told of new
	// work. An error is logged; the task runs again after Every.
	Run func(ctx context.Context, t *Tenant) (next time.Time, err error)
}

// RunTenantTasks runs the installed modules' tenant tasks (all but the job
// claims, which Jobs.Run runs) until ctx ends, on the instance scheduler:
// each when it is due for a tenant, SchedulerWorkers at a time, opening
// the tenant only then. xr serve runs both.
func (a *App) RunTenantTasks(ctx context.Context) {
	a.sched.run(ctx, a.taskNames(JobsTask), SchedulerWorkers)
}

// RunDueTasks runs, in this goroutine, every task of every tenant due at
// `now` by the App's clock (a fake clock in tests), whether or not a
// scheduler loop runs, and returns how many ran. It takes this process as
// the scheduler, like a loop.
func (a *App) RunDueTasks(ctx context.Context) int {
	s := a.sched
	s.activate(ctx)
	byName := map[string]TenantTask{}
	for _, tk := range a.Registry().TenantTasks() {
		byName[tk.Name] = tk
	}
	l := newLane(a.taskNames())
	n := 0
	now := a.Now()
	for {
		it := s.popDue(l, now)
		if it == nil {
			return n
		}
		n++
		s.runItem(ctx, byName[it.key.task], it)
		s.done(l, it.key.slug)
	}
}
