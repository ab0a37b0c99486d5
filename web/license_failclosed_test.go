package web_test

import (
	"testing"

	"xr/internal/webtest"
)

// TestLicenseCheckFailsClosed: when a tenant's subscriber count cannot be
// read (no table, or a value that is not a count), the licence check lets
// no request through (500, not the page); once the count reads again, the
// same request answers.
func TestLicenseCheckFailsClosed(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	s.User("", map[string]any{"username": "lic-a"})
	if r := s.Call("GET", "/users", s.Tok, nil); r.Status != 200 {
		t.Fatalf("before: %d %s", r.Status, r.Body)
	}
	s.Exec(`ALTER TABLE meta RENAME TO meta_unreadable`)
	for _, path := range []string{"/users", "/admin/profiles"} {
		r := s.Call("GET", path, s.Tok, nil)
		webtest.ExpectErr(t, r, 500, "ERR_INTERNAL", "internal_error")
		if r.Data() != nil {
			t.Fatalf("%s answered data with an unreadable count: %s", path, r.Body)
		}
	}
	// A write is refused too, and writes nothing.
	webtest.ExpectErr(t, s.Call("POST", "/users", s.Tok, map[string]any{"username": "lic-b", "password": "secret-lic-b"}), 500, "ERR_INTERNAL", "internal_error")
	s.Exec(`ALTER TABLE meta_unreadable RENAME TO meta`)
	if n := s.Scalar(`SELECT count(*) FROM users WHERE username = 'lic-b'`); n != 0 {
		t.Fatalf("a refused request wrote %d rows", n)
	}
	if r := s.Call("GET", "/users", s.Tok, nil); r.Status != 200 || len(r.List()) != 1 {
		t.Fatalf("after: %d %s", r.Status, r.Body)
	}
	// A stored count that is not a number (SQLite would read it as 0, under
	// any cap) is an error too.
	s.Exec(`UPDATE meta SET value = 'garbage' WHERE key = 'users_count'`)
	webtest.ExpectErr(t, s.Call("GET", "/users", s.Tok, nil), 500, "ERR_INTERNAL", "internal_error")
	s.Exec(`UPDATE meta SET value = '1' WHERE key = 'users_count'`)
	if r := s.Call("GET", "/users", s.Tok, nil); r.Status != 200 {
		t.Fatalf("repaired: %d %s", r.Status, r.Body)
	}
}
