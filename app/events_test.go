package app

import (
	"testing"
)

func TestEventRowArgs(t *testing.T) {
	t.Parallel()
	for _, keys := range [][]string{nil, {"session.ended", "no.such"}} {
		if _, err := EventRowArgs(keys, map[string]any{}); err == nil {
			t.Fatalf("keys %v accepted", keys)
		}
	}
	// Ids are time-ordered: the outbox's unique index grows at its end.
	prev := ""
	for range 1000 {
		args, err := EventRowArgs([]string{"session.ended", "user.disconnected"}, map[string]any{"a": 1})
		if err != nil {
			t.Fatal(err)
		}
		id := args[0].(string)
		if id <= prev {
			t.Fatalf("event id %s after %s", id, prev)
		}
		prev = id
		if args[1] != "session.ended,user.disconnected" || args[2] != `{"a":1}` {
			t.Fatalf("row %v", args)
		}
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
