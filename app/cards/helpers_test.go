package cards

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"xr/app"
	"xr/app/identity"
	"xr/app/subs"
	"xr/internal/xrtest"
)

// env is one instance with tenant "acme" on a temp dir, and the owner's
// system actor.
type env struct {
	t     testing.TB
	a     *app.App
	ten   *app.Tenant
	owner *app.Actor
	ctx   context.Context
	seq   atomic.Int64
}

func newEnv(t testing.TB) *env {
	t.Helper()
	a := xrtest.TenantApp(t, "acme", identity.Module, subs.Module, Module)
	ten := xrtest.Acquire(t, a, "acme")
	return &env{t: t, a: a, ten: ten, owner: xrtest.System(t, ten), ctx: context.Background()}
}

func (e *env) key() string { return fmt.Sprintf("k-%d", e.seq.Add(1)) }

func (e *env) exec(q string, args ...any) { e.t.Helper(); xrtest.Exec(e.t, e.ten, q, args...) }

func (e *env) scalar(q string, args ...any) int64 {
	e.t.Helper()
	return xrtest.Scalar(e.t, e.ten, q, args...)
}

func (e *env) str(q string, args ...any) string {
	e.t.Helper()
	var s string
	if err := e.ten.DB.R.QueryRow(q, args...).Scan(&s); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return s
}

// manager creates a manager under parent (0 = root) through app.
func (e *env) manager(parent int64, username string) int64 {
	e.t.Helper()
	in := identity.ManagerInput{Username: app.Opt[string]{Set: true, V: username}, Password: app.Opt[string]{Set: true, V: "Reseller-pass-1"}}
	if parent != 0 {
		in.ParentManagerID = app.Opt[int64]{Set: true, V: parent}
	}
	m, err := identity.CreateManager(e.ctx, e.owner, in)
	if err != nil {
		e.t.Fatal(err)
	}
	return m.ID
}

func (e *env) plan(name string, price app.Money, days, bytes, secs int64) int64 {
	e.t.Helper()
	p, err := subs.CreateProfile(e.ctx, e.owner, subs.ProfileInput{Name: app.Opt[string]{Set: true, V: name},
		Price: app.Opt[app.Money]{Set: true, V: price}, DurationDays: app.Opt[int64]{Set: true, V: days},
		BytesLimit: app.Opt[int64]{Set: true, V: bytes}, SecondsLimit: app.Opt[int64]{Set: true, V: secs}})
	if err != nil {
		e.t.Fatal(err)
	}
	return p.ID
}

func (e *env) user(name string, parent int64) int64 {
	e.t.Helper()
	var id int64
	err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		c, err := subs.CreateUser(e.ctx, tx, e.ten, subs.NewUser{Username: name, Password: "pw-" + name + "-1", ParentID: parent})
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

func (e *env) balance(userID int64) app.Money {
	return app.Money(e.scalar(`SELECT balance FROM users WHERE id = ?`, userID))
}

var future = time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")

// series creates a series as act and mints it at once (no job runner).
func (e *env) series(act *app.Actor, in CreateInput) *Batch {
	e.t.Helper()
	if in.RequestID == "" {
		in.RequestID = e.key()
	}
	if in.Expiration == "" {
		in.Expiration = future
	}
	if in.FaceValue == nil {
		in.FaceValue = xrtest.MoneyPtr("10")
	}
	if in.Type == "" {
		in.Type = "refill"
	}
	res, err := CreateBatch(e.ctx, act, in)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := Generate(e.ctx, e.ten, res.BatchID, nil); err != nil {
		e.t.Fatal(err)
	}
	b, err := GetBatch(e.ctx, e.owner, res.BatchID)
	if err != nil {
		e.t.Fatal(err)
	}
	if b.Status != "ready" {
		e.t.Fatalf("series %d: status %s", b.ID, b.Status)
	}
	e.stockOK(b.ID)
	return b
}

// codes are the codes of a series in serial order.
func (e *env) codes(batchID int64) []string {
	e.t.Helper()
	rows, err := e.ten.DB.R.Query(`SELECT code FROM cards WHERE batch_id = ? ORDER BY seq`, batchID)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		rows.Scan(&c)
		out = append(out, c)
	}
	return out
}

func (e *env) cardID(code string) int64 { return e.scalar(`SELECT id FROM cards WHERE code = ?`, code) }

func (e *env) stockOK(batchID int64) {
	e.t.Helper()
	diff, err := StockCheck(e.ctx, e.ten.DB.R, batchID)
	if err != nil {
		e.t.Fatal(err)
	}
	if diff != "" {
		e.t.Fatalf("series %d counters: %s", batchID, diff)
	}
}

func (e *env) batch(id int64) *Batch {
	e.t.Helper()
	b, err := GetBatch(e.ctx, e.owner, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

type sqlTx = sql.Tx
