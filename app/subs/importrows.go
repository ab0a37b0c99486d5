package subs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"strings"

	"xr/app"
)

// The primitives of a subscriber import. The engine (app/dataimport) reads
// files, maps columns, chunks transactions and reports per line; these
// functions turn one row's named values into a subscriber and write it.

// UserImporter holds what an import of subscribers resolves once: the
// caller, the plans it may assign (by lower-cased name), the default
// parent and plan, and the custom-field form.
type UserImporter struct {
	act           *app.Actor
	parents       map[string]int64 // lower-cased username or email → id, resolved lazily
	plans         map[string]int64
	DefaultParent int64
	DefaultPlan   int64
	// GeneratePasswords gives a row without a password a random one
	// (recoverable on the subscriber's page); otherwise it is refused.
	GeneratePasswords bool
	form              []FormField
}

// ImportRefusal is why one row cannot be imported: the field and reason.
type ImportRefusal struct {
	Field  string
	Reason string
}

// NewUserImporter resolves the default parent (a manager's username or
// email; "" = the caller) and default plan (a plan name; "" = none) for
// the caller: a parent outside the caller's subtree is 400
// invalid_parent_id, a plan it may not assign 400 profile_not_assignable.
func NewUserImporter(ctx context.Context, act *app.Actor, defaultParent, defaultPlan string) (*UserImporter, error) {
	t := act.Tenant
	im := &UserImporter{act: act, parents: map[string]int64{}, plans: map[string]int64{}, DefaultParent: act.ManagerID}
	err := t.Read(ctx, func(tx *sql.Tx) error {
		if defaultParent != "" {
			id, err := im.parentID(ctx, tx, defaultParent)
			if err != nil {
				return err
			}
			if id == 0 {
				return app.ErrValidation("invalid_parent_id", "parent")
			}
			im.DefaultParent = id
		} else if err := requireParent(ctx, tx, act, im.DefaultParent); err != nil {
			return app.ErrValidation("invalid_parent_id", "parent")
		}
		cond, args := assignableSQL(act)
		rows, err := tx.QueryContext(ctx, `SELECT p.id, p.name FROM profiles p WHERE `+cond, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var name string
			if err := rows.Scan(&id, &name); err != nil {
				return err
			}
			im.plans[strings.ToLower(name)] = id
		}
		if err := rows.Err(); err != nil {
			return err
		}
		form, err := loadFormFields(ctx, tx, "user")
		if err != nil {
			return err
		}
		im.form = importForm(form)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if defaultPlan != "" {
		id, ok := im.plans[strings.ToLower(strings.TrimSpace(defaultPlan))]
		if !ok {
			return nil, app.ErrValidation("profile_not_assignable", "plan")
		}
		im.DefaultPlan = id
	}
	return im, nil
}

// parentID resolves a manager (username or email) inside the caller's
// subtree; 0 when missing or outside (the same answer).
func (im *UserImporter) parentID(ctx context.Context, q app.Querier, name string) (int64, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if id, ok := im.parents[key]; ok {
		return id, nil
	}
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM managers WHERE username = ? COLLATE NOCASE OR email = ? COLLATE NOCASE ORDER BY id LIMIT 1`, key, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		im.parents[key] = 0
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	ok, err := im.act.InScope(ctx, q, id)
	if err != nil {
		return 0, err
	}
	if !ok {
		id = 0
	}
	im.parents[key] = id
	return id, nil
}

// Build turns one row's values (by field name: username, password,
// profile, parent, expiration, email, firstname, lastname, phone,
// contract_id, national_id, address, notes, static_ip, mac, balance,
// enabled) into a subscriber, validated without writing. q reads parents.
func (im *UserImporter) Build(ctx context.Context, q app.Querier, v map[string]string) (NewUser, *ImportRefusal, error) {
	get := func(k string) string { return strings.TrimSpace(v[k]) }
	nu := NewUser{Username: get("username"), Password: v["password"], ParentID: im.DefaultParent, ProfileID: im.DefaultPlan,
		Email: get("email"), Firstname: get("firstname"), Lastname: get("lastname"), Phone: get("phone"), ContractID: get("contract_id"),
		NationalID: get("national_id"), Address: get("address"), Notes: get("notes"), StaticIP: get("static_ip"), ActorID: im.act.ManagerID}
	refuse := func(field, reason string) (NewUser, *ImportRefusal, error) {
		return nu, &ImportRefusal{Field: field, Reason: reason}, nil
	}
	if nu.Password == "" && im.GeneratePasswords {
		nu.Password = randomPassword()
	}
	if p := get("parent"); p != "" {
		id, err := im.parentID(ctx, q, p)
		if err != nil {
			return nu, nil, err
		}
		if id == 0 {
			return refuse("parent", "invalid_parent_id")
		}
		nu.ParentID = id
	}
	if p := get("profile"); p != "" {
		id, ok := im.plans[strings.ToLower(p)]
		if !ok {
			return refuse("profile", "profile_not_assignable")
		}
		nu.ProfileID = id
	}
	if e := get("expiration"); e != "" {
		tm, err := app.ParseTime(e, true)
		if err != nil {
			return refuse("expiration", "invalid_expiration")
		}
		nu.Expiration = app.T(tm)
	}
	if m := get("mac"); m != "" {
		nu.MacLockedAddrs = strings.FieldsFunc(m, func(r rune) bool { return r == ';' || r == ' ' || r == '|' || r == ',' })
		nu.MacLockEnabled = true
	}
	if b := get("balance"); b != "" {
		m, err := app.ParseMoney(b)
		if err != nil {
			reason := "invalid_balance"
			if errors.Is(err, app.ErrMoneyPrecision) {
				reason = "too_many_decimals"
			} else if errors.Is(err, app.ErrMoneyRange) {
				reason = "amount_out_of_range"
			}
			return refuse("balance", reason)
		}
		nu.OpeningBalance = m
	}
	if e := strings.ToLower(get("enabled")); e != "" {
		switch e {
		case "1", "true", "yes", "on", "enabled", "active":
		case "0", "false", "no", "off", "disabled", "inactive":
			f := false
			nu.Enabled = &f
		default:
			return refuse("enabled", "invalid_boolean")
		}
	}
	if err := validateNewUser(&nu); err != nil {
		e := app.AsError(err)
		if e == nil {
			return nu, nil, err
		}
		field := e.Field
		switch field {
		case "mac_locked_addrs":
			field = "mac"
		case "parent_id":
			field = "parent"
		}
		return refuse(field, e.Reason)
	}
	return nu, nil, nil
}

// ImportedUser is a subscriber found by username: its id and whether the
// caller's subtree holds it.
type ImportedUser struct {
	ID      int64
	InScope bool
}

// FindForImport looks a username up (deleted subscribers included: their
// usernames stay taken).
func (im *UserImporter) FindForImport(ctx context.Context, q app.Querier, username string) (*ImportedUser, error) {
	var id, parent int64
	err := q.QueryRowContext(ctx, `SELECT id, parent_id FROM users WHERE username = ? AND deleted_at IS NULL`, username).Scan(&id, &parent)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ok, err := im.act.InScope(ctx, q, parent)
	if err != nil {
		return nil, err
	}
	return &ImportedUser{ID: id, InScope: ok}, nil
}

// ImportWriter writes imported subscribers in one transaction with
// prepared statements reused across rows; the search index of the rows it
// creates is written once, by Finish.
type ImportWriter struct {
	im     *UserImporter
	tx     *sql.Tx
	x      *stmtCache
	lastID int64
}

// Writer starts writing in tx: the search index is deferred to Finish.
// Close it before the transaction ends.
func (im *UserImporter) Writer(ctx context.Context, tx *sql.Tx) (*ImportWriter, error) {
	w := &ImportWriter{im: im, tx: tx, x: newStmtCache(tx)}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM users`).Scan(&w.lastID); err != nil {
		w.Close()
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO meta(key, value) VALUES ('users_fts_deferred', '1')`); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Q reads through the writer's prepared statements.
func (w *ImportWriter) Q() app.Querier { return w.x }

// Finish indexes the subscribers created since Writer for search.
func (w *ImportWriter) Finish(ctx context.Context) error {
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO users_fts(rowid, username, email, firstname, lastname, phone, contract_id, national_id, static_ip)
		SELECT id, username, email, firstname, lastname, phone, contract_id, national_id, static_ip FROM users WHERE id > ?`, w.lastID); err != nil {
		return err
	}
	_, err := w.tx.ExecContext(ctx, `DELETE FROM meta WHERE key = 'users_fts_deferred'`)
	return err
}

// Savepoint, Rollback and Release bracket one row so a refused row undoes
// only itself.
func (w *ImportWriter) Savepoint(ctx context.Context) error {
	_, err := w.x.ExecContext(ctx, `SAVEPOINT import_row`)
	return err
}

// Rollback undoes the row since Savepoint.
func (w *ImportWriter) Rollback(ctx context.Context) error {
	if _, err := w.x.ExecContext(ctx, `ROLLBACK TO import_row`); err != nil {
		return err
	}
	return w.Release(ctx)
}

// Release keeps the row since Savepoint.
func (w *ImportWriter) Release(ctx context.Context) error {
	_, err := w.x.ExecContext(ctx, `RELEASE import_row`)
	return err
}

// Close releases the prepared statements.
func (w *ImportWriter) Close() { w.x.Close() }

// QueryCache is a read transaction's prepared statements (a validation
// pass reads the same few queries per row).
type QueryCache struct{ x *stmtCache }

// NewQueryCache prepares statements on tx as they are first used.
func NewQueryCache(tx *sql.Tx) *QueryCache { return &QueryCache{x: newStmtCache(tx)} }

// QueryRowContext runs a cached statement.
func (c *QueryCache) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return c.x.QueryRowContext(ctx, q, args...)
}

