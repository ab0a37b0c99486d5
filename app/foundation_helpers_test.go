package app

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// Helpers of the foundation tests (prefix fnd to stay clear of the helpers
// other areas add to package app).

const fndPassword = "Owner-pass-1"

// fndOpen opens an instance on dir with a silent logger and a short idle
// close (the pool's reaper must never close a file a test still uses: it
// only closes released files): the kernel alone (tests that need every
// area installed are in app/modules).
func fndOpen(t testing.TB, dir string) *App {
	t.Helper()
	a, err := Open(Config{DataDir: dir, Domain: "xr.test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fndApp opens an instance in a temp dir, closed when the test ends.
func fndApp(t testing.TB) *App {
	t.Helper()
	a := fndOpen(t, t.TempDir())
	t.Cleanup(a.Close)
	return a
}

// fndCreate creates a tenant whose owner is "owner" / fndPassword.
func fndCreate(t testing.TB, a *App, slug string) *TenantInfo {
	t.Helper()
	ti, _, err := a.CreateTenant(context.Background(), NewTenant{Slug: slug, Name: strings.ToUpper(slug),
		AdminUsername: "owner", AdminEmail: "owner@" + slug + ".test", AdminPassword: fndPassword})
	if err != nil {
		t.Fatal(err)
	}
	return ti
}

// fndAcquire opens a tenant for the rest of the test.
func fndAcquire(t testing.TB, a *App, slug string) *Tenant {
	t.Helper()
	tt, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return tt
}

// fndTenant creates and acquires a tenant.
func fndTenant(t testing.TB, a *App, slug string) *Tenant {
	t.Helper()
	fndCreate(t, a, slug)
	return fndAcquire(t, a, slug)
}

// fndExec runs statements in one write transaction of t.
func fndExec(t testing.TB, tt *Tenant, stmts ...string) {
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

// fndCount counts rows of a query on the reader pool.
func fndCount(t testing.TB, tt *Tenant, query string, args ...any) int {
	t.Helper()
	var n int
	if err := tt.DB.R.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// fndErr asserts err is an *Error with status, code and reason.
func fndErr(t testing.TB, err error, status int, code, reason string) *Error {
	t.Helper()
	e := AsError(err)
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
