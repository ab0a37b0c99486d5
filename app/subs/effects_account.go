package subs

// Subscriber changes other areas make inside THEIR transaction, following
// effects.go: the subs area owns the users table, so the live-sessions
// route (aaa: lock a session's MAC) and the self-service portal (contact
// fields, portal password) call these instead of writing users themselves.
// They validate as UpdateUser does, emit the event UpdateUser emits for the
// same change (user.updated, with "via" naming the route), do not check the
// caller's authority or scope (the caller has) and do not call
// t.EventsEmitted (the caller does after its commit).
//
// The usage counters are the exception: RADIUS accounting (app/aaa,
// accounting.go and usage.go) charges used_bytes/used_seconds and the
// hour-in-progress columns on its hot path; see the comment there.

import (
	"context"
	"database/sql"
	"net"
	"strings"

	"xr/app"
)

// liveUser reads a subscriber for a change: missing is 404, deleted is 409
// user_deleted (as UpdateUser answers).
func liveUser(ctx context.Context, tx *sql.Tx, userID int64) (*urow, error) {
	u, err := readURow(ctx, tx, userID)
	if err != nil {
		return nil, err
	}
	if err := u.live(); err != nil {
		return nil, err
	}
	return u, nil
}

// LockMAC adds mac to the subscriber's locked MAC list in tx (no duplicate,
// compared case-insensitively) and turns the MAC lock on; it returns the
// stored list and emits user.updated. The address is stored in the form
// net.HardwareAddr prints (aa:bb:cc:dd:ee:ff) — the RADIUS check compares
// normalised addresses, so the case is immaterial. A MAC that is not a
// 6-byte address is 400 invalid_mac, a list over the limit UpdateUser keeps
// (32) is 400 too_many_macs, and a corrupt stored list is an error (a 500),
// never overwritten.
func LockMAC(ctx context.Context, tx *sql.Tx, userID int64, mac, via string) ([]string, error) {
	hw, err := net.ParseMAC(strings.TrimSpace(mac))
	if err != nil || len(hw) != 6 {
		return nil, app.ErrValidation("invalid_mac", "mac_locked_addrs")
	}
	mac = hw.String()
	u, err := liveUser(ctx, tx, userID)
	if err != nil {
		return nil, err
	}
	var raw string
	if err := tx.QueryRowContext(ctx, `SELECT mac_locked_addrs FROM users WHERE id = ?`, userID).Scan(&raw); err != nil {
		return nil, err
	}
	list, err := decodeMACs(raw)
	if err != nil {
		return nil, err
	}
	have := false
	for _, m := range list {
		if h, err := net.ParseMAC(strings.TrimSpace(m)); (err == nil && h.String() == mac) || strings.EqualFold(m, mac) {
			have = true
			break
		}
	}
	if !have {
		list = append(list, mac)
	}
	if len(list) > 32 {
		return nil, app.ErrValidation("too_many_macs", "mac_locked_addrs")
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET mac_locked_addrs = ?, mac_lock_enabled = 1, updated_at = ? WHERE id = ?`,
		jsonText(list), nowText(), userID); err != nil {
		return nil, err
	}
	err = app.Emit(ctx, tx, "user.updated", map[string]any{"id": userID, "username": u.Username,
		"changed": []string{"mac_lock_enabled", "mac_locked_addrs"}, "via": via})
	return list, err
}

// Contact is the contact fields of a subscriber another area may change
// (the portal's PATCH /portal/account); unset fields are left alone, null
// or "" clears one.
type Contact struct {
	Email     app.Opt[string]
	Phone     app.Opt[string]
	Firstname app.Opt[string]
	Lastname  app.Opt[string]
}

// UpdateContact writes the set fields of c in tx, validated as UpdateUser
// validates them (400 invalid_email, too_long), and emits user.updated
// naming the changed fields. Nothing set is a no-op without an event.
func UpdateContact(ctx context.Context, tx *sql.Tx, userID int64, c Contact, via string) error {
	var p app.Patch
	var changed []string
	for _, f := range []struct {
		o   app.Opt[string]
		col string
	}{{c.Email, "email"}, {c.Phone, "phone"}, {c.Firstname, "firstname"}, {c.Lastname, "lastname"}} {
		if !f.o.Set {
			continue
		}
		v := f.o.V
		if f.col == "email" {
			v = strings.TrimSpace(v)
			if err := checkEmail(v); err != nil {
				return err
			}
		} else if err := checkText(f.col, v); err != nil {
			return err
		}
		p.Set(f.col, v)
		changed = append(changed, f.col)
	}
	if p.Empty() {
		return nil
	}
	u, err := liveUser(ctx, tx, userID)
	if err != nil {
		return err
	}
	if _, err := p.Exec(ctx, tx, "users", userID, nowText()); err != nil {
		return err
	}
	return app.Emit(ctx, tx, "user.updated", map[string]any{"id": userID, "username": u.Username, "changed": changed, "via": via})
}

// PortalPassword is a portal password checked and hashed by
// NewPortalPassword — outside the writing transaction, the hash being slow.
type PortalPassword struct{ hash string }

// NewPortalPassword checks pw as UpdateUser checks portal_password (field
// names the input in a 400) and hashes it.
func NewPortalPassword(pw, field string) (PortalPassword, error) {
	if err := app.CheckPasswordStrength(pw, field); err != nil {
		return PortalPassword{}, err
	}
	return PortalPassword{hash: app.HashPassword(pw)}, nil
}

// SetPortalPassword stores pw as the subscriber's portal password in tx
// (the RADIUS password is not touched) and emits user.updated.
func SetPortalPassword(ctx context.Context, tx *sql.Tx, userID int64, pw PortalPassword, via string) error {
	if pw.hash == "" {
		return app.ErrValidation("password_required", "portal_password")
	}
	u, err := liveUser(ctx, tx, userID)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET portal_password_hash = ?, updated_at = ? WHERE id = ?`, pw.hash, nowText(), userID); err != nil {
		return err
	}
	return app.Emit(ctx, tx, "user.updated", map[string]any{"id": userID, "username": u.Username, "changed": []string{"portal_password"}, "via": via})
}