// QueryContext runs a cached statement.
func (c *QueryCache) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.x.QueryContext(ctx, q, args...)
}

// Close releases the statements.
func (c *QueryCache) Close() { c.x.Close() }

// Create inserts a subscriber (user.created); a taken username is 409
// username_taken, the licence cap 403 license_locked.
func (w *ImportWriter) Create(ctx context.Context, nu NewUser) (int64, error) {
	c, err := createUser(ctx, w.tx, w.x, w.im.act.Tenant, nu, w.im.form)
	if err != nil {
		return 0, err
	}
	return c.ID, nil
}

// Update overwrites the fields a row carried (present) on an existing
// subscriber (user.updated). The opening balance is never applied to an
// existing subscriber: money moves through deposits.
func (w *ImportWriter) Update(ctx context.Context, id int64, nu NewUser, present map[string]bool) error {
	t := w.im.act.Tenant
	var pt app.Patch
	changed := []string{}
	set := func(col string, v any) {
		pt.Set(col, v)
		changed = append(changed, col)
	}
	if present["password"] {
		set("password_sealed", t.App.Keys.Seal([]byte(nu.Password)))
	}
	if present["parent"] {
		set("parent_id", nu.ParentID)
	}
	if present["profile"] {
		set("profile_id", nullInt(sql.NullInt64{Int64: nu.ProfileID, Valid: nu.ProfileID != 0}))
	}
	if present["expiration"] {
		set("expiration", nu.Expiration)
	}
	if present["enabled"] {
		set("enabled", nu.Enabled == nil || *nu.Enabled)
	}
	for _, f := range []struct{ key, v string }{{"email", nu.Email}, {"firstname", nu.Firstname}, {"lastname", nu.Lastname},
		{"phone", nu.Phone}, {"contract_id", nu.ContractID}, {"national_id", nu.NationalID}, {"address", nu.Address},
		{"notes", nu.Notes}, {"static_ip", nu.StaticIP}} {
		if present[f.key] {
			set(f.key, f.v)
		}
	}
	if present["mac"] {
		set("mac_lock_enabled", nu.MacLockEnabled)
		macs := nu.MacLockedAddrs
		if macs == nil {
			macs = []string{}
		}
		set("mac_locked_addrs", jsonText(macs))
	}
	if pt.Empty() {
		return nil
	}
	if present["static_ip"] && nu.StaticIP != "" && staticIPTaken(ctx, w.x, nu.StaticIP, id) {
		return app.ErrConflict("static_ip_taken").With("field", "static_ip")
	}
	if _, err := pt.Exec(ctx, w.tx, "users", id, nowText()); err != nil {
		return err
	}
	return app.Emit(ctx, w.tx, "user.updated", map[string]any{"id": id, "username": nu.Username, "changed": changed})
}

// importForm drops the required flag of custom fields: an import carries
// no custom fields and must not be refused for them.
func importForm(form []FormField) []FormField {
	out := make([]FormField, len(form))
	copy(out, form)
	for i := range out {
		out[i].Required = false
	}
	return out
}

// randomPassword is a generated RADIUS password: 10 characters without
// look-alikes.
func randomPassword() string {
	const alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
