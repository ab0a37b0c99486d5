package parental

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"math/big"
	"strings"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/portal"
	"xr/app/subs"
)

// Guest access: a subscriber gives a visitor a time-limited login of its
// own (a voucher-like RADIUS username and password), valid from its
// creation for the minutes asked. What a subscriber may give is its plan's
// guest limits (table guest_limits, keyed by profile, set by staff with
// PUT /admin/profiles/{id}/guest-limits): how many accesses may be active
// at once (max_active) and the longest one (max_minutes). A plan without
// limits (or max_active 0) offers none. RADIUS accepts a guest login while
// it is valid and its owner's account is enabled and not expired
// (parental control applies to the owner's own login, not to guests), at
// the owner's plan rate, with a
// Session-Timeout at its end; after its end it answers Access-Reject
// (guest_expired).

// GuestLimits are a plan's guest limits.
type GuestLimits struct {
	ProfileID  int64 `json:"profile_id"`
	MaxActive  int   `json:"max_active"`  // 0 = no guest access
	MaxMinutes int   `json:"max_minutes"` // longest access
}

// GuestLimitsInput is PUT /admin/profiles/{id}/guest-limits.
type GuestLimitsInput struct {
	MaxActive  *int `json:"max_active"`
	MaxMinutes *int `json:"max_minutes"`
}

// Guest is one guest access.
type Guest struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Username  string   `json:"username"`
	Password  string   `json:"password"`
	StartsAt  app.Time `json:"starts_at"`
	EndsAt    app.Time `json:"ends_at"`
	Active    bool     `json:"active"`
	CreatedAt app.Time `json:"created_at"`
}

// GuestContext is GET /guest/context: what the plan allows and the
// accesses of the last 7 days.
type GuestContext struct {
	Offered    bool    `json:"offered"`
	MaxActive  int     `json:"max_active"`
	MaxMinutes int     `json:"max_minutes"`
	Active     int     `json:"active"`
	Guests     []Guest `json:"guests"`
}

// GuestInput is POST /guest/register.
type GuestInput struct {
	Name    string `json:"name"`
	Minutes *int   `json:"minutes"`
}

// Limits of guest access.
const (
	maxGuestMinutes = 30 * 24 * 60
	maxGuestActive  = 100
	guestNameMax    = 60
	guestHistory    = 7 * 24 * time.Hour
	guestAlphabet   = "abcdefghjkmnpqrstuvwxyz23456789"
)

func readLimits(ctx context.Context, q app.Querier, profileID int64) (GuestLimits, error) {
	l := GuestLimits{ProfileID: profileID}
	err := q.QueryRowContext(ctx, `SELECT max_active, max_minutes FROM guest_limits WHERE profile_id = ?`, profileID).Scan(&l.MaxActive, &l.MaxMinutes)
	if errors.Is(err, sql.ErrNoRows) {
		return l, nil
	}
	return l, err
}

func profileOf(ctx context.Context, q app.Querier, uid int64) (int64, error) {
	u, err := subs.Read(ctx, q, uid)
	if err != nil {
		return 0, err
	}
	return u.ProfileID, nil
}

