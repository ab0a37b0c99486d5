package webtest

import (
	"time"

	"github.com/pquerna/otp/totp"

	"xr/app"
	"xr/app/identity"
)

// OwnerID is the root manager's id.
func OwnerID(k *Kit, slug string) int64 {
	k.T.Helper()
	return Scalar(k, slug, `SELECT id FROM managers WHERE parent_id IS NULL`)
}

// RoleID is the id of a role by name.
func RoleID(k *Kit, slug, name string) int64 {
	k.T.Helper()
	return Scalar(k, slug, `SELECT id FROM roles WHERE name = ?`, name)
}

// CreateRole creates a hand-made role with codes (as the system actor).
func CreateRole(k *Kit, slug, name string, codes ...string) int64 {
	k.T.Helper()
	if codes == nil {
		codes = []string{}
	}
	r, err := identity.CreateRole(Background, k.System(slug), identity.RoleInput{Name: app.Opt[string]{Set: true, V: name},
		Permissions: app.Opt[[]string]{Set: true, V: codes}})
	if err != nil {
		k.T.Fatalf("create role %s: %v", name, err)
	}
	return r.ID
}

// CreateManager creates a manager (password Password) under parent (0 =
// the root) holding the named roles, as the system actor.
func CreateManager(k *Kit, slug string, parent int64, username string, roles ...string) int64 {
	k.T.Helper()
	sys := k.System(slug)
	in := identity.ManagerInput{Username: app.Opt[string]{Set: true, V: username}, Email: app.Opt[string]{Set: true, V: username + "@mail.test"},
		Password: app.Opt[string]{Set: true, V: Password}}
	if parent != 0 {
		in.ParentManagerID = app.Opt[int64]{Set: true, V: parent}
	}
	m, err := identity.CreateManager(Background, sys, in)
	if err != nil {
		k.T.Fatalf("create manager %s: %v", username, err)
	}
	if len(roles) > 0 {
		var ids []int64
		for _, r := range roles {
			ids = append(ids, RoleID(k, slug, r))
		}
		if _, err := identity.SetManagerRoles(Background, sys, m.ID, ids); err != nil {
			k.T.Fatalf("roles of %s: %v", username, err)
		}
	}
	return m.ID
}

// Enable2FA sets up and enables two-factor for the session's manager and
// returns the secret and the recovery codes. It enables with the current
// step's code, so the next step's code is free for a login.
func Enable2FA(k *Kit, slug, tok string) (string, []string) {
	k.T.Helper()
	r := k.Do("POST", slug, "/api/v1/auth/account/2fa/setup", tok, nil)
	if r.Status != 200 {
		k.T.Fatalf("2fa setup: %d %s", r.Status, r.Body)
	}
	secret := r.Data()["secret"].(string)
	code, _ := totp.GenerateCode(secret, time.Now())
	r = k.Do("POST", slug, "/api/v1/auth/account/2fa/enable", tok, map[string]any{"code": code})
	if r.Status != 200 {
		k.T.Fatalf("2fa enable: %d %s", r.Status, r.Body)
	}
	return secret, Strings(r.Data()["recovery_codes"])
}
