// Package subs is the subscribers area of xr: plans (profiles), subscribers,
// their ledger and money operations, bulk operations, groups, add-ons,
// custom forms, exports and the CSV import.
//
// Every exported operation takes an *app.Actor (its tenant, authority and
// scope) and runs one transaction. The functions of effects.go are the
// exception: they run inside a transaction of another area (cards, RADIUS)
// that has already authorised the call.
package subs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"xr/app"
)

// Status is the computed state of a subscriber (list rows and records).
type Status struct {
	Enabled    bool `json:"enabled"`
	Deleted    bool `json:"deleted"`
	Online     bool `json:"online"`
	Expired    bool `json:"expired"`
	HaveQuota  bool `json:"have_quota"`
	FUP        bool `json:"fup"`
	CanConnect bool `json:"can_connect"`
}

// StatusInput is what a status is computed from.
type StatusInput struct {
	Enabled      bool
	Deleted      bool
	Online       bool
	Expiration   time.Time // zero = never activated (expired)
	BytesLimit   int64     // 0 = unlimited
	UsedBytes    int64
	SecondsLimit int64 // 0 = unlimited
	UsedSeconds  int64
	// FUPRateDownKbps of the bound plan: when > 0, a subscriber whose data
	// quota is spent stays connected at that rate (fair-usage policy).
	FUPRateDownKbps int64
}

// StatusOf is the one definition of a subscriber's state, shared by the
// list, the record, the filters (list.go mirrors it in SQL) and the RADIUS
// area: expired when never activated or expiration <= now; have_quota when
// neither enforced limit is spent; fup when only the data quota is spent and
// the plan has a FUP rate; can_connect when enabled, not deleted, not expired
// and (have_quota or fup).
func StatusOf(in StatusInput, now time.Time) Status {
	s := Status{Enabled: in.Enabled, Deleted: in.Deleted, Online: in.Online}
	s.Expired = in.Expiration.IsZero() || !in.Expiration.After(now)
	bytesOK := in.BytesLimit <= 0 || in.UsedBytes < in.BytesLimit
	secondsOK := in.SecondsLimit <= 0 || in.UsedSeconds < in.SecondsLimit
	s.HaveQuota = bytesOK && secondsOK
	s.FUP = !bytesOK && secondsOK && in.FUPRateDownKbps > 0
	s.CanConnect = s.Enabled && !s.Deleted && !s.Expired && (s.HaveQuota || s.FUP)
	return s
}

// User is a list row of GET /users: exactly the spec's Subscriber fields.
type User struct {
	ID              int64     `json:"id"`
	TenantID        int64     `json:"tenant_id"`
	Username        string    `json:"username"`
	Email           string    `json:"email"`
	Enabled         bool      `json:"enabled"`
	Status          Status    `json:"status"`
	ProfileID       *int64    `json:"profile_id"`
	ProfileName     string    `json:"profile_name"`
	ParentID        int64     `json:"parent_id"`
	ParentUsername  string    `json:"parent_username"`
	BytesRemaining  int64     `json:"bytes_remaining"`
	PlanBytesLimit  int64     `json:"plan_bytes_limit"`
	UsedBytes       int64     `json:"used_bytes"`
	Expiration      app.Time  `json:"expiration"`
	Balance         app.Money `json:"balance"`
	Debt            app.Money `json:"debt"`
	MacLockEnabled  bool      `json:"mac_lock_enabled"`
	MacLockedAddrs  []string  `json:"mac_locked_addrs"`
	EnforcesBytes   bool      `json:"enforces_bytes"`
	EnforcesSeconds bool      `json:"enforces_seconds"`
	CreatedAt       app.Time  `json:"created_at"`
}

