package subs

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"xr/app"
)

// A corrupt JSON column of a subscriber is an error, not an empty value.
func TestCorruptUserJSONIsAnError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.user("json1", e.owner.ManagerID, nil)
	if _, err := GetUser(e.ctx, e.owner, id); err != nil {
		t.Fatal(err)
	}

	e.exec(`UPDATE users SET mac_locked_addrs = '["aa:bb' WHERE id = ?`, id)
	if _, err := GetUser(e.ctx, e.owner, id); err == nil || app.AsError(err) != nil || !strings.Contains(err.Error(), "mac_locked_addrs") {
		t.Fatalf("corrupt mac_locked_addrs: want a server fault, got %v", err)
	}
	lq, err := app.ParseList(url.Values{}, userListSpec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ListUsers(e.ctx, e.owner, lq); err == nil {
		t.Fatal("list over a corrupt mac_locked_addrs: no error")
	}
	e.exec(`UPDATE users SET mac_locked_addrs = '[]' WHERE id = ?`, id)

	e.exec(`UPDATE users SET custom_fields = '{"a":' WHERE id = ?`, id)
	if _, err := GetUser(e.ctx, e.owner, id); err == nil || app.AsError(err) != nil || !strings.Contains(err.Error(), "custom_fields") {
		t.Fatalf("corrupt custom_fields: want a server fault, got %v", err)
	}
	_, err = UpdateUser(e.ctx, e.owner, id, UserPatch{CustomFields: app.Opt[map[string]json.RawMessage]{Set: true, V: map[string]json.RawMessage{}}})
	if err == nil || app.AsError(err) != nil || !strings.Contains(err.Error(), "custom_fields") {
		t.Fatalf("patching over corrupt custom_fields: want a server fault, got %v", err)
	}
}
