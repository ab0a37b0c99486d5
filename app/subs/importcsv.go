package subs

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"xr/app"
)

// ImportColumns are the columns of a subscriber CSV import. The header row
// is required; username and password are required columns; the others
// may be left out.
var ImportColumns = []string{"username", "password", "profile", "expiration", "email", "firstname", "lastname", "phone",
	"static_ip", "mac", "balance"}

// ImportOptions tunes ImportUsers.
type ImportOptions struct {
	// ParentUsername is the manager (username or email) the subscribers go
	// under; "" = the actor. It must be in the actor's subtree.
	ParentUsername string
	// DryRun validates everything (including against the database) and
	// writes nothing.
	DryRun bool
	// Partial imports the valid rows and reports the others; without it
	// one bad row imports nothing.
	Partial bool
}

// ImportError is one refused row (or the file, at line 0 or 1).
type ImportError struct {
	Line     int    `json:"line"`
	Field    string `json:"field"`
	Reason   string `json:"reason"`
	Username string `json:"username,omitempty"`
}

// ImportReport is the outcome of an import.
type ImportReport struct {
	Rows     int           `json:"rows"`     // data rows read
	Imported int           `json:"imported"` // created (or, on a dry run, that would be)
	Failed   int           `json:"failed"`
	DryRun   bool          `json:"dry_run"`
	Partial  bool          `json:"partial"`
	Errors   []ImportError `json:"errors"`
}

type importRow struct {
	line int
	nu   NewUser
}

