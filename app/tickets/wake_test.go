package tickets

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"

	"xr/app"
	"xr/internal/xrtest"
)

// The snooze job reopens a ticket whose time has come, and leaves one
// snoozed again later alone.
func TestWakeJob(t *testing.T) {
	t.Parallel()
	a := xrtest.TenantApp(t, "acme", Module)
	ten := xrtest.Acquire(t, a, "acme")
	act := xrtest.System(t, ten)
	ctx := context.Background()
	d, err := Create(ctx, act, CreateInput{Subject: "Later", Body: "Call me next week", RequesterEmail: "x@isp.example"})
	if err != nil {
		t.Fatal(err)
	}
	run := func() {
		t.Helper()
		payload, _ := json.Marshal(wakePayload{TicketID: d.ID})
		if _, err := wake(ctx, &app.JobContext{Tenant: ten, Job: &app.Job{Payload: payload}}); err != nil {
			t.Fatal(err)
		}
	}
	set := func(until string) {
		t.Helper()
		if err := ten.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.Exec(`UPDATE tickets SET state = 'snoozed', snoozed_until = ? WHERE id = ?`, until, d.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	set("2999-01-01 00:00:00")
	run()
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM tickets WHERE state = 'snoozed'`); n != 1 {
		t.Fatal("woke before its time")
	}
	set("2001-01-01 00:00:00")
	run()
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM tickets WHERE state = 'open' AND snoozed_until IS NULL`); n != 1 {
		t.Fatal("not woken")
	}
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM events WHERE type = 'ticket.state_changed'`); n != 1 {
		t.Fatalf("%d state events", n)
	}
}