// UserDetail is GET /users/{id} and /users/resolve: the list row plus the
// record's own fields, lookup_token and custom fields.
type UserDetail struct {
	User
	Firstname         string                     `json:"firstname"`
	Lastname          string                     `json:"lastname"`
	Phone             string                     `json:"phone"`
	ContractID        string                     `json:"contract_id"`
	NationalID        string                     `json:"national_id"`
	Address           string                     `json:"address"`
	Notes             string                     `json:"notes"`
	StaticIP          string                     `json:"static_ip"`
	GroupID           *int64                     `json:"group_id"`
	GroupName         string                     `json:"group_name"`
	DebtLimit         *app.Money                 `json:"debt_limit"` // null = unlimited credit
	SecondsLimit      int64                      `json:"seconds_limit"`
	UsedSeconds       int64                      `json:"used_seconds"`
	SecondsRemaining  int64                      `json:"seconds_remaining"`
	PointsBalance     int64                      `json:"points_balance"`
	HasPortalPassword bool                       `json:"has_portal_password"`
	LookupToken       string                     `json:"lookup_token"`
	CustomFields      map[string]json.RawMessage `json:"custom_fields"`
	DeletedAt         app.Time                   `json:"deleted_at"`
	UpdatedAt         app.Time                   `json:"updated_at"`
}

// Created is the 201 of POST /users: the spec's create fields.
type Created struct {
	ID        int64     `json:"id"`
	TenantID  int64     `json:"tenant_id"`
	Username  string    `json:"username"`
	Enabled   bool      `json:"enabled"`
	ProfileID *int64    `json:"profile_id"`
	ParentID  int64     `json:"parent_id"`
	Balance   app.Money `json:"balance"`
	Debt      app.Money `json:"debt"`
	CreatedAt app.Time  `json:"created_at"`
}

// debtOf is the debt shown for a balance: what is owed, never negative.
func debtOf(balance int64) app.Money {
	if balance < 0 {
		return app.Money(-balance)
	}
	return 0
}

// finish fills the computed fields of a row.
func (u *User) finish(now time.Time, deleted, online bool, secondsLimit, usedSeconds, fupDown int64) {
	u.Status = StatusOf(StatusInput{Enabled: u.Enabled, Deleted: deleted, Online: online, Expiration: u.Expiration.Time,
		BytesLimit: u.PlanBytesLimit, UsedBytes: u.UsedBytes, SecondsLimit: secondsLimit, UsedSeconds: usedSeconds,
		FUPRateDownKbps: fupDown}, now)
	u.EnforcesBytes = u.PlanBytesLimit > 0
	u.EnforcesSeconds = secondsLimit > 0
	if u.EnforcesBytes {
		u.BytesRemaining = max(0, u.PlanBytesLimit-u.UsedBytes)
	}
	u.Debt = debtOf(int64(u.Balance))
	if u.MacLockedAddrs == nil {
		u.MacLockedAddrs = []string{}
	}
}

// urow is the subscriber row money and bulk operations work on.
type urow struct {
	ID           int64
	Username     string
	ParentID     int64
	ProfileID    sql.NullInt64
	GroupID      sql.NullInt64
	Enabled      bool
	DeletedAt    app.Time
	Expiration   app.Time
	Balance      int64
	DebtLimit    sql.NullInt64
	BytesLimit   int64
	UsedBytes    int64
	SecondsLimit int64
	UsedSeconds  int64
	Points       int64
}

const urowCols = `id, username, parent_id, profile_id, group_id, enabled, deleted_at, expiration, balance, debt_limit,
	bytes_limit, used_bytes, seconds_limit, used_seconds, points_balance`

func scanURow(row interface{ Scan(...any) error }) (*urow, error) {
	u := &urow{}
	err := row.Scan(&u.ID, &u.Username, &u.ParentID, &u.ProfileID, &u.GroupID, &u.Enabled, &u.DeletedAt, &u.Expiration,
		&u.Balance, &u.DebtLimit, &u.BytesLimit, &u.UsedBytes, &u.SecondsLimit, &u.UsedSeconds, &u.Points)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return u, err
}

// readURow reads a subscriber without any scope check.
func readURow(ctx context.Context, q app.Querier, id int64) (*urow, error) {
	return scanURow(q.QueryRowContext(ctx, `SELECT `+urowCols+` FROM users WHERE id = ?`, id))
}