func listGuests(ctx context.Context, t *app.Tenant, q app.Querier, uid int64, now time.Time) ([]Guest, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name, username, password_sealed, starts_at, ends_at, created_at FROM guest_accesses
		WHERE user_id = ? AND ends_at > ? ORDER BY id DESC`, uid, app.FormatTime(now.Add(-guestHistory)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Guest{}
	for rows.Next() {
		var g Guest
		var sealed []byte
		if err := rows.Scan(&g.ID, &g.Name, &g.Username, &sealed, &g.StartsAt, &g.EndsAt, &g.CreatedAt); err != nil {
			return nil, err
		}
		if pw, err := t.App.Keys.Open(sealed); err == nil {
			g.Password = string(pw)
		}
		g.Active = now.Before(g.EndsAt.Time)
		out = append(out, g)
	}
	return out, rows.Err()
}

func guestContext(ctx context.Context, t *app.Tenant, q app.Querier, uid int64, now time.Time) (*GuestContext, error) {
	pid, err := profileOf(ctx, q, uid)
	if err != nil {
		return nil, err
	}
	l, err := readLimits(ctx, q, pid)
	if err != nil {
		return nil, err
	}
	out := &GuestContext{Offered: l.MaxActive > 0 && l.MaxMinutes > 0, MaxActive: l.MaxActive, MaxMinutes: l.MaxMinutes}
	if out.Guests, err = listGuests(ctx, t, q, uid, now); err != nil {
		return nil, err
	}
	for _, g := range out.Guests {
		if g.Active {
			out.Active++
		}
	}
	return out, nil
}

// GetGuestContext is GET /guest/context.
func GetGuestContext(ctx context.Context, act *app.Actor) (*GuestContext, error) {
	uid, err := subscriber(ctx, act, portal.FeatureGuest)
	if err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *GuestContext
	err = t.Read(ctx, func(tx *sql.Tx) error {
		out, err = guestContext(ctx, t, tx, uid, t.Now())
		return err
	})
	return out, err
}

func randomString(n int) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(guestAlphabet)))
	for i := range b {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		b[i] = guestAlphabet[k.Int64()]
	}
	return string(b)
}

// RegisterGuest is POST /guest/register: a new guest access of the
// caller's account within its plan's limits (409 guest_not_offered,
// guest_limit_reached; 400 guest_minutes_out_of_range).
func RegisterGuest(ctx context.Context, act *app.Actor, in GuestInput) (*Guest, error) {
	uid, err := subscriber(ctx, act, portal.FeatureGuest)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(in.Name)
	if len([]rune(name)) > guestNameMax {
		return nil, app.ErrValidation("too_long", "name").With("max", guestNameMax)
	}
	if in.Minutes == nil {
		return nil, app.ErrValidation("minutes_required", "minutes")
	}
	t := act.Tenant
	now := t.Now().Truncate(time.Second)
	var out *Guest
	err = t.Write(ctx, func(tx *sql.Tx) error {
		pid, err := profileOf(ctx, tx, uid)
		if err != nil {
			return err
		}
		l, err := readLimits(ctx, tx, pid)
		if err != nil {
			return err
		}
		if l.MaxActive <= 0 || l.MaxMinutes <= 0 {
			return app.ErrConflict("guest_not_offered")
		}
		if *in.Minutes < 1 || *in.Minutes > l.MaxMinutes {
			return app.ErrValidation("guest_minutes_out_of_range", "minutes").With("max", l.MaxMinutes)
		}
		var active int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM guest_accesses WHERE user_id = ? AND ends_at > ?`, uid, app.FormatTime(now)).Scan(&active); err != nil {
			return err
		}
		if active >= l.MaxActive {
			return app.ErrConflict("guest_limit_reached").With("max", l.MaxActive)
		}
		g := &Guest{Name: name, Password: randomString(8), StartsAt: app.T(now), EndsAt: app.T(now.Add(time.Duration(*in.Minutes) * time.Minute)),
			CreatedAt: app.T(now), Active: true}
		// A username no subscriber and no card has.
		for range 8 {
			g.Username = "g" + randomString(9)
			var taken int
			if err := tx.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM guest_accesses WHERE username = ?) + (SELECT COUNT(*) FROM cards WHERE username = ? COLLATE NOCASE)`,
				g.Username, g.Username).Scan(&taken); err != nil {
				return err
			}
			user, err := subs.UsernameTaken(ctx, tx, g.Username)
			if err != nil {
				return err
			}
			if taken == 0 && !user {
				break
			}
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO guest_accesses(user_id, name, username, password_sealed, starts_at, ends_at, created_at) VALUES (?,?,?,?,?,?,?)`,
			uid, g.Name, g.Username, t.App.Keys.Seal([]byte(g.Password)), g.StartsAt, g.EndsAt, g.CreatedAt)
		if err != nil {
			return err
		}
		if g.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		out = g
		return nil
	})
	return out, err
}

// Refusals of a guest login and their Reply-Message texts.
var guestMessages = map[string]string{
	"guest_expired":     "This guest access has ended.",
	"guest_not_started": "This guest access has not started yet.",
	"disabled":          "The account of this guest access is suspended.",
	"expired":           "The account of this guest access has expired.",
}

func guestRefusal(pw, reason string) *aaa.Answer {
	return &aaa.Answer{Found: true, Password: pw, Refusal: reason, ReplyMessage: guestMessages[reason]}
}

// GuestAuthorizer answers guest logins for the RADIUS service (the
// Vouchers hook, before the cards'); (nil, false) for a username that is
// no guest access.
func GuestAuthorizer(ctx context.Context, t *app.Tenant, username string) (*aaa.Answer, bool) {
	username = strings.TrimSpace(username)
	if username == "" || username[0] != 'g' && username[0] != 'G' {
		return nil, false
	}
	var uid int64
	var sealed []byte
	var starts, ends app.Time
	var enabled bool
	var exp sql.NullString
	var down, up sql.NullInt64
	err := t.DB.R.QueryRowContext(ctx, `SELECT g.user_id, g.password_sealed, g.starts_at, g.ends_at, u.enabled AND u.deleted_at IS NULL, u.expiration,
		p.rate_down_kbps, p.rate_up_kbps FROM guest_accesses g JOIN users u ON u.id = g.user_id LEFT JOIN profiles p ON p.id = u.profile_id
		WHERE g.username = ?`, username).Scan(&uid, &sealed, &starts, &ends, &enabled, &exp, &down, &up)
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) {
			t.App.Log.Error("guest lookup", "tenant", t.Slug, "err", err)
		}
		return nil, false
	}
	pwb, err := t.App.Keys.Open(sealed)
	if err != nil {
		t.App.Log.Error("guest password", "tenant", t.Slug, "err", err)
		return nil, false
	}
	pw := string(pwb)
	now := t.Now()
	switch {
	case !now.Before(ends.Time):
		return guestRefusal(pw, "guest_expired"), true
	case now.Before(starts.Time):
		return guestRefusal(pw, "guest_not_started"), true
	case !enabled:
		return guestRefusal(pw, "disabled"), true
	}
	until := ends.Time
	if exp.Valid && exp.String != "" {
		e, err := app.ParseTime(exp.String, true)
		if err != nil || !now.Before(e) {
			return guestRefusal(pw, "expired"), true
		}
		if e.Before(until) {
			until = e
		}
	} else {
		return guestRefusal(pw, "expired"), true
	}
	secs := until.Sub(now).Seconds()
	if secs < 1 {
		secs = 1
	}
	return &aaa.Answer{Found: true, Password: pw, SessionTimeout: uint32(secs), RateDownKbps: down.Int64, RateUpKbps: up.Int64}, true
}

// WithGuests puts guest logins before another Vouchers hook (the cards').
func WithGuests(next func(ctx context.Context, t *app.Tenant, username string) (*aaa.Answer, bool)) func(ctx context.Context, t *app.Tenant, username string) (*aaa.Answer, bool) {
	return func(ctx context.Context, t *app.Tenant, username string) (*aaa.Answer, bool) {
		if a, ok := GuestAuthorizer(ctx, t, username); ok {
			return a, true
		}
		if next == nil {
			return nil, false
		}
		return next(ctx, t, username)
	}
}

// IsGuestLogin is the aaa.Service.IsGuest hook: accounting names a guest
// login's sessions kind guest. It reads in q, the accounting transaction.
func IsGuestLogin(ctx context.Context, q app.Querier, username string) bool {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM guest_accesses WHERE username = ?`, strings.TrimSpace(username)).Scan(&one)
	return err == nil
}
