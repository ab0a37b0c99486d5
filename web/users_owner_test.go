package web_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"xr/app"
	"xr/internal/webtest"
)

// One owner for users: the live-sessions MAC lock and the portal's own
// account and password edits go through the subs area, which validates,
// writes and emits user.updated in the caller's transaction.

// uoUpdated returns the data of the user.updated events of user id, oldest
// first.
func uoUpdated(t *testing.T, ten *app.Tenant, id int64) []map[string]any {
	t.Helper()
	rows, err := ten.DB.R.Query(`SELECT data FROM events WHERE type = 'user.updated' ORDER BY created_at, rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []map[string]any
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(raw), &d); err != nil {
			t.Fatal(err)
		}
		if ptNum(d["id"]) == float64(id) {
			out = append(out, d)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func uoChanged(d map[string]any) []string {
	var out []string
	for _, c := range d["changed"].([]any) {
		out = append(out, c.(string))
	}
	slices.Sort(out)
	return out
}

func TestUsersOwnerSessionLockMACEmitsUserUpdated(t *testing.T) {
	t.Parallel()
	k := webtest.NewSessionsKit(t)
	ten := k.Acquire("acme")
	k.User("dora", 1, "")
	var uid int64
	if err := ten.DB.R.QueryRow(`SELECT id FROM users WHERE username = 'dora'`).Scan(&uid); err != nil {
		t.Fatal(err)
	}
	// A MAC set by staff (stored upper case by PATCH /users) stays, and the
	// same MAC in another case is not added twice.
	k.Exec(`UPDATE users SET mac_locked_addrs = '["AA:BB:CC:DD:EE:01"]' WHERE id = ?`, uid)
	k.Start("dora", "d1", "100.64.0.30", "AA-BB-CC-00-11-33")
	k.Start("dora", "d2", "100.64.0.31", "aa:bb:cc:dd:ee:01")
	path := func(sid string) string { return "/api/v1/admin/sessions/" + k.SessionID(sid) + "/lock-mac" }

	r := k.Do("POST", "acme", path("d1"), k.OwnerToken, nil)
	if r.Status != 200 || r.Data()["mac"] != "aa:bb:cc:00:11:33" || fmt.Sprint(r.Data()["locked_macs"]) != "[AA:BB:CC:DD:EE:01 aa:bb:cc:00:11:33]" {
		t.Fatalf("lock-mac: %d %s", r.Status, r.Body)
	}
	var enabled int
	var macs string
	if err := ten.DB.R.QueryRow(`SELECT mac_lock_enabled, mac_locked_addrs FROM users WHERE id = ?`, uid).Scan(&enabled, &macs); err != nil {
		t.Fatal(err)
	}
	if enabled != 1 || macs != `["AA:BB:CC:DD:EE:01","aa:bb:cc:00:11:33"]` {
		t.Fatalf("stored: %d %s", enabled, macs)
	}
	ev := uoUpdated(t, ten, uid)
	if len(ev) != 1 || ev[0]["username"] != "dora" || ev[0]["via"] != "session_lock_mac" ||
		fmt.Sprint(uoChanged(ev[0])) != "[mac_lock_enabled mac_locked_addrs]" {
		t.Fatalf("events: %v", ev)
	}

	// The second session's MAC is already in the list (other case).
	r = k.Do("POST", "acme", path("d2"), k.OwnerToken, nil)
	if r.Status != 200 || len(r.Data()["locked_macs"].([]any)) != 2 {
		t.Fatalf("lock-mac again: %d %s", r.Status, r.Body)
	}
	if err := ten.DB.R.QueryRow(`SELECT mac_locked_addrs FROM users WHERE id = ?`, uid).Scan(&macs); err != nil {
		t.Fatal(err)
	}
	if macs != `["AA:BB:CC:DD:EE:01","aa:bb:cc:00:11:33"]` || len(uoUpdated(t, ten, uid)) != 2 {
		t.Fatalf("stored after the second lock: %s", macs)
	}

	// A deleted subscriber is refused as PATCH /users refuses it.
	k.Exec(`UPDATE users SET deleted_at = ? WHERE id = ?`, app.StampNow(), uid)
	webtest.ExpectErr(t, k.Do("POST", "acme", path("d1"), k.OwnerToken, nil), 409, app.CodeConflict, "user_deleted")
	if n := len(uoUpdated(t, ten, uid)); n != 2 {
		t.Fatalf("events after the refused lock: %d", n)
	}
}

func TestUsersOwnerSessionLockMACCorruptListIs500(t *testing.T) {
	t.Parallel()
	k := webtest.NewSessionsKit(t)
	ten := k.Acquire("acme")
	k.User("eve", 1, "")
	var uid int64
	if err := ten.DB.R.QueryRow(`SELECT id FROM users WHERE username = 'eve'`).Scan(&uid); err != nil {
		t.Fatal(err)
	}
	k.Start("eve", "e1", "100.64.0.40", "aa-bb-cc-00-11-44")
	k.Exec(`UPDATE users SET mac_locked_addrs = '["aa:bb' WHERE id = ?`, uid)

	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/sessions/"+k.SessionID("e1")+"/lock-mac", k.OwnerToken, nil), 500, app.CodeInternal, "internal_error")
	var enabled int
	var macs string
	if err := ten.DB.R.QueryRow(`SELECT mac_lock_enabled, mac_locked_addrs FROM users WHERE id = ?`, uid).Scan(&enabled, &macs); err != nil {
		t.Fatal(err)
	}
	if enabled != 0 || macs != `["aa:bb` {
		t.Fatalf("corrupt list overwritten: %d %s", enabled, macs)
	}
	if ev := uoUpdated(t, ten, uid); len(ev) != 0 {
		t.Fatalf("event without a change: %v", ev)
	}
}

func TestUsersOwnerPortalAccountAndPasswordEmitUserUpdated(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	id := s.User("", map[string]any{"username": "fay", "password": "radius-f", "email": "f@x.example"})
	tok := webtest.PortalLogin(t, s, "fay", "radius-f")
	base := len(uoUpdated(t, s.Ten, id))

	r := s.Call("PATCH", "/portal/account", tok, map[string]any{"phone": " +200 ", "firstname": "Fay", "email": ""})
	if r.Status != 200 || r.Data()["phone"] != "+200" || r.Data()["firstname"] != "Fay" || r.Data()["email"] != "" {
		t.Fatalf("account: %d %s", r.Status, r.Body)
	}
	var phone, first, email string
	if err := s.Ten.DB.R.QueryRow(`SELECT phone, firstname, email FROM users WHERE id = ?`, id).Scan(&phone, &first, &email); err != nil {
		t.Fatal(err)
	}
	if phone != "+200" || first != "Fay" || email != "" {
		t.Fatalf("stored: %q %q %q", phone, first, email)
	}
	ev := uoUpdated(t, s.Ten, id)
	if len(ev) != base+1 || ev[base]["username"] != "fay" || ev[base]["via"] != "portal" ||
		fmt.Sprint(uoChanged(ev[base])) != "[email firstname phone]" {
		t.Fatalf("events: %v", ev)
	}

	// Refused input changes nothing and emits nothing.
	webtest.ExpectErr(t, s.Call("PATCH", "/portal/account", tok, map[string]any{"email": "nope", "phone": "+300"}), 400, app.CodeValidation, "invalid_email")
	webtest.ExpectErr(t, s.Call("PATCH", "/portal/account", tok, map[string]any{"lastname": strings.Repeat("x", 129)}), 400, app.CodeValidation, "too_long")
	if s.Scalar(`SELECT COUNT(*) FROM users WHERE id = ? AND phone = '+200'`, id) != 1 || len(uoUpdated(t, s.Ten, id)) != base+1 {
		t.Fatal("a refused edit reached the record")
	}
	// No field set: no write, no event.
	if r := s.Call("PATCH", "/portal/account", tok, map[string]any{}); r.Status != 200 || len(uoUpdated(t, s.Ten, id)) != base+1 {
		t.Fatalf("empty patch: %d %s", r.Status, r.Body)
	}

	// The portal password: user.updated naming portal_password.
	webtest.ExpectErr(t, s.Call("POST", "/portal/password", tok, map[string]any{"current_password": "radius-f", "new_password": "short"}), 400, app.CodeValidation, "password_too_short")
	if n := len(uoUpdated(t, s.Ten, id)); n != base+1 {
		t.Fatalf("events after a refused password: %d", n)
	}
	if r := s.Call("POST", "/portal/password", tok, map[string]any{"current_password": "radius-f", "new_password": "Fay-pass-123"}); r.Status != 200 {
		t.Fatalf("password: %d %s", r.Status, r.Body)
	}
	ev = uoUpdated(t, s.Ten, id)
	if len(ev) != base+2 || ev[base+1]["via"] != "portal" || fmt.Sprint(uoChanged(ev[base+1])) != "[portal_password]" {
		t.Fatalf("password events: %v", ev)
	}
	if s.Scalar(`SELECT COUNT(*) FROM users WHERE id = ? AND portal_password_hash <> ''`, id) != 1 {
		t.Fatal("portal password not stored")
	}
	webtest.PortalLogin(t, s, "fay", "Fay-pass-123")
}