// loadUser reads a subscriber the actor may act on: a missing record is
// not_found, one outside the actor's subtree is the same 404 (out of scope).
func loadUser(ctx context.Context, q app.Querier, act *app.Actor, id int64) (*urow, error) {
	u, err := readURow(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if err := act.RequireScope(ctx, q, u.ParentID); err != nil {
		return nil, err
	}
	return u, nil
}

// live refuses a deleted subscriber for operations that change it.
func (u *urow) live() error {
	if !u.DeletedAt.IsZero() {
		return app.ErrConflict("user_deleted")
	}
	return nil
}

func nullInt(v sql.NullInt64) any {
	if v.Valid {
		return v.Int64
	}
	return nil
}

func ptrOf(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	x := v.Int64
	return &x
}

var (
	usernameRe  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$`)
	emailRe     = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
	maxTextLen  = 255
	maxPassword = 128
)

// ValidUsername reports whether s is an acceptable subscriber username.
func ValidUsername(s string) bool { return usernameRe.MatchString(s) }

func checkText(field, v string) error {
	if len(v) > maxTextLen {
		return app.ErrValidation("too_long", field)
	}
	return nil
}

func checkEmail(v string) error {
	if v != "" && (!emailRe.MatchString(v) || len(v) > maxTextLen) {
		return app.ErrValidation("invalid_email", "email")
	}
	return nil
}

func checkRadiusPassword(pw, field string) error {
	if pw == "" {
		return app.ErrValidation("password_required", field)
	}
	if len(pw) > maxPassword {
		return app.ErrValidation("password_too_long", field)
	}
	return nil
}

// normStaticIP validates and normalises a static IP ("" = none).
func normStaticIP(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "", app.ErrValidation("invalid_ip", "static_ip")
	}
	return a.Unmap().String(), nil
}

// normMACs validates MAC addresses and renders them AA:BB:CC:DD:EE:FF,
// without duplicates.
func normMACs(in []string) ([]string, error) {
	out := []string{}
	seen := map[string]bool{}
	for _, s := range in {
		hw, err := net.ParseMAC(strings.TrimSpace(s))
		if err != nil || len(hw) != 6 {
			return nil, app.ErrValidation("invalid_mac", "mac_locked_addrs")
		}
		m := strings.ToUpper(hw.String())
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	if len(out) > 32 {
		return nil, app.ErrValidation("too_many_macs", "mac_locked_addrs")
	}
	return out, nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// decodeMACs reads the stored mac_locked_addrs; a corrupt value is an
// error, not an empty list.
func decodeMACs(s string) ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("stored mac_locked_addrs: %w", err)
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// nowText is the clock in the database format.
func nowText() string { return app.StampNow() }

// later returns max(now, exp): the base an extension counts from.
func later(now time.Time, exp app.Time) time.Time {
	if exp.IsZero() || exp.Time.Before(now) {
		return now
	}
	return exp.Time
}

// execer is what a transaction offers for writes and reads; *sql.Tx and
// *stmtCache (bulk paths: each statement prepared once) both satisfy it.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// stmtCache prepares each distinct statement once for the length of a
// transaction: a statement on users compiles its triggers (search index,
// counters, change log), which costs more than running it.
type stmtCache struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

func newStmtCache(tx *sql.Tx) *stmtCache { return &stmtCache{tx: tx, m: map[string]*sql.Stmt{}} }

func (c *stmtCache) prep(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := c.m[q]; ok {
		return st, nil
	}
	st, err := c.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.m[q] = st
	return st, nil
}

func (c *stmtCache) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := c.prep(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (c *stmtCache) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := c.prep(ctx, q)
	if err != nil {
		return c.tx.QueryRowContext(ctx, q, args...) // carries the error
	}
	return st.QueryRowContext(ctx, args...)
}

func (c *stmtCache) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := c.prep(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (c *stmtCache) Close() {
	for _, st := range c.m {
		st.Close()
	}
}
