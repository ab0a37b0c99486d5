package subs

import (
	"testing"

	"xr/internal/xrtest"
)

// TestLookupAnswersOutOfScopeLikeMissing: the lookup other areas use finds
// a subscriber of the caller's subtree, and answers one outside it, a
// missing one and (LookupLive, LookupName) a deleted one with the same 404.
func TestLookupAnswersOutOfScopeLikeMissing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.manager(e.owner.ManagerID, "a")
	b := e.manager(e.owner.ManagerID, "b")
	ua := e.user("ua", a, func(nu *NewUser) { nu.Email = "ua@example.test" })
	ub := e.user("ub", b, nil)
	gone := e.user("gone", a, nil)
	e.exec(`UPDATE users SET deleted_at = '2026-01-01 00:00:00' WHERE id = ?`, gone)
	act := xrtest.Reseller(e.ten, a)
	q := e.ten.DB.R

	r, err := Lookup(e.ctx, q, act, ua)
	if err != nil || r.ID != ua || r.Username != "ua" || r.ParentID != a || r.Email != "ua@example.test" || r.Deleted {
		t.Fatalf("in scope: %+v %v", r, err)
	}
	if r, err := LookupName(e.ctx, q, act, " UA "); err != nil || r.ID != ua {
		t.Fatalf("by name: %+v %v", r, err)
	}
	if r, err := Lookup(e.ctx, q, act, gone); err != nil || !r.Deleted {
		t.Fatalf("deleted, by Lookup: %+v %v", r, err)
	}
	for name, err := range map[string]error{
		"outside":           second(Lookup(e.ctx, q, act, ub)),
		"missing":           second(Lookup(e.ctx, q, act, 99999)),
		"deleted, live":     second(LookupLive(e.ctx, q, act, gone)),
		"outside, by name":  second(LookupName(e.ctx, q, act, "ub")),
		"deleted, by name":  second(LookupName(e.ctx, q, act, "gone")),
		"missing, unscoped": second(Read(e.ctx, q, 99999)),
	} {
		t.Run(name, func(t *testing.T) { xrtest.WantReason(t, err, 404, "not_found") })
	}
	if r, err := Read(e.ctx, q, ub); err != nil || r.ParentID != b {
		t.Fatalf("unscoped read: %+v %v", r, err)
	}
}

// TestTakenChecks: a deleted subscriber keeps its username, not its
// static address or email.
func TestTakenChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gone := e.user("gone", e.owner.ManagerID, func(nu *NewUser) { nu.StaticIP = "192.0.2.7"; nu.Email = "Gone@example.test" })
	e.user("live", e.owner.ManagerID, func(nu *NewUser) { nu.StaticIP = "192.0.2.8"; nu.Email = "live@example.test" })
	e.exec(`UPDATE users SET deleted_at = '2026-01-01 00:00:00' WHERE id = ?`, gone)
	q := e.ten.DB.R
	for _, c := range []struct {
		name string
		fn   func() (bool, error)
		want bool
	}{
		{"username of a deleted one", func() (bool, error) { return UsernameTaken(e.ctx, q, "GONE") }, true},
		{"unknown username", func() (bool, error) { return UsernameTaken(e.ctx, q, "nobody") }, false},
		{"static ip of a deleted one", func() (bool, error) { return StaticIPTaken(e.ctx, q, "192.0.2.7") }, false},
		{"static ip of a live one", func() (bool, error) { return StaticIPTaken(e.ctx, q, "192.0.2.8") }, true},
		{"email of a deleted one", func() (bool, error) { return EmailTaken(e.ctx, q, "gone@example.test") }, false},
		{"email of a live one, other case", func() (bool, error) { return EmailTaken(e.ctx, q, "LIVE@example.test") }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.fn()
			if err != nil || got != c.want {
				t.Fatalf("got %v (%v), want %v", got, err, c.want)
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }
