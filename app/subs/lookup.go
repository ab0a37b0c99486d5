package subs

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"xr/app"
)

// Ref is what another area needs of one subscriber: who it is, whose it
// is (the owning manager, for the caller's scope) and how to reach it.
// Areas read subscribers through these functions, not through the users
// table.
type Ref struct {
	ID        int64
	Username  string
	ParentID  int64 // the owning manager
	ProfileID int64 // 0 when the subscriber has no plan
	Email     string
	FirstName string
	LastName  string
	Deleted   bool
}

const refCols = `id, username, parent_id, COALESCE(profile_id, 0), email, firstname, lastname, deleted_at IS NOT NULL`

func scanRef(row *sql.Row) (*Ref, error) {
	r := &Ref{}
	err := row.Scan(&r.ID, &r.Username, &r.ParentID, &r.ProfileID, &r.Email, &r.FirstName, &r.LastName, &r.Deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Read is the subscriber id, deleted or not, without a scope check (404
// when there is none): for the flows whose caller is the subscriber or
// the system. A staff caller's flow uses Lookup.
func Read(ctx context.Context, q app.Querier, id int64) (*Ref, error) {
	return scanRef(q.QueryRowContext(ctx, `SELECT `+refCols+` FROM users WHERE id = ?`, id))
}

// ReadName is Read by username (case-insensitive) among live subscribers.
func ReadName(ctx context.Context, q app.Querier, username string) (*Ref, error) {
	return scanRef(q.QueryRowContext(ctx, `SELECT `+refCols+` FROM users WHERE username = ? AND deleted_at IS NULL`, strings.TrimSpace(username)))
}

// Lookup is Read for a staff caller: a subscriber outside the caller's
// subtree answers exactly like a missing one (app.ErrOutOfScope; only a
// bulk call tells the two apart). It checks no permission, the calling
// function did. A deleted subscriber is returned with Deleted set: a flow
// that acts on live subscribers refuses it as it refuses a missing one.
func Lookup(ctx context.Context, q app.Querier, act *app.Actor, id int64) (*Ref, error) {
	return inScope(ctx, q, act)(Read(ctx, q, id))
}

// LookupLive is Lookup of a live subscriber: a deleted one is 404 too.
func LookupLive(ctx context.Context, q app.Querier, act *app.Actor, id int64) (*Ref, error) {
	r, err := Lookup(ctx, q, act, id)
	if err != nil {
		return nil, err
	}
	if r.Deleted {
		return nil, app.ErrNotFound()
	}
	return r, nil
}

// LookupName is LookupLive by username (case-insensitive).
func LookupName(ctx context.Context, q app.Querier, act *app.Actor, username string) (*Ref, error) {
	return inScope(ctx, q, act)(ReadName(ctx, q, username))
}

// inScope passes a read subscriber on when it is in the caller's subtree.
func inScope(ctx context.Context, q app.Querier, act *app.Actor) func(*Ref, error) (*Ref, error) {
	return func(r *Ref, err error) (*Ref, error) {
		if err != nil {
			return nil, err
		}
		if err := act.RequireScope(ctx, q, r.ParentID); err != nil {
			return nil, err
		}
		return r, nil
	}
}

// UsernameTaken tells whether a subscriber, live or deleted (a deleted one
// keeps its username), has username (case-insensitive).
func UsernameTaken(ctx context.Context, q app.Querier, username string) (bool, error) {
	return exists(ctx, q, `SELECT EXISTS(SELECT 1 FROM users WHERE username = ?)`, username)
}

// StaticIPTaken tells whether a live subscriber has the static address ip.
func StaticIPTaken(ctx context.Context, q app.Querier, ip string) (bool, error) {
	return exists(ctx, q, `SELECT EXISTS(SELECT 1 FROM users WHERE static_ip = ? AND deleted_at IS NULL)`, ip)
}

// EmailTaken tells whether a live subscriber has the address email
// (case-insensitive).
func EmailTaken(ctx context.Context, q app.Querier, email string) (bool, error) {
	return exists(ctx, q, `SELECT EXISTS(SELECT 1 FROM users WHERE lower(email) = lower(?) AND deleted_at IS NULL)`, email)
}

func exists(ctx context.Context, q app.Querier, query string, arg any) (bool, error) {
	var yes bool
	err := q.QueryRowContext(ctx, query, arg).Scan(&yes)
	return yes, err
}
