package webtest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"xr/app"
	"xr/app/identity"
	"xr/app/subs"
)

// Background is the context of fixture calls.
var Background = context.Background()

// Acme is a kit with tenant acme, its owner's token and direct access to the
// tenant for setting up and checking rows.
type Acme struct {
	*Kit
	Tok     string
	Ten     *app.Tenant
	OwnerID int64
}

// NewAcme is a kit with tenant acme and its owner signed in.
func NewAcme(t testing.TB) *Acme {
	t.Helper()
	k := New(t)
	s := &Acme{Kit: k, Tok: k.Owner("acme"), Ten: k.Acquire("acme")}
	s.OwnerID = s.Scalar(`SELECT id FROM managers WHERE parent_id IS NULL`)
	return s
}

// Call sends a request under /api/v1 on acme's host.
func (s *Acme) Call(method, path, token string, body any) Resp {
	s.T.Helper()
	return s.Do(method, "acme", "/api/v1"+path, token, body)
}

// Scalar reads one integer from acme's database.
func (s *Acme) Scalar(q string, args ...any) int64 {
	s.T.Helper()
	var n int64
	if err := s.Ten.DB.R.QueryRow(q, args...).Scan(&n); err != nil {
		s.T.Fatalf("%s: %v", q, err)
	}
	return n
}

// Exec runs a statement on acme's database (setting up rows a test needs).
func (s *Acme) Exec(q string, args ...any) {
	s.T.Helper()
	if err := s.Ten.Write(Background, func(tx *sql.Tx) error { _, err := tx.Exec(q, args...); return err }); err != nil {
		s.T.Fatalf("%s: %v", q, err)
	}
}

var suRoleSeq int

// Manager creates a manager under parent with a role of exactly codes and
// returns its id and a session token.
func (s *Acme) Manager(parent int64, username string, codes ...string) (int64, string) {
	s.T.Helper()
	sys := s.System("acme")
	suRoleSeq++
	if codes == nil {
		codes = []string{}
	}
	r, err := identity.CreateRole(Background, sys, identity.RoleInput{Name: app.Opt[string]{Set: true, V: fmt.Sprintf("su-role-%d", suRoleSeq)},
		Permissions: app.Opt[[]string]{Set: true, V: codes}})
	if err != nil {
		s.T.Fatal(err)
	}
	m, err := identity.CreateManager(Background, sys, identity.ManagerInput{Username: app.Opt[string]{Set: true, V: username},
		Password: app.Opt[string]{Set: true, V: Password}, ParentManagerID: app.Opt[int64]{Set: true, V: parent},
		RoleIDs: app.Opt[[]int64]{Set: true, V: []int64{r.ID}}})
	if err != nil {
		s.T.Fatal(err)
	}
	return m.ID, s.Login("acme", username, Password)
}

// ResellerCodes is what a reseller in these tests holds.
var ResellerCodes = codes(subs.PermUsersIndex, subs.PermUsersCreate, subs.PermUsersUpdate, subs.PermUsersDeposit, subs.PermUsersWithdrawal,
	subs.PermUsersActivate, subs.PermUsersExtend, subs.PermUsersEnableDisable, subs.PermUsersDelete, subs.PermUsersRefund, subs.PermUsersAddon,
	subs.PermProfilesIndex, subs.PermUsersExport, subs.PermUsersChangeProfile)

// codes are the permissions' codes, as a request carries them.
func codes(perms ...app.Perm) []string {
	out := make([]string, len(perms))
	for i, p := range perms {
		out[i] = string(p)
	}
	return out
}

// User creates a subscriber as token (owner when "") and returns its id.
func (s *Acme) User(token string, body map[string]any) int64 {
	s.T.Helper()
	if token == "" {
		token = s.Tok
	}
	if body["password"] == nil {
		body["password"] = "secret-" + fmt.Sprint(body["username"])
	}
	r := s.Call("POST", "/users", token, body)
	if r.Status != 201 {
		s.T.Fatalf("create %v: %d %s", body["username"], r.Status, r.Body)
	}
	return int64(r.Data()["id"].(float64))
}

// Plan creates a plan through the API and returns its id.
func (s *Acme) Plan(body map[string]any) int64 {
	s.T.Helper()
	r := s.Call("POST", "/admin/profiles", s.Tok, body)
	if r.Status != 201 {
		s.T.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	return int64(r.Data()["id"].(float64))
}
