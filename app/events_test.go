package app

import (
	"context"
	"database/sql"
	"errors"
	"testing"
)

// EventRowArgs checks every key against the App's catalogue, refuses a
// transaction that is not a tenant write (no commit to wake anyone after),
// writes one row per fact with time-ordered ids, and wakes the OnEvents
// hooks after the commit like Emit.
func TestEventRowArgs(t *testing.T) {
	t.Parallel()
	a := kernelApp(t)
	rec := &commitRecorder{}
	a.Use(rec.module(), Module{Name: "row-test", Events: []EventType{{Key: "row.a", Category: "test"}, {Key: "row.b", Category: "test"}}})
	tt := fndTenant(t, a, "rows")
	ctx := context.Background()

	err := tt.Write(ctx, func(tx *sql.Tx) error {
		for _, keys := range [][]string{nil, {"row.a", "no.such"}} {
			if _, err := EventRowArgs(tx, keys, map[string]any{}); err == nil {
				t.Errorf("keys %v accepted", keys)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.wakeups(); len(got) != 0 || fndCount(t, tt, `SELECT COUNT(*) FROM events`) != 0 {
		t.Fatalf("refused rows woke %v", got)
	}

	// Ids are time-ordered: the outbox's unique index grows at its end.
	err = tt.WriteNoHooks(ctx, func(tx *sql.Tx) error {
		prev := ""
		for range 1000 {
			args, err := EventRowArgs(tx, []string{"row.a", "row.b"}, map[string]any{"a": 1})
			if err != nil {
				return err
			}
			id := args[0].(string)
			if id <= prev {
				t.Errorf("event id %s after %s", id, prev)
			}
			prev = id
			if args[1] != "row.a,row.b" || args[2] != `{"a":1}` {
				t.Errorf("row %v", args)
			}
			if _, err := tx.ExecContext(ctx, InsertEventSQL, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.wakeups(); len(got) != 1 || got[0] != "rows" {
		t.Fatalf("wake-ups after the rows' commit: %v, want one", got)
	}
	if n := fndCount(t, tt, `SELECT COUNT(*) FROM events WHERE type = 'row.a,row.b'`); n != 1000 {
		t.Fatalf("%d rows", n)
	}

	err = tt.DB.Write(ctx, func(tx *sql.Tx) error {
		_, err := EventRowArgs(tx, []string{"row.a"}, nil)
		return err
	})
	if err == nil {
		t.Fatal("EventRowArgs on a bare transaction succeeded")
	}
}

// The registry collects every module's WantedEvents; the set is the union
// of their answers, all when one wants all.
func TestRegistryWantedEvents(t *testing.T) {
	t.Parallel()
	a := kernelApp(t)
	ctx := context.Background()
	if got, err := a.WantedEvents(ctx, a.Inst.R); err != nil || got.Wants("row.a") {
		t.Fatalf("no module: %+v %v", got, err)
	}
	every := false
	a.Use(
		Module{Name: "wants-a", WantedEvents: func(context.Context, Querier) (bool, []string, error) { return false, []string{"row.a"}, nil }},
		Module{Name: "wants-b", WantedEvents: func(context.Context, Querier) (bool, []string, error) { return every, []string{"row.b"}, nil }},
	)
	got, err := a.WantedEvents(ctx, a.Inst.R)
	if err != nil || !got.Wants("row.a") || !got.Wants("row.b") || got.Wants("row.c") {
		t.Fatalf("union: %+v %v", got, err)
	}
	every = true
	if got, _ := a.WantedEvents(ctx, a.Inst.R); !got.Wants("row.c") {
		t.Fatal("a module wanting all does not make the set all")
	}
	failed := errors.New("unreadable")
	a.Use(Module{Name: "broken", WantedEvents: func(context.Context, Querier) (bool, []string, error) { return false, nil, failed }})
	if _, err := a.WantedEvents(ctx, a.Inst.R); !errors.Is(err, failed) {
		t.Fatalf("a failing module's error: %v", err)
	}
}

func TestEventKeyID(t *testing.T) {
	t.Parallel()
	row := "0190f6a0-0000-7000-8000-000000000001"
	if EventKeyID(row, 0, "session.ended") != row {
		t.Fatal("the first key must carry the row's id")
	}
	a, b := EventKeyID(row, 1, "user.disconnected"), EventKeyID(row, 1, "user.disconnected")
	if a != b || a == row || EventKeyID(row, 1, "session.started") == a {
		t.Fatalf("derived ids: %s %s", a, b)
	}
}

func TestEventSetFilter(t *testing.T) {
	t.Parallel()
	s := EventSet{keys: map[string]bool{"user.disconnected": true}}
	if got := s.Filter("session.ended", "user.disconnected"); len(got) != 1 || got[0] != "user.disconnected" {
		t.Fatalf("filter %v", got)
	}
	if (EventSet{}).Filter("session.ended") != nil {
		t.Fatal("an empty set wants something")
	}
	if got := (EventSet{all: true}).Filter("session.ended", "user.disconnected"); len(got) != 2 {
		t.Fatalf("all: %v", got)
	}
}
