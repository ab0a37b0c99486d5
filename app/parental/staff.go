package parental

import (
	"context"
	"database/sql"

	"xr/app"
	"xr/app/subs"
)

// What staff see and do: a subscriber's parental state and guest accesses
// (GET /users/{id}/parental), clearing a forgotten PIN (DELETE
// /users/{id}/parental/pin), and the plans' guest limits.

// UserParental is GET /users/{id}/parental.
type UserParental struct {
	State
	Guests []Guest `json:"guests"`
}

// userInScope answers the 404 of a subscriber the caller may not see.
func userInScope(ctx context.Context, q app.Querier, act *app.Actor, id int64) error {
	_, err := subs.LookupLive(ctx, q, act, id)
	return err
}

// GetUserParental is the staff view of a subscriber's parental control
// and guest accesses.
func GetUserParental(ctx context.Context, act *app.Actor, id int64) (*UserParental, error) {
	if err := act.Require(subs.PermUsersIndex); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *UserParental
	err := t.Read(ctx, func(tx *sql.Tx) error {
		if err := userInScope(ctx, tx, act, id); err != nil {
			return err
		}
		r, err := readRow(ctx, tx, id)
		if err != nil {
			return err
		}
		now := t.Now()
		out = &UserParental{State: *r.state(ctx, tx, id, now)}
		out.Guests, err = listGuests(ctx, t, tx, id, now)
		return err
	})
	return out, err
}

// ClearPIN removes a subscriber's PIN (and its failure count) so it can
// set a new one without the old; 409 no_pin when none is set.
func ClearPIN(ctx context.Context, act *app.Actor, id int64) (*UserParental, error) {
	if err := act.Require(subs.PermUsersUpdate); err != nil {
		return nil, err
	}
	t := act.Tenant
	now := t.Now()
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := userInScope(ctx, tx, act, id); err != nil {
			return err
		}
		r, err := readRow(ctx, tx, id)
		if err != nil {
			return err
		}
		if r.pinHash == "" {
			return app.ErrConflict("no_pin")
		}
		_, err = tx.ExecContext(ctx, `UPDATE parental_controls SET pin_hash = '', pin_failures = 0, updated_at = ? WHERE user_id = ?`,
			app.FormatTime(now), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return GetUserParental(ctx, act, id)
}

// GetGuestLimits is GET /admin/profiles/{id}/guest-limits.
func GetGuestLimits(ctx context.Context, act *app.Actor, id int64) (*GuestLimits, error) {
	if err := act.Require(subs.PermProfilesIndex); err != nil {
		return nil, err
	}
	if _, err := subs.LookupProfile(ctx, act, id); err != nil {
		return nil, err
	}
	l, err := readLimits(ctx, act.Tenant.DB.R, id)
	return &l, err
}

// PutGuestLimits is PUT /admin/profiles/{id}/guest-limits.
func PutGuestLimits(ctx context.Context, act *app.Actor, id int64, in GuestLimitsInput) (*GuestLimits, error) {
	if err := act.Require(subs.PermProfilesManage); err != nil {
		return nil, err
	}
	if _, err := subs.LookupProfile(ctx, act, id); err != nil {
		return nil, err
	}
	if in.MaxActive == nil {
		return nil, app.ErrValidation("required", "max_active")
	}
	if in.MaxMinutes == nil {
		return nil, app.ErrValidation("required", "max_minutes")
	}
	if *in.MaxActive < 0 || *in.MaxActive > maxGuestActive {
		return nil, app.ErrValidation("out_of_range", "max_active").With("max", maxGuestActive)
	}
	if *in.MaxMinutes < 0 || *in.MaxMinutes > maxGuestMinutes {
		return nil, app.ErrValidation("out_of_range", "max_minutes").With("max", maxGuestMinutes)
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO guest_limits(profile_id, max_active, max_minutes, updated_at) VALUES (?,?,?,?)
			ON CONFLICT(profile_id) DO UPDATE SET max_active = excluded.max_active, max_minutes = excluded.max_minutes, updated_at = excluded.updated_at`,
			id, *in.MaxActive, *in.MaxMinutes, t.NowText())
		return err
	})
	if err != nil {
		return nil, err
	}
	return &GuestLimits{ProfileID: id, MaxActive: *in.MaxActive, MaxMinutes: *in.MaxMinutes}, nil
}
