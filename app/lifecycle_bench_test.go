package app

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkTenantColdOpen measures what opening a closed tenant costs the
// serving process: the files open, the on-open tasks and the first run of
// every task with no due time (all modules installed), then the close (its
// due times and figures kept in instance.db). Each iteration uses a tenant
// closed since its last use.
//
//	go test ./app -run '^$' -bench TenantColdOpen -benchtime 200x
func BenchmarkTenantColdOpen(b *testing.B) {
	a := fndApp(b)
	fndCreate(b, a, "cold00000")
	const n = 50
	var copies []TenantCopy
	for i := 1; i < n; i++ {
		s := fmt.Sprintf("cold%05d", i)
		copies = append(copies, TenantCopy{Slug: s, Name: s, AdminUsername: "owner", AdminEmail: "owner@" + s + ".test"})
	}
	ctx := context.Background()
	if err := a.CopyTenants(ctx, "cold00000", copies); err != nil {
		b.Fatal(err)
	}
	a.RunDueTasks(ctx)
	closeAll(b, a)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		slug := fmt.Sprintf("cold%05d", i%n)
		t, release, err := a.Acquire(slug)
		if err != nil {
			b.Fatal(err)
		}
		a.sched.waitOnOpen(ctx, t)
		release()
		a.RunDueTasks(ctx) // the opening's first runs
		a.Pool.CloseIdle()
	}
}
