package subs

import (
	"context"
	"database/sql"
	"testing"

	"xr/app"
	"xr/internal/xrtest"
)

// env is one instance with tenant "acme" on a temp dir.
type env struct {
	t     testing.TB
	a     *app.App
	ten   *app.Tenant
	owner *app.Actor
	ctx   context.Context
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvIn(t, t.TempDir(), nil)
}

func newEnvIn(t testing.TB, dir string, maxUsers *int64) *env {
	t.Helper()
	var a *app.App
	if maxUsers == nil {
		a = xrtest.Seeded(t, app.Config{DataDir: dir}, "acme", Module)
	} else {
		a = xrtest.Open(t, app.Config{DataDir: dir}, Module)
		if _, ok := a.TenantBySlug("acme"); !ok {
			xrtest.CreateTenant(t, a, app.NewTenant{Slug: "acme", MaxUsers: maxUsers})
		}
	}
	t.Cleanup(a.Close)
	ten := xrtest.Acquire(t, a, "acme")
	return &env{t: t, a: a, ten: ten, owner: xrtest.System(t, ten), ctx: context.Background()}
}

func (e *env) exec(q string, args ...any) int64 {
	e.t.Helper()
	return xrtest.Exec(e.t, e.ten, q, args...)
}

func (e *env) scalar(q string, args ...any) int64 {
	e.t.Helper()
	return xrtest.Scalar(e.t, e.ten, q, args...)
}

// manager inserts a manager under parent with its closure rows (the shape
// of app's insertManager), by raw SQL.
func (e *env) manager(parent int64, username string) int64 {
	e.t.Helper()
	var id int64
	err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		return insertManagerSQL(e.ctx, tx, parent, username, &id)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func insertManagerSQL(ctx context.Context, tx *sql.Tx, parent int64, username string, id *int64) error {
	now := app.StampNow()
	r, err := tx.ExecContext(ctx, `INSERT INTO managers(parent_id, username, password_hash, created_at, updated_at) VALUES (?,?,?,?,?)`,
		parent, username, "x", now, now)
	if err != nil {
		return err
	}
	*id, _ = r.LastInsertId()
	_, err = tx.ExecContext(ctx, `INSERT INTO manager_tree(ancestor_id, descendant_id, depth)
		SELECT ancestor_id, ?, depth + 1 FROM manager_tree WHERE descendant_id = ? UNION ALL SELECT ?, ?, 0`, *id, parent, *id, *id)
	return err
}

func (e *env) plan(name, price string, days, bytes int64) int64 {
	e.t.Helper()
	p, err := CreateProfile(e.ctx, e.owner, ProfileInput{Name: app.Opt[string]{Set: true, V: name},
		Price: app.Opt[app.Money]{Set: true, V: xrtest.Money(price)}, DurationDays: app.Opt[int64]{Set: true, V: days},
		BytesLimit: app.Opt[int64]{Set: true, V: bytes}})
	if err != nil {
		e.t.Fatal(err)
	}
	return p.ID
}

func (e *env) user(name string, parent int64, mod func(*NewUser)) int64 {
	e.t.Helper()
	nu := NewUser{Username: name, Password: "pw-" + name, ParentID: parent}
	if mod != nil {
		mod(&nu)
	}
	var id int64
	err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		c, err := CreateUser(e.ctx, tx, e.ten, nu)
		if c != nil {
			id = c.ID
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *env) balance(id int64) app.Money {
	return app.Money(e.scalar(`SELECT balance FROM users WHERE id = ?`, id))
}

// ledgerConsistent checks the running balance of every ledger row and that
// the last one equals the cached balance.
func (e *env) ledgerConsistent(id int64) {
	e.t.Helper()
	rows, err := e.ten.DB.R.Query(`SELECT amount, balance_after FROM user_ledger WHERE user_id = ? ORDER BY id`, id)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var run int64
	for rows.Next() {
		var amt, after int64
		rows.Scan(&amt, &after)
		run += amt
		if after != run {
			e.t.Fatalf("ledger of %d: balance_after %d, running sum %d", id, after, run)
		}
	}
	if got := int64(e.balance(id)); got != run {
		e.t.Fatalf("ledger of %d sums to %d, balance is %d", id, run, got)
	}
}