// ImportUsers creates subscribers from CSV (see ImportColumns): mac is one
// or more addresses separated by ";" (the MAC lock is turned on for them),
// profile a plan name the actor may assign, expiration yyyy-MM-dd[ HH:mm:ss]
// UTC, balance an opening balance in major units (written as a ledger row).
// Each refused row is reported with its line number. All-or-nothing unless
// opt.Partial. The file-level problems (no header, unknown column, unknown
// parent) are returned as errors. The licence cap applies.
func ImportUsers(ctx context.Context, act *app.Actor, r io.Reader, opt ImportOptions) (*ImportReport, error) {
	t := act.Tenant
	rep := &ImportReport{DryRun: opt.DryRun, Partial: opt.Partial, Errors: []ImportError{}}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = false
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, app.ErrValidation("header_required", "file")
	}
	if err != nil {
		return nil, app.ErrValidation("malformed_csv", "file").With("line", 1)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		known := false
		for _, c := range ImportColumns {
			known = known || c == h
		}
		if !known {
			return nil, app.ErrValidation("unknown_column", "file").With("column", h).With("line", 1)
		}
		if _, dup := col[h]; dup {
			return nil, app.ErrValidation("duplicate_column", "file").With("column", h).With("line", 1)
		}
		col[h] = i
	}
	for _, req := range []string{"username", "password"} {
		if _, ok := col[req]; !ok {
			return nil, app.ErrValidation("header_required", "file").With("column", req).With("line", 1)
		}
	}

	// Plans by name (those the actor may assign) and the parent.
	parentID := act.ManagerID
	plans := map[string]int64{}
	err = t.Read(ctx, func(tx *sql.Tx) error {
		if opt.ParentUsername != "" {
			err := tx.QueryRowContext(ctx, `SELECT id FROM managers WHERE username = ? OR email = ? ORDER BY id LIMIT 1`,
				opt.ParentUsername, opt.ParentUsername).Scan(&parentID)
			if errors.Is(err, sql.ErrNoRows) {
				return app.ErrValidation("invalid_parent_id", "parent")
			}
			if err != nil {
				return err
			}
		}
		if err := requireParent(ctx, tx, act, parentID); err != nil {
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
			plans[strings.ToLower(name)] = id
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}

	// Parse and validate every row without the database.
	var valid []importRow
	seenUser, seenIP := map[string]int{}, map[string]int{}
	fail := func(line int, field, reason, username string) {
		rep.Errors = append(rep.Errors, ImportError{Line: line, Field: field, Reason: reason, Username: username})
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.StartLine
			}
			rep.Rows++
			fail(line, "", "malformed_csv", "")
			if pe == nil {
				break
			}
			continue
		}
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		if strings.Join(rec, "") == "" {
			continue // blank line
		}
		rep.Rows++
		nu := NewUser{Username: get("username"), Password: get("password"), ParentID: parentID, Email: get("email"),
			Firstname: get("firstname"), Lastname: get("lastname"), Phone: get("phone"), StaticIP: get("static_ip"), ActorID: act.ManagerID}
		if i, ok := col["password"]; ok && i < len(rec) {
			nu.Password = rec[i] // passwords are taken as written
		}
		if p := get("profile"); p != "" {
			id, ok := plans[strings.ToLower(p)]
			if !ok {
				fail(line, "profile", "profile_not_assignable", nu.Username)
				continue
			}
			nu.ProfileID = id
		}
		if e := get("expiration"); e != "" {
			tm, err := app.ParseTime(e, true)
			if err != nil {
				fail(line, "expiration", "invalid_expiration", nu.Username)
				continue
			}
			nu.Expiration = app.T(tm)
		}
		if m := get("mac"); m != "" {
			nu.MacLockedAddrs = strings.FieldsFunc(m, func(r rune) bool { return r == ';' || r == ' ' || r == '|' })
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
				fail(line, "balance", reason, nu.Username)
				continue
			}
			nu.OpeningBalance = m
		}
		if err := validateNewUser(&nu); err != nil {
			e := app.AsError(err)
			field := e.Field
			if field == "mac_locked_addrs" {
				field = "mac"
			}
			fail(line, field, e.Reason, nu.Username)
			continue
		}
		key := strings.ToLower(nu.Username)
		if _, dup := seenUser[key]; dup {
			fail(line, "username", "duplicate_in_file", nu.Username)
			continue
		}
		seenUser[key] = line
		if nu.StaticIP != "" {
			if _, dup := seenIP[nu.StaticIP]; dup {
				fail(line, "static_ip", "duplicate_in_file", nu.Username)
				continue
			}
			seenIP[nu.StaticIP] = line
		}
		valid = append(valid, importRow{line: line, nu: nu})
	}

	// Against the database: taken usernames and static IPs, the cap.
	err = t.Read(ctx, func(rtx *sql.Tx) error {
		tx := newStmtCache(rtx)
		defer tx.Close()
		kept := valid[:0]
		for _, r := range valid {
			var one int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE username = ?`, r.nu.Username).Scan(&one)
			if err == nil {
				fail(r.line, "username", "username_taken", r.nu.Username)
				continue
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if r.nu.StaticIP != "" && staticIPTaken(ctx, tx, r.nu.StaticIP, 0) {
				fail(r.line, "static_ip", "static_ip_taken", r.nu.Username)
				continue
			}
			kept = append(kept, r)
		}
		valid = kept
		if t.MaxUsers != nil {
			count, err := app.ReadUsersCount(ctx, tx)
			if err != nil {
				return err
			}
			room := max(*t.MaxUsers-count, 0)
			if int64(len(valid)) > room {
				for _, r := range valid[room:] {
					fail(r.line, "", "license_locked", r.nu.Username)
				}
				valid = valid[:room]
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortErrors(rep.Errors)
	if len(rep.Errors) > 0 && !opt.Partial {
		rep.Failed = len(rep.Errors)
		return rep, nil
	}
	if opt.DryRun {
		rep.Imported, rep.Failed = len(valid), len(rep.Errors)
		return rep, nil
	}

	// Write: one transaction; in partial mode a row that still fails rolls
	// back to its savepoint only.
	form, err := loadFormFields(ctx, t.DB.R, "user")
	if err != nil {
		return nil, err
	}
	form = importForm(form)
	imported := 0
	err = t.Write(ctx, func(tx *sql.Tx) error {
		x := newStmtCache(tx)
		defer x.Close()
		// A large import touches far more pages than the default cache
		// holds; give this transaction a bigger one, then restore it.
		if len(valid) > 1000 {
			var old int64
			if tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&old) == nil {
				if _, err := tx.ExecContext(ctx, `PRAGMA cache_size = -65536`); err != nil {
					return err
				}
				defer func() {
					// Best effort: the import's outcome does not depend on
					// it; a writer left with the bigger cache only holds
					// more memory until the file is reopened.
					if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, old)); err != nil {
						t.App.Log.Warn("restore cache_size after import", "tenant", t.Slug, "err", err)
					}
				}()
			}
		}
		// Index the new rows for search in one statement at the end.
		var lastID int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM users`).Scan(&lastID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('users_fts_deferred', '1')`); err != nil {
			return err
		}
		for _, r := range valid {
			if opt.Partial {
				if _, err := x.ExecContext(ctx, `SAVEPOINT import_row`); err != nil {
					return err
				}
			}
			_, err := createUser(ctx, tx, x, t, r.nu, form)
			if err != nil {
				e := app.AsError(err)
				if e == nil {
					return err
				}
				field := e.Field
				if f, ok := e.Details["field"].(string); ok && field == "" {
					field = f
				}
				fail(r.line, field, e.Reason, r.nu.Username)
				if !opt.Partial {
					return errImportAborted
				}
				if _, err := x.ExecContext(ctx, `ROLLBACK TO import_row`); err != nil {
					return err
				}
				continue
			}
			if opt.Partial {
				if _, err := x.ExecContext(ctx, `RELEASE import_row`); err != nil {
					return err
				}
			}
			imported++
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO users_fts(rowid, username, email, firstname, lastname, phone, contract_id, national_id, static_ip)
			SELECT id, username, email, firstname, lastname, phone, contract_id, national_id, static_ip FROM users WHERE id > ?`, lastID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = 'users_fts_deferred'`)
		return err
	})
	sortErrors(rep.Errors)
	rep.Failed = len(rep.Errors)
	if errors.Is(err, errImportAborted) {
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	rep.Imported = imported
	if imported > 0 {
		t.EventsEmitted()
	}
	return rep, nil
}

var errImportAborted = errors.New("import aborted")

// importForm drops the required flag of custom fields: the CSV carries no
// custom fields, and an import must not be refused for them.
func importForm(form []FormField) []FormField {
	out := make([]FormField, len(form))
	copy(out, form)
	for i := range out {
		out[i].Required = false
	}
	return out
}

func sortErrors(errs []ImportError) {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
}
