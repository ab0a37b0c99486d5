// Package xrtest is the test kit shared by every area's tests: an App on a
// temp dir with a silent logger, a tenant with a known owner, a tenant
// handle released at cleanup, the system actor, one-statement writes,
// scalar reads, error assertions and polling with a 20 s give-up.
//
// It depends on the kernel (xr/app) only: the modules to install are an
// argument, so the internal tests of an area can import it without an
// import cycle.
package xrtest

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"xr/app"
)

// Password is the owner's password of every tenant made here.
const Password = "Owner-pass-1"

// Open opens an instance with cfg and installs mods; an empty DataDir is a
// temp dir, an empty Domain is "xr.test", a nil Logger discards. The
// caller closes it (tests that reopen the same directory need that).
func Open(t testing.TB, cfg app.Config, mods ...app.Module) *app.App {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	a, err := open(cfg, mods)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// open is Open on a given DataDir. Tests hash passwords at the test cost
// (app.LowerPasswordCostForTests): the production cost was 40 % of the
// web tests' CPU and no test depends on it.
func open(cfg app.Config, mods []app.Module) (*app.App, error) {
	app.LowerPasswordCostForTests()
	if cfg.Domain == "" {
		cfg.Domain = "xr.test"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	a, err := app.Open(cfg)
	if err != nil {
		return nil, err
	}
	a.Use(mods...)
	return a, nil
}

// App opens an instance in a temp dir with mods installed, closed when the
// test ends.
func App(t testing.TB, mods ...app.Module) *app.App {
	t.Helper()
	a := Open(t, app.Config{}, mods...)
	t.Cleanup(a.Close)
	return a
}

// Lab is App for an instance run as a lab (--allow-private-egress): NAS,
// devices and listeners on loopback are reachable, as the tests' fake NAS
// and agents need.
func Lab(t testing.TB, mods ...app.Module) *app.App {
	t.Helper()
	a := Open(t, app.Config{AllowPrivateEgress: true}, mods...)
	t.Cleanup(a.Close)
	return a
}

// CreateTenant creates the tenant nt; empty fields default to Name =
// upper-case slug, owner "owner" <owner@slug.test> with Password. It
// returns the tenant and its owner's manager id.
func CreateTenant(t testing.TB, a *app.App, nt app.NewTenant) (*app.TenantInfo, int64) {
	t.Helper()
	ti, owner, err := a.CreateTenant(context.Background(), withOwner(nt))
	if err != nil {
		t.Fatal(err)
	}
	return ti, owner
}

// withOwner fills CreateTenant's defaults.
func withOwner(nt app.NewTenant) app.NewTenant {
	if nt.Name == "" {
		nt.Name = strings.ToUpper(nt.Slug)
	}
	if nt.AdminUsername == "" {
		nt.AdminUsername = "owner"
	}
	if nt.AdminEmail == "" {
		nt.AdminEmail = "owner@" + nt.Slug + ".test"
	}
	if nt.AdminPassword == "" {
		nt.AdminPassword = Password
	}
	return nt
}

// Tenant creates a tenant whose owner is "owner" / Password.
func Tenant(t testing.TB, a *app.App, slug string) *app.TenantInfo {
	t.Helper()
	ti, _ := CreateTenant(t, a, app.NewTenant{Slug: slug})
	return ti
}

// Acquire opens a tenant for the rest of the test.
func Acquire(t testing.TB, a *app.App, slug string) *app.Tenant {
	t.Helper()
	ten, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return ten
}

// System is the tenant's system actor (owner, every code).
func System(t testing.TB, ten *app.Tenant) *app.Actor {
	t.Helper()
	act, err := app.SystemActor(context.Background(), ten)
	if err != nil {
		t.Fatal(err)
	}
	return act
}

// Reseller is an actor confined to manager id's subtree with every code.
func Reseller(ten *app.Tenant, id int64) *app.Actor {
	perms := map[app.Perm]bool{}
	for _, c := range ten.App.AllPerms() {
		perms[c] = true
	}
	return &app.Actor{Tenant: ten, ManagerID: id, Kind: app.CredSession, Perms: perms, Roles: []string{"reseller"}}
}

// Exec runs one statement in its own write transaction and returns the
// last insert id.
func Exec(t testing.TB, ten *app.Tenant, q string, args ...any) int64 {
	t.Helper()
	var id int64
	err := ten.Write(context.Background(), func(tx *sql.Tx) error {
		r, err := tx.Exec(q, args...)
		if err != nil {
			return err
		}
		id, _ = r.LastInsertId()
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return id
}

// Scalar reads one integer on the reader pool.
func Scalar(t testing.TB, ten *app.Tenant, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := ten.DB.R.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// InstanceKeys reads the key rows (name → stored blob) of the
// instance.db at path, as they are on disk.
func InstanceKeys(t testing.TB, path string) map[string][]byte {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	rows, err := d.Query(`SELECT name, key FROM instance_keys`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var n string
		var k []byte
		if err := rows.Scan(&n, &k); err != nil {
			t.Fatal(err)
		}
		out[n] = k
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// CopyDir copies the directory tree from into to (a data directory
// carried to another box).
func CopyDir(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Money parses a decimal amount; a bad literal is a bug in the test.
func Money(s string) app.Money {
	m, err := app.ParseMoney(s)
	if err != nil {
		panic(err)
	}
	return m
}

// MoneyPtr is &Money(s).
func MoneyPtr(s string) *app.Money { m := Money(s); return &m }

// WantReason asserts err is an *app.Error with status and reason.
func WantReason(t testing.TB, err error, status int, reason string) {
	t.Helper()
	e := app.AsError(err)
	if e == nil || e.Status != status || e.Reason != reason {
		t.Fatalf("want %d %s, got %v", status, reason, err)
	}
}

// WantError asserts err is an *app.Error with status, code and reason.
func WantError(t testing.TB, err error, status int, code, reason string) *app.Error {
	t.Helper()
	e := app.AsError(err)
	if e == nil {
		t.Fatalf("want %d %s/%s, got %v", status, code, reason, err)
	}
	if e.Status != status || e.Code != code || e.Reason != reason {
		t.Fatalf("want %d %s/%s, got %d %s/%s", status, code, reason, e.Status, e.Code, e.Reason)
	}
	return e
}

// GiveUp is how long Eventually polls.
const GiveUp = 20 * time.Second

// Eventually polls cond until it holds, failing the test after GiveUp.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(GiveUp)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", GiveUp, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
