package web_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"layeh.com/radius"
	"layeh.com/radius/rfc2866"

	"xr/app"
	"xr/internal/webtest"
)

// TestRadiusSeesAPIWritesAtOnce: every authorization fact an API call
// changes is the decision of the very next Access-Request, with no wait.
func TestRadiusSeesAPIWritesAtOnce(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	for i := range 5 {
		name := fmt.Sprintf("fresh%d", i)
		id := k.CreateUser(name)
		if c := k.Auth(name, "pw-"+name); c != radius.CodeAccessAccept {
			t.Fatalf("%s right after create: %v", name, c)
		}
		if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/users/%d/disable", id), k.Tok, nil); r.Status != 200 {
			t.Fatalf("disable: %d %s", r.Status, r.Body)
		}
		if c := k.Auth(name, "pw-"+name); c != radius.CodeAccessReject {
			t.Fatalf("%s right after disable: %v", name, c)
		}
		if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/users/%d/enable", id), k.Tok, nil); r.Status != 200 {
			t.Fatalf("enable: %d %s", r.Status, r.Body)
		}
		if c := k.Auth(name, "pw-"+name); c != radius.CodeAccessAccept {
			t.Fatalf("%s right after enable: %v", name, c)
		}
		if r := k.Do("PATCH", "acme", fmt.Sprintf("/api/v1/users/%d", id), k.Tok, map[string]any{"password": "changed-" + name}); r.Status != 200 {
			t.Fatalf("password: %d %s", r.Status, r.Body)
		}
		if c := k.Auth(name, "pw-"+name); c != radius.CodeAccessReject {
			t.Fatalf("%s old password after change: %v", name, c)
		}
		if c := k.Auth(name, "changed-"+name); c != radius.CodeAccessAccept {
			t.Fatalf("%s new password after change: %v", name, c)
		}
		if r := k.Do("PATCH", "acme", fmt.Sprintf("/api/v1/users/%d", id), k.Tok, map[string]any{"expiration": "2020-01-01"}); r.Status != 200 {
			t.Fatalf("expiry: %d %s", r.Status, r.Body)
		}
		if c := k.Auth(name, "changed-"+name); c != radius.CodeAccessReject {
			t.Fatalf("%s right after expiry moved to the past: %v", name, c)
		}
		if r := k.Do("DELETE", "acme", fmt.Sprintf("/api/v1/users/%d", id), k.Tok, nil); r.Status != 200 && r.Status != 204 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		if c := k.Auth(name, "changed-"+name); c != radius.CodeAccessReject {
			t.Fatalf("%s right after delete: %v", name, c)
		}
	}
}

// TestAccountingRightAfterCreateCharges: a Start sent right after the
// create answered opens a subscriber session, and its Stop is charged.
func TestAccountingRightAfterCreateCharges(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	id := k.CreateUser("quick")
	k.Acct(rfc2866.AcctStatusType_Value_Start, "quick", "s-quick", 0, 0)
	k.Acct(rfc2866.AcctStatusType_Value_Stop, "quick", "s-quick", 10_000_000, 60)
	if got := k.Scalar(`SELECT user_id FROM radius_sessions WHERE acct_session_id = 's-quick'`); got.Int64 != id {
		t.Fatalf("session user_id %v, want %d", got, id)
	}
	if got := k.Scalar(`SELECT used_bytes FROM users WHERE id = ?`, id); got.Int64 != 10_000_000 {
		t.Fatalf("used_bytes %v after a Stop of 10 MB", got)
	}
}

// TestAccountingResolvesWritesOfAnotherProcess: a subscriber written by
// another process (the CLI; here a write that runs no commit hook) is found
// in the database before a session is filed as unknown.
func TestAccountingResolvesWritesOfAnotherProcess(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	ten := k.Acquire("acme")
	var id int64
	err := ten.WriteNoHooks(context.Background(), func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO users(username, password_sealed, parent_id, enabled, expiration, profile_id, lookup_token, created_at, updated_at)
			VALUES ('cliuser', x'00', (SELECT id FROM managers ORDER BY id LIMIT 1), 1, '2030-01-01 00:00:00', ?, ?, ?, ?)`,
			k.Plan, app.RandomToken(10), app.StampNow(), app.StampNow())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	k.Acct(rfc2866.AcctStatusType_Value_Start, "cliuser", "s-cli", 0, 0)
	k.Acct(rfc2866.AcctStatusType_Value_Stop, "cliuser", "s-cli", 4000, 10)
	if got := k.Scalar(`SELECT user_id FROM radius_sessions WHERE acct_session_id = 's-cli'`); got.Int64 != id {
		t.Fatalf("session user_id %v, want %d", got, id)
	}
	if got := k.Scalar(`SELECT used_bytes FROM users WHERE id = ?`, id); got.Int64 != 4000 {
		t.Fatalf("used_bytes %v", got)
	}
}

// TestUnknownSessionLinkedWhenSubscriberAppears: a session filed as unknown
// is linked to its subscriber on the next Interim once the subscriber
// exists, and everything it used is charged once.
func TestUnknownSessionLinkedWhenSubscriberAppears(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	k.Acct(rfc2866.AcctStatusType_Value_Start, "latecomer", "s-late", 0, 0)
	k.Acct(rfc2866.AcctStatusType_Value_InterimUpdate, "latecomer", "s-late", 1000, 30)
	if got := k.Scalar(`SELECT user_id FROM radius_sessions WHERE acct_session_id = 's-late'`); got.Valid {
		t.Fatalf("linked before the subscriber exists: %v", got)
	}
	if got := k.Scalar(`SELECT COUNT(*) FROM radius_sessions WHERE acct_session_id = 's-late' AND kind = 'unknown'`); got.Int64 != 1 {
		t.Fatal("not filed as unknown")
	}
	id := k.CreateUser("latecomer")
	k.Acct(rfc2866.AcctStatusType_Value_InterimUpdate, "latecomer", "s-late", 3000, 60)
	if got := k.Scalar(`SELECT user_id FROM radius_sessions WHERE acct_session_id = 's-late' AND kind = 'subscriber'`); got.Int64 != id {
		t.Fatalf("not linked: %v", got)
	}
	if got := k.Scalar(`SELECT used_bytes FROM users WHERE id = ?`, id); got.Int64 != 3000 {
		t.Fatalf("used_bytes %v after linking, want 3000 (all of the session)", got)
	}
	// The same Interim again and the Stop charge only what is new.
	k.Acct(rfc2866.AcctStatusType_Value_InterimUpdate, "latecomer", "s-late", 3000, 60)
	k.Acct(rfc2866.AcctStatusType_Value_Stop, "latecomer", "s-late", 5000, 90)
	if got := k.Scalar(`SELECT used_bytes FROM users WHERE id = ?`, id); got.Int64 != 5000 {
		t.Fatalf("used_bytes %v after Stop, want 5000", got)
	}
	if got := k.Scalar(`SELECT used_seconds FROM users WHERE id = ?`, id); got.Int64 != 90 {
		t.Fatalf("used_seconds %v after Stop, want 90", got)
	}
}
